/**
 * The values a query sends and gets back, as JSON that keeps their types: a Date stays a Date, a
 * Buffer a Buffer (bytea: sealed credentials), a bigint a bigint. Rows decoded here are the rows
 * the server's own driver returned, so a command reads the same values through the server as it
 * would from the store itself.
 *
 * Tagged values are objects with a `$` key; a plain object that has one is escaped as `obj`.
 */
type Tagged =
  | { $: 'date'; v: string }
  | { $: 'buffer' | 'bytes'; v: string }
  | { $: 'bigint' | 'num'; v: string }
  | { $: 'undefined' }
  | { $: 'obj'; v: Record<string, unknown> };

export function encodeValue(v: unknown): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : ({ $: 'num', v: String(v) } satisfies Tagged);
  if (typeof v === 'bigint') return { $: 'bigint', v: v.toString() } satisfies Tagged;
  if (v === undefined) return { $: 'undefined' } satisfies Tagged;
  if (v instanceof Date) return { $: 'date', v: Number.isNaN(v.getTime()) ? 'invalid' : v.toISOString() } satisfies Tagged;
  if (Buffer.isBuffer(v)) return { $: 'buffer', v: v.toString('base64') } satisfies Tagged;
  if (v instanceof Uint8Array) return { $: 'bytes', v: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') } satisfies Tagged;
  if (Array.isArray(v)) return v.map(encodeValue);
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = encodeValue(x);
    return '$' in out ? ({ $: 'obj', v: out } satisfies Tagged) : out;
  }
  throw new TypeError(`cannot send a ${typeof v} to the store`);
}

export function decodeValue(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(decodeValue);
  const o = v as Record<string, unknown>;
  if (typeof o.$ === 'string') {
    const t = o as Tagged;
    switch (t.$) {
      case 'date':
        return new Date(t.v === 'invalid' ? Number.NaN : t.v);
      case 'buffer':
        return Buffer.from(t.v, 'base64');
      case 'bytes':
        return new Uint8Array(Buffer.from(t.v, 'base64'));
      case 'bigint':
        return BigInt(t.v);
      case 'num':
        return Number(t.v);
      case 'undefined':
        return undefined;
      case 'obj':
        return decodeObject(t.v);
    }
  }
  return decodeObject(o);
}

function decodeObject(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) out[k] = decodeValue(x);
  return out;
}

/** The fields of a database error that callers read (a PostgreSQL SQLSTATE `code`, the constraint…). */
const errorFields = ['code', 'detail', 'hint', 'constraint', 'table', 'column', 'schema', 'severity', 'details'] as const;

export interface WireError {
  message: string;
  fields: Record<string, unknown>;
}

export function encodeError(e: unknown): WireError {
  const err = e instanceof Error ? e : new Error(String(e));
  const fields: Record<string, unknown> = {};
  for (const f of errorFields) if ((err as unknown as Record<string, unknown>)[f] !== undefined) fields[f] = encodeValue((err as unknown as Record<string, unknown>)[f]);
  return { message: err.message, fields };
}

export function decodeError(w: WireError): Error {
  const e = new Error(w.message);
  for (const [k, v] of Object.entries(w.fields)) (e as unknown as Record<string, unknown>)[k] = decodeValue(v);
  return e;
}

/**
 * Splits a byte stream into newline-terminated JSON frames. A frame longer than `maxBytes` is an
 * error: the peer is not speaking this protocol, or sends more than any query needs.
 */
export class FrameReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Settable: a peer may send little until it has proved who it is. */
  constructor(public maxBytes: number) {}

  push(chunk: Buffer): unknown[] {
    const frames: unknown[] = [];
    let start = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
      if (this.pendingBytes + (i - start) > this.maxBytes) throw new Error(`frame over ${this.maxBytes} bytes`);
      this.pending.push(chunk.subarray(start, i));
      const line = Buffer.concat(this.pending).toString('utf8');
      this.pending = [];
      this.pendingBytes = 0;
      start = i + 1;
      frames.push(JSON.parse(line));
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingBytes += chunk.length - start;
      if (this.pendingBytes > this.maxBytes) throw new Error(`frame over ${this.maxBytes} bytes`);
    }
    return frames;
  }
}

export const frame = (msg: unknown): string => `${JSON.stringify(msg)}\n`;
