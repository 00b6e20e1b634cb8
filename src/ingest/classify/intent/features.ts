import { hashString } from '../../../common/random.ts';

/**
 * Hashed n-gram features of a reply, shared by the trainer and inference so that both see the same
 * vector: word unigrams and bigrams, and character 3- to 5-grams (which carry typos, inflections and
 * languages the word list never saw). Values are log(1 + count), the vector L2-normalised so that a
 * long reply does not shout down a short one.
 */

export const HASH_BITS = 18;
const MASK = (1 << HASH_BITS) - 1;

export type Features = Map<number, number>;

/** Lower-case, Unicode-normalised; addresses, links and digits folded to placeholders. */
export function normalise(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[’‘`´]/g, "'")
    .replace(/\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g, ' emailaddr ')
    .replace(/\bhttps?:\/\/\S+|\bwww\.\S+|\b[\w-]+\.(?:com|io|net|org)\/\S*/g, ' urladdr ')
    .replace(/\d+/g, '0')
    .replace(/\s+/g, ' ')
    .trim();
}

/** murmur3's finaliser over FNV-1a: FNV's low bits alone spread poorly under a mask. */
function bucket(key: string): number {
  let h = hashString(key);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) & MASK;
}

export function featurize(text: string): Features {
  const norm = normalise(text);
  const counts = new Map<number, number>();
  const add = (key: string) => {
    const b = bucket(key);
    counts.set(b, (counts.get(b) ?? 0) + 1);
  };
  const words = norm.match(/[\p{L}\p{N}']+|[?!]/gu) ?? [];
  for (let i = 0; i < words.length; i++) {
    add(`w:${words[i]}`);
    add(`b:${i === 0 ? '^' : words[i - 1]} ${words[i]}`);
  }
  if (words.length) add(`b:${words[words.length - 1]} $`);
  const padded = ` ${norm} `;
  for (let n = 3; n <= 5; n++) for (let i = 0; i + n <= padded.length; i++) add(`c:${padded.slice(i, i + n)}`);
  // Length says something too: "Ok" and a five-paragraph answer are rarely the same intent.
  add(`len:${Math.min(6, Math.floor(Math.log2(1 + words.length)))}`);

  let norm2 = 0;
  for (const [k, c] of counts) {
    const v = Math.log1p(c);
    counts.set(k, v);
    norm2 += v * v;
  }
  const scale = norm2 > 0 ? 1 / Math.sqrt(norm2) : 0;
  for (const [k, v] of counts) counts.set(k, v * scale);
  return counts;
}
