import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

describe.each(testBackends())('sequence routes (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let leadId: string;
  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Seq Co', 'owner@seq.test');
    b = await login(h.app, 'owner@seq.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
    const imp = await b.call('POST', `${base}/leads/import`, { csv: 'email,first_name,company\nana@acme.test,Ana,Acme\nbo@beta.test,,Beta\n' });
    expect(imp.json().imported).toBe(2);
    leadId = (await b.call('GET', `${base}/leads?search=ana`)).json().leads[0].id;
  });
  afterAll(() => h?.close());

  const steps = [
    {
      key: 'intro',
      type: 'email',
      delay: '0 minutes',
      subject: 'Hi {{first_name | default: "there"}}',
      body: '{Hello|Hi} {{first_name | default: "there"}} at {{company}}',
      title: '',
      variants: [{ key: 'b', subject: 'Question for {{company}}', body: 'Hi {{first_name | default: "there"}}, a question.', weight: 2 }],
    },
    { key: 'call', type: 'call', delay: '2 business days', subject: '', body: '', title: 'Call about the intro', variants: [] },
  ];

  it('creates a sequence by key, shows it back as the editor sent it, and updates it in place', async () => {
    const put = await b.call('PUT', `${base}/sequences`, { key: 'intro', name: 'Intro', window: 'Mon-Fri 09:00-17:00', jitterMinutes: 10, steps });
    expect(put.statusCode, put.body).toBe(200);
    const { sequenceId, created } = put.json();
    expect(created).toBe(true);
    const got = (await b.call('GET', `${base}/sequences/${sequenceId}`)).json();
    expect(got).toMatchObject({ key: 'intro', name: 'Intro', status: 'active', jitterMinutes: 10, mailboxes: [] });
    expect(got.window).toMatch(/^Mon-Fri 09:00-17:00/);
    const { title: _none, ...email } = steps[0]!;
    expect(got.steps).toEqual([
      // A text-only step has no HTML: '' (the email editor's rich text, docs/web.md).
      { ...email, html: '', variants: email.variants.map((v) => ({ ...v, html: '' })), delay: '0 minutes', variantKey: 'a', weight: 1 },
      { ...steps[1], html: '', delay: '2 business days', variantKey: 'a', weight: 1 },
    ]);
    const again = (await b.call('PUT', `${base}/sequences`, { ...got, name: 'Intro v2' })).json();
    expect(again).toMatchObject({ sequenceId, created: false, version: 2 });
    const list = (await b.call('GET', `${base}/sequences`)).json();
    expect(list.sequences).toEqual([{ id: sequenceId, key: 'intro', name: 'Intro v2', status: 'active', steps: 2, active: 0, replied: 0 }]);
  });

  it('refuses a bad definition with every problem named', async () => {
    const r = await b.call('PUT', `${base}/sequences`, { key: 'bad', name: 'Bad', window: 'sometimes', steps: [{ ...steps[0], delay: 'soon' }] });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.message).toMatch(/window|delay/);
  });

  it('previews a template against a lead, and says what is wrong with a broken one', async () => {
    const ok = (await b.call('POST', `${base}/sequences/preview`, { leadId, subject: 'Hi {{first_name}}', body: 'About {{company}}' })).json();
    expect(ok).toEqual({ subject: 'Hi Ana', text: 'About Acme', problems: [], sender: null });
    const broken = (await b.call('POST', `${base}/sequences/preview`, { leadId, subject: 'Hi {{first_name', body: 'x' })).json();
    expect(broken.problems.length).toBeGreaterThan(0);
  });

  it('enrolls every lead not yet enrolled, once', async () => {
    const seq = (await b.call('GET', `${base}/sequences`)).json().sequences[0];
    const first = (await b.call('POST', `${base}/sequences/${seq.id}/enroll`, { all: true })).json();
    expect(first).toEqual({ enrolled: 2, invalid: 0, held: 0, refused: [] });
    expect((await b.call('POST', `${base}/sequences/${seq.id}/enroll`, { all: true })).json()).toEqual({ enrolled: 0, invalid: 0, held: 0, refused: [] });
    const again = (await b.call('POST', `${base}/sequences/${seq.id}/enroll`, { leadIds: [leadId] })).json();
    expect(again.refused).toEqual([expect.objectContaining({ leadId, reason: 'already_enrolled' })]);
    expect((await b.call('GET', `${base}/sequences`)).json().sequences[0].active).toBe(2);
    // A step with two variants is reported per variant (nothing sent yet: no send request has run).
    const a = (await b.call('GET', `${base}/analytics?days=1`)).json();
    expect(a.variants.map((v: { variantKey: string; sent: number }) => [v.variantKey, v.sent])).toEqual([
      ['a', 0],
      ['b', 0],
    ]);
  });

  it('previews as sent from a mailbox of the pool: {{sender.*}} filled as the send fills it, the first of the pool by default', async () => {
    const { workspaceId } = (await h.store.db.selectFrom('workspace').select('id as workspaceId').where('name', '=', 'Seq Co').executeTakeFirstOrThrow());
    const [rep, other] = [randomUUID(), randomUUID()];
    await h.store.db.insertInto('mailbox').values({ id: rep, workspace_id: workspaceId, user_id: null, email: 'a-rep@seq.test', display_name: 'Ann Rep', provider: 'smtp_imap' }).execute();
    await h.store.db.insertInto('mailbox').values({ id: other, workspace_id: workspaceId, user_id: null, email: 'b-rep@seq.test', display_name: 'Bob Other', provider: 'smtp_imap' }).execute();
    const tpl = { leadId, subject: 'From {{sender.first_name}}', body: '{{sender.name}} <{{sender.email}}>' };
    const first = (await b.call('POST', `${base}/sequences/preview`, tpl)).json();
    expect(first).toEqual({ subject: 'From Ann', text: 'Ann Rep <a-rep@seq.test>', problems: [], sender: { id: rep, email: 'a-rep@seq.test', name: 'Ann Rep' } });
    const chosen = (await b.call('POST', `${base}/sequences/preview`, { ...tpl, mailboxId: other })).json();
    expect(chosen).toMatchObject({ subject: 'From Bob', text: 'Bob Other <b-rep@seq.test>', problems: [] });
    // The pool decides the default, and a mailbox outside the pool is refused.
    expect((await b.call('POST', `${base}/sequences/preview`, { ...tpl, mailboxes: ['b-rep@seq.test'] })).json().sender.id).toBe(other);
    const outside = await b.call('POST', `${base}/sequences/preview`, { ...tpl, mailboxes: ['b-rep@seq.test'], mailboxId: rep });
    expect(outside.statusCode).toBe(404);
  });

  it('warns before saving a sequence whose template renders for no lead, and saves it when confirmed', async () => {
    const step = (body: string) => [{ key: 'one', type: 'email', delay: '0 minutes', subject: 'Hi', body, variants: [] }];
    // Fails for one lead (Bo has no first name), not for all: saved.
    const some = await b.call('PUT', `${base}/sequences`, { key: 'some', name: 'Some', steps: step('Hi {{first_name}}, {{sender.name}} here') });
    expect(some.statusCode, some.body).toBe(200);
    // No lead has a title: every send of the step would be blocked.
    const all = await b.call('PUT', `${base}/sequences`, { key: 'none', name: 'None', steps: step('About your work as {{title}}') });
    expect(all.statusCode, all.body).toBe(409);
    expect(all.json().error).toMatchObject({ code: 'TEMPLATE_FAILS_FOR_ALL', details: { leadsChecked: 2, failures: [expect.objectContaining({ step: 'one', variant: 'a' })] } });
    expect(await h.store.db.selectFrom('sequence').select('id').where('key', '=', 'none').executeTakeFirst()).toBeUndefined();
    const confirmed = await b.call('PUT', `${base}/sequences`, { key: 'none', name: 'None', steps: step('About your work as {{title}}'), confirm: true });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
  });
});
