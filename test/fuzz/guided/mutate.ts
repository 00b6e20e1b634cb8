import type { Random } from '../../../src/common/random.ts';
import { mutators as mailMutators } from '../mutators.ts';
import { arbitraries, draw } from './arbitraries.ts';
import type { InputKind } from './targets.ts';

/**
 * The guided fuzzer's mutations: byte-, line- and header-level edits, splicing two corpus entries,
 * dictionary insertion, and fast-check values for structured fields. A mutation takes the parent,
 * the corpus (for splicing), the dictionary and a seeded random stream, and returns new bytes;
 * `mutateInput` stacks 1–4 of them. The mail targets also get test/fuzz/mutators.ts's MIME
 * mutations (header refolding, boundary confusion, broken encodings…), less the ones that build
 * megabytes (those stay with the unguided campaign, which has the budget for them).
 */
export interface MutationContext {
  corpus: readonly Uint8Array[];
  dictionary: readonly string[];
  kind: InputKind;
  /** Inputs are cut to this many bytes. */
  maxBytes: number;
}

type Mutation = (input: Uint8Array, rnd: Random, ctx: MutationContext) => Uint8Array;

const enc = (s: string) => new Uint8Array(Buffer.from(s, 'latin1'));
const encUtf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const latin1 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
const INTERESTING = [0, 0x09, 0x0a, 0x0d, 0x20, 0x22, 0x28, 0x29, 0x2c, 0x2d, 0x2e, 0x3a, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f, 0x40, 0x5c, 0x7f, 0x80, 0xc3, 0xe2, 0xff];

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const pick = <T>(rnd: Random, xs: readonly T[]): T => xs[rnd.int(0, xs.length - 1)]!;

/** Offsets just after each line feed (and 0): where a line or a header field may start. */
function lineStarts(b: Uint8Array): number[] {
  const out = [0];
  for (let i = 0; i < b.length && out.length < 4096; i++) if (b[i] === 0x0a) out.push(i + 1);
  return out;
}

/** End of the header block (the offset of its empty line), or the whole input. */
function headerEnd(b: Uint8Array): number {
  const m = /\r?\n\r?\n/.exec(latin1(b.subarray(0, Math.min(b.length, 65536))));
  return m ? m.index : b.length;
}

const byteMutations: Record<string, Mutation> = {
  flipBit(b, rnd) {
    if (!b.length) return b;
    const out = b.slice();
    const at = rnd.int(0, out.length - 1);
    out[at] = out[at]! ^ (1 << rnd.int(0, 7));
    return out;
  },
  setByte(b, rnd) {
    if (!b.length) return b;
    const out = b.slice();
    out[rnd.int(0, out.length - 1)] = rnd.next() < 0.5 ? pick(rnd, INTERESTING) : rnd.int(0, 255);
    return out;
  },
  insertBytes(b, rnd) {
    const at = rnd.int(0, b.length);
    const ins = Uint8Array.from({ length: rnd.int(1, 8) }, () => (rnd.next() < 0.5 ? pick(rnd, INTERESTING) : rnd.int(0, 255)));
    return concat(b.subarray(0, at), ins, b.subarray(at));
  },
  deleteRange(b, rnd) {
    if (!b.length) return b;
    const at = rnd.int(0, b.length - 1);
    const len = rnd.int(1, Math.min(b.length - at, rnd.next() < 0.8 ? 16 : 4096));
    return concat(b.subarray(0, at), b.subarray(at + len));
  },
  duplicateRange(b, rnd) {
    if (!b.length) return b;
    const at = rnd.int(0, b.length - 1);
    const len = rnd.int(1, Math.min(b.length - at, 256));
    const piece = b.subarray(at, at + len);
    return concat(b.subarray(0, at), ...new Array<Uint8Array>(rnd.int(2, 16)).fill(piece), b.subarray(at + len));
  },
};

const lineMutations: Record<string, Mutation> = {
  deleteLine(b, rnd) {
    const starts = lineStarts(b);
    const i = rnd.int(0, starts.length - 1);
    return concat(b.subarray(0, starts[i]!), b.subarray(starts[i + 1] ?? b.length));
  },
  duplicateLine(b, rnd) {
    const starts = lineStarts(b);
    const i = rnd.int(0, starts.length - 1);
    const line = b.subarray(starts[i]!, starts[i + 1] ?? b.length);
    return concat(b.subarray(0, starts[i]!), line, line, b.subarray(starts[i]!+ line.length));
  },
  swapLines(b, rnd) {
    const starts = lineStarts(b);
    if (starts.length < 3) return b;
    const i = rnd.int(0, starts.length - 3);
    const a = b.subarray(starts[i]!, starts[i + 1]!);
    const c = b.subarray(starts[i + 1]!, starts[i + 2] ?? b.length);
    return concat(b.subarray(0, starts[i]!), c, a, b.subarray(starts[i + 2] ?? b.length));
  },
  /** A line of another corpus entry, at a line start of this one. */
  foreignLine(b, rnd, ctx) {
    const other = pick(rnd, ctx.corpus);
    const os = lineStarts(other);
    const j = rnd.int(0, os.length - 1);
    const line = other.subarray(os[j]!, os[j + 1] ?? other.length);
    const at = pick(rnd, lineStarts(b));
    return concat(b.subarray(0, at), line, b.subarray(at));
  },
};

