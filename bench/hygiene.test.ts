import { describe, expect, it } from 'vitest';
import hygieneBench from './hygiene.ts';

/** The short variant of `npm run bench -- hygiene`: it runs, and its figures are there. */
describe('hygiene bench (short)', () => {
  it('checks addresses cold and warm against the local DNS server, with its anchors', async () => {
    const f = await hygieneBench(['--addresses=300', '--domains=30', '--rounds=1']);
    for (const k of ['cold_per_s', 'warm_per_s', 'syntax_per_s', 'warm_over_syntax', 'cold_over_bare_dns']) expect(f[k], k).toBeGreaterThan(0);
  }, 30_000);
});
