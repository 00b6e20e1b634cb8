import { randomBytes } from 'node:crypto';
import { federationIdentity } from '../warmup/federation/identity.ts';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { recordingContext } from '../dialer/recording/ingest.ts';
import { enqueueTranscript } from '../dialer/transcribe/queue.ts';
import { encodeWav } from '../dialer/transcribe/wav.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedGraph, seedWorkspace, type ApiHarness, type Browser } from '../../test/api.ts';
import { testBackends } from '../../test/stores.ts';
import { systemClock } from '../common/clock.ts';
import { newId } from '../common/ids.ts';
import { createImportJob, runImportJob } from '../leads/import-job.ts';
import { seededRandom } from '../common/random.ts';
import { addMembership } from './auth/accounts.ts';
import { roleAtLeast } from './auth/access.ts';
import { createApiKey } from './auth/api-keys.ts';
import { createInvitation } from './auth/invitations.ts';
import { hashPassword } from './auth/passwords.ts';
import type { ApiRoute, ExampleIds } from './http/route.ts';
import { apiRoutes } from './routes/index.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { validateDefinition } from '../sequence/definition.ts';
import { createEndpoint } from './webhooks/endpoints.ts';
import { startHubSpotEmulator, type HubSpotEmulator } from '../sim/emulators/hubspot/emulator.ts';

/** The CRM the fixtures' connections talk to (…/crm/connections/:connectionId/lists reads it): HubSpot's emulator, on loopback. */
let hubspot: HubSpotEmulator | undefined;

/** A mailbox password in the vault: no answer may ever contain it (promise 7). */
const STORED_PASSWORD = 'vault-only-mailbox-password';

/**
 * One of every object a workspace route can name, in the given workspace. A route whose URL takes
 * a parameter not listed here fails the test below with its name: add a fixture for it.
 */
