import { createSocket } from 'node:dgram';

/**
 * rtpengine's ng control protocol (bencode over UDP, "cookie dict"), just enough for the tests to
 * ask rtpengine what it forwarded for a call: `query` answers per-stream packet counts.
 */
type B = string | number | B[] | { [k: string]: B };

function encode(v: B): string {
  if (typeof v === 'number') return `i${Math.trunc(v)}e`;
  if (typeof v === 'string') return `${Buffer.byteLength(v)}:${v}`;
  if (Array.isArray(v)) return `l${v.map(encode).join('')}e`;
  return `d${Object.keys(v).sort().map((k) => encode(k) + encode(v[k]!)).join('')}e`;
}

function decode(buf: Buffer, at = 0): [B, number] {
  const c = String.fromCharCode(buf[at]!);
  if (c === 'i') {
    const end = buf.indexOf(0x65, at);
    return [Number(buf.subarray(at + 1, end).toString()), end + 1];
  }
  if (c === 'l' || c === 'd') {
    const items: B[] = [];
    let i = at + 1;
    while (buf[i] !== 0x65) {
      const [v, next] = decode(buf, i);
      items.push(v);
      i = next;
    }
    if (c === 'l') return [items, i + 1];
    const o: Record<string, B> = {};
    for (let k = 0; k < items.length; k += 2) o[String(items[k])] = items[k + 1]!;
    return [o, i + 1];
  }
  const colon = buf.indexOf(0x3a, at);
  const len = Number(buf.subarray(at, colon).toString());
  return [buf.subarray(colon + 1, colon + 1 + len).toString('latin1'), colon + 1 + len];
}

export async function ngCommand(port: number, command: Record<string, B>, timeoutMs = 2000): Promise<Record<string, B>> {
  const sock = createSocket('udp4');
  const cookie = `t${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`rtpengine ng: no answer on 127.0.0.1:${port}`)), timeoutMs);
      sock.on('message', (msg) => {
        const sp = msg.indexOf(0x20);
        if (msg.subarray(0, sp).toString() !== cookie) return;
        clearTimeout(timer);
        resolve(decode(msg, sp + 1)[0] as Record<string, B>);
      });
      sock.send(`${cookie} ${encode(command)}`, port, '127.0.0.1');
    });
  } finally {
    sock.close();
  }
}

/** Packets rtpengine received from each side of a call (the browser's leg and the carrier's), from `query`. */
export async function rtpengineCounts(port: number, callId: string): Promise<{ result: string; legs: { tag: string; packets: number; bytes: number }[] }> {
  const r = await ngCommand(port, { command: 'query', 'call-id': callId });
  const tags = (r.tags ?? {}) as Record<string, { tag?: string; medias?: { streams?: { stats?: { packets?: number; bytes?: number } }[] }[] }>;
  const legs = Object.values(tags).map((t) => {
    let packets = 0;
    let bytes = 0;
    for (const m of t.medias ?? []) for (const s of m.streams ?? []) {
      packets += Number(s.stats?.packets ?? 0);
      bytes += Number(s.stats?.bytes ?? 0);
    }
    return { tag: String(t.tag ?? ''), packets, bytes };
  });
  return { result: String(r.result), legs };
}
