import { ALAW, MULAW } from '../transcribe/wav.ts';
import type { CallMetadata } from './metadata.ts';
import { refuseCapture, type UdpDatagram } from './pcap.ts';

/**
 * A recorded call's two legs as audio: the RTP rtpengine received from each side, demultiplexed by
 * the port it arrived on (metadata.ts), decoded from G.711 and laid on one 8 kHz timeline, channel
 * 0 the rep and channel 1 the prospect (the transcriber takes the two legs as the two speakers,
 * transcribe/turns.ts). Pure.
 *
 * Placement: each RTP source (SSRC) is anchored at the capture time of its first packet and its
 * later packets are placed by their RTP timestamps, so network jitter does not smear the audio and
 * a lost packet leaves silence of its length. A new SSRC (a re-INVITE, a transfer) anchors again.
 * Recorded calls are offered G.711 only (Kamailio's codec-strip flags, deploy/telephony); a leg
 * that carried audio in anything else is refused rather than stored as noise.
 */
export const SAMPLE_RATE = 8000;
const PT_PCMU = 0;
const PT_PCMA = 8;
const PT_CN = 13;

export interface CallAudio {
  /** [rep, prospect], equal lengths. */
  channels: [Float32Array, Float32Array];
  durationMs: number;
  /** Capture time of the first sample (µs since the epoch). */
  startUs: number;
  /** RTP packets decoded per channel. */
  packets: [number, number];
}

export interface AudioLimits {
  maxDurationMs: number;
}

export const DEFAULT_AUDIO_LIMITS: AudioLimits = { maxDurationMs: 4 * 3600 * 1000 };

interface Rtp {
  pt: number;
  ssrc: number;
  ts: number;
  payload: Uint8Array;
}

/** An RTP packet (RFC 3550 §5.1), or null for RTCP, STUN, DTLS or anything shorter than a header. */
export function parseRtp(b: Uint8Array): Rtp | null {
  if (b.length < 12 || b[0]! >> 6 !== 2) return null;
  const pt = b[1]! & 0x7f;
  // RTCP multiplexed on the RTP port (RFC 5761 §4): packet types 192-223 read as PT 64-95.
  if (pt >= 64 && pt <= 95) return null;
  const cc = b[0]! & 0x0f;
  let at = 12 + cc * 4;
  if (b[0]! & 0x10) {
    if (b.length < at + 4) return null;
    at += 4 + (((b[at + 2]! << 8) | b[at + 3]!) * 4);
  }
  let end = b.length;
  if (b[0]! & 0x20) end -= b[b.length - 1]!;
  if (at > end) return null;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return { pt, ssrc: view.getUint32(8, false), ts: view.getUint32(4, false), payload: b.subarray(at, end) };
}

/**
 * `repSide`: who the rep is in the SIP dialog. The caller for a call the rep placed; the callee for
 * an incoming call, where the prospect's carrier sent the INVITE.
 */
