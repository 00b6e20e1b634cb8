import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { applyDefinition } from '../../sequence/apply-definition.ts';
import { definitionSchema, stepSchema, stopRulesSchema, validateDefinition, type DefinitionDocument } from '../../sequence/definition.ts';
import { loadDefinition, toDocument } from '../../sequence/definition-document.ts';
import { sequenceInput, stepBody, stopRulesBody } from './sequence-body.ts';

/**
 * Issue 10: a PUT from the web editor reset stop rules, holiday skipping and tracking to their
 * defaults, because the API carried only some of the definition's fields. These tests hold the
 * API to the whole definition: YAML → apply → GET → PUT unchanged → export is the identity.
 */

const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

describe('the API sequence body', () => {
  it('has a counterpart for every field of the definition schema', () => {
    const api = Object.keys(sequenceInput.shape);
    expect(Object.keys(definitionSchema.shape).map(camel).filter((k) => !api.includes(k))).toEqual([]);
    const step = Object.keys(stepBody.shape);
    expect(Object.keys(stepSchema.shape).map(camel).filter((k) => !step.includes(k))).toEqual([]);
    const rules = Object.keys(stopRulesBody.shape);
    expect(Object.keys(stopRulesSchema.shape).map(camel).filter((k) => !rules.includes(k))).toEqual([]);
  });
});

const MAILBOXES = ['a@rt.test', 'b@rt.test', 'c@rt.test'];

const safeText = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 .,!?\n]{0,40}$/);
const body = fc.oneof(safeText, safeText.map((t) => `Hi {{first_name | default: "there"}}, ${t}`));
const delay = fc.record({ amount: fc.integer({ min: 0, max: 90 }), unit: fc.constantFrom('minutes', 'hours', 'days', 'business days') }).map((d) => `${d.amount} ${d.unit}`);
const variantKeys = fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'x'), { minLength: 1, maxLength: 3 }).map((ks) => ks.sort());

function emailStep(first: boolean) {
  const subject = first ? safeText : fc.option(safeText, { nil: undefined });
  return fc.oneof(
    fc.record({ subject, body }, { requiredKeys: first ? ['subject', 'body'] : ['body'] }),
    variantKeys.chain((keys) =>
      fc.tuple(...keys.map((key) => fc.record({ key: fc.constant(key), subject, body, weight: fc.integer({ min: 0, max: 1000 }) }, { requiredKeys: first ? ['key', 'subject', 'body', 'weight'] : ['key', 'body', 'weight'] }))).map((variants) => ({ variants })),
    ),
  );
}

const taskFields = fc.record({ title: safeText, notes: safeText, wait_for_task: fc.boolean() }, { requiredKeys: [] });
const callRetry = fc.record({ attempts: fc.integer({ min: 1, max: 10 }), after: delay, on: fc.subarray(['no_answer', 'voicemail', 'busy'], { minLength: 1 }) });
// The A/B experiment's settings on email steps (experiments/settings.ts), any subset of them.
const experimentFields = fc.record(
  { reply_window_days: fc.integer({ min: 1, max: 90 }), outcome: fc.constantFrom('replied' as const, 'positive' as const, 'meetings' as const), alpha: fc.constantFrom(0.01, 0.05, 0.1), min_sample_per_arm: fc.integer({ min: 50, max: 5000 }), tau: fc.constantFrom(0.01, 0.03, 0.05), auto_winner: fc.boolean() },
  { requiredKeys: [] },
);
const callFields = fc.record({ title: safeText, notes: safeText, wait_for_task: fc.boolean(), retry: callRetry }, { requiredKeys: [] });

const steps = fc.integer({ min: 1, max: 5 }).chain((n) =>
  fc.tuple(
    ...Array.from({ length: n }, (_, i) =>
      fc
        .tuple(i === 0 ? fc.constant('email' as const) : fc.constantFrom('email' as const, 'call' as const, 'manual' as const, 'wait' as const), delay)
        .chain(([type, d]) =>
          (type === 'email' ? fc.tuple(emailStep(i === 0), fc.record({ notes: safeText, signature: fc.boolean(), experiment: experimentFields }, { requiredKeys: [] })) : fc.tuple(fc.constant({}), type === 'call' ? callFields : taskFields)).map(([content, extra]) => ({ key: `s${i}`, type, delay: d, ...content, ...extra })),
        ),
    ),
  ),
);

