import { cadenzaError, type CadenzaError } from '../../common/errors.ts';

/**
 * The UDP datagrams of a classic pcap file (the libpcap format rtpengine writes with
 * `recording-method = pcap`), or a plain reason why not.
 *
 * Pure and bounded: one pass over the buffer, every length checked against what is left before it
 * is used, at most `maxPackets` records, so a hostile or cut file costs time linear in its size and
 * never throws anything but CAPTURE_INVALID. A file cut inside its last record (rtpengine killed
 * mid-call) keeps the records before the cut and says so in `truncated`: the call up to there is
 * still the call.
 *
 * Link types: rtpengine's `recording-format = raw` writes LINKTYPE_RAW (101, the IP header first),
 * `eth` a fake Ethernet header (1); 228 (LINKTYPE_IPV4) is accepted too. IPv4 and IPv6, UDP only.
 */
export type CaptureRefusal = 'not_pcap' | 'unsupported_link' | 'truncated' | 'too_many_packets' | 'no_audio' | 'unsupported_codec' | 'too_long' | 'metadata';

export function refuseCapture(reason: CaptureRefusal, message: string, details: Record<string, unknown> = {}): CadenzaError {
  return cadenzaError('CAPTURE_INVALID', message, { reason, ...details });
}

export interface UdpDatagram {
  /** Capture time in microseconds since the Unix epoch. */
  readonly tsUs: number;
  readonly src: string;
  readonly dst: string;
  readonly payload: Uint8Array;
}

export interface Capture {
  readonly datagrams: UdpDatagram[];
  /** Records skipped: not IP, not UDP, or a header that does not add up. */
  readonly skipped: number;
  /** The file ends inside a record (the writer stopped mid-call). */
  readonly truncated: boolean;
}

const LINK_ETHERNET = 1;
const LINK_RAW = 101;
const LINK_IPV4 = 228;
// A call of 4 hours, two legs at 50 packets a second, with room for RTCP and DTMF.
export const MAX_PACKETS = 4 * 3600 * 50 * 2 * 2;

export function parsePcap(bytes: Uint8Array, maxPackets = MAX_PACKETS): Capture {
  if (bytes.length < 24) throw refuseCapture('not_pcap', 'The capture is shorter than a pcap file header.', { bytes: bytes.length });
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = view.getUint32(0, false);
  // Microsecond (a1b2c3d4) and nanosecond (a1b23c4d) magics, written in either byte order.
  let little: boolean;
  let nano: boolean;
  if (magic === 0xa1b2c3d4 || magic === 0xa1b23c4d) [little, nano] = [false, magic === 0xa1b23c4d];
  else if (magic === 0xd4c3b2a1 || magic === 0x4d3cb2a1) [little, nano] = [true, magic === 0x4d3cb2a1];
  else throw refuseCapture('not_pcap', 'The capture is not a pcap file (unknown magic number).', { magic: magic.toString(16) });
  const link = view.getUint32(20, little) & 0xffff;
  if (link !== LINK_RAW && link !== LINK_ETHERNET && link !== LINK_IPV4) throw refuseCapture('unsupported_link', `The capture's link type ${link} is not raw IP or Ethernet.`, { link });

  const datagrams: UdpDatagram[] = [];
  let skipped = 0;
  let truncated = false;
  let at = 24;
  while (at < bytes.length) {
    if (at + 16 > bytes.length) {
      truncated = true;
      break;
    }
    const sec = view.getUint32(at, little);
    const frac = view.getUint32(at + 4, little);
    const incl = view.getUint32(at + 8, little);
    const body = at + 16;
    if (body + incl > bytes.length) {
      truncated = true;
      break;
    }
    if (datagrams.length + skipped >= maxPackets) throw refuseCapture('too_many_packets', `The capture holds more than ${maxPackets} packets.`, { maxPackets });
    const d = udpOf(bytes.subarray(body, body + incl), link);
    if (d) datagrams.push({ tsUs: sec * 1e6 + (nano ? Math.floor(frac / 1000) : frac), ...d });
    else skipped++;
    at = body + incl;
  }
  return { datagrams, skipped, truncated };
}

/** The UDP datagram in one captured frame, or null when the frame is something else or malformed. */
function udpOf(frame: Uint8Array, link: number): { src: string; dst: string; payload: Uint8Array } | null {
  let ip = frame;
  if (link === LINK_ETHERNET) {
    if (frame.length < 14) return null;
    const type = (frame[12]! << 8) | frame[13]!;
    if (type !== 0x0800 && type !== 0x86dd) return null;
    ip = frame.subarray(14);
  }
  if (ip.length < 1) return null;
  const version = ip[0]! >> 4;
  let udpAt: number;
  let src: string;
  let dst: string;
  let end = ip.length;
  if (version === 4) {
    const ihl = (ip[0]! & 0x0f) * 4;
    if (ihl < 20 || ip.length < ihl + 8 || ip[9] !== 17) return null;
    const total = (ip[2]! << 8) | ip[3]!;
    if (total >= ihl + 8 && total < end) end = total;
    src = `${ip[12]}.${ip[13]}.${ip[14]}.${ip[15]}`;
    dst = `${ip[16]}.${ip[17]}.${ip[18]}.${ip[19]}`;
    udpAt = ihl;
  } else if (version === 6) {
    // No extension headers: rtpengine writes UDP straight after the fixed header.
    if (ip.length < 48 || ip[6] !== 17) return null;
    src = v6(ip.subarray(8, 24));
    dst = v6(ip.subarray(24, 40));
    udpAt = 40;
  } else return null;
  const sport = (ip[udpAt]! << 8) | ip[udpAt + 1]!;
  const dport = (ip[udpAt + 2]! << 8) | ip[udpAt + 3]!;
  const udpLen = (ip[udpAt + 4]! << 8) | ip[udpAt + 5]!;
  if (udpLen >= 8 && udpAt + udpLen < end) end = udpAt + udpLen;
  return { src: `${src}:${sport}`, dst: `${dst}:${dport}`, payload: ip.subarray(udpAt + 8, end) };
}

function v6(b: Uint8Array): string {
  const parts: string[] = [];
  for (let i = 0; i < 16; i += 2) parts.push(((b[i]! << 8) | b[i + 1]!).toString(16));
  return `[${parts.join(':')}]`;
}
