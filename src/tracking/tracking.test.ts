import fc from 'fast-check';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../api/server.ts';
import { isCadenzaError } from '../common/errors.ts';
import { seededRandom } from '../common/random.ts';
import { MAX_TOKEN_LENGTH, seal } from '../common/sealed-token.ts';
import { claimNext, recordSent, type OutboxDeps } from '../sending/outbox.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { twoEmailsDefinition } from '../../test/fixtures/two-emails.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { makeWorld, type World } from '../../test/fixtures/world.ts';
import { trackingKey, trackingLinks, type TrackingLinks } from '../sending/compose/tracking.ts';
import { registerTracking } from './plugin.ts';
import { insertTrackingEvents } from './sql/insert-tracking-events.ts';
import type { RecorderOptions, TrackingRecorder } from './recorder.ts';
import { honourUnsubscribe } from './unsubscribe.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0); // Monday 1 June 2026
const SEC = 1000;
const MIN = 60 * SEC;
const key = trackingKey(Buffer.alloc(32, 7));
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

const defFor = (k: string) => twoEmailsDefinition(k);

/** A send of the world: the request, its lead and enrollment, and its links under a custom domain. */
interface Send {
  requestId: string;
  enrollmentId: string;
  leadId: string;
  sequenceId: string;
  to: string;
  links: TrackingLinks;
}

const path = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

