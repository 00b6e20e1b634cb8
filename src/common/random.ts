/**
 * Seeded randomness. Every random choice in logic (window offsets, spintax, jitter) draws from an
 * injected Random so that a simulation replays exactly from its seed.
 */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max] inclusive. */
  int(min: number, max: number): number;
  /** A child stream whose sequence depends only on this stream's seed and the label. */
  fork(label: string): Random;
}

/** sfc32 seeded through splitmix32: small, fast, good statistical quality, and trivially replayable. */
export function seededRandom(seed: number | string): Random {
  const s = typeof seed === 'string' ? hashString(seed) : seed >>> 0;
  let x = s;
  const splitmix = () => {
    x = (x + 0x9e3779b9) >>> 0;
    let z = x;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix();
  let b = splitmix();
  let c = splitmix();
  let d = splitmix();
  const next = () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  const rnd: Random = {
    next,
    int(min, max) {
      return min + Math.floor(next() * (max - min + 1));
    },
    fork(label) {
      return seededRandom((s ^ hashString(label)) >>> 0);
    },
  };
  return rnd;
}

/** Production randomness: seeded from the OS so that two processes do not share a stream. */
export function systemRandom(): Random {
  const buf = new Uint32Array(1);
  globalThis.crypto.getRandomValues(buf);
  return seededRandom(buf[0]!);
}

export function hashString(str: string): number {
  // FNV-1a, 32 bit
  let h = 0x811c9dc5;
  for (let i = 0; i < str.length; i++) {
    h ^= str.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
