import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedWorkspace } from '../../../../test/api.ts';
import { freshStore, testBackends, type TestStore } from '../../../../test/stores.ts';
import { domainProofs } from './domain-proof.ts';

/**
 * 0116's backfill: a workspace that listed SSO domains before the proof existed keeps them,
 * unproven, each with a token of its own, and the statement can run twice.
 */
const backfill = (() => {
  const text = readFileSync(new URL('../../../store/migrations/0116_sso_domain_proof.sql', import.meta.url), 'utf8');
  return text.slice(text.indexOf('insert into workspace_sso_domain'));
})();

describe.each(testBackends())('0116 backfill of SSO domain proofs (%s)', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  }, 60_000);
  afterAll(() => store?.destroy());

  it('lists the domains of existing settings unproven, a distinct token each, and is idempotent', async () => {
    const w = await seedWorkspace(store, 'Old', 'owner@old.test');
    await store.db
      .insertInto('workspace_sso')
      .values({ workspace_id: w.workspaceId, issuer: 'https://id.old.test', client_id: 'c', client_secret_sealed: Buffer.from('x'), allowed_domains: ['old.test', 'old.example'] })
      .execute();
    expect(await domainProofs(store.db, w.workspaceId)).toEqual([]);
    await sql.raw(backfill).execute(store.db);
    await sql.raw(backfill).execute(store.db);
    const proofs = await domainProofs(store.db, w.workspaceId);
    expect(proofs.map((p) => [p.domain, p.verifiedAt])).toEqual([
      ['old.example', null],
      ['old.test', null],
    ]);
    for (const p of proofs) expect(p.recordValue).toMatch(/^cadenza-sso=[0-9a-f]{32}$/);
    expect(proofs[0]!.recordValue).not.toBe(proofs[1]!.recordValue);
  });
});
