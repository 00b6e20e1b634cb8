import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, joinByInvitation, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { silentWav } from '../../dialer/voicemail-clip.ts';

describe.each(testBackends())("a rep's voicemail message (%s)", (backend) => {
  let h: ApiHarness;
  let owner: Browser;
  let rep: Browser;
  let url: string;
  let workspaceId: string;

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Drop Co', 'owner@drop.test');
    workspaceId = w.workspaceId;
    owner = await login(h.app, 'owner@drop.test', w.password);
    rep = await joinByInvitation(h.app, owner, workspaceId, 'rep@drop.test', 'member');
    url = `/api/workspaces/${workspaceId}/dialer/voicemail`;
  });
  afterAll(() => h?.close());

  it('records, plays back and replaces the caller’s own clip, sealed at rest; another member has their own', async () => {
    expect((await rep.call('GET', url)).json()).toEqual({ voicemail: null });
    const clip = silentWav(3000);
    // A recognisable run of bytes: the sealed row must not contain it.
    clip.fill(0x5a, 100, 4000);
    const put = await rep.call('PUT', url, { mimeType: 'audio/wav', durationMs: 1, audio: clip.toString('base64') });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().voicemail).toMatchObject({ mimeType: 'audio/wav', durationMs: 3000, bytes: clip.length });
    const got = (await rep.call('GET', url)).json().voicemail;
    expect(Buffer.from(got.audio, 'base64').equals(clip)).toBe(true);
    const row = await h.store.db.selectFrom('rep_voicemail').select(['audio']).executeTakeFirstOrThrow();
    expect(Buffer.from(row.audio).includes(clip.subarray(100, 4000))).toBe(false);
    // The owner is another rep: their own (none), never the member's.
    expect((await owner.call('GET', url)).json()).toEqual({ voicemail: null });
    const again = await rep.call('PUT', url, { mimeType: 'audio/wav', durationMs: 1, audio: silentWav(2000).toString('base64') });
    expect(again.json().voicemail.durationMs).toBe(2000);
    expect(await h.store.db.selectFrom('rep_voicemail').select('user_id').execute()).toHaveLength(1);
  });

  it('refuses a wrong type, a lying file, an oversized or overlong clip with a clear message', async () => {
    const bad = async (body: object) => {
      const r = await rep.call('PUT', url, body);
      expect(r.statusCode, r.body).toBe(400);
      return r.json().error.message as string;
    };
    expect(await bad({ mimeType: 'text/html', durationMs: 5000, audio: Buffer.from('<html>').toString('base64') })).toMatch(/not a supported recording/);
    expect(await bad({ mimeType: 'audio/webm', durationMs: 5000, audio: Buffer.from('<html>').toString('base64') })).toMatch(/not a known audio format/);
    expect(await bad({ mimeType: 'audio/wav', durationMs: 5000, audio: silentWav(40_000).toString('base64') })).toMatch(/larger than 512 KB/);
    const webm = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), Buffer.alloc(1000)]);
    expect(await bad({ mimeType: 'audio/webm;codecs=opus', durationMs: 90_000, audio: webm.toString('base64') })).toMatch(/limit is 60 s/);
    expect(await bad({ mimeType: 'audio/webm', durationMs: 5000, audio: 'not base64!' })).toBeTruthy();
  });

  it('an API key has no voice; removing the member deletes theirs', async () => {
    const made = await owner.call('POST', `/api/workspaces/${workspaceId}/api-keys`, { name: 'script' });
    const bearer = { authorization: `Bearer ${made.json().key as string}` };
    expect((await h.app.inject({ method: 'GET', url, headers: bearer })).statusCode).toBe(403);
    const repId = ((await owner.call('GET', `/api/workspaces/${workspaceId}/members`)).json().members as { id: string; email: string }[]).find((m) => m.email === 'rep@drop.test')!.id;
    expect((await owner.call('DELETE', `/api/workspaces/${workspaceId}/members/${repId}`)).statusCode).toBe(200);
    expect(await h.store.db.selectFrom('rep_voicemail').select('user_id').execute()).toHaveLength(0);
  });
});
