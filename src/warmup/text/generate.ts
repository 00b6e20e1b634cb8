/**
 * Warmup mail text: a first mail (subject and body) or a reply (body; its subject is "Re: " and
 * the first mail's), in one corpus language, every choice drawn from a Choices source. With the
 * keyed MAC stream (choices.ts) the same fields always give the same text, which is how the
 * receiver verifies it (marker.ts); with a seeded random source it is a plain generator (tests).
 *
 * Shape of a first mail: greeting; an opener and two or three distinct topics, sometimes a
 * question, in one or two paragraphs; sometimes a closing line; a sign-off. A reply: sometimes a
 * greeting; a reply opener and one or two answers, sometimes a question or closing; a sign-off.
 */
import { de } from './corpus/de.ts';
import { en } from './corpus/en.ts';
import { es } from './corpus/es.ts';
import { fr } from './corpus/fr.ts';
import type { Corpus } from './corpus/types.ts';
import { parseTemplate, render, tidy, type Choices, type Names, type Node } from './spin.ts';

export type WarmupLanguage = 'en' | 'de' | 'fr' | 'es';
export const warmupLanguages: readonly WarmupLanguage[] = ['en', 'de', 'fr', 'es'];

interface Parsed {
  lexicon: Map<string, Node[]>;
  lists: Record<Exclude<keyof Corpus, 'lang' | 'lexicon'>, Node[][]>;
}

function parseCorpus(c: Corpus): Parsed {
  const lexicon = new Map(Object.entries(c.lexicon).map(([k, v]) => [k, parseTemplate(v)]));
  const p = (l: string[]) => l.map(parseTemplate);
  return {
    lexicon,
    lists: {
      subjects: p(c.subjects),
      greetings: p(c.greetings),
      openers: p(c.openers),
      topics: p(c.topics),
      questions: p(c.questions),
      closings: p(c.closings),
      signoffs: p(c.signoffs),
      replyOpeners: p(c.replyOpeners),
      replyTopics: p(c.replyTopics),
    },
  };
}

const corpora: Record<WarmupLanguage, Parsed> = { en: parseCorpus(en), de: parseCorpus(de), fr: parseCorpus(fr), es: parseCorpus(es) };

export interface WarmupText {
  /** Absent for a reply (the composer writes "Re: " and the first mail's subject). */
  subject?: string;
  body: string;
}

/** Distinct entries of a list, in drawn order. */
function drawDistinct(list: Node[][], k: number, choices: Choices): Node[][] {
  const idx = list.map((_, i) => i);
  const out: Node[][] = [];
  for (let i = 0; i < k && idx.length > 0; i++) out.push(list[idx.splice(choices.pick(idx.length), 1)[0]!]!);
  return out;
}

export function generateWarmupText(lang: WarmupLanguage, kind: 'first' | 'reply', names: Names, choices: Choices): WarmupText {
  const c = corpora[lang];
  const one = (list: Node[][]) => r(list[choices.pick(list.length)]!);
  const r = (nodes: Node[]) => tidy(render(nodes, c.lexicon, choices, names));
  const chance = (percent: number) => choices.pick(100) < percent;
  const sentences: string[] = [];
  const lines: string[] = [];
  if (kind === 'first') {
    const subject = one(c.lists.subjects);
    lines.push(one(c.lists.greetings));
    sentences.push(one(c.lists.openers), ...drawDistinct(c.lists.topics, 2 + choices.pick(2), choices).map(r));
    if (chance(60)) sentences.push(one(c.lists.questions));
    pushParagraphs(lines, sentences, choices);
    if (chance(70)) lines.push(one(c.lists.closings));
    lines.push(one(c.lists.signoffs));
    return { subject, body: lines.join('\n\n') };
  }
  if (chance(70)) lines.push(one(c.lists.greetings));
  sentences.push(one(c.lists.replyOpeners), ...drawDistinct(c.lists.replyTopics, 1 + choices.pick(2), choices).map(r));
  if (chance(40)) sentences.push(one(c.lists.questions));
  pushParagraphs(lines, sentences, choices);
  if (chance(50)) lines.push(one(c.lists.closings));
  lines.push(one(c.lists.signoffs));
  return { body: lines.join('\n\n') };
}

/** One paragraph, or two split at a drawn sentence. */
function pushParagraphs(lines: string[], sentences: string[], choices: Choices): void {
  const split = sentences.length > 2 ? choices.pick(sentences.length) : 0;
  if (split === 0) lines.push(sentences.join(' '));
  else lines.push(sentences.slice(0, split).join(' '), sentences.slice(split).join(' '));
}
