import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { applyDefinition } from '../../sequence/apply-definition.ts';
import { bulkEnroll } from '../../sequence/bulk-enroll.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { claimNext, recordSent } from '../../sending/outbox.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { migrate } from '../../store/migrate.ts';
import { ensureEventPartitions } from '../../store/partitions.ts';
import { openStore, type Store } from '../../store/store.ts';
import { makeWorld } from '../../../test/fixtures/world.ts';
import { twoEmailsDefinition } from '../../../test/fixtures/two-emails.ts';
import { startTlsCluster, tlsClusterSkipReason, type TlsCluster } from '../../../test/ops/pg-tls-cluster.ts';
import { applyGrants } from './apply-grants.ts';
import { retire, rotate } from './ca-folder.ts';
import { createCa, issueLeaf, validFor } from './certificates.ts';
import { DB_ROLES } from './db-grants.ts';

/**
 * Mutual TLS and least privilege on a PostgreSQL cluster of this file's own (port 5570) that
 * admits nobody but by client certificate (test/ops/pg-tls-cluster.ts): refused without a
 * certificate, with one of another CA, with an expired one, each said in plain words; and each role
 * on its own certificate doing its real writes (the code paths themselves), while the API's
 * attempts at the scheduler's and the sender's writes, and at the sealed credentials, are denied.
 */
const PORT = 5570;
const skip = tlsClusterSkipReason();
const T0 = Date.UTC(2026, 5, 1, 12, 0);

