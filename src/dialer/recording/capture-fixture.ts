/**
 * Captures as rtpengine writes them (pcap with LINKTYPE_RAW, and its metadata file), built in
 * memory for the recording tests: the parsers' fixtures and the ingester's spool.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface FixturePacket {
  tsUs: number;
  /** The sender's port and rtpengine's port it arrived on (127.0.0.1 both). */
  sport: number;
  dport: number;
  payload: Uint8Array;
}

export function rtpPacket(pt: number, seq: number, ts: number, ssrc: number, audio: Uint8Array): Uint8Array {
  const b = new Uint8Array(12 + audio.length);
  const v = new DataView(b.buffer);
  b[0] = 0x80;
  b[1] = pt;
  v.setUint16(2, seq & 0xffff);
  v.setUint32(4, ts >>> 0);
  v.setUint32(8, ssrc >>> 0);
  b.set(audio, 12);
  return b;
}

export function pcapFile(packets: readonly FixturePacket[]): Uint8Array {
  const head = new Uint8Array(24);
  const hv = new DataView(head.buffer);
  hv.setUint32(0, 0xa1b2c3d4, true);
  hv.setUint16(4, 2, true);
  hv.setUint16(6, 4, true);
  hv.setUint32(16, 65535, true);
  hv.setUint32(20, 101, true);
  const records = packets.map((p) => {
    const ipLen = 20 + 8 + p.payload.length;
    const r = new Uint8Array(16 + ipLen);
    const v = new DataView(r.buffer);
    v.setUint32(0, Math.floor(p.tsUs / 1e6), true);
    v.setUint32(4, p.tsUs % 1e6, true);
    v.setUint32(8, ipLen, true);
    v.setUint32(12, ipLen, true);
    const ip = 16;
    r[ip] = 0x45;
    v.setUint16(ip + 2, ipLen);
    r[ip + 8] = 64;
    r[ip + 9] = 17;
    r.set([127, 0, 0, 1, 127, 0, 0, 1], ip + 12);
    v.setUint16(ip + 20, p.sport);
    v.setUint16(ip + 22, p.dport);
    v.setUint16(ip + 24, 8 + p.payload.length);
    r.set(p.payload, ip + 28);
    return r;
  });
  const out = new Uint8Array(24 + records.reduce((n, r) => n + r.length, 0));
  out.set(head);
  let at = 24;
  for (const r of records) {
    out.set(r, at);
    at += r.length;
  }
  return out;
}

/** rtpengine's metadata text: the offer to the callee on `calleePort`, the answer to the caller on `callerPort`. */
export function metadataText(pcapPath: string, calleePort: number, callerPort: number, rep: string | null): string {
  const sdp = (port: number) => `v=0\no=- 1 1 IN IP4 127.0.0.1\ns=-\nc=IN IP4 127.0.0.1\nt=0 0\nm=audio ${port} RTP/AVP 0 101\na=rtpmap:0 PCMU/8000\n`;
  return `${pcapPath}\n\n\nTimestamp started ms: 1\nSDP mode: offer\nSDP before RTP packet: 1\n\n${sdp(calleePort)}\nTimestamp started ms: 1\nSDP mode: answer\nSDP before RTP packet: 1\n\n${sdp(callerPort)}\n\ncall start time: 2026-01-01T10:00:00\ncall end time: 2026-01-01T10:00:02\n\n\n${rep ? `cadenza-rep:${rep}\n` : ''}`;
}

/** `seconds` of one leg of a call: 20 ms PCMU packets of a constant byte (0xff is silence in mu-law). */
export function leg(o: { seconds: number; startUs: number; sport: number; dport: number; ssrc: number; byte: number }): FixturePacket[] {
  const out: FixturePacket[] = [];
  for (let i = 0; i < o.seconds * 50; i++) out.push({ tsUs: o.startUs + i * 20_000, sport: o.sport, dport: o.dport, payload: rtpPacket(0, i, i * 160, o.ssrc, new Uint8Array(160).fill(o.byte)) });
  return out;
}

/**
 * A finished call's capture in an rtpengine spool (its pcaps/ and metadata/ folders, made if
 * missing), as the ingester finds it: the rep's 2 s leg, and the prospect's 2 s from 1 s in, so
 * the call lasts 3 s. `tag` makes the file names unique per call.
 */
export function writeCapture(spoolDir: string, sipCallId: string, rep: string | null, tag: number): void {
  const stem = `${encodeURIComponent(sipCallId)}-0123456789abcde${tag % 10}`;
  mkdirSync(join(spoolDir, 'pcaps'), { recursive: true });
  mkdirSync(join(spoolDir, 'metadata'), { recursive: true });
  const packets = [...leg({ seconds: 2, startUs: 1e12, sport: 40000, dport: 30020, ssrc: 1, byte: 0x20 }), ...leg({ seconds: 2, startUs: 1e12 + 1e6, sport: 40002, dport: 30000, ssrc: 2, byte: 0xa0 })];
  writeFileSync(join(spoolDir, 'pcaps', `${stem}.pcap`), pcapFile(packets));
  writeFileSync(join(spoolDir, 'metadata', `rtpengine-meta-${stem}.txt`), metadataText(`${spoolDir}/pcaps/${stem}.pcap`, 30000, 30020, rep));
}
