import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, ownerFixture, seedGraph, seedWorkspace, type ApiHarness, type Browser, type ObjectIds } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

/**
 * The email editor's routes (docs/web.md "The email editor"): the template library and a
 * mailbox's signature. Another workspace's ids are a 404, never its data; a bad input is a 400
 * that says what is wrong in words; the HTML is sanitized on the way in (no script, no on*
 * handler, no javascript: link), and the plain-text part is made from it when none is given.
 */
const HOSTILE = '<p onclick="steal()">Hi {{first_name | default: "there"}}<script>alert(1)</script> <a href="javascript:alert(2)">click</a> <a href="https://acme.example/demo" onmouseover="x()">demo</a><img src="x" onerror="y()" alt="Logo"></p>';

function expectClean(html: string): void {
  expect(html).not.toMatch(/<script|alert\(|onclick|onmouseover|onerror|javascript:/i);
}

describe.each(testBackends())('email templates and signatures (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let g: ObjectIds;
  let otherWs: string;
  let other: Browser;
  let otherG: ObjectIds;

  beforeAll(async () => {
    ({ h, ws, owner, g } = await ownerFixture(backend));
    const w = await seedWorkspace(h.store, 'B', 'other@example.test');
    otherWs = w.workspaceId;
    otherG = await seedGraph(h.store, otherWs, 'b', w.userId);
    other = await login(h.app, 'other@example.test', w.password);
  }, 60_000);
  afterAll(async () => h?.close());

  const url = (w: string, id?: string) => `/api/workspaces/${w}/email-templates${id ? `/${id}` : ''}`;

  it('saves a template with its HTML sanitized and its text made from it; lists, renames and deletes it', async () => {
    const r = await owner.call('POST', url(ws), { name: 'Intro', subject: 'Quick question', html: HOSTILE });
    expect(r.statusCode).toBe(200);
    const t = r.json<{ id: string; name: string; subject: string; html: string; text: string }>();
    expectClean(t.html);
    expect(t.html).toContain('Hi {{first_name | default: "there"}}');
    expect(t.html).toContain('href="https://acme.example/demo"');
    expect(t.text).toBe('Hi {{first_name | default: "there"}} click demo (https://acme.example/demo)Logo');
    const row = await h.store.db.selectFrom('email_template').selectAll().where('id', '=', t.id).executeTakeFirstOrThrow();
    expectClean(row.body_html ?? '');
    expect(row.workspace_id).toBe(ws);

    // The rep's own text is kept as written.
    const own = await owner.call('POST', url(ws), { name: 'Own text', html: '<p>Hello</p>', text: 'Hello, in my words' });
    expect(own.json()).toMatchObject({ html: '<p>Hello</p>', text: 'Hello, in my words' });

    expect((await owner.call('GET', url(ws))).json<{ templates: Array<{ name: string }> }>().templates.map((x) => x.name)).toEqual(['Intro', 'Own text']);
    const renamed = await owner.call('PATCH', url(ws, t.id), { name: '  Intro (short)  ' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ id: t.id, name: 'Intro (short)', subject: 'Quick question' });
    const taken = await owner.call('PATCH', url(ws, t.id), { name: 'Own text' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().error.message).toBe('a template named "Own text" already exists in this workspace');
    expect((await owner.call('DELETE', url(ws, t.id))).json()).toEqual({ ok: true });
    expect((await owner.call('DELETE', url(ws, t.id))).statusCode).toBe(404);
    expect((await owner.call('GET', url(ws))).json<{ templates: Array<{ name: string }> }>().templates.map((x) => x.name)).toEqual(['Own text']);
  });

  it('says in words what is wrong with a template', async () => {
    const cases: Array<[unknown, string]> = [
      [{ name: '   ', html: '<p>x</p>' }, 'body.name: a template needs a name'],
      [{ name: 'x'.repeat(201), html: '<p>x</p>' }, 'body.name: a template name is at most 200 characters'],
      [{ name: 'Empty', html: '<script>only()</script>' }, 'a template needs some text'],
      [{ name: 'Broken', html: '<p>Hi {{first_name</p>' }, "'{{' is never closed with '}}'"],
    ];
    for (const [body, message] of cases) {
      const r = await owner.call('POST', url(ws), body);
      expect(r.statusCode, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(r.json().error.message).toContain(message);
    }
    const dup = await owner.call('POST', url(ws), { name: 'Own text', html: '<p>again</p>' });
    expect(dup.statusCode).toBe(409);
    const id = (await owner.call('GET', url(ws))).json<{ templates: Array<{ id: string }> }>().templates[0]!.id;
    expect((await owner.call('PATCH', url(ws, id), { name: '' })).json().error.message).toBe('body.name: a template needs a name');
  });

  it("answers 404 for another workspace's template, and never changes it", async () => {
    const theirs = (await other.call('POST', url(otherWs), { name: 'Theirs', html: '<p>Private</p>' })).json<{ id: string }>().id;
    expect((await owner.call('PATCH', url(ws, theirs), { name: 'Mine now' })).statusCode).toBe(404);
    expect((await owner.call('DELETE', url(ws, theirs))).statusCode).toBe(404);
    // Their workspace's URL is not ours to use at all.
    expect((await owner.call('GET', url(otherWs))).statusCode).toBe(404);
    expect((await owner.call('DELETE', url(otherWs, theirs))).statusCode).toBe(404);
    const row = await h.store.db.selectFrom('email_template').select(['name', 'workspace_id']).where('id', '=', theirs).executeTakeFirstOrThrow();
    expect(row).toEqual({ name: 'Theirs', workspace_id: otherWs });
    expect((await owner.call('GET', url(ws))).json<{ templates: Array<{ name: string }> }>().templates.map((x) => x.name)).not.toContain('Theirs');
  });

  it("sets a mailbox's signature sanitized, with its text made from it, and removes it", async () => {
    const mb = `/api/workspaces/${ws}/mailboxes/${g.mailboxId}`;
    const r = await owner.call('PATCH', mb, { signatureHtml: '<p>Sam<br><a href="javascript:alert(1)" onclick="x()">Acme</a></p><script>steal()</script>' });
    expect(r.statusCode).toBe(200);
    const sig = r.json<{ signature: { html: string; text: string } }>().signature;
    expectClean(sig.html);
    expect(sig.text).toBe('Sam\nAcme');
    const row = await h.store.db.selectFrom('mailbox').select(['signature_html', 'signature_text']).where('id', '=', g.mailboxId!).executeTakeFirstOrThrow();
    expectClean(row.signature_html ?? '');
    const own = await owner.call('PATCH', mb, { signatureHtml: '<p>Sam</p>', signatureText: 'Sam, Acme' });
    expect(own.json().signature).toEqual({ html: '<p>Sam</p>', text: 'Sam, Acme' });
    // The preview sent from that mailbox ends with its signature, as the sender appends it.
    const preview = await owner.call('POST', `/api/workspaces/${ws}/sequences/preview`, { leadId: g.leadId, subject: 'Hi', body: 'Hello {{first_name}}', mailboxId: g.mailboxId });
    expect(preview.json()).toMatchObject({ text: 'Hello Lead a\n\nSam, Acme', problems: [] });
    const tooLong = await owner.call('PATCH', mb, { signatureHtml: 'x'.repeat(20_001) });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().error.message).toBe('body.signatureHtml: a signature is at most 20000 characters of HTML');
    const removed = await owner.call('PATCH', mb, { signatureHtml: null, signatureText: null });
    expect(removed.json().signature).toBeNull();
    expect(await h.store.db.selectFrom('mailbox').select(['signature_html', 'signature_text']).where('id', '=', g.mailboxId!).executeTakeFirstOrThrow()).toEqual({ signature_html: null, signature_text: null });
  });

  it("answers 404 for another workspace's mailbox signature, and never changes it", async () => {
    const r = await owner.call('PATCH', `/api/workspaces/${ws}/mailboxes/${otherG.mailboxId}`, { signatureHtml: '<p>Not yours</p>' });
    expect(r.statusCode).toBe(404);
    expect((await h.store.db.selectFrom('mailbox').select('signature_html').where('id', '=', otherG.mailboxId!).executeTakeFirstOrThrow()).signature_html).toBeNull();
  });
});
