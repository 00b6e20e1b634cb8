/**
 * The warmup text: varied enough that no phrase recurs (a filter could learn a recurring phrase),
 * and marked so that only the pool's key writes and recognises it.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import type { WarmupFields } from './choices.ts';
import { generateWarmupText, warmupLanguages, type WarmupLanguage } from './generate.ts';
import { verifyWarmup, warmupPoolKey, writeWarmup } from './marker.ts';

const KEY = warmupPoolKey(Buffer.alloc(32, 7), 'pool-1');
const NAMES = ['Anna', 'Ben', 'Carla', 'David', 'Elif', 'Farid', 'Greta', 'Hugo', 'Inés', 'Jonas', 'Kira', 'Luis', 'Mia', 'Noah', 'Olga', 'Zoë'];

/** A Message-ID from the seeded stream, so a run is replayable (the text is a function of it). */
const idOf = (r: ReturnType<typeof seededRandom>, domain: string) => `<${Array.from({ length: 4 }, () => r.int(0, 0xffffff).toString(16).padStart(6, '0')).join('')}@${domain}>`;

function fieldsFor(i: number, reply: boolean): WarmupFields {
  const r = seededRandom(i);
  return {
    from: `${NAMES[r.int(0, 15)]!.toLowerCase()}@sender${r.int(0, 99)}.example`,
    to: `${NAMES[r.int(0, 15)]!.toLowerCase()}@receiver${r.int(0, 99)}.example`,
    messageId: idOf(r, 'sender.example'),
    ...(reply ? { inReplyTo: idOf(r, 'receiver.example') } : {}),
    fromName: NAMES[r.int(0, 15)]!,
    toName: NAMES[r.int(0, 15)]!,
  };
}

const words = (s: string) => s.toLowerCase().split(/[^\p{L}\p{N}']+/u).filter(Boolean);

describe('warmup text', () => {
  it('repeats no phrase of four words or more in more than 6% of 10,000 mails, per language and kind', () => {
    // Every phrase longer than four words contains one of four, so counting 4-grams bounds them all.
    const counts = new Map<string, Map<string, number>>();
    const mails = new Map<string, number>();
    for (let i = 0; i < 10_000; i++) {
      const lang = warmupLanguages[i % 4]!;
      const reply = i % 3 === 2;
      const group = `${lang} ${reply ? 'reply' : 'first'}`;
      const t = writeWarmup(KEY, lang, fieldsFor(i, reply));
      const seen = new Set<string>();
      for (const part of [t.subject ?? '', t.body]) {
        const w = words(part);
        for (let j = 0; j + 4 <= w.length; j++) seen.add(w.slice(j, j + 4).join(' '));
      }
      const c = counts.get(group) ?? new Map<string, number>();
      counts.set(group, c);
      for (const g of seen) c.set(g, (c.get(g) ?? 0) + 1);
      mails.set(group, (mails.get(group) ?? 0) + 1);
    }
    expect(counts.size).toBe(8);
    const worst = [...counts].map(([group, c]) => {
      const [gram, k] = [...c].reduce((a, b) => (b[1] > a[1] ? b : a));
      return { group, gram, share: k / mails.get(group)! };
    });
    for (const w of worst) expect(w.share, `${w.group}: '${w.gram}'`).toBeLessThanOrEqual(0.06);
  }, 60_000);

  it('writes distinct mails: no body twice, subjects (a few words) in many forms', () => {
    const bodies = new Set<string>();
    const subjects = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const t = writeWarmup(KEY, 'en', fieldsFor(i, false));
      bodies.add(t.body);
      subjects.add(t.subject!);
    }
    expect(bodies.size).toBe(2000);
    expect(subjects.size).toBeGreaterThan(150);
  });

  it('parses every template of every language, each alternative reachable', () => {
    // The first and the last alternative everywhere: a broken reference or brace throws here.
    for (const lang of warmupLanguages) {
      for (const pick of [() => 0, (k: number) => k - 1]) {
        for (const kind of ['first', 'reply'] as const) {
          const t = generateWarmupText(lang, kind, { to: 'Anna', from: 'Ben' }, { pick });
          expect(t.body).toMatch(/Ben$/);
          expect(t.body).not.toMatch(/[{}<>[\]|]/);
        }
      }
    }
  });
});

describe('the warmup marker', () => {
  it('verifies what the pool wrote, in its language, first mails and replies', () => {
    for (let i = 0; i < 200; i++) {
      const lang: WarmupLanguage = warmupLanguages[i % 4]!;
      const f = fieldsFor(i, i % 2 === 1);
      const t = writeWarmup(KEY, lang, f);
      // Transports re-wrap lines and may use CRLF: whitespace does not matter.
      const rewrapped = t.body.replace(/ /g, i % 3 === 0 ? '\r\n' : '  ');
      expect(verifyWarmup(KEY, { subject: t.subject, body: rewrapped }, f)).toEqual({ warmup: true, language: lang });
    }
  });

  it('fails a changed mail: a word, the order, the subject, the fields, another key', () => {
    const f = fieldsFor(1, false);
    const t = writeWarmup(KEY, 'en', f);
    const w = t.body.split(' ');
    const changed = [
      { subject: t.subject, body: [...w.slice(0, 5), 'really', ...w.slice(5)].join(' ') },
      { subject: t.subject, body: w.filter((_, i) => i !== 6).join(' ') },
      { subject: t.subject, body: t.body.split('\n\n').reverse().join('\n\n') },
      // The subject's first word replaced by another (never by itself, which would change nothing).
      { subject: t.subject!.replace(/\w+/, (w) => (w === 'Hello' ? 'Greetings' : 'Hello')), body: t.body },
      { subject: t.subject, body: `${t.body}\n\nSent from my phone` },
    ];
    for (const m of changed) expect(verifyWarmup(KEY, m, f).warmup).toBe(false);
    for (const g of [{ ...f, messageId: '<other@sender.example>' }, { ...f, to: 'someone@else.example' }, { ...f, inReplyTo: '<x@y>' }]) {
      expect(verifyWarmup(KEY, t, g).warmup).toBe(false);
    }
    expect(verifyWarmup(warmupPoolKey(Buffer.alloc(32, 7), 'pool-2'), t, f).warmup).toBe(false);
    expect(verifyWarmup(KEY, t, f).warmup).toBe(true);
  });

  it('does not verify a human reply, nor generated text made without the key', () => {
    const f = fieldsFor(2, true);
    const human = [
      'Hi Ben,\n\nThanks for the note! Things are busy here, the quarter is wrapping up. Coffee next week?\n\nBest,\nAnna',
      'Danke, passt. Bis Montag!',
      'Bonjour, je reviens vers vous demain. Cordialement, Anna',
      '',
    ];
    for (const body of human) expect(verifyWarmup(KEY, { body }, f)).toEqual({ warmup: false, reason: 'no-match' });
    const rnd = seededRandom(3);
    const lookalike = generateWarmupText('en', 'reply', { to: f.toName, from: f.fromName }, { pick: (k) => rnd.int(0, k - 1) });
    expect(verifyWarmup(KEY, lookalike, f).warmup).toBe(false);
  });

  it('answers a huge body at once, without regenerating', () => {
    const f = fieldsFor(4, false);
    const t0 = performance.now();
    expect(verifyWarmup(KEY, { subject: 'x', body: 'word '.repeat(2_000_000) }, f)).toEqual({ warmup: false, reason: 'too-long' });
    expect(performance.now() - t0).toBeLessThan(50);
  });
});