async function seedObjects(h: ApiHarness, workspaceId: string, tag: string): Promise<ExampleIds> {
  const db = h.store.db;
  const random = seededRandom(`objects-${tag}`);
  const id = () => newId(Date.now(), random);
  const accountId = id();
  await db.insertInto('account').values({ id: accountId, email: `member-${tag}@example.test`, name: null, password_hash: await hashPassword('member password 1') }).execute();
  const memberId = await addMembership(db, { clock: systemClock, random }, { accountId, workspaceId, email: `member-${tag}@example.test`, name: null, role: 'member' });
  const apiKey = await createApiKey(db, { clock: systemClock, random }, { workspaceId, name: `key-${tag}`, role: 'admin', createdBy: null });
  const webhook = await createEndpoint({ db, clock: systemClock, random, sealer: h.ctx.vault! }, { allowPrivate: false }, { workspaceId, url: `https://hooks-${tag}.example.com/in`, events: ['reply'] });
  const graph = await seedGraph(h.store, workspaceId, tag, memberId);
  graph.invitationId = (await createInvitation(h.store, { clock: systemClock, random }, { workspaceId, email: `invitee-${tag}@example.test`, role: 'member', inviterRole: 'owner', invitedBy: null })).invitation.id;
  // The email step, possibly sent (a crash after its handover): what …/sends/:sendId/resend takes.
  const intro = await db.selectFrom('step').select('id').where('sequence_id', '=', graph.sequenceId!).where('key', '=', 'intro').executeTakeFirstOrThrow();
  graph.sendId = id();
  await db
    .insertInto('send_request')
    .values({ id: graph.sendId, workspace_id: workspaceId, enrollment_id: graph.enrollmentId!, step_id: intro.id, mailbox_id: graph.mailboxId!, state: 'possibly_sent', due_at: new Date(), message_id: `<${graph.sendId}@example.test>`, proof: 'copy_first' })
    .execute();
  await h.ctx.vault!.put(workspaceId, graph.mailboxId!, { kind: 'password', username: `rep-${tag}@example.test`, password: `${STORED_PASSWORD}-${tag}` });
  // A finished lead import with one rejected row, for …/leads/imports/:importId and its rejects.csv.
  const importSpec = { workspaceId, createdBy: memberId, fileName: `leads-${tag}.csv`, mapping: {}, onDuplicate: 'skip' as const, encoding: 'auto' as const, totalBytes: null };
  graph.importId = await createImportJob({ store: h.store, clock: systemClock, random }, importSpec);
  await runImportJob({ store: h.store, clock: systemClock, random }, graph.importId, importSpec, Readable.from([Buffer.from(`email\nnot-an-address-${tag}\n`)]));
  // A static lead list holding the seeded lead, for …/lead-lists/:listId.
  graph.listId = id();
  await db.insertInto('lead_list').values({ id: graph.listId, workspace_id: workspaceId, name: `list-${tag}`, kind: 'static' }).execute();
  await db.insertInto('lead_list_member').values({ list_id: graph.listId, lead_id: graph.leadId!, workspace_id: workspaceId }).execute();
  // An email template, for …/email-templates/:templateId.
  graph.templateId = id();
  await db.insertInto('email_template').values({ id: graph.templateId, workspace_id: workspaceId, name: `template-${tag}`, subject: 'Hi', body_html: '<p>Hi</p>', body_text: 'Hi' }).execute();
  // A warmup peer (another installation's public card), for …/warmup/peers/:peerId.
  graph.peerId = id();
  await db.insertInto('warmup_peer').values({ id: graph.peerId, workspace_id: workspaceId, name: `peer-${tag}`, url: `https://peer-${tag}.example.com`, sign_key: randomBytes(32).toString('base64'), agree_key: randomBytes(32).toString('base64'), state: 'pending', added_at: new Date() }).execute();
  // A call to the seeded lead, for …/calls/:callId and its progress and outcome.
  graph.callId = id();
  await db.insertInto('phone_call').values({ id: graph.callId, workspace_id: workspaceId, lead_id: graph.leadId!, direction: 'outbound', source: 'dialer', remote_e164: '+14155550123' }).execute();
  // Its recording, for …/calls/:callId/recording (a sealed WAV of a tenth of a second of silence).
  const wav = encodeWav(8000, [new Float32Array(800), new Float32Array(800)]);
  await db.insertInto('phone_call_recording').values({ call_id: graph.callId, workspace_id: workspaceId, sealed: await h.ctx.vault!.sealBytes(workspaceId, recordingContext(graph.callId), wav), duration_ms: 100, bytes: wav.length, announced: false }).execute();
  // And its transcription job, for …/calls/:callId/transcript.
  await enqueueTranscript(db, graph.callId, workspaceId, Date.now());
  // A CRM connection, for …/crm/connections/:connectionId.
  graph.connectionId = id();
  hubspot ??= await startHubSpotEmulator();
  await db
    .insertInto('crm_connection')
    .values({ id: graph.connectionId, workspace_id: workspaceId, kind: 'hubspot', base_url: hubspot.baseUrl, credentials: await h.ctx.vault!.seal(workspaceId, `crm:${graph.connectionId}`, hubspot.tokens.issue(`portal-${tag}`)) })
    .execute();
  // A team label, a note on the seeded reply and the member's saved view, for …/inbox/labels/:labelId, …/inbox/notes/:noteId and …/inbox/views/:viewId.
  graph.labelId = id();
  await db.insertInto('inbox_label').values({ id: graph.labelId, workspace_id: workspaceId, name: `label-${tag}` }).execute();
  graph.noteId = id();
  await db.insertInto('inbox_note').values({ id: graph.noteId, workspace_id: workspaceId, message_id: graph.messageId!, author_user_id: memberId, body: `note ${tag}`, created_at: new Date() }).execute();
  graph.viewId = id();
  await db.insertInto('inbox_view').values({ id: graph.viewId, workspace_id: workspaceId, user_id: memberId, name: `view-${tag}`, filters: '{}', created_at: new Date() }).execute();
  // Branding with a logo (a 1×1 PNG's signature is enough for what is served), for …/branding/logo.
  await db.insertInto('workspace_branding').values({ workspace_id: workspaceId, display_name: `Brand ${tag}`, primary_color: '#123456', accent_color: '#654321', logo: Buffer.from('89504e470d0a1a0a', 'hex'), logo_type: 'image/png' }).execute();
  // The webhook's signing secret rides along (no URL takes it): it is shown at creation only, so no later answer may carry it.
  // kind: a CRM's OAuth start (POST …/crm/oauth/:kind/start).
  // domain: a single sign-on domain to verify (POST …/sso/domains/:domain/verify); not listed, so 404 past the access check.
  return { workspaceId, memberId, apiKeyId: apiKey.id, webhookId: webhook.id, webhookSecret: webhook.secret, stepKey: 'intro', kind: 'hubspot', domain: `sso-${tag}.test`, ...graph };
}

