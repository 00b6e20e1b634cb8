import { randomBytes } from 'node:crypto';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { seededRandom } from '../common/random.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { makeWorld } from '../../test/fixtures/world.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { validateDefinition } from '../sequence/definition.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { prepareEmail } from './compose/prepare.ts';
import { openTrackingToken } from './compose/tracking.ts';
import { claimNext, type OutboxDeps } from './outbox.ts';
import { loadSendMaterial } from './send-context.ts';
import { readLookContext } from './mailbox-last-look.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0);
const key = randomBytes(32);

/** The definition a user writes, with the tracking fields given (or left out: the defaults). */
function definition(tracking: Record<string, boolean>) {
  return {
    key: 'seq',
    name: 'Seq',
    window: 'any',
    holidays: false,
    jitter_minutes: 0,
    mailboxes: ['rep0@acme.test'],
    ...tracking,
    steps: [{ key: 'intro', type: 'email', subject: 'Hi {{first_name}}', body: 'Hello {{first_name}},\n\nour pricing: https://acme.test/pricing?plan=team\n\nSam' }],
  };
}

describe('sequence tracking settings, from sequence apply to the composed message', () => {
  let store: TestStore;
  const random = seededRandom(5);
  beforeAll(async () => {
    store = await freshStore('pglite');
  });
  afterAll(async () => {
    await store.destroy();
  });

  it('parses track_opens and track_clicks, off by default, and refuses anything but a boolean', () => {
    expect(validateDefinition(definition({})).tracking).toEqual({ opens: false, clicks: false });
    expect(validateDefinition(definition({ track_opens: true })).tracking).toEqual({ opens: true, clicks: false });
    expect(validateDefinition(definition({ track_opens: true, track_clicks: true })).tracking).toEqual({ opens: true, clicks: true });
    expect(() => validateDefinition({ ...definition({}), track_clicks: 'yes' })).toThrow(/track_clicks/);
  });

  /** Applies the definition, enrolls one lead, fires its first step and composes the claimed send. */
  async function composeFirstSend(tracking: Record<string, boolean>, setup?: (workspaceId: string) => Promise<void>) {
    await sql`truncate table workspace, event cascade`.execute(store.db);
    const clock = new SimClock(T0);
    const world = await makeWorld(store, { leads: 1, mailboxes: 1, nowMs: T0, random, zones: ['UTC'], countries: [null] });
    const seq = await applyDefinition(store, { clock, random }, world.workspaceId, validateDefinition(definition(tracking)));
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seq.sequenceId, leadIds: world.leadIds });
    const service = new EnrollmentService({ store, clock, random });
    while ((await service.fireDue(100)).length) {
      /* drain */
    }
    await setup?.(world.workspaceId);
    const deps: OutboxDeps = { store, service, clock, random };
    const r = await claimNext(deps, world.mailboxIds[0]!);
    if (r.kind !== 'claimed') throw new Error(`expected a claim, got ${r.kind}`);
    const material = await loadSendMaterial(store.db, r.claim);
    const prepared = await prepareEmail({
      claim: r.claim,
      template: material.template,
      lead: material.lead,
      sender: material.sender,
      now: clock.now(),
      tracking: { key, baseUrl: 'https://links.acme.test', opens: material.tracking.opens, clicks: material.tracking.clicks },
      thread: material.thread,
    });
    if (!prepared.ok) throw new Error(prepared.reason);
    return { material, email: prepared.email, parsed: await PostalMime.parse(prepared.email.raw), requestId: r.claim.requestId };
  }

  it('with both on: the sender reads them and the message has the pixel and the link through the redirect', async () => {
    const { material, email, parsed, requestId } = await composeFirstSend({ track_opens: true, track_clicks: true });
    expect(material.tracking).toMatchObject({ opens: true, clicks: true });
    expect(email.openPixel).toBe(true);
    expect(email.trackedLinks).toEqual([{ index: 0, url: 'https://acme.test/pricing?plan=team' }]);
    const pixel = /<img src="https:\/\/links\.acme\.test\/t\/o\/([A-Za-z0-9_-]+)\.gif"/.exec(parsed.html ?? '');
    expect(pixel).not.toBeNull();
    expect(openTrackingToken(key, pixel![1]!)).toMatchObject({ k: 'o', sr: requestId });
    const click = /<a href="https:\/\/links\.acme\.test\/t\/c\/([A-Za-z0-9_-]+)">/.exec(parsed.html ?? '');
    expect(openTrackingToken(key, click![1]!)).toMatchObject({ k: 'c', sr: requestId, u: 'https://acme.test/pricing?plan=team', i: 0 });
    // The text part is the template as rendered: the destination in clear, no redirect.
    expect(parsed.text).toContain('our pricing: https://acme.test/pricing?plan=team');
    expect(parsed.text).not.toMatch(/\/t\/[oc]\//);
  });

  it("links use the workspace's custom tracking host while it has a certificate (active, renewing), else the settings' domain", async () => {
    const hostIn = async (state: string | null) =>
      (
        await composeFirstSend({ track_clicks: true }, async (ws) => {
          await sql`update workspace set settings = settings || '{"trackingDomain":"proxy.acme.test"}'::jsonb where id = ${ws}`.execute(store.db);
          if (state) await sql`insert into tracking_domain (workspace_id, host, state, next_attempt_at) values (${ws}, 'track.acme.test', ${state}, now())`.execute(store.db);
        })
      ).material.tracking.trackingDomain;
    expect(await hostIn('active')).toBe('track.acme.test');
    expect(await hostIn('renewing')).toBe('track.acme.test');
    expect(await hostIn('pending_dns')).toBe('proxy.acme.test');
    expect(await hostIn('failed')).toBe('proxy.acme.test');
    expect(await hostIn(null)).toBe('proxy.acme.test');
  });

  it('with clicks only: rewritten links and no pixel', async () => {
    const { email, parsed } = await composeFirstSend({ track_clicks: true });
    expect(email.openPixel).toBe(false);
    expect(email.trackedLinks).toHaveLength(1);
    expect(parsed.html).not.toMatch(/\/t\/o\//);
  });

  it('by default: plain text only, no pixel, no redirect (the unsubscribe link is still there)', async () => {
    const { material, email, parsed } = await composeFirstSend({});
    expect(material.tracking).toMatchObject({ opens: false, clicks: false });
    expect(email.openPixel).toBe(false);
    expect(email.trackedLinks).toEqual([]);
    expect(parsed.html).toBeUndefined();
    expect(email.raw.toString('latin1')).not.toMatch(/\/t\/[oc]\//);
    expect(email.listUnsubscribe.listUnsubscribe).toMatch(/^<https:\/\/links\.acme\.test\/t\/u\//);
  });
  it("reads the mailbox last look's context in the material statement, as the look's own read sees it", async () => {
    const { material, requestId } = await composeFirstSend({});
    const r = await store.db.selectFrom('send_request').select(['workspace_id', 'enrollment_id', 'mailbox_id', 'step_id', 'variant_id', 'message_id']).where('id', '=', requestId).executeTakeFirstOrThrow();
    const claim = { requestId, enrollmentId: r.enrollment_id, mailboxId: r.mailbox_id!, stepId: r.step_id, variantId: r.variant_id } as Parameters<typeof loadSendMaterial>[1];
    // A first step to a lead who never wrote: nothing of ours yet, nothing from them.
    expect(material.look).toEqual(await readLookContext(store.db, claim));
    expect(material.look).toMatchObject({ ours: null, has_written: false, last_step_at: null });
    // Then six sends of ours (newest first, five of them) and a message from the lead to this mailbox.
    const lead = material.lead.email;
    const rows = Array.from({ length: 6 }, (_, i) => ({ id: `00000000-0000-7000-8000-${String(900 + i).padStart(12, '0')}`, workspace_id: r.workspace_id, mailbox_id: r.mailbox_id, enrollment_id: r.enrollment_id, direction: 'outbound' as const, message_id: `<ours${i}@acme.test>`, at: new Date(T0 - (10 - i) * 60_000) }));
    await store.db.insertInto('message').values([...rows, { id: '00000000-0000-7000-8000-000000000999', workspace_id: r.workspace_id, mailbox_id: r.mailbox_id, direction: 'inbound', message_id: '<theirs@lead.test>', from_addr: lead.toUpperCase(), at: new Date(T0) }]).execute();
    const again = await loadSendMaterial(store.db, claim);
    expect(again.look).toEqual(await readLookContext(store.db, claim));
    expect(again.look).toMatchObject({ ours: ['<ours5@acme.test>', '<ours4@acme.test>', '<ours3@acme.test>', '<ours2@acme.test>', '<ours1@acme.test>'], has_written: true });
  });
});
