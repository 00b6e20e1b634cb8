import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import { transcriptContext } from '../dialer/transcribe/queue.ts';
import { seedSentSequence, type Seeded } from '../../test/ingest/seed-sent-sequence.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { startHubSpotEmulator, type HubSpotEmulator } from '../sim/emulators/hubspot/emulator.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { callMediaReader, MAX_TRANSCRIPT_CHARS, recordingLink, transcriptText } from './call-media.ts';
import type { TokenSealer } from './connections.ts';
import { CrmSync } from './crm-sync.ts';

/**
 * A call's CRM activity carries its recording link and transcript (0056_crm_call_media.sql,
 * call-media.ts): it waits for them, bounded, and the writer reads them when it claims it; what
 * reaches the CRM (HubSpot's emulator) is checked. The sealers only tag what they seal, bound to
 * the context as the vault's are.
 */
const tag = (ws: string, ctx: string, plain: Buffer) => Buffer.concat([Buffer.from(`${ws}|${ctx}|`), plain]);
const untag = (ws: string, ctx: string, sealed: Buffer) => {
  const head = `${ws}|${ctx}|`;
  if (!Buffer.from(sealed).subarray(0, head.length).equals(Buffer.from(head))) throw new Error('sealed under another context');
  return Buffer.from(sealed).subarray(head.length);
};
const sealer: TokenSealer = { seal: async (ws, ctx, plain) => tag(ws, ctx, Buffer.from(plain)), open: async (ws, ctx, sealed) => untag(ws, ctx, sealed).toString() };
const bytes = { openBytes: async (ws: string, ctx: string, sealed: Buffer) => untag(ws, ctx, sealed) };

describe('a call activity’s media (pure)', () => {
  it('writes the transcript speaker by speaker and cuts it at a turn’s end, saying so', () => {
    const turns = [
      { speaker: 'rep' as const, startMs: 0, endMs: 900, text: 'Hi, this is Sam from Acme.' },
      { speaker: 'prospect' as const, startMs: 1000, endMs: 1800, text: 'Hello Sam.' },
    ];
    expect(transcriptText({ turns })).toBe('Rep: Hi, this is Sam from Acme.\nProspect: Hello Sam.');
    const long = Array.from({ length: 2000 }, (_, i) => ({ speaker: (i % 2 ? 'prospect' : 'rep') as 'rep' | 'prospect', startMs: i, endMs: i, text: 'word '.repeat(10).trim() }));
    const cut = transcriptText({ turns: long });
    expect(cut.length).toBeLessThanOrEqual(MAX_TRANSCRIPT_CHARS);
    expect(cut).toMatch(/^Rep: word.*\n(Rep|Prospect): (word ){9}word\n\[… the rest of the transcript is in Cadenza\]$/s);
  });

  it('links to the lead’s page at the call', () => {
    expect(recordingLink('https://cadenza.acme.test/', 'lead-1', 'call-2')).toBe('https://cadenza.acme.test/leads/lead-1#call-call-2');
  });
});

