/**
 * The corpus's template language, parsed once at load (the corpus is ours, so a mistake in it is
 * a programming error and throws at import, caught by the tests):
 *
 *   {a|b|c}   one of the alternatives (nested freely; an empty alternative drops the part)
 *   <name>    an entry of the language's lexicon (a shared synonym set, itself a template)
 *   [to]      the receiver's first name; [from] the sender's
 *
 * Rendering takes every choice from a Choices source: for warmup mail that source is the keyed MAC
 * stream (choices.ts), so which alternatives were picked is the marker.
 */

export type Node = string | { alts: Node[][] } | { ref: string } | { slot: 'to' | 'from' };

export interface Choices {
  /** An index in [0, k). */
  pick(k: number): number;
}

export interface Names {
  to: string;
  from: string;
}

export function parseTemplate(src: string): Node[] {
  let i = 0;
  const seq = (inAlt: boolean): Node[] => {
    const out: Node[] = [];
    let text = '';
    const flush = () => {
      if (text) out.push(text);
      text = '';
    };
    while (i < src.length) {
      const ch = src[i]!;
      if (ch === '{') {
        flush();
        i++;
        const alts: Node[][] = [seq(true)];
        while (src[i] === '|') {
          i++;
          alts.push(seq(true));
        }
        if (src[i] !== '}') throw new Error(`template: unclosed '{' in ${JSON.stringify(src)}`);
        i++;
        out.push({ alts });
      } else if (ch === '|' || ch === '}') {
        if (!inAlt) throw new Error(`template: stray '${ch}' in ${JSON.stringify(src)}`);
        break;
      } else if (ch === '<') {
        const end = src.indexOf('>', i);
        if (end < 0) throw new Error(`template: unclosed '<' in ${JSON.stringify(src)}`);
        flush();
        out.push({ ref: src.slice(i + 1, end) });
        i = end + 1;
      } else if (src.startsWith('[to]', i) || src.startsWith('[from]', i)) {
        flush();
        const slot = src.startsWith('[to]', i) ? 'to' : 'from';
        out.push({ slot });
        i += slot.length + 2;
      } else {
        text += ch;
        i++;
      }
    }
    flush();
    return out;
  };
  const nodes = seq(false);
  if (i !== src.length) throw new Error(`template: stray '${src[i]}' in ${JSON.stringify(src)}`);
  return nodes;
}

export function render(nodes: readonly Node[], lexicon: ReadonlyMap<string, Node[]>, choices: Choices, names: Names): string {
  let out = '';
  for (const n of nodes) {
    if (typeof n === 'string') out += n;
    else if ('alts' in n) out += render(n.alts[choices.pick(n.alts.length)]!, lexicon, choices, names);
    else if ('ref' in n) {
      const entry = lexicon.get(n.ref);
      if (!entry) throw new Error(`template: unknown lexicon entry <${n.ref}>`);
      out += render(entry, lexicon, choices, names);
    } else out += names[n.slot];
  }
  return out;
}

/** Spaces collapsed, no space before punctuation, each sentence starting with a capital. */
export function tidy(text: string): string {
  const t = text
    .replace(/[ \t]+/g, ' ')
    .replace(/ +([,.!?;:])/g, (_, p: string) => p)
    .replace(/ *\n */g, '\n')
    .replace(/([,.!?])\1+/g, '$1')
    .trim();
  // French puts a space before ? ! ; : — written in the corpus as a no-break space, kept here.
  return t.replace(/(^|[.!?]\s+|\n)(\p{Ll})/gu, (_, before: string, c: string) => before + c.toUpperCase());
}
