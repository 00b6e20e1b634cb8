import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { writeCapture } from '../../src/dialer/recording/capture-fixture.ts';
import { blockingViolations } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * A lead's recorded call in headless Chromium against the real app with recording and
 * transcription on: rtpengine's capture (a fixture pcap in the spool) is ingested by the API role,
 * transcribed by its worker (the fixture model with the joiner that emits a word every 40 ms, so
 * the words do not depend on the tiny model's accuracy), and the lead page shows the player, the
 * transcript's turns (a turn's time moves the player there), and a failed transcript with its
 * reason and "Transcribe again", which the worker then does. At 1440×900 and 390×844, with axe.
 * Screenshots call-recordings-01..03.
 */
const skip = chromiumSkipReason();
const FIXTURE = join(import.meta.dirname, '../fixtures/asr');
const OWNER = { name: 'Rae Rep', email: 'rae@cadenza.test', password: 'a long enough password', workspace: 'Recorded Co' };

async function apiFromPage(page: Page, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  return page.evaluate(
    async ({ method, path, body }) => {
      const me = (await (await fetch('/api/auth/me')).json()) as { csrfToken: string; workspaces: { id: string }[] };
      const url = path.replace(':ws', me.workspaces[0]!.id);
      const r = await fetch(url, { method, headers: { 'content-type': 'application/json', 'x-csrf-token': me.csrfToken }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: r.status, json: await r.json().catch(() => null) };
    },
    { method, path, body },
  );
}

describe.skipIf(skip !== null)(`a lead's recorded calls${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-web-rec-'));
  const spool = join(dir, 'spool');
  const model = join(dir, 'model');
  mkdirSync(model);
  for (const f of ['encoder.onnx', 'decoder.onnx', 'tokens.txt']) copyFileSync(join(FIXTURE, f), join(model, f));
  copyFileSync(join(FIXTURE, 'always-emits', 'joiner.onnx'), join(model, 'joiner.onnx'));
  const web = webSuite({ prefix: 'web-recordings', roles: ['api'], appOptions: () => ({ recording: { spoolDir: spool }, transcription: { dir: model, name: 'web-test' } }) });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('plays a recorded call, shows its transcript by speaker, and transcribes a failed one again', async () => {
    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await web.setupOwner(page, OWNER);
    const db = web.app.store.db;
    const owner = await db.selectFrom('app_user').innerJoin('account', 'account.id', 'app_user.account_id').select(['app_user.id', 'app_user.workspace_id']).where('account.email', '=', OWNER.email).executeTakeFirstOrThrow();
    expect((await apiFromPage(page, 'PATCH', '/api/workspaces/:ws/settings', { callRecording: true })).status).toBe(200);
    const lead = await apiFromPage(page, 'POST', '/api/workspaces/:ws/leads', { email: 'ann@prospects.test', firstName: 'Ann', phone: '+14155550123' });
    expect(lead.status, JSON.stringify(lead.json)).toBe(201);
    const leadId = (lead.json.lead?.id ?? lead.json.id) as string;
    // Two calls the rep placed to Ann, each recorded by rtpengine (its spool as it leaves it when a call ends).
    const callIds: string[] = [];
    for (const n of [1, 2]) {
      const callId = `00000000-0000-4000-8000-00000000b00${n}`;
      const sipCallId = `web-rec-${n}@browser.invalid`;
      await db.insertInto('phone_call').values({ id: callId, workspace_id: owner.workspace_id, lead_id: leadId, placed_by: owner.id, direction: 'outbound', source: 'dialer', state: 'ended', outcome: 'connected', sip_call_id: sipCallId, remote_e164: '+14155550123' }).execute();
      writeCapture(spool, sipCallId, owner.id, n);
      callIds.push(callId);
    }
    // The ingester looks every 10 s; the worker transcribes right after.
    const states = async () => (await db.selectFrom('call_transcript').select(['call_id', 'state']).orderBy('call_id').execute()).map((r) => r.state);
    for (let i = 0; i < 300 && (await states()).join() !== 'done,done'; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await states()).toEqual(['done', 'done']);
    // The second one's transcription failed for good (as after its last retry).
    await db.updateTable('call_transcript').set({ state: 'failed', transcript: null, word_count: null, attempts: 4, error_code: 'TRANSCRIPTION_FAILED', error_message: 'the speech runtime ran out of memory' }).where('call_id', '=', callIds[1]!).execute();

    await page.goto(`${web.app.url}/leads/${leadId}`);
    const card = page.getByRole('region', { name: 'Call recordings' });
    await card.waitFor();
    expect(await card.locator('audio').count()).toBe(2);
    const failed = card.getByRole('listitem').filter({ hasText: 'The transcription failed' });
    await failed.getByText('the speech runtime ran out of memory').waitFor();
    const done = card.getByRole('listitem').filter({ has: page.getByText('Transcript', { exact: true }) }).first();
    await done.getByText('Transcript', { exact: true }).click();
    const turns = done.getByRole('list', { name: 'Transcript' });
    await turns.waitFor();
    // Both speakers, each turn with its time: the rep's leg starts the call, the prospect's a second later.
    await turns.getByText('Rep:').first().waitFor();
    await turns.getByText('Prospect:').first().waitFor();
    expect(await turns.getByText(/cadenza cadenza/).count()).toBeGreaterThan(0);
    await screenshot(page, 'call-recordings-01-transcript');
    // A turn's time moves the player there.
    const second = turns.getByRole('button', { name: /^Play from 0:01$/ }).first();
    await second.click();
    await done.locator('audio').evaluate((a: HTMLAudioElement) => new Promise<void>((ok, fail) => {
      const t0 = Date.now();
      const look = () => (a.currentTime >= 1 ? ok() : Date.now() - t0 > 10_000 ? fail(new Error(`the player is at ${a.currentTime} s`)) : setTimeout(look, 50));
      look();
    }));
    expect(await blockingViolations(page, 'a recorded call with its transcript')).toEqual([]);

    // Transcribe the failed one again: the worker takes it at once and the page follows.
    await failed.getByRole('button', { name: 'Transcribe again' }).click();
    await page.getByRole('listitem').filter({ hasText: 'The transcription failed' }).waitFor({ state: 'detached', timeout: 20_000 });
    await card.getByText('Transcript', { exact: true }).nth(1).waitFor({ timeout: 20_000 });
    expect(await states()).toEqual(['done', 'done']);
    const audit = await db.selectFrom('audit_event').select('action').where('action', 'in', ['transcript.read', 'transcript.requested']).execute();
    expect(audit.map((a) => a.action).sort()).toEqual(['transcript.read', 'transcript.requested']);
    await screenshot(page, 'call-recordings-02-transcribed-again');

    // On a phone: the card and its transcript fit the width.
    await page.setViewportSize({ width: 390, height: 844 });
    await card.getByText('Transcript', { exact: true }).first().scrollIntoViewIfNeeded();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    expect(await blockingViolations(page, 'the recordings on a phone')).toEqual([]);
    await screenshot(page, 'call-recordings-03-phone');
    expect(web.errors).toEqual([]);
  }, 120_000);
});
