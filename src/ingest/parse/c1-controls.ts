/**
 * Node 20's TextDecoder decodes 'windows-1252' (and the labels WHATWG maps to it: iso-8859-1,
 * latin1, us-ascii) as strict Latin-1, leaving bytes 0x80–0x9F as C1 control characters instead
 * of €, “, ”, –, … (fixed in later Node releases). Mail never means C1 controls, so they are
 * mapped to the windows-1252 characters those bytes stand for; the five bytes windows-1252 leaves
 * undefined stay as they are.
 */
const CP1252: Record<number, string> = {
  0x80: '€', 0x82: '‚', 0x83: 'ƒ', 0x84: '„', 0x85: '…', 0x86: '†', 0x87: '‡', 0x88: 'ˆ', 0x89: '‰', 0x8a: 'Š',
  0x8b: '‹', 0x8c: 'Œ', 0x8e: 'Ž', 0x91: '‘', 0x92: '’', 0x93: '“', 0x94: '”', 0x95: '•', 0x96: '–', 0x97: '—',
  0x98: '˜', 0x99: '™', 0x9a: 'š', 0x9b: '›', 0x9c: 'œ', 0x9e: 'ž', 0x9f: 'Ÿ',
};

export function fixC1Controls(s: string): string {
  return /[\u0080-\u009f]/.test(s) ? s.replace(/[\u0080-\u009f]/g, (c) => CP1252[c.charCodeAt(0)] ?? c) : s;
}
