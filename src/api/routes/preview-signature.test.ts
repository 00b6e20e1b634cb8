import { randomBytes } from 'node:crypto';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import { newId } from '../../common/ids.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { applyDefinition } from '../../sequence/apply-definition.ts';
import { bulkEnroll } from '../../sequence/bulk-enroll.ts';
import { validateDefinition } from '../../sequence/definition.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { prepareEmail } from '../../sending/compose/prepare.ts';
import { claimNext } from '../../sending/outbox.ts';
import { loadSendMaterial } from '../../sending/send-context.ts';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

/**
 * The editor's preview and the real send end an email the same way (issue 19, docs/web.md "The
 * email editor"): the preview route (POST …/sequences/preview, as the sequence editor calls it
 * with the step's signature choice) against the text part the sender composes for the same step,
 * lead and mailbox (send-context.ts loadSendMaterial → compose/prepare.ts), once with the
 * mailbox's signature and once for a step saved with `signature: false`; the HTML part carries
 * the signature's HTML, or none.
 */
const T0 = Date.UTC(2026, 5, 1, 12, 0);
const SIGNATURE = '<p>Rae Rep<br><strong>Editors Inc.</strong> · <a href="https://editors.test">editors.test</a></p>';

describe.each(testBackends())('the preview ends as the send does (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let workspaceId: string;
  let mailboxId: string;
  let leadId: string;
  const random = seededRandom('preview-signature');

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Preview Co', 'owner@preview.test');
    workspaceId = w.workspaceId;
    base = `/api/workspaces/${workspaceId}`;
    b = await login(h.app, 'owner@preview.test', w.password);
    mailboxId = newId(T0, random);
    leadId = newId(T0, random);
    await h.store.db.insertInto('mailbox').values({ id: mailboxId, workspace_id: workspaceId, email: 'rae@preview.test', display_name: 'Rae Rep', provider: 'smtp_imap', time_zone: 'UTC' }).execute();
    await h.store.db.insertInto('lead').values({ id: leadId, workspace_id: workspaceId, email: 'pat@prospect.test', email_norm: 'pat@prospect.test', first_name: 'Pat', company: 'Prospect Ltd' }).execute();
    // The signature set as the Mailboxes screen and the step's signature picker set it.
    const r = await b.call('PATCH', `${base}/mailboxes/${mailboxId}`, { signatureHtml: SIGNATURE });
    expect(r.statusCode, r.body).toBe(200);
  }, 60_000);
  afterAll(() => h?.close());

  /** A one-step sequence applied from its definition, the lead enrolled and its send claimed and composed as the sender does. */
  async function sendOf(key: string, step: Record<string, unknown>) {
    const clock = new SimClock(T0);
    const deps = { store: h.store, clock, random };
    const def = validateDefinition({ key, name: key, window: 'any', holidays: false, jitter_minutes: 0, mailboxes: ['rae@preview.test'], steps: [{ key: 'intro', type: 'email', subject: 'Hi {{first_name}}', ...step }] });
    const seq = await applyDefinition(h.store, deps, workspaceId, def);
    await bulkEnroll(h.store, deps, { workspaceId, sequenceId: seq.sequenceId, leadIds: [leadId] });
    const service = new EnrollmentService(deps);
    while ((await service.fireDue(100)).length) {
      /* drain */
    }
    const claimed = await claimNext({ ...deps, service }, mailboxId);
    if (claimed.kind !== 'claimed') throw new Error(`expected a claim, got ${claimed.kind}`);
    const material = await loadSendMaterial(h.store.db, claimed.claim);
    const prepared = await prepareEmail({
      claim: claimed.claim,
      template: material.template,
      lead: material.lead,
      sender: material.sender,
      signature: material.signature,
      now: clock.now(),
      tracking: { key: randomBytes(32), baseUrl: 'https://links.preview.test' },
      thread: material.thread,
    });
    if (!prepared.ok) throw new Error(prepared.reason);
    const parsed = await PostalMime.parse(prepared.email.raw);
    // The step as the editor holds it (GET), and the preview it asks for.
    const got = (await b.call('GET', `${base}/sequences/${seq.sequenceId}`)).json<{ steps: Array<{ subject: string; body: string; signature?: boolean }> }>().steps[0]!;
    const preview = await b.call('POST', `${base}/sequences/preview`, { leadId, subject: got.subject, body: got.body, mailboxes: ['rae@preview.test'], mailboxId, signature: got.signature !== false });
    expect(preview.statusCode, preview.body).toBe(200);
    return { parsed, preview: preview.json<{ subject: string; text: string; problems: string[] }>(), got };
  }

  it("with the mailbox's signature: the preview's text is the text part sent, the HTML part ends with the signature", async () => {
    const { parsed, preview, got } = await sendOf('with-signature', { html: '<p>Hello {{first_name}},</p><p>Read <a href="https://example.com/guide">the guide</a>.</p>' });
    expect(got.signature).toBeUndefined();
    expect(preview.problems).toEqual([]);
    expect(preview.subject).toBe(parsed.subject);
    expect(preview.text).toBe('Hello Pat,\n\nRead the guide (https://example.com/guide).\n\nRae Rep\nEditors Inc. · editors.test (https://editors.test)');
    expect(parsed.text?.replace(/\r\n/g, '\n').replace(/\n+$/, '')).toBe(preview.text);
    expect(parsed.html).toContain(`<div class="cadenza-signature">${SIGNATURE}</div>`);
  });

  it('with a step saved as "no signature": neither the preview nor the send has one', async () => {
    const { parsed, preview, got } = await sendOf('without-signature', { body: 'Hello {{first_name}},\n\nA short one.', signature: false });
    expect(got.signature).toBe(false);
    expect(preview.text).toBe('Hello Pat,\n\nA short one.');
    expect(parsed.text?.replace(/\r\n/g, '\n').replace(/\n+$/, '')).toBe(preview.text);
    expect(parsed.text).not.toContain('Rae Rep');
    expect(parsed.html ?? '').not.toContain('cadenza-signature');
  });

  it('refuses a signature choice on a step that is not an email, in words', () => {
    expect(() => validateDefinition({ key: 'x', name: 'x', steps: [{ key: 'a', type: 'email', body: 'Hi' }, { key: 'b', type: 'call', signature: false }] })).toThrow(/steps\.1 \(b\): only email steps have a signature/);
  });
});