export function callAudio(meta: Pick<CallMetadata, 'fromCaller' | 'fromCallee'>, datagrams: readonly UdpDatagram[], limits: AudioLimits = DEFAULT_AUDIO_LIMITS, repSide: 'caller' | 'callee' = 'caller'): CallAudio {
  const [repPorts, prospectPorts] = repSide === 'caller' ? [meta.fromCaller, meta.fromCallee] : [meta.fromCallee, meta.fromCaller];
  const legOf = (dst: string): 0 | 1 | null => {
    const port = Number(dst.slice(dst.lastIndexOf(':') + 1));
    return repPorts.includes(port) ? 0 : prospectPorts.includes(port) ? 1 : null;
  };
  const maxSamples = (limits.maxDurationMs / 1000) * SAMPLE_RATE;
  const startUs = datagrams.reduce((m, d) => Math.min(m, d.tsUs), Infinity);
  // Frames to write: [leg, sample offset, payload, law]; the timeline is sized once they are known.
  const frames: { leg: 0 | 1; at: number; payload: Uint8Array; table: Float32Array }[] = [];
  const anchors = new Map<string, { ts: number; at: number }>();
  // A packet received twice (same source, same timestamp) is written once; two sources on one leg
  // at once (a carrier's second stream, or what it sends back of rtpengine's own player) are mixed,
  // as the side heard them, not written over each other.
  const written = new Set<string>();
  const other = [0, 0];
  const packets: [number, number] = [0, 0];
  let length = 0;
  for (const d of datagrams) {
    const leg = legOf(d.dst);
    if (leg === null) continue;
    const rtp = parseRtp(d.payload);
    if (!rtp || rtp.pt === PT_CN) continue;
    if (rtp.pt !== PT_PCMU && rtp.pt !== PT_PCMA) {
      // telephone-event (DTMF) and other dynamic types carry no voice; count them for the refusal.
      if (rtp.pt < 96) other[leg]!++;
      continue;
    }
    const key = `${leg}:${rtp.ssrc}`;
    let anchor = anchors.get(key);
    if (!anchor) {
      anchor = { ts: rtp.ts, at: Math.round(((d.tsUs - startUs) * SAMPLE_RATE) / 1e6) };
      anchors.set(key, anchor);
    }
    // Unsigned 32-bit distance (RFC 3550 timestamps wrap); a packet from before the anchor (reordered) goes just before it.
    let delta = (rtp.ts - anchor.ts) >>> 0;
    if (delta > 0x80000000) delta -= 0x100000000;
    const at = anchor.at + delta;
    if (written.has(`${key}:${rtp.ts}`)) continue;
    written.add(`${key}:${rtp.ts}`);
    if (at < 0 || at + rtp.payload.length > maxSamples) {
      throw refuseCapture('too_long', `The call's audio runs past ${limits.maxDurationMs / 1000} s.`, { maxDurationMs: limits.maxDurationMs });
    }
    frames.push({ leg, at, payload: rtp.payload, table: rtp.pt === PT_PCMU ? MULAW : ALAW });
    packets[leg]++;
    length = Math.max(length, at + rtp.payload.length);
  }
  if (frames.length === 0) {
    if (other[0]! + other[1]! > 0) throw refuseCapture('unsupported_codec', 'The call carried audio in a codec other than G.711 (PCMU/PCMA); recorded calls must be offered G.711 only.', { otherPackets: other });
    throw refuseCapture('no_audio', 'The capture holds no RTP audio from either side of the call.');
  }
  const channels: [Float32Array, Float32Array] = [new Float32Array(length), new Float32Array(length)];
  for (const f of frames) {
    const ch = channels[f.leg];
    for (let i = 0; i < f.payload.length; i++) ch[f.at + i] = ch[f.at + i]! + f.table[f.payload[i]!]!;
  }
  for (const ch of channels) for (let i = 0; i < ch.length; i++) ch[i] = Math.max(-1, Math.min(1, ch[i]!));
  return { channels, durationMs: (length / SAMPLE_RATE) * 1000, startUs, packets };
}

/**
 * Mixes the consent announcement into the start of the prospect's channel: rtpengine plays it to
 * the prospect from its own media player (Kamailio's play_media at the ACK, deploy/telephony), and
 * its pcap holds only what it received, so the stored recording gets it here, as the prospect
 * heard it. The rep's channel is left as recorded (the rep is told in the web app, not by audio).
 */
export function withAnnouncement(audio: CallAudio, announcement: Float32Array): CallAudio {
  const length = Math.max(audio.channels[0].length, announcement.length);
  const channels = audio.channels.map((c, ch) => {
    const out = new Float32Array(length);
    out.set(c);
    if (ch === 1) for (let i = 0; i < announcement.length; i++) out[i] = Math.max(-1, Math.min(1, out[i]! + announcement[i]!));
    return out;
  }) as [Float32Array, Float32Array];
  return { ...audio, channels, durationMs: (length / SAMPLE_RATE) * 1000 };
}
