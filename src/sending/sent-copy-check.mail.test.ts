import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { validateDefinition } from '../sequence/definition.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { makeWorld } from '../../test/fixtures/world.ts';
import { describeMailBed } from '../../test/mail/describe-mail-bed.ts';
import { bedEndpoint } from '../../test/mail/mailbed.ts';
import { checkServerSentCopies } from './sent-copy-check.ts';
import { createSmtpTransport } from '../mailbox/connectors/smtp-imap/smtp-transport.ts';

/**
 * serverSavesSent checked against a send the server confirmed (sent-copy-check.ts), on the bed:
 * sync89 files no Sent copy of its own but is configured as if it did (the misconfiguration);
 * sync45 files one. A real message from each to sync52; after the grace period the check
 * switches sync89 to Cadenza-written copies with a warning, and verifies sync45.
 */
const pass = 'pass';
const def = validateDefinition({
  key: 'seq', name: 'Seq', window: 'any', holidays: false, jitter_minutes: 0, mailboxes: ['rep0@acme.test', 'rep1@acme.test'],
  steps: [{ key: 'intro', type: 'email', delay: '0 minutes', subject: 'Hi', body: 'Hello' }],
});

describeMailBed('serverSavesSent: true is checked on a confirmed send', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore('pglite');
  });
  afterAll(async () => store.destroy());

  it('no copy within the grace period: switched to serverSavesSent false with a warning; a copy: verified', async () => {
    const random = seededRandom(89);
    const now = Date.now();
    const clock = new SimClock(now);
    const world = await makeWorld(store, { leads: 2, mailboxes: 2, nowMs: now, random, zones: ['UTC'], countries: [null] });
    const seq = await applyDefinition(store, { clock, random }, world.workspaceId, def);
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seq.sequenceId, leadIds: world.leadIds });
    await new EnrollmentService({ store, clock, random }).fireDue(100);
    const results: Record<string, string> = {};
    for (const [i, n] of [[0, 89], [1, 45]] as const) {
      const mailboxId = world.mailboxIds[i]!;
      const user = `sync${n}@inbox.test`;
      const settings = { smtp: bedEndpoint('smtp'), imap: bedEndpoint('imap'), serverSavesSent: true };
      await store.db.updateTable('mailbox').set({ email: user, settings: JSON.stringify(settings) }).where('id', '=', mailboxId).execute();
      const t = createSmtpTransport({ smtp: settings.smtp, imap: settings.imap, username: user, auth: { kind: 'password', password: pass }, serverSavesSent: true }, { clock: systemClock });
      const messageId = `<${randomUUID()}@inbox.test>`;
      const to = `sync52+check${n}@inbox.test`;
      const raw = Buffer.from(`From: <${user}>\r\nTo: <${to}>\r\nSubject: check\r\nMessage-ID: ${messageId}\r\nDate: ${new Date().toUTCString()}\r\n\r\nHello\r\n`);
      expect(await t.send(raw, { from: user, to: [to] }, { messageId })).toMatchObject({ kind: 'accepted' });
      // The confirmed send, recorded under the provider_copy rule a grace period ago.
      const req = await store.db.selectFrom('send_request').select('id').where('mailbox_id', '=', mailboxId).executeTakeFirstOrThrow();
      await store.db.updateTable('send_request').set({ state: 'sent', proof: 'provider_copy', message_id: messageId, updated_at: new Date(Date.now() - 2_000) }).where('id', '=', req.id).execute();
      await new Promise((r) => setTimeout(r, 1_000)); // the bed's server files its copy within ~300 ms
      results[n] = await checkServerSentCopies({ store, clock: systemClock, transport: t, mailboxId, graceMs: 1_000 });
      await t.close();
    }
    expect(results).toEqual({ 89: 'switched', 45: 'verified' });
    const rows = await store.db.selectFrom('mailbox').select(['email', 'settings']).where('id', 'in', world.mailboxIds).execute();
    const byEmail = new Map(rows.map((r) => [r.email, r.settings as { serverSavesSent: boolean; sentCopyCheck: { warning?: string; verifiedAt?: number } }]));
    expect(byEmail.get('sync89@inbox.test')).toMatchObject({ serverSavesSent: false, sentCopyCheck: { warning: expect.stringContaining('does not save sent mail itself') } });
    expect(byEmail.get('sync45@inbox.test')).toMatchObject({ serverSavesSent: true, sentCopyCheck: { verifiedAt: expect.any(Number) } });
  }, 60_000);
});