describe.each(testBackends())('a call activity waits for its recording and transcript, bounded (%s)', (backend) => {
  let store: TestStore;
  let emu: HubSpotEmulator;
  let seeded: Seeded;
  let sync: CrmSync;
  let connectionId: string;
  let leadId: string;
  const random = seededRandom(`crm-call-media-${backend}`);
  const PUBLIC = 'https://cadenza.acme.test';

  beforeAll(async () => {
    store = await freshStore(backend);
    emu = await startHubSpotEmulator({ searchesPerSecond: 1000, requestsPerWindow: 100_000 });
    const service = new EnrollmentService({ store, clock: systemClock, random });
    seeded = await seedSentSequence(store, { clock: systemClock, random, service }, { mailboxEmail: `rep-${backend}@acme.test`, leads: [`ana-${backend}@prospects.test`], tag: `crmcall${backend}` });
    await store.db.updateTable('workspace').set({ settings: JSON.stringify({ callRecording: true }) }).where('id', '=', seeded.workspaceId).execute();
    leadId = (await store.db.selectFrom('lead').select('id').where('workspace_id', '=', seeded.workspaceId).executeTakeFirstOrThrow()).id;
    emu.addContact({ email: `ana-${backend}@prospects.test`, firstname: 'Ana' });
    connectionId = randomUUID();
    await store.db
      .insertInto('crm_connection')
      .values({ id: connectionId, workspace_id: seeded.workspaceId, kind: 'hubspot', base_url: emu.baseUrl, credentials: await sealer.seal(seeded.workspaceId, `crm:${connectionId}`, emu.tokens.issue('portal')), activities: ['call'] })
      .execute();
    sync = new CrmSync({ store, clock: systemClock, random, owner: 'crm:test', sealer, pollMs: 60_000, callMedia: callMediaReader({ publicUrl: PUBLIC, sealer: bytes }) });
  }, 60_000);
  afterAll(async () => {
    await sync?.stop();
    await emu?.close();
    await store?.destroy();
  });

  const activity = (callId: string) => store.db.selectFrom('crm_activity').selectAll().where('external_id', '=', `cadenza:call:${callId}`).executeTakeFirstOrThrow();
  const endedAt = new Date(Date.now() - 10_000);
  async function loggedCall(o: { answered: boolean; source?: 'dialer' | 'logged' }): Promise<string> {
    const id = randomUUID();
    await store.db
      .insertInto('phone_call')
      .values({ id, workspace_id: seeded.workspaceId, lead_id: leadId, direction: 'outbound', source: o.source ?? 'dialer', state: 'ended', duration_ms: 95_000, ended_at: endedAt, ...(o.answered ? { answered_at: new Date(endedAt.getTime() - 95_000) } : {}) })
      .execute();
    await store.db.updateTable('phone_call').set({ outcome: 'connected', outcome_at: new Date(endedAt.getTime() + 5_000), notes: 'Good talk' }).where('id', '=', id).execute();
    return id;
  }
  const MIN = 60_000;

  it('an unanswered call is due when logged; an answered one in a recording workspace waits 2 minutes for its recording, then 30 for its transcript, and is due when the transcript is done', async () => {
    const missed = await loggedCall({ answered: false });
    expect((await activity(missed)).next_attempt_at.getTime()).toBe(endedAt.getTime() + 5_000);
    const typed = await loggedCall({ answered: true, source: 'logged' });
    expect((await activity(typed)).next_attempt_at.getTime()).toBe(endedAt.getTime() + 5_000);

    const call = await loggedCall({ answered: true });
    expect((await activity(call)).next_attempt_at.getTime()).toBe(endedAt.getTime() + 2 * MIN);
    // The ingester stores the recording and, where this server transcribes, its job, in one transaction.
    await store.db.transaction().execute(async (tx) => {
      await tx.insertInto('phone_call_recording').values({ call_id: call, workspace_id: seeded.workspaceId, sealed: Buffer.from('wav'), duration_ms: 95_000, bytes: 3, announced: true }).execute();
      await tx.insertInto('call_transcript').values({ call_id: call, workspace_id: seeded.workspaceId }).execute();
    });
    expect((await activity(call)).next_attempt_at.getTime()).toBe(endedAt.getTime() + 30 * MIN);
    await store.db.updateTable('call_transcript').set({ state: 'running' }).where('call_id', '=', call).execute();
    expect((await activity(call)).next_attempt_at.getTime()).toBe(endedAt.getTime() + 30 * MIN);
    const stored = { words: [], durationMs: 95_000, turns: [{ speaker: 'rep', startMs: 0, endMs: 1000, text: 'Hi Ana, Sam from Acme.' }, { speaker: 'prospect', startMs: 1200, endMs: 2000, text: 'Send me the deck <please>.' }] };
    await store.db.updateTable('call_transcript').set({ state: 'done', transcript: tag(seeded.workspaceId, transcriptContext(call), Buffer.from(JSON.stringify(stored))) }).where('call_id', '=', call).execute();
    expect((await activity(call)).next_attempt_at.getTime()).toBe(endedAt.getTime());

    // A recording without transcription releases its call at once.
    const plain = await loggedCall({ answered: true });
    await store.db.insertInto('phone_call_recording').values({ call_id: plain, workspace_id: seeded.workspaceId, sealed: Buffer.from('wav'), duration_ms: 95_000, bytes: 3, announced: true }).execute();
    expect((await activity(plain)).next_attempt_at.getTime()).toBe(endedAt.getTime());

    await sync.round();
    const calls = emu.store.all('calls');
    expect(calls).toHaveLength(4);
    const byRecording = (url: string | undefined) => calls.find((c) => c.properties.hs_call_recording_url === url);
    const transcribed = byRecording(`${PUBLIC}/leads/${leadId}#call-${call}`)!;
    expect(transcribed.properties.hs_call_body).toContain('Rep: Hi Ana, Sam from Acme.');
    expect(transcribed.properties.hs_call_body).toContain('Prospect: Send me the deck &lt;please&gt;.');
    expect(transcribed.properties.hs_call_body).toContain('Good talk');
    expect(byRecording(`${PUBLIC}/leads/${leadId}#call-${plain}`)!.properties.hs_call_body).not.toContain('Transcript');
    expect(calls.filter((c) => !c.properties.hs_call_recording_url)).toHaveLength(2);
  });

  it('a claimed activity is the writer’s: a transcript finished meanwhile does not move it', async () => {
    const call = await loggedCall({ answered: true });
    await store.db.updateTable('crm_activity').set({ attempts: 1, next_attempt_at: new Date(Date.now() + 120_000) }).where('external_id', '=', `cadenza:call:${call}`).execute();
    await store.db.insertInto('phone_call_recording').values({ call_id: call, workspace_id: seeded.workspaceId, sealed: Buffer.from('wav'), duration_ms: 95_000, bytes: 3, announced: true }).execute();
    expect((await activity(call)).next_attempt_at.getTime()).toBeGreaterThan(Date.now() + 60_000);
  });
});