describe.skipIf(skip !== undefined)(`mutual TLS and least privilege on PostgreSQL${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let cluster: TlsCluster;
  const stores: Store[] = [];
  const open = async (url: string) => {
    const s = await openStore({ databaseUrl: url, poolSize: 2, failoverWaitMs: 2_000 });
    stores.push(s);
    return s;
  };
  const roleUrl = (role: keyof typeof DB_ROLES) => cluster.url(DB_ROLES[role], 'cadenza');

  beforeAll(async () => {
    cluster = await startTlsCluster(PORT);
    for (const r of Object.values(DB_ROLES)) await cluster.issueClient(r);
    await cluster.admin('postgres', (c) => c.query('create database cadenza'));
    const owner = await open(cluster.url('postgres', 'cadenza'));
    await migrate(owner);
    await cluster.admin('cadenza', (c) => applyGrants(c));
  }, 60_000);
  afterAll(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    cluster?.stop();
  });

  /** A client certificate and key written beside the CA, from `issued`. */
  const writeCert = (name: string, issued: { certPem: string; keyPem: string }) => {
    const crt = join(cluster.caDir, `${name}.crt`);
    const key = join(cluster.caDir, `${name}.key`);
    writeFileSync(crt, issued.certPem);
    writeFileSync(key, issued.keyPem, { mode: 0o600 });
    return { crt, key };
  };
  const refusal = async (url: string) => {
    const e = await openStore({ databaseUrl: url, failoverWaitMs: 1_000 }).then(
      async (s) => {
        await s.close();
        return undefined;
      },
      (err: unknown) => err as Error & { code: string },
    );
    expect(e, 'the connection should have been refused').toBeDefined();
    expect(e!.code).toBe('STORE_UNAVAILABLE');
    return e!.message;
  };

  it('refuses a process without a client certificate, saying what to set', async () => {
    expect(await refusal(cluster.url('cadenza_api', 'cadenza', null))).toMatch(/only with a client certificate, and this process gave none: set sslcert and sslkey/);
  });

  it('refuses a certificate from another CA', async () => {
    const other = await createCa('Another CA', validFor(Date.now(), 5));
    const cert = writeCert('other-ca-api', await issueLeaf(other, { kind: 'client', commonName: 'cadenza_api', validity: validFor(Date.now(), 5) }));
    expect(await refusal(cluster.url('cadenza_api', 'cadenza', cert))).toMatch(/does not trust this process's client certificate: it was issued by a CA that is not in the server's ssl_ca_file/);
  });

  it('refuses an expired certificate of the right CA', async () => {
    const ca = { certPem: readFileSync(join(cluster.caDir, 'ca.crt'), 'utf8'), keyPem: readFileSync(join(cluster.caDir, 'ca.key'), 'utf8') };
    const day = 86_400_000;
    const cert = writeCert('expired-api', await issueLeaf(ca, { kind: 'client', commonName: 'cadenza_api', validity: { notBefore: new Date(Date.now() - 10 * day), notAfter: new Date(Date.now() - day) } }));
    expect(await refusal(cluster.url('cadenza_api', 'cadenza', cert))).toMatch(/refused this process's client certificate because it has expired/);
  });

  it("refuses one role's certificate used to log in as another role", async () => {
    const f = { crt: join(cluster.caDir, 'certs', 'cadenza_api.crt'), key: join(cluster.caDir, 'certs', 'cadenza_api.key') };
    expect(await refusal(cluster.url('cadenza_sender', 'cadenza', f))).toMatch(/common name is not the database role this URL logs in as/);
  });

  it('each role on its own certificate does its own writes; the API is denied the scheduler’s, the sender’s and the sealed credentials', async () => {
    const [api, scheduler, sender, sync] = [await open(roleUrl('api')), await open(roleUrl('scheduler')), await open(roleUrl('sender')), await open(roleUrl('sync'))];
    // Each connection is TLS with the role's certificate, as the server sees it.
    for (const [s, role] of [[api, 'cadenza_api'], [scheduler, 'cadenza_scheduler'], [sender, 'cadenza_sender'], [sync, 'cadenza_sync']] as const) {
      const r = await sql<{ ssl: boolean; dn: string; who: string }>`select s.ssl, s.client_dn as dn, current_user as who from pg_stat_ssl s where s.pid = pg_backend_pid()`.execute(s.db);
      expect(r.rows[0]).toEqual({ ssl: true, dn: `/CN=${role}`, who: role });
    }
    // What every role does at start needs no DDL: migrations are applied, partitions go through the owner's function.
    for (const s of [api, scheduler, sender, sync]) {
      expect((await migrate(s)).applied).toEqual([]);
      await ensureEventPartitions(s, T0 + 400 * 86_400_000);
    }
    const random = seededRandom(15);
    const clock = new SimClock(T0);
    const owner = stores[0]!;
    const world = await makeWorld(owner, { leads: 1, mailboxes: 1, nowMs: T0, random, zones: ['UTC'], countries: [null] });
    // The API: defines the sequence, enrolls, stores a mailbox password (its own writes).
    const seq = await applyDefinition(api, { clock, random }, world.workspaceId, twoEmailsDefinition());
    await bulkEnroll(api, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seq.sequenceId, leadIds: world.leadIds });
    const wrapper = localKeyWrapper(randomBytes(32));
    await new Vault(api, wrapper).put(world.workspaceId, world.mailboxIds[0]!, { kind: 'password', username: 'rep0', password: 'secret' });

    // The API cannot create the send request, neither through the scheduler's code path nor by hand.
    await expect(new EnrollmentService({ store: api, clock, random }).fireDue(100)).rejects.toMatchObject({ code: '42501', message: expect.stringMatching(/permission denied for table send_request/) });
    await expect(sql`insert into send_request (id, workspace_id, enrollment_id, step_id, due_at) values (gen_random_uuid(), ${world.workspaceId}, gen_random_uuid(), gen_random_uuid(), now())`.execute(api.db)).rejects.toMatchObject({
      code: '42501',
      message: expect.stringMatching(/permission denied for table send_request/),
    });
    // The scheduler can: the step falls due and its request is created.
    expect((await new EnrollmentService({ store: scheduler, clock, random }).fireDue(100)).length).toBe(1);
    const request = await owner.db.selectFrom('send_request').select(['id', 'state']).executeTakeFirstOrThrow();
    expect(request.state).toBe('queued');

    // The API cannot mark it sent (nor can the scheduler or the sync role); it may still cancel or pause it.
    for (const s of [api, scheduler, sync]) {
      for (const state of ['sent', 'possibly_sent']) {
        await expect(sql`update send_request set state = ${state} where id = ${request.id}`.execute(s.db)).rejects.toMatchObject({ code: '42501', message: expect.stringMatching(new RegExp(`only the sender role \\(cadenza_sender\\) may mark a send request ${state}`)) });
      }
    }
    await sql`update send_request set plan_note = 'checked by the API' where id = ${request.id}`.execute(api.db);

    // The API cannot read the sealed credential; the sender can, and opens it.
    await expect(sql`select ciphertext from mailbox_credential`.execute(api.db)).rejects.toMatchObject({ code: '42501', message: expect.stringMatching(/permission denied for table mailbox_credential/) });
    await expect(new Vault(api, wrapper).get(world.mailboxIds[0]!)).rejects.toMatchObject({ code: 'FORBIDDEN', message: expect.stringMatching(/may not read mailbox credentials/) });
    await expect(sql`select ciphertext from mailbox_credential`.execute(scheduler.db)).rejects.toMatchObject({ code: '42501' });
    expect(await new Vault(sender, wrapper).get(world.mailboxIds[0]!)).toEqual({ kind: 'password', username: 'rep0', password: 'secret' });

    // The sender claims and records the send: 'sent', through its own code path.
    const deps = { store: sender, service: new EnrollmentService({ store: sender, clock, random }), clock, random, proof: 'copy_first' as const };
    const claim = await claimNext(deps, world.mailboxIds[0]!);
    if (claim.kind !== 'claimed') throw new Error(`expected a claim, got ${claim.kind}`);
    expect(await recordSent(deps, claim.claim, clock.now(), { subject: 'Hi' })).toBe(true);
    expect((await owner.db.selectFrom('send_request').select('state').where('id', '=', request.id).executeTakeFirstOrThrow()).state).toBe('sent');

    // Sign-in is the API's alone: no other role lists API keys or mints one.
    for (const s of [scheduler, sender, sync]) {
      await expect(sql`select key_hash from api_key`.execute(s.db)).rejects.toMatchObject({ code: '42501', message: expect.stringMatching(/permission denied for table api_key/) });
      await expect(sql`insert into api_key (id, workspace_id, name, prefix, key_hash, role) values (gen_random_uuid(), ${world.workspaceId}, 'x', 'x', 'x', 'admin')`.execute(s.db)).rejects.toMatchObject({ code: '42501' });
    }
    // No role may change the schema, nor mark a migration applied.
    for (const s of [api, scheduler, sender, sync]) {
      await expect(sql`create table intruder (x int)`.execute(s.db)).rejects.toMatchObject({ code: '42501' });
      await expect(sql`insert into schema_migration (version, name) values (9999, 'intruder')`.execute(s.db)).rejects.toMatchObject({ code: '42501' });
    }
  }, 30_000);

  it('table by table: only the API writes definitions and reads webhook URLs and secrets; credential tasks keep the revoked token from the API and out of the scheduler’s and sync’s reach', async () => {
    const [api, scheduler, sender, sync] = [await open(roleUrl('api')), await open(roleUrl('scheduler')), await open(roleUrl('sender')), await open(roleUrl('sync'))];
    const owner = stores[0]!;
    const random = seededRandom(16);
    const world = await makeWorld(owner, { leads: 1, mailboxes: 1, nowMs: T0, random, zones: ['UTC'], countries: [null] });
    const denied = { code: '42501' };
    // Definitions: every role reads them; only the API writes them.
    for (const s of [scheduler, sender, sync]) {
      expect((await sql<{ n: number }>`select count(*)::int as n from lead where workspace_id = ${world.workspaceId}`.execute(s.db)).rows[0]!.n).toBe(1);
      await expect(sql`update lead set first_name = 'Mallory' where workspace_id = ${world.workspaceId}`.execute(s.db)).rejects.toMatchObject({ ...denied, message: expect.stringMatching(/permission denied for table lead/) });
      await expect(sql`insert into lead (id, workspace_id, email, email_norm) values (gen_random_uuid(), ${world.workspaceId}, 'x@example.test', 'x@example.test')`.execute(s.db)).rejects.toMatchObject(denied);
      await expect(sql`delete from sequence`.execute(s.db)).rejects.toMatchObject({ ...denied, message: expect.stringMatching(/permission denied for table sequence/) });
      await expect(sql`update step set delay_amount = 0`.execute(s.db)).rejects.toMatchObject(denied);
    }
    await sql`update lead set first_name = 'Pat' where workspace_id = ${world.workspaceId}`.execute(api.db);

    // Webhook endpoints: the triggers' columns for the others, never the URL nor the sealed secrets.
    const endpoint = crypto.randomUUID();
    await sql`insert into webhook_endpoint (id, workspace_id, url, events, secret_sealed) values (${endpoint}, ${world.workspaceId}, 'https://hooks.example.test/x', ${['reply']}, ${Buffer.from('sealed')})`.execute(api.db);
    for (const s of [scheduler, sender, sync]) {
      expect((await sql<{ id: string }>`select id, workspace_id, events, disabled_at from webhook_endpoint`.execute(s.db)).rows.map((r) => r.id)).toEqual([endpoint]);
      await expect(sql`select url from webhook_endpoint`.execute(s.db)).rejects.toMatchObject({ ...denied, message: expect.stringMatching(/permission denied for table webhook_endpoint/) });
      await expect(sql`select secret_sealed from webhook_endpoint`.execute(s.db)).rejects.toMatchObject(denied);
      await expect(sql`update webhook_endpoint set url = 'https://attacker.example.test/'`.execute(s.db)).rejects.toMatchObject(denied);
    }
    // Deliveries: the sender and sync journal one (the triggers), and do not read the payloads back.
    for (const s of [sender, sync]) await expect(sql`select payload from webhook_delivery`.execute(s.db)).rejects.toMatchObject(denied);

    // Credential tasks: the API asks and reads the answer, never `sealed`; the sender does the work.
    const task = crypto.randomUUID();
    await sql`insert into credential_task (id, workspace_id, mailbox_id, kind, input) values (${task}, ${world.workspaceId}, ${world.mailboxIds[0]!}, 'test', ${JSON.stringify({})})`.execute(api.db);
    expect((await sql<{ state: string }>`select state from credential_task where id = ${task}`.execute(api.db)).rows[0]!.state).toBe('queued');
    await expect(sql`select sealed from credential_task`.execute(api.db)).rejects.toMatchObject({ ...denied, message: expect.stringMatching(/permission denied for table credential_task/) });
    await expect(sql`update credential_task set result = ${JSON.stringify({ ok: true })} where id = ${task}`.execute(api.db)).rejects.toMatchObject(denied);
    for (const s of [scheduler, sync]) await expect(sql`select id from credential_task`.execute(s.db)).rejects.toMatchObject(denied);
    await sql`update credential_task set state = 'done', result = ${JSON.stringify({ ok: true })} where id = ${task}`.execute(sender.db);
  }, 30_000);
});

describe.skipIf(skip !== undefined)(`a CA rotation on PostgreSQL${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let cluster: TlsCluster;
  beforeAll(async () => {
    cluster = await startTlsCluster(PORT + 2);
    await cluster.issueClient('cadenza_api');
    await cluster.admin('postgres', (c) => c.query('create role cadenza_api login'));
  }, 60_000);
  afterAll(() => cluster?.stop());

  const connects = async (url: string) =>
    openStore({ databaseUrl: url, failoverWaitMs: 1_000 }).then(
      async (s) => {
        await s.close();
        return 'connected';
      },
      (e: Error) => e.message,
    );

  it('keeps the old CA trusted until retire: old and new certificates both connect during the rotation, only the new ones after', async () => {
    const old = { crt: join(cluster.caDir, 'old-api.crt'), key: join(cluster.caDir, 'old-api.key') };
    writeFileSync(old.crt, readFileSync(join(cluster.caDir, 'certs', 'cadenza_api.crt')));
    writeFileSync(old.key, readFileSync(join(cluster.caDir, 'certs', 'cadenza_api.key')), { mode: 0o600 });
    const r = await rotate(cluster.caDir, { withinDays: 30, newCa: true, caDays: 30, nowMs: Date.now() });
    expect(r.trusted).toHaveLength(2);
    expect(r.plan.reissue.map((x) => x.name).sort()).toEqual(['cadenza_api', 'postgres', 'server']);
    cluster.reloadTls();
    // A role still on the old CA's certificate and old trust file, and one already on the new: both in.
    expect(await connects(cluster.url('cadenza_api', 'postgres', old))).toBe('connected');
    expect(await connects(cluster.url('cadenza_api', 'postgres'))).toBe('connected');
    retire(cluster.caDir, Date.now());
    cluster.reloadTls();
    expect(await connects(cluster.url('cadenza_api', 'postgres'))).toBe('connected');
    expect(await connects(cluster.url('cadenza_api', 'postgres', old))).toMatch(/does not trust this process's client certificate/);
  }, 30_000);
});