/** Every row of every table that has a workspace_id, for one workspace: what must not change. */
async function snapshot(h: ApiHarness, workspaceId: string): Promise<unknown> {
  const tables = await sql<{ table_name: string }>`
    select table_name from information_schema.columns
    where column_name = 'workspace_id' and table_schema = 'public'
      and table_name not in (select inhrelid::regclass::text from pg_inherits)
    order by table_name`.execute(h.store.db);
  const out: Record<string, unknown> = {};
  for (const { table_name } of tables.rows) {
    const rows = await sql`select * from ${sql.table(table_name)} where workspace_id = ${workspaceId}`.execute(h.store.db);
    out[table_name] = rows.rows.map((r) => JSON.stringify(r)).sort();
  }
  const workspace = await h.store.db.selectFrom('workspace').selectAll().where('id', '=', workspaceId).execute();
  return { ...out, workspace: JSON.stringify(workspace) };
}

const workspaceRoutes = apiRoutes.filter((r) => typeof r.access === 'object');

function urlFor(route: ApiRoute, ids: ExampleIds): string {
  return route.url.replace(/:([A-Za-z]+)/g, (_m, name: string) => {
    const v = ids[name];
    if (!v) throw new Error(`${route.method} ${route.url}: no fixture for :${name}; add one to seedObjects in authz.test.ts`);
    return v;
  });
}