const structureMutations: Record<string, Mutation> = {
  /** This input's head with another's tail (at line starts half the time). */
  splice(b, rnd, ctx) {
    const other = pick(rnd, ctx.corpus);
    const lines = rnd.next() < 0.5;
    const cutA = lines ? pick(rnd, lineStarts(b)) : rnd.int(0, b.length);
    const cutB = lines ? pick(rnd, lineStarts(other)) : rnd.int(0, other.length);
    return concat(b.subarray(0, cutA), other.subarray(cutB));
  },
  dictionaryInsert(b, rnd, ctx) {
    const tok = encUtf8(pick(rnd, ctx.dictionary));
    const at = rnd.next() < 0.5 ? pick(rnd, lineStarts(b)) : rnd.int(0, b.length);
    return concat(b.subarray(0, at), tok, b.subarray(at));
  },
  dictionaryReplace(b, rnd, ctx) {
    if (!b.length) return b;
    const tok = encUtf8(pick(rnd, ctx.dictionary));
    const at = rnd.int(0, b.length - 1);
    return concat(b.subarray(0, at), tok, b.subarray(Math.min(b.length, at + rnd.int(1, tok.length + 4))));
  },
};

const mailOnly: Record<string, Mutation> = {
  /** A fast-check header field (or DSN block) in the header block, or at a line start of a body part. */
  generatedHeader(b, rnd) {
    const field = enc(Buffer.from(draw(arbitraries.headerField, rnd.int(0, 2 ** 31 - 1)), 'utf8').toString('latin1'));
    const at = rnd.next() < 0.6 ? headerEnd(b) : pick(rnd, lineStarts(b));
    return concat(b.subarray(0, at), enc('\r\n'), field, enc('\r\n'), b.subarray(at));
  },
  ...Object.fromEntries(
    ['byteFlips', 'truncate', 'duplicateHeaders', 'deleteHeaders', 'refoldHeaders', 'brokenBase64', 'brokenQuotedPrintable', 'invalidCharset', 'nulBytes', 'boundaryConfusion'].map(
      (n): [string, Mutation] => [n, (b, rnd) => mailMutators[n]!(b, rnd)],
    ),
  ),
};

const textOnly: Record<string, Mutation> = {
  /** Text of the same sentence in other letters: case and Unicode forms (İ, ß, full-width). */
  recase(b, rnd) {
    const s = Buffer.from(b).toString('utf8');
    const f = pick(rnd, [(x: string) => x.toUpperCase(), (x: string) => x.toLowerCase(), (x: string) => x.normalize('NFD'), (x: string) => x.replace(/ /g, '\u00a0')]);
    return encUtf8(f(s));
  },
};

const jsonOnly: Record<string, Mutation> = {
  /** Parse, replace one node (or add a key) with a fast-check JSON value, serialise. */
  replaceNode(b, rnd) {
    let doc: unknown;
    try {
      doc = JSON.parse(Buffer.from(b).toString('utf8'));
    } catch {
      return b;
    }
    const value = draw(arbitraries.jsonAny, rnd.int(0, 2 ** 31 - 1));
    const nodes: Array<Record<string, unknown> | unknown[]> = [];
    const walk = (v: unknown) => {
      if (v && typeof v === 'object' && nodes.length < 500) {
        nodes.push(v as Record<string, unknown>);
        for (const c of Object.values(v)) walk(c);
      }
    };
    walk(doc);
    if (!nodes.length) return encUtf8(JSON.stringify(value) ?? 'null');
    const n = pick(rnd, nodes);
    const keys = Object.keys(n);
    if (Array.isArray(n)) n[rnd.int(0, n.length)] = value;
    else n[keys.length && rnd.next() < 0.7 ? pick(rnd, keys) : pick(rnd, ['id', 'threadId', 'value', 'error', 'raw', 'historyId', '@removed', '@odata.deltaLink'])] = value;
    return encUtf8(JSON.stringify(doc));
  },
};

const BY_KIND: Record<InputKind, Record<string, Mutation>> = {
  mail: { ...byteMutations, ...lineMutations, ...structureMutations, ...mailOnly },
  text: { ...byteMutations, ...lineMutations, ...structureMutations, ...textOnly },
  json: { ...byteMutations, ...structureMutations, ...jsonOnly },
};

export function mutationNames(kind: InputKind): string[] {
  return Object.keys(BY_KIND[kind]);
}

/** 1–4 stacked mutations of `parent`; returns the bytes and the names applied (for the report). */
export function mutateInput(parent: Uint8Array, rnd: Random, ctx: MutationContext): { bytes: Uint8Array; mutations: string[] } {
  const table = BY_KIND[ctx.kind];
  const names = Object.keys(table);
  let out = parent;
  const applied: string[] = [];
  for (let i = rnd.int(1, 4); i > 0; i--) {
    const name = pick(rnd, names);
    out = table[name]!(out, rnd, ctx);
    applied.push(name);
  }
  return { bytes: out.length > ctx.maxBytes ? out.slice(0, ctx.maxBytes) : out, mutations: applied };
}