const definition: fc.Arbitrary<DefinitionDocument> = fc.record(
  {
    key: fc.constant('rt'),
    name: safeText,
    status: fc.constantFrom('draft' as const, 'active' as const, 'paused' as const, 'archived' as const),
    window: fc.constantFrom('any', 'Mon-Fri 09:00-17:00', 'Tue,Thu 08:30-12:00', 'Sat,Sun 10:00-14:00', 'Mon,Wed-Fri 07:00-19:30'),
    holidays: fc.boolean(),
    jitter_minutes: fc.integer({ min: 0, max: 240 }),
    track_opens: fc.boolean(),
    track_clicks: fc.boolean(),
    stop_rules: fc.record(
      {
        on_out_of_office: fc.constantFrom('pause' as const, 'ignore' as const),
        ooo_default_pause_days: fc.integer({ min: 1, max: 90 }),
        on_meeting_booked: fc.constantFrom('finish' as const, 'continue' as const),
        max_soft_bounces: fc.integer({ min: 1, max: 20 }),
        stop_company_on_reply: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
    // The pool is a set: stored without an order, exported sorted.
    mailboxes: fc.subarray(MAILBOXES),
    steps,
  },
  { requiredKeys: ['key', 'name', 'steps'] },
).chain((doc) => fc.option(experimentFor(doc), { nil: undefined }).map((x) => (x ? { ...doc, experiments: [x] } : doc)));

/** Send hours inside each window the definitions use (an arm may only narrow the window). */
const hoursWithin: Record<string, string[]> = {
  any: ['00:00-24:00', '08:00-10:00', '22:00-23:30'],
  'Mon-Fri 09:00-17:00': ['09:00-10:00', '14:00-16:00'],
  'Tue,Thu 08:30-12:00': ['08:30-09:00', '10:00-12:00'],
  'Sat,Sun 10:00-14:00': ['10:00-14:00', '12:15-13:45'],
  'Mon,Wed-Fri 07:00-19:30': ['07:00-09:00', '17:00-19:30'],
};

/** A sequence experiment over the document's steps (issue 18): a timed step, and the variants of every A/B step fixed by each arm. */
function experimentFor(doc: DefinitionDocument): fc.Arbitrary<NonNullable<DefinitionDocument['experiments']>[number]> {
  const steps = doc.steps as Array<{ key: string; type: string; variants?: Array<{ key: string }>; experiment?: unknown }>;
  const timed = steps.filter((s, i) => i > 0 && ['email', 'call', 'manual'].includes(s.type)).map((s) => s.key);
  // A step with its own experiment settings cannot have its variant fixed by a sequence experiment.
  const ab = steps.filter((s) => s.variants && s.variants.length > 1 && !timed.includes(s.key) && s.experiment === undefined);
  const hours = hoursWithin[String(doc.window ?? 'Mon-Fri 09:00-17:00')]!;
  const arm = (key: string) =>
    fc.record({
      key: fc.constant(key),
      weight: fc.integer({ min: 1, max: 5 }),
      steps: fc
        .tuple(
          timed.length ? fc.record({ delay, send_hours: fc.constantFrom(...hours) }, { requiredKeys: [] }) : fc.constant({}),
          fc.tuple(...ab.map((s) => fc.constantFrom(...s.variants!.map((v) => v.key)))),
        )
        .map(([t, vs]) => ({
          ...(timed.length && Object.keys(t).length ? { [timed[0]!]: t } : {}),
          ...Object.fromEntries(ab.map((s, i) => [s.key, { variant: vs[i]! }])),
        })),
    });
  return fc.record({ key: fc.constant('x'), reply_window_days: fc.integer({ min: 1, max: 90 }), auto_winner: fc.boolean(), arms: fc.tuple(arm('a'), arm('b')) }, { requiredKeys: ['key', 'arms'] }).map((x) => ({ ...x, arms: [...x.arms] }));
}

describe.each(testBackends())('sequence round trip through the API (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let workspaceId: string;
  const deps = { clock: systemClock, random: seededRandom('roundtrip') };
  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'RT Co', 'owner@rt.test');
    workspaceId = w.workspaceId;
    b = await login(h.app, 'owner@rt.test', w.password);
    base = `/api/workspaces/${workspaceId}`;
    for (const [i, email] of MAILBOXES.entries()) {
      await h.store.db.insertInto('mailbox').values({ id: `00000000-0000-4000-8000-00000000000${i}`, workspace_id: workspaceId, email, provider: 'smtp_imap' }).execute();
    }
  });
  afterAll(() => h?.close());

  /** YAML text → the definition `cadenza sequence apply` would apply. */
  const fromYaml = (doc: DefinitionDocument) => validateDefinition(parseYaml(toYaml(doc)));

  it('YAML → apply → GET → PUT unchanged → export as YAML is the identity', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(definition, async (doc) => {
        // A fresh key per run: a step or variant key archived by an earlier run must not be restored into this one.
        const def0 = fromYaml({ ...doc, key: `rt-${n++}` });
        const applied = await applyDefinition(h.store, deps, workspaceId, def0);
        const got = await b.call('GET', `${base}/sequences/${applied.sequenceId}`);
        expect(got.statusCode, got.body).toBe(200);
        const put = await b.call('PUT', `${base}/sequences`, got.json());
        expect(put.statusCode, put.body).toBe(200);
        expect(put.json().version).toBe(applied.version + 1);
        const stored = await loadDefinition(h.store.db, workspaceId, applied.sequenceId);
        const { id: _id, version: _v, ...def1 } = stored!;
        const exported = toYaml(toDocument(def1));
        expect(fromYaml(parseYaml(exported))).toEqual(def0);
        expect(exported).toBe(toYaml(toDocument(def0)));
      }),
      { numRuns: backend === 'pglite' ? 30 : 20 },
    );
  }, 120_000);

  it('a branched definition with reply rules goes YAML → apply → GET → PUT unchanged → export unchanged (issue 18)', async () => {
    const def0 = validateDefinition(
      parseYaml(`
key: branched
name: Branched
stop_rules: { on_reply: { interested: notify, not_interested: { move_to: nurture, after: 4 weeks } } }
steps:
  - { key: intro, type: email, subject: Hi, body: Hello }
  - { key: ring, type: call, delay: 1 day, title: Ring }
  - key: engaged
    type: branch
    delay: 2 business days
    branches:
      - key: opened
        when: { any: [{ opened: intro }, { clicked: intro }] }
        steps: [{ key: a1, type: email, body: Saw it }, { key: a2, type: manual, title: Look them up }]
      - key: reached
        when: { all: [{ call_outcome: { step: ring, in: [connected, voicemail] } }, { not: { lead: { field: country, in: [FR] } } }] }
        steps: []
        then: end
      - key: otherwise
        when: { lead: { field: plan, exists: true } }
        steps: [{ key: b1, type: email, body: Once more }]
        then: { move_to: nurture, after: 3 weeks }
  - { key: breakup, type: email, delay: 3 days, body: Bye }
`),
    );
    const applied = await applyDefinition(h.store, deps, workspaceId, def0);
    const got = await b.call('GET', `${base}/sequences/${applied.sequenceId}`);
    expect(got.statusCode, got.body).toBe(200);
    expect(got.json().steps.map((s: { key: string }) => s.key)).toEqual(['intro', 'ring', 'engaged', 'breakup']);
    expect(got.json().steps[2].branches[2].then).toEqual({ moveTo: 'nurture', after: '21 days' });
    expect(got.json().stopRules.onReply).toEqual({ interested: 'notify', not_interested: { moveTo: 'nurture', after: '28 days' } });
    const put = await b.call('PUT', `${base}/sequences`, got.json());
    expect(put.statusCode, put.body).toBe(200);
    const again = await b.call('GET', `${base}/sequences/${applied.sequenceId}`);
    const { version: _a, ...first } = got.json();
    const { version: _b, ...second } = again.json();
    expect(second).toEqual(first);
    const { id: _id, version: _v, ...def1 } = (await loadDefinition(h.store.db, workspaceId, applied.sequenceId))!;
    expect(def1).toEqual(def0);
    expect(validateDefinition(parseYaml(toYaml(toDocument(def1))))).toEqual(def0);
  });

  it('a sequence experiment (timing, several steps, order) goes YAML → apply → GET → PUT unchanged → export unchanged (issue 18)', async () => {
    const def0 = validateDefinition(
      parseYaml(`
key: timed
name: Timed
window: Mon-Fri 08:00-18:00
steps:
  - key: intro
    type: email
    variants: [{ key: a, subject: Hi, body: Hello }, { key: b, subject: Hey, body: Hello there }]
  - { key: ring, type: call, delay: 1 day, title: Ring }
  - { key: fup, type: email, delay: 3 business days, variants: [{ key: a, body: Following up }, { key: b, body: Any thoughts? }] }
  - { key: nudge, type: manual, delay: 2 days, title: LinkedIn }
  - { key: last, type: email, delay: 3 days, body: Closing the loop }
experiments:
  - key: timing
    outcome: positive
    arms:
      - { key: early, steps: { intro: { variant: a }, fup: { variant: a, delay: 2 business days, send_hours: "08:00-10:00" } } }
      - { key: late, weight: 3, steps: { intro: { variant: b }, fup: { variant: b, delay: 4 business days, send_hours: "14:00-16:00" } } }
  - key: order
    arms: [{ key: as-written }, { key: swapped, order: [last, nudge] }]
`),
    );
    const applied = await applyDefinition(h.store, deps, workspaceId, def0);
    const got = await b.call('GET', `${base}/sequences/${applied.sequenceId}`);
    expect(got.statusCode, got.body).toBe(200);
    expect(got.json().experiments[0].arms[1]).toEqual({ key: 'late', weight: 3, steps: [{ step: 'intro', variant: 'b' }, { step: 'fup', variant: 'b', delay: '4 business days', sendHours: '14:00-16:00' }] });
    const put = await b.call('PUT', `${base}/sequences`, got.json());
    expect(put.statusCode, put.body).toBe(200);
    const { id: _id, version: _v, ...def1 } = (await loadDefinition(h.store.db, workspaceId, applied.sequenceId))!;
    expect(def1).toEqual(def0);
    expect(validateDefinition(parseYaml(toYaml(toDocument(def1))))).toEqual(def0);
    // The same text: each arm's choices in the steps' order, though the store keeps 'fup' before 'intro'.
    expect(toYaml(toDocument(def1))).toBe(toYaml(toDocument(def0)));
    // The API refuses what the file refuses, with the same words.
    const bad = await b.call('PUT', `${base}/sequences`, { ...(got.json() as object), experiments: [{ key: 'x', arms: [{ key: 'a', steps: [{ step: 'fup', sendHours: '02:00-04:00' }] }, { key: 'b' }] }] });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain("outside the sequence's window");
  });

  it('renaming through PUT keeps stop rules, holiday skipping and tracking', async () => {
    const def = validateDefinition(
      parseYaml(`
key: keep
name: Keep me
holidays: false
track_opens: true
track_clicks: true
jitter_minutes: 5
stop_rules: { on_out_of_office: ignore, on_meeting_booked: continue, max_soft_bounces: 7, stop_company_on_reply: true, ooo_default_pause_days: 3 }
mailboxes: [b@rt.test]
steps:
  - { key: one, type: email, subject: Hello, body: Hi }
  - { key: two, type: call, delay: 2 days, title: Ring, notes: Ask about Q3, wait_for_task: false }
`),
    );
    const { sequenceId } = await applyDefinition(h.store, deps, workspaceId, def);
    const got = (await b.call('GET', `${base}/sequences/${sequenceId}`)).json();
    expect(got).toMatchObject({ holidays: false, trackOpens: true, trackClicks: true, stopRules: { onOutOfOffice: 'ignore', maxSoftBounces: 7 } });
    const put = await b.call('PUT', `${base}/sequences`, { ...got, name: 'Kept' });
    expect(put.statusCode, put.body).toBe(200);
    const after = await loadDefinition(h.store.db, workspaceId, sequenceId);
    expect(after).toMatchObject({ ...def, name: 'Kept' });
    const row = await h.store.db.selectFrom('sequence').select(['settings', 'stop_rules']).where('id', '=', sequenceId).executeTakeFirstOrThrow();
    expect(row.settings).toMatchObject({ skipHolidays: false, trackOpens: true, trackClicks: true });
    expect(row.stop_rules).toEqual({ onOutOfOffice: 'ignore', onMeetingBooked: 'continue', maxSoftBounces: 7, stopCompanyOnReply: true, oooDefaultPauseDays: 3 });
  });
});