describe.each(testBackends())('tracking endpoints on %s', (backend) => {
  let store: TestStore;
  let clock: SimClock;
  let world: World;
  let service: EnrollmentService;
  let app: FastifyInstance | undefined;
  let recorder: TrackingRecorder;
  let sends: Send[];
  const random = seededRandom(31);

  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /**
   * Three leads, each enrolled in two sequences; every first step sent through the outbox at T0 + 1 s
   * (so each send has its message row and time); then the tracking server.
   */
  async function setup(batch: RecorderOptions = { maxBatch: 1000, flushMs: 60 * MIN }, journalDir?: string) {
    await sql`truncate table workspace, event cascade`.execute(store.db);
    clock = new SimClock(T0);
    world = await makeWorld(store, { leads: 3, mailboxes: 1, nowMs: T0, random, zones: ['UTC'], countries: [null] });
    service = new EnrollmentService({ store, clock, random });
    const seqIds: string[] = [];
    for (const k of ['alpha', 'beta']) {
      const seq = await applyDefinition(store, { clock, random }, world.workspaceId, defFor(k));
      await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seq.sequenceId, leadIds: world.leadIds });
      seqIds.push(seq.sequenceId);
    }
    while ((await service.fireDue(100)).length) {
      /* drain */
    }
    clock.advance(SEC);
    const outbox: OutboxDeps = { store, service, clock, random };
    sends = [];
    for (;;) {
      const c = await claimNext(outbox, world.mailboxIds[0]!);
      if (c.kind !== 'claimed') break;
      expect(await recordSent(outbox, c.claim, clock.now(), { subject: 'Hi' })).toBe(true);
      const e = await store.db.selectFrom('enrollment').select(['lead_id', 'sequence_id']).where('id', '=', c.claim.enrollmentId).executeTakeFirstOrThrow();
      sends.push({
        requestId: c.claim.requestId,
        enrollmentId: c.claim.enrollmentId,
        leadId: e.lead_id,
        sequenceId: e.sequence_id,
        to: c.claim.to,
        links: trackingLinks({ key, baseUrl: 'https://links.acme.test', workspaceId: world.workspaceId, sendRequestId: c.claim.requestId }),
      });
    }
    expect(sends.length).toBe(6);
    expect(new Set(sends.map((s) => s.sequenceId))).toEqual(new Set(seqIds));
    app = buildServer({ store, clock, version: 'test' });
    recorder = registerTracking(app, { store, service, clock, key, batch, ...(journalDir ? { journalDir } : {}) });
    await app.ready();
    return app;
  }

  /** A second server on the same store and world, as after a restart. */
  async function restart(journalDir: string) {
    const srv = buildServer({ store, clock, version: 'test' });
    const rec = registerTracking(srv, { store, service, clock, key, batch: { maxBatch: 1000, flushMs: 60 * MIN }, journalDir });
    await srv.ready();
    return { srv, rec };
  }

  const sendOf = (leadId: string, sequenceId?: string) => sends.find((s) => s.leadId === leadId && (!sequenceId || s.sequenceId === sequenceId))!;
  const events = () => store.db.selectFrom('tracking_event').selectAll().orderBy('id').execute();
  const stateOf = async (id: string) => (await store.db.selectFrom('enrollment').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state;
  const suppressions = () => store.db.selectFrom('suppression').selectAll().where('workspace_id', '=', world.workspaceId).execute();

  /** The same token with one character changed in the middle (ciphertext or tag). */
  function tamper(token: string): string {
    const i = Math.floor(token.length / 2);
    return token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
  }
  const tokenOf = (url: string) => new URL(url).pathname.split('/')[3]!.replace(/\.gif$/, '');

  it('answers the pixel with a 43-byte uncacheable GIF and records the open with its evidence and verdict', async () => {
    const srv = await setup();
    const s = sendOf(world.leadIds[0]!);
    clock.advance(30 * MIN);
    const r = await srv.inject({ url: path(s.links.pixelUrl()), headers: { host: 'links.acme.test', 'user-agent': CHROME }, remoteAddress: '198.51.100.4' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('image/gif');
    expect(r.rawPayload.length).toBe(43);
    expect(r.rawPayload.subarray(0, 6).toString('latin1')).toBe('GIF89a');
    expect(r.headers['cache-control']).toContain('no-store');
    expect(r.headers['cache-control']).toContain('no-cache');
    // Apple Mail Privacy Protection's proxy, on another Host (a custom tracking domain is a CNAME).
    const mpp = await srv.inject({ url: path(s.links.pixelUrl()), headers: { host: 'cadenza.example', 'user-agent': 'Mozilla/5.0' }, remoteAddress: '17.58.1.2' });
    expect(mpp.statusCode).toBe(200);
    expect(await events()).toEqual([]); // written behind, not yet written
    await recorder.flush();
    const rows = await events();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      kind: 'open',
      workspace_id: world.workspaceId,
      send_request_id: s.requestId,
      enrollment_id: s.enrollmentId,
      user_agent: CHROME,
      ip: '198.51.100.4',
      method: 'GET',
      delay_ms: 30 * MIN,
      verdict: 'human',
      reason: 'browser_ua',
    });
    expect(rows[0]!.at.getTime()).toBe(T0 + SEC + 30 * MIN);
    expect(rows[0]!.confidence).toBeCloseTo(0.7);
    expect(rows[1]).toMatchObject({ verdict: 'proxy', reason: 'apple_mpp:ua+ip', ip: '17.58.1.2' });
  });

  it('answers the GIF for bad tokens but records nothing', async () => {
    const srv = await setup();
    const s = sendOf(world.leadIds[0]!);
    const good = tokenOf(s.links.pixelUrl());
    const bad = [
      tamper(good),
      good.slice(0, -4),
      tokenOf(trackingLinks({ key: trackingKey(Buffer.alloc(32, 8)), baseUrl: 'https://x.test', workspaceId: world.workspaceId, sendRequestId: s.requestId }).pixelUrl()), // another key
      tokenOf(s.links.unsubscribeUrl), // a genuine token of another kind
      'x'.repeat(60),
      'short',
      'a.b',
    ];
    for (const t of bad) {
      const r = await srv.inject({ url: `/t/o/${t}.gif`, headers: { 'user-agent': CHROME } });
      expect(r.statusCode, t).toBe(200);
      expect(r.rawPayload.length).toBe(43);
    }
    await recorder.flush();
    expect(await events()).toEqual([]);
    // The five token-shaped ones were queued sealed and dropped when their batch was opened.
    expect(recorder.stats()).toMatchObject({ invalid: 5, written: 5 });
  });

  it('redirects a click to the sealed URL and records it; HEAD and a burst of links are recorded as a scanner', async () => {
    const srv = await setup();
    const s = sendOf(world.leadIds[1]!);
    clock.advance(2 * MIN);
    const dest = 'https://www.example.com/pricing?plan=team&utm_source=cadenza#faq';
    const r = await srv.inject({ url: path(s.links.clickUrl(dest, 0)!), headers: { 'user-agent': CHROME }, remoteAddress: '2001:db8::5' });
    expect(r.statusCode).toBe(302);
    expect(r.headers.location).toBe(dest);
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.headers['referrer-policy']).toBe('no-referrer');

    // A security gateway: HEAD first, then every link within a second.
    const t = sendOf(world.leadIds[2]!);
    const head = await srv.inject({ method: 'HEAD', url: path(t.links.clickUrl('https://a.example/1', 0)!), headers: { 'user-agent': CHROME } });
    expect(head.statusCode).toBe(302);
    for (let i = 0; i < 3; i++) {
      clock.advance(200);
      const b = await srv.inject({ url: path(t.links.clickUrl(`https://a.example/${i}`, i)!), headers: { 'user-agent': CHROME } });
      expect(b.headers.location).toBe(`https://a.example/${i}`);
    }
    await recorder.flush();
    const rows = await events();
    expect(rows).toHaveLength(5);
    expect(rows[0]).toMatchObject({ kind: 'click', url: dest, link_index: 0, send_request_id: s.requestId, enrollment_id: s.enrollmentId, ip: '2001:db8::5', delay_ms: 2 * MIN, verdict: 'human' });
    expect(rows[1]).toMatchObject({ method: 'HEAD', verdict: 'scanner', reason: 'head_request' });
    expect(rows[4]).toMatchObject({ link_index: 2, verdict: 'scanner', reason: 'link_burst:3 links in 5.0s' });
  });

  it('redirects the longest destination a click token carries (the route takes the longest token unseal opens)', async () => {
    const srv = await setup();
    const s = sendOf(world.leadIds[2]!);
    let dest = '';
    for (let n = 2000; ; n += 1) {
      const candidate = `https://www.example.com/q?${'v'.repeat(n)}`;
      if (s.links.clickUrl(candidate, 0) === null) break;
      dest = candidate;
    }
    const url = s.links.clickUrl(dest, 0)!;
    expect(tokenOf(url).length).toBeGreaterThan(MAX_TOKEN_LENGTH - 4);
    const r = await srv.inject({ url: path(url), headers: { 'user-agent': CHROME } });
    expect(r.statusCode).toBe(302);
    expect(r.headers.location).toBe(dest);
  });

  it('writes a batch with the references it finds: an event of a deleted send or workspace never fails the batch, and erasure cascades', async () => {
    await setup();
    const [a, b] = [sends[0]!, sends[1]!];
    const row = (sr: string, ws = world.workspaceId) => ({ workspaceId: ws, sendRequestId: sr, kind: 'open' as const, url: null, linkIndex: null, method: 'GET', userAgent: CHROME, ip: '192.0.2.1', delayMs: 1000, verdict: 'human' as const, confidence: 0.5, reason: 'test', at: clock.now() });
    // b's lead erased (its enrollment and send request go with it), and a workspace that never was.
    await store.db.deleteFrom('send_request').where('enrollment_id', '=', b.enrollmentId).execute();
    await store.db.deleteFrom('enrollment').where('id', '=', b.enrollmentId).execute();
    expect(await insertTrackingEvents(store.db, [row(a.requestId), row(b.requestId), row(a.requestId, '00000000-0000-7000-8000-00000000dead')])).toBe(2);
    const rows = await events();
    expect(rows.map((r) => [r.send_request_id, r.enrollment_id])).toEqual([
      [a.requestId, a.enrollmentId],
      [null, null],
    ]);
    await store.db.deleteFrom('send_request').where('enrollment_id', '=', a.enrollmentId).execute();
    await store.db.deleteFrom('enrollment').where('id', '=', a.enrollmentId).execute();
    expect((await events()).map((r) => r.enrollment_id)).toEqual([null]);
  });

  it('never redirects a forged, tampered, foreign, wrong-kind or old-format token, nor to a non-http URL', async () => {
    const srv = await setup();
    const s = sendOf(world.leadIds[0]!);
    const good = tokenOf(s.links.clickUrl('https://ok.example/', 0)!);
    const raw = Buffer.from(good, 'base64url');
    const otherVersion = Buffer.concat([Buffer.from([2]), raw.subarray(1)]).toString('base64url'); // a future/expired format
    const sealed = (u: string) => seal(key, { k: 'c', ws: world.workspaceId, sr: s.requestId, u, i: 0 });
    const bad = [
      tamper(good),
      good.slice(0, good.length - 10),
      otherVersion,
      tokenOf(trackingLinks({ key: trackingKey(Buffer.alloc(32, 9)), baseUrl: 'https://x.test', workspaceId: world.workspaceId, sendRequestId: s.requestId }).clickUrl('https://evil.example/', 0)!),
      tokenOf(s.links.pixelUrl()),
      tokenOf(s.links.unsubscribeUrl),
      sealed('javascript:alert(1)'),
      sealed('data:text/html,<script>alert(1)</script>'),
      sealed('ftp://files.example/x'),
      seal(key, { k: 'c', ws: 'not-a-uuid', sr: s.requestId, u: 'https://ok.example/', i: 0 }),
      seal(key, { k: 'c', ws: world.workspaceId, sr: s.requestId, u: 'https://ok.example/', i: -1 }),
      seal(key, ['c']),
      'https%3A%2F%2Fevil.example',
      'A'.repeat(5000),
    ];
    for (const t of bad) {
      const r = await srv.inject({ url: `/t/c/${t}`, headers: { 'user-agent': CHROME } });
      expect(r.statusCode, t.slice(0, 40)).toBe(404);
      expect(r.headers.location).toBeUndefined();
      expect(r.headers['content-type']).toContain('text/html');
      expect(r.body).toContain('This link is not valid');
    }
    await recorder.flush();
    expect(await events()).toEqual([]);
  });

  it('shows a confirmation page on GET and changes nothing (scanners fetch every link)', async () => {
    const srv = await setup();
    const s = sendOf(world.leadIds[0]!);
    for (const method of ['GET', 'HEAD'] as const) {
      const r = await srv.inject({ method, url: path(s.links.unsubscribeUrl), headers: { host: 'links.acme.test', 'user-agent': 'Mimecast' } });
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(r.headers['content-security-policy']).toContain("default-src 'none'");
      expect(r.headers['content-security-policy']).toContain("form-action 'self'");
      expect(r.headers['referrer-policy']).toBe('no-referrer');
      expect(r.headers['cache-control']).toBe('no-store');
      if (method === 'GET') {
        expect(r.body).toContain('<html lang="en">');
        expect(r.body).toMatch(/<form method="post" action="[A-Za-z0-9_-]+">/);
        expect(r.body).toContain('<button type="submit">Unsubscribe</button>');
        expect(r.body).toContain('<strong>Acme</strong>');
        expect(r.body).not.toContain('<script');
      }
    }
    expect(await suppressions()).toEqual([]);
    for (const x of sends) expect(await stateOf(x.enrollmentId)).toBe('active');
  });

  it('unsubscribes on a one-click POST: suppression written, every live enrollment of the lead stopped across sequences; idempotent', async () => {
    const srv = await setup();
    const lead = world.leadIds[1]!;
    const s = sends.find((x) => x.leadId === lead)!;
    const sibling = sends.find((x) => x.leadId === lead && x.sequenceId !== s.sequenceId)!;
    clock.advance(5 * MIN);
    // As Gmail sends it: urlencoded, no cookie, no confirmation.
    const r = await srv.inject({ method: 'POST', url: path(s.links.unsubscribeUrl), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' });
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('You are unsubscribed');
    const sup = await suppressions();
    expect(sup).toHaveLength(1);
    expect(sup[0]).toMatchObject({ email_norm: s.to.toLowerCase(), reason: 'unsubscribe' });
    expect(await stateOf(s.enrollmentId)).toBe('unsubscribed');
    expect(await stateOf(sibling.enrollmentId)).toBe('stopped');
    // Other leads are untouched.
    for (const x of sends.filter((y) => y.leadId !== lead)) expect(await stateOf(x.enrollmentId)).toBe('active');
    // Their queued follow-ups can never go: nothing of this lead is queued.
    const queued = await store.db.selectFrom('send_request').select('id').where('enrollment_id', 'in', [s.enrollmentId, sibling.enrollmentId]).where('state', '=', 'queued').execute();
    expect(queued).toEqual([]);
    const journal = await store.db.selectFrom('event').select(['type', 'payload']).where('enrollment_id', '=', s.enrollmentId).where('type', '=', 'unsubscribe').execute();
    expect(journal).toHaveLength(1);
    expect(journal[0]!.payload).toMatchObject({ event: { type: 'unsubscribe', source: 'one_click' } });
    const tracked = await events();
    expect(tracked).toHaveLength(1);
    expect(tracked[0]).toMatchObject({ kind: 'unsubscribe', send_request_id: s.requestId, enrollment_id: s.enrollmentId, reason: 'one_click' });

    // A second click (or the provider retrying): 200, and nothing changes.
    const count = async () => (await sql<{ n: number }>`select (select count(*) from event) + (select count(*) from tracking_event) + (select count(*) from suppression) as n`.execute(store.db)).rows[0]!.n;
    const before = await count();
    const again = await srv.inject({ method: 'POST', url: path(s.links.unsubscribeUrl), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' });
    expect(again.statusCode).toBe(200);
    expect(again.body).toContain('already unsubscribed');
    // The sibling's own link too.
    const viaSibling = await srv.inject({ method: 'POST', url: path(sibling.links.unsubscribeUrl), payload: '' });
    expect(viaSibling.statusCode).toBe(200);
    expect(Number(await count())).toBe(Number(before));
  });

  it('accepts the RFC 8058 multipart body and the confirmation page form alike', async () => {
    const srv = await setup();
    const a = sendOf(world.leadIds[0]!);
    const body = ['--XYZ', 'Content-Disposition: form-data; name="List-Unsubscribe"', '', 'One-Click', '--XYZ--', ''].join('\r\n');
    const r = await srv.inject({ method: 'POST', url: path(a.links.unsubscribeUrl), headers: { 'content-type': 'multipart/form-data; boundary=XYZ' }, payload: body });
    expect(r.statusCode).toBe(200);
    expect(await stateOf(a.enrollmentId)).toBe('unsubscribed');

    const b = sendOf(world.leadIds[2]!);
    const page = await srv.inject({ url: path(b.links.unsubscribeUrl) });
    const action = /action="([^"]+)"/.exec(page.body)![1]!;
    const fields = [...page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]+)">/g)].map((m) => `${encodeURIComponent(m[1]!)}=${encodeURIComponent(m[2]!)}`).join('&');
    // The browser resolves the relative action against the page's URL.
    const target = new URL(action, `https://links.acme.test${path(b.links.unsubscribeUrl)}`);
    const done = await srv.inject({ method: 'POST', url: target.pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: fields });
    expect(done.statusCode).toBe(200);
    expect(await stateOf(b.enrollmentId)).toBe('unsubscribed');
    const sources = await store.db.selectFrom('tracking_event').select('reason').where('kind', '=', 'unsubscribe').orderBy('id').execute();
    expect(sources.map((x) => x.reason)).toEqual(['one_click', 'page']);
  });

  it('honours an unsubscribe by email (the mailto: path): every live enrollment stops; an unknown address is still suppressed', async () => {
    await setup();
    const lead = world.leadIds[2]!;
    const email = sends.find((s) => s.leadId === lead)!.to;
    const r = await honourUnsubscribe({ store, service, clock }, { workspaceId: world.workspaceId, email: `  ${email.toUpperCase()} `, source: 'mailto' });
    expect(r).toMatchObject({ outcome: 'unsubscribed', emailNorm: email.toLowerCase() });
    const mine = sends.filter((s) => s.leadId === lead);
    expect(r.outcome === 'unsubscribed' && [...r.stopped].sort()).toEqual(mine.map((s) => s.enrollmentId).sort());
    for (const s of mine) expect(['unsubscribed', 'stopped']).toContain(await stateOf(s.enrollmentId));
    expect(await honourUnsubscribe({ store, service, clock }, { workspaceId: world.workspaceId, email, source: 'mailto' })).toEqual({ outcome: 'already', emailNorm: email.toLowerCase() });

    // Not a lead (yet): suppressed for every future import.
    const stranger = await honourUnsubscribe({ store, service, clock }, { workspaceId: world.workspaceId, email: 'Someone@Elsewhere.example', source: 'mailto' });
    expect(stranger).toEqual({ outcome: 'unsubscribed', emailNorm: 'someone@elsewhere.example', stopped: [] });
    // The lead's suppression names the enrollment the engine stopped first (any of its live ones).
    const rows = await suppressions();
    expect(rows.map((s) => s.email_norm).sort()).toEqual([email.toLowerCase(), 'someone@elsewhere.example'].sort());
    expect(rows.find((s) => s.email_norm === 'someone@elsewhere.example')!.source).toBe('mailto');
    expect(mine.map((s) => `enrollment:${s.enrollmentId}`)).toContain(rows.find((s) => s.email_norm === email.toLowerCase())!.source);
    await expect(honourUnsubscribe({ store, service, clock }, { workspaceId: world.workspaceId, email: 'not an address', source: 'mailto' })).rejects.toSatisfy((e) => isCadenzaError(e, 'INVALID_INPUT'));
    await expect(honourUnsubscribe({ store, service, clock }, { workspaceId: world.workspaceId, source: 'mailto' })).rejects.toSatisfy((e) => isCadenzaError(e, 'INVALID_INPUT'));
    expect(await honourUnsubscribe({ store, service, clock }, { workspaceId: world.workspaceId, sendRequestId: '00000000-0000-7000-8000-000000000000', source: 'x' })).toEqual({ outcome: 'not_found' });
  });

  it('answers a click only once its batch has committed (concurrent clicks share a batch; a failing database is answered anyway and retried); writes opens behind', async () => {
    const srv = await setup({ maxBatch: 5, flushMs: 2 * SEC, retryMs: 2 * SEC });
    const s = sendOf(world.leadIds[0]!);
    const open = () => srv.inject({ url: path(s.links.pixelUrl()), headers: { 'user-agent': CHROME } });
    const click = (i: number) => srv.inject({ url: path(s.links.clickUrl(`https://a.example/${i}`, i)!), headers: { 'user-agent': CHROME } });
    expect((await click(0)).statusCode).toBe(302);
    expect(await events()).toHaveLength(1); // no flush, no timer: written before the answer
    expect(recorder.stats()).toMatchObject({ batches: 1, written: 1, unconfirmed: 0 });

    // Four at once: answered after the batch that holds them all.
    const answers = await Promise.all([click(1), click(2), click(3), click(4)]);
    expect(answers.map((a) => a.statusCode)).toEqual([302, 302, 302, 302]);
    expect(await events()).toHaveLength(5);
    expect(recorder.stats()).toMatchObject({ batches: 2, written: 5 });

    // Opens are written behind: on size (maxBatch), on time (flushMs, the injected clock), on close.
    for (let i = 0; i < 4; i++) expect((await open()).statusCode).toBe(200);
    await recorder.idle();
    expect(await events()).toHaveLength(5);
    await open(); // the fifth: a full batch goes at once
    await recorder.idle();
    expect(await events()).toHaveLength(10);
    await open();
    clock.advance(2 * SEC);
    await recorder.idle();
    expect(await events()).toHaveLength(11);

    // The database refuses the write: the click is answered anyway ('pending'), the event stays
    // queued and is written by the retry, on the injected clock.
    await sql`alter table tracking_event rename to tracking_event_away`.execute(store.db);
    expect((await click(5)).statusCode).toBe(302);
    expect(recorder.stats()).toMatchObject({ queued: 1, errors: 1, unconfirmed: 1 });
    expect((await click(6)).statusCode).toBe(302); // while backing off: answered at once, queued behind it
    expect(recorder.stats()).toMatchObject({ queued: 2, unconfirmed: 2 });
    await sql`alter table tracking_event_away rename to tracking_event`.execute(store.db);
    expect(await events()).toHaveLength(11);
    clock.advance(2 * SEC);
    await recorder.idle();
    expect(await events()).toHaveLength(13);

    // Close writes whatever is still queued, and leaves no timer behind.
    await open();
    await srv.close();
    app = undefined;
    expect(await events()).toHaveLength(14);
    expect(recorder.stats()).toMatchObject({ queued: 0, written: 14, dropped: 0, failed: 0 });
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it('with a click journal: answers a click once it is on local disk, writes it behind, and after a crash writes every answered click exactly once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-tracking-journal-'));
    try {
      const srv = await setup(undefined, dir);
      const s = sendOf(world.leadIds[0]!);
      const click = (i: number, on = srv) => on.inject({ url: path(s.links.clickUrl(`https://a.example/${i}`, i)!), headers: { 'user-agent': CHROME } });
      expect((await click(0)).statusCode).toBe(302);
      expect(await events()).toHaveLength(0); // journaled, not yet written
      expect(recorder.stats()).toMatchObject({ queued: 1, journaled: 1 });
      const answers = await Promise.all([click(1), click(2)]);
      expect(answers.map((a) => a.headers.location)).toEqual(['https://a.example/1', 'https://a.example/2']);
      await recorder.flush();
      expect(await events()).toHaveLength(3);
      expect(recorder.stats()).toMatchObject({ queued: 0, journaled: 0, written: 3 });

      // One more click answered, then the process dies before writing it: the journal still holds
      // it, and the three already written (their segment is the one being appended to).
      clock.advance(SEC);
      expect((await click(3)).statusCode).toBe(302);
      app = undefined; // never closed: a crash
      const after = await restart(dir);
      try {
        const rows = await events();
        expect(rows.map((r) => [r.kind, r.link_index, r.url, r.send_request_id])).toEqual([0, 1, 2, 3].map((i) => ['click', i, `https://a.example/${i}`, s.requestId]));
        expect(rows[3]!.enrollment_id).toBe(s.enrollmentId);
        expect(after.rec.stats()).toMatchObject({ written: 4, journaled: 0 });
        // The restarted server journals its own clicks, and a clean stop leaves the journal empty.
        expect((await click(4, after.srv)).statusCode).toBe(302);
      } finally {
        await after.srv.close();
      }
      expect(await events()).toHaveLength(5);
      // Every segment written and settled: deleted, the crashed process's included.
      expect(readdirSync(dir)).toEqual([]);
      const again = await restart(dir);
      await again.srv.close();
      expect(await events()).toHaveLength(5);
      expect(readdirSync(dir)).toEqual([]);

      // A journal that refuses to write (here: closed under the recorder) costs the click nothing:
      // it is committed to the database before its answer instead.
      const last = await restart(dir);
      try {
        await (last.rec as unknown as { journal: { close(): Promise<void> } }).journal.close();
        expect((await click(5, last.srv)).statusCode).toBe(302);
        expect(await events()).toHaveLength(6);
        expect(last.rec.stats()).toMatchObject({ written: 1, queued: 0 });
      } finally {
        await last.srv.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('never crashes on hostile paths, tokens, methods and bodies, and writes nothing for them', async () => {
    const srv = await setup();
    const good = tokenOf(sendOf(world.leadIds[0]!).links.unsubscribeUrl);
    const printable = fc.string({ unit: fc.constantFrom(...'abcXYZ019-_.~%/?#&=+:;@!$\'()*, "<>\\^`{|}'.split('')), maxLength: 80 });
    const token = fc.oneof(printable, fc.base64String({ maxLength: 200 }), fc.constant(tamper(good)), fc.constant(good.slice(0, 50)), fc.string({ unit: fc.constantFrom('A', '-', '_', 'z'), minLength: 40, maxLength: 120 }));
    const req = fc.record({
      method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'),
      prefix: fc.constantFrom('/t/o/', '/t/c/', '/t/u/', '/t/', '/t/x/', '/t/u//'),
      token,
      suffix: fc.constantFrom('', '.gif', '/', '/extra', '?q=1', '.gif.gif'),
      contentType: fc.constantFrom(undefined, 'application/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=--', 'multipart/form-data', 'text/plain', 'image/gif', 'x/\u00e9'),
      body: fc.oneof(fc.string({ maxLength: 300 }), fc.constant('List-Unsubscribe=One-Click'), fc.constant('{"__proto__":{"x":1}}'), fc.constant('%%%'), fc.constant('a'.repeat(20_000))),
      ua: fc.option(fc.string({ maxLength: 600 }), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(req, async (q) => {
        const headers: Record<string, string> = {};
        if (q.contentType) headers['content-type'] = q.contentType;
        if (q.ua !== undefined && /^[\x20-\x7e]*$/.test(q.ua)) headers['user-agent'] = q.ua;
        const withBody = q.method !== 'GET' && q.method !== 'HEAD';
        const r = await srv.inject({ method: q.method, url: q.prefix + q.token + q.suffix, headers, ...(withBody ? { payload: q.body } : {}) });
        expect(r.statusCode).toBeLessThan(500);
        expect(r.statusCode).not.toBe(302);
      }),
      { numRuns: 300 },
    );
    await recorder.flush();
    expect(await events()).toEqual([]);
    expect(await suppressions()).toEqual([]);
    expect((await srv.inject({ url: '/healthz' })).statusCode).toBe(200);
  });
});