function queryString(q: unknown): string {
  if (!q || typeof q !== 'object') return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

describe.each(testBackends())('authorization on every workspace route (%s)', (backend) => {
  let h: ApiHarness;
  let a: ExampleIds;
  let b: ExampleIds;
  let ownerA: Browser;
  let memberA: Browser;
  let keyA: string;
  let bSecrets: string[];

  beforeAll(async () => {
    // With a federation identity, so the warmup peer routes answer in the own workspace.
    // A consent announcement configured, so that its GET answers 200 like every other.
    h = await apiHarness(backend, { federation: { identity: federationIdentity(randomBytes(32), 'https://a.example.test', 'A') }, consentAnnouncement: new Uint8Array([0x52, 0x49, 0x46, 0x46]) });
    const wa = await seedWorkspace(h.store, 'A', 'owner-a@example.test');
    const wb = await seedWorkspace(h.store, 'B', 'owner-b@example.test');
    a = await seedObjects(h, wa.workspaceId, 'a');
    b = await seedObjects(h, wb.workspaceId, 'b');
    ownerA = await login(h.app, 'owner-a@example.test', wa.password);
    memberA = await login(h.app, 'member-a@example.test', 'member password 1');
    keyA = (await createApiKey(h.store.db, { clock: systemClock, random: seededRandom('k') }, { workspaceId: wa.workspaceId, name: 'script', role: 'admin', createdBy: null })).key;
    // What an answer to A must never contain: B's ids and addresses.
    // (The step key is a name both seeded sequences use, 'intro': not B's data.)
    bSecrets = [...Object.entries(b).filter(([k]) => k !== 'stepKey' && k !== 'kind').map(([, v]) => v), 'owner-b@example.test', 'member-b@example.test', 'lead-b@prospects.test', 'rep-b@example.test', 'invitee-b@example.test', 'gone-b@prospects.test', 'maybe later (b)', 'not-an-address-b', 'leads-b.csv'];
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await hubspot?.close();
    hubspot = undefined;
  });

  it('covers every registered /api route, and each is in the OpenAPI document', async () => {
    expect(workspaceRoutes.length).toBeGreaterThan(5);
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, Record<string, unknown>> }>();
    for (const r of apiRoutes) {
      expect(h.app.hasRoute({ method: r.method, url: r.url }), `${r.method} ${r.url} registered`).toBe(true);
      const path = r.url.replace(/:([A-Za-z]+)/g, '{$1}');
      expect(doc.paths[path]?.[r.method.toLowerCase()], `${r.method} ${r.url} in /openapi.json`).toBeDefined();
    }
    const documented = Object.keys(doc.paths).filter((p) => p.startsWith('/api/'));
    const registered = new Set(apiRoutes.map((r) => r.url.replace(/:([A-Za-z]+)/g, '{$1}')));
    expect(documented.filter((p) => !registered.has(p)), 'an /api route outside the registry').toEqual([]);
    // Routes outside /api are documented too (registered after the OpenAPI plugin has loaded).
    expect(doc.paths['/healthz']?.get).toBeDefined();
  });

  it('each example input is valid, so a refusal below is authorization and not validation', () => {
    for (const r of workspaceRoutes) {
      const ex = r.example?.(b) ?? {};
      if (r.body) expect(r.body.safeParse(ex.body).success, `${r.method} ${r.url} example body`).toBe(true);
      if (r.query) expect(r.query.safeParse(ex.query ?? {}).success, `${r.method} ${r.url} example query`).toBe(true);
    }
  });

  it('refuses unauthenticated calls with 401', async () => {
    for (const r of workspaceRoutes) {
      const ex = r.example?.(a) ?? {};
      const res = await h.app.inject({ method: r.method, url: urlFor(r, a) + queryString(ex.query), ...(ex.body !== undefined ? { payload: ex.body as object } : {}) });
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(401);
      expect(res.json().error.code).toBe('UNAUTHENTICATED');
    }
  });

  it("a session and an API key of workspace A can neither read nor change workspace B's data", async () => {
    const before = await snapshot(h, b.workspaceId!);
    for (const r of workspaceRoutes) {
      const ex = r.example?.(b) ?? {};
      const url = urlFor(r, b) + queryString(ex.query);
      const bySession = await ownerA.call(r.method, url, ex.body);
      expect([403, 404], `session: ${r.method} ${url} → ${bySession.statusCode} ${bySession.body}`).toContain(bySession.statusCode);
      const byKey = await h.app.inject({ method: r.method, url, headers: { authorization: `Bearer ${keyA}` }, ...(ex.body !== undefined ? { payload: ex.body as object } : {}) });
      expect([403, 404], `API key: ${r.method} ${url} → ${byKey.statusCode}`).toContain(byKey.statusCode);
      // A's own workspace in the URL, B's objects in the path and the body.
      const crossIds = { ...b, workspaceId: a.workspaceId! };
      const mixed = await ownerA.call(r.method, urlFor(r, crossIds) + queryString(ex.query), ex.body);
      // A CRM's kind (…/crm/oauth/:kind/start) names no object of B's.
      const namesObject = /:(?!workspaceId|kind\b)[A-Za-z]+/.test(r.url);
      if (namesObject) expect([403, 404], `B's object via A's URL: ${r.method} ${r.url} → ${mixed.statusCode} ${mixed.body}`).toContain(mixed.statusCode);
      for (const s of bSecrets.filter((x) => x !== a.workspaceId)) expect(mixed.body, `${r.method} ${r.url} answered with B's data`).not.toContain(s);
    }
    expect(await snapshot(h, b.workspaceId!)).toEqual(before);
  });

  it('no answer in the own workspace carries a stored mailbox password, a webhook signing secret or a stored hash', async () => {
    const hashes = [
      ...(await h.store.db.selectFrom('api_key').select('key_hash').execute()).map((r) => r.key_hash),
      ...(await h.store.db.selectFrom('auth_session').select('id_hash').execute()).map((r) => r.id_hash),
      ...(await h.store.db.selectFrom('invitation').select('token_hash').execute()).map((r) => r.token_hash),
      ...(await h.store.db.selectFrom('account').select('password_hash').execute()).map((r) => r.password_hash),
    ];
    for (const r of workspaceRoutes.filter((x) => x.method === 'GET')) {
      const ex = r.example?.(a) ?? {};
      const res = await ownerA.call(r.method, urlFor(r, a) + queryString(ex.query));
      expect(res.statusCode, `${r.method} ${r.url} ${res.body.slice(0, 200)}`).toBe(200);
      expect(res.body, `${r.method} ${r.url}`).not.toContain(STORED_PASSWORD);
      expect(res.body, `${r.method} ${r.url}`).not.toContain(a.webhookSecret);
      for (const x of hashes) expect(res.body, `${r.method} ${r.url}`).not.toContain(x);
    }
  });

  it("a move names a sequence of the URL's workspace: A's enrollment into B's sequence, or B's enrollment into A's, changes nothing", async () => {
    const beforeB = await snapshot(h, b.workspaceId!);
    const beforeA = await snapshot(h, a.workspaceId!);
    const single = await ownerA.call('POST', `/api/workspaces/${a.workspaceId}/enrollments/${a.enrollmentId}/move`, { sequenceId: b.sequenceId });
    expect([single.statusCode, single.json().error.code]).toEqual([404, 'NOT_FOUND']);
    const bulkIntoB = await ownerA.call('POST', `/api/workspaces/${a.workspaceId}/enrollments/move`, { enrollmentIds: [a.enrollmentId], sequenceId: b.sequenceId });
    expect(bulkIntoB.statusCode).toBe(404);
    const otherSeq = await applyDefinition(h.store, { clock: systemClock, random: seededRandom('move-target') }, a.workspaceId!, validateDefinition({ key: 'move-target', name: 'Move target', status: 'draft', window: 'any', steps: [{ key: 'x', type: 'manual', title: 'x' }] }));
    const bulkOfB = await ownerA.call('POST', `/api/workspaces/${a.workspaceId}/enrollments/move`, { enrollmentIds: [b.enrollmentId], sequenceId: otherSeq.sequenceId });
    expect(bulkOfB.json().results).toEqual([{ enrollmentId: b.enrollmentId, outcome: 'skipped', reason: 'not_found', detail: expect.any(String) }]);
    expect(await snapshot(h, b.workspaceId!)).toEqual(beforeB);
    const afterA = (await snapshot(h, a.workspaceId!)) as Record<string, string[]>;
    // Only the draft sequence made above is new in A; no enrollment, event or request moved.
    for (const t of ['enrollment', 'event', 'send_request', 'task']) expect(afterA[t], t).toEqual((beforeA as Record<string, string[]>)[t]);
  });

  it('a member-role API key is refused admin routes with 403', async () => {
    const memberKey = (await createApiKey(h.store.db, { clock: systemClock, random: seededRandom('mk') }, { workspaceId: a.workspaceId!, name: 'member script', role: 'member', createdBy: null })).key;
    for (const r of workspaceRoutes) {
      if (typeof r.access !== 'object' || roleAtLeast('member', r.access.workspace)) continue;
      const ex = r.example?.(a) ?? {};
      const res = await h.app.inject({ method: r.method, url: urlFor(r, a) + queryString(ex.query), headers: { authorization: `Bearer ${memberKey}` }, ...(ex.body !== undefined ? { payload: ex.body as object } : {}) });
      expect(res.statusCode, `member key: ${r.method} ${r.url}`).toBe(403);
    }
  });

  it("a member is refused admin routes with 403, and a cookie call without the CSRF token is refused", async () => {
    for (const r of workspaceRoutes) {
      if (typeof r.access !== 'object' || roleAtLeast('member', r.access.workspace)) continue;
      const ex = r.example?.(a) ?? {};
      const res = await memberA.call(r.method, urlFor(r, a) + queryString(ex.query), ex.body);
      expect(res.statusCode, `member: ${r.method} ${r.url}`).toBe(403);
    }
    for (const r of workspaceRoutes.filter((x) => x.method !== 'GET')) {
      const ex = r.example?.(a) ?? {};
      for (const csrf of [null, 'wrong-token']) {
        const res = await ownerA.call(r.method, urlFor(r, a) + queryString(ex.query), ex.body, { csrf });
        expect(res.statusCode, `CSRF ${csrf}: ${r.method} ${r.url}`).toBe(403);
        expect(res.json().error.message).toContain('x-csrf-token');
      }
    }
  });
});
