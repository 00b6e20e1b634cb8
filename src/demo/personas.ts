import type { Random } from '../common/random.ts';

/**
 * What each simulated prospect will do with the mail they get: most say nothing; some answer
 * (interested, not interested, a question), some addresses bounce, some are on holiday, some ask to
 * be removed. Quotas rather than independent draws, so that even a 30-lead demo shows every kind.
 * Pure: the plan comes from the seeded random source only.
 */
export type PersonaKind = 'silent' | 'interested' | 'not_interested' | 'question' | 'bounce' | 'out_of_office' | 'unsubscribe';

export interface Persona {
  kind: PersonaKind;
  /** Which of our emails they react to (0: the first), capped at the last one the sequence sends. */
  onEmail: number;
  /** Simulated ms between our email landing and their reaction. */
  delayMs: number;
  /** For out_of_office: back this many days after the day the note is written. */
  backInDays: number;
}

const MIN = 60_000;
const HOUR = 60 * MIN;

/** Share of the leads per kind; the rest stay silent. */
export const personaShares: Readonly<Record<Exclude<PersonaKind, 'silent'>, number>> = {
  interested: 0.07,
  not_interested: 0.05,
  question: 0.05,
  bounce: 0.04,
  out_of_office: 0.06,
  unsubscribe: 0.04,
};

function delayFor(r: Random, kind: PersonaKind): number {
  const between = (a: number, b: number) => a + Math.floor(r.next() * (b - a));
  switch (kind) {
    case 'bounce':
      return between(10_000, 5 * MIN); // the receiving server answers within minutes
    case 'out_of_office':
      return between(5_000, 2 * MIN); // responders answer at once
    default:
      return between(20 * MIN, 9 * HOUR); // people read mail when they get to it
  }
}

export function planPersonas(r: Random, n: number): Persona[] {
  const kinds: PersonaKind[] = [];
  for (const [kind, share] of Object.entries(personaShares) as Array<[PersonaKind, number]>) {
    const count = Math.min(n - kinds.length, Math.max(1, Math.round(share * n)));
    for (let i = 0; i < count; i++) kinds.push(kind);
  }
  while (kinds.length < n) kinds.push('silent');
  // Fisher-Yates with the seeded source.
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = r.int(0, i);
    [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
  }
  return kinds.map((kind) => ({
    kind,
    // Bounces and responders act on the first mail; people answer the first or a follow-up.
    onEmail: kind === 'bounce' || kind === 'out_of_office' || kind === 'silent' ? 0 : r.next() < 0.6 ? 0 : 1,
    delayMs: delayFor(r, kind),
    backInDays: 1,
  }));
}
