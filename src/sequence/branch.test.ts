/**
 * Branching sequences (issue 18): the definition's branch steps and reply-intent rules, their
 * validation and export, and the pure engine's choice of an arm, its end and its moves.
 */
import fc from 'fast-check';
import { enrollmentFixture } from '../../test/sequence/enrollment-fixture.ts';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { flattenSteps, POSITION_GAP } from './apply-definition.ts';
import { holds, noFacts, type BranchFacts, type Condition } from './conditions.ts';
import { toDocument } from './definition-document.ts';
import { validateDefinition, type SequenceDefinition } from './definition.ts';
import { defaultStopRules, NO_ARM, type EngineEvent, type Enrollment, type SequenceDef, type StepDef, type StopRules } from './model.ts';
import { transition } from './transition.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0); // Monday
const DAY = 86_400_000;

const YAML = `
key: outreach
name: Outreach
window: any
holidays: false
jitter_minutes: 0
stop_rules:
  on_reply:
    interested: notify
    not_interested: { move_to: nurture, after: 4 weeks }
steps:
  - { key: intro, type: email, subject: Hi, body: Hello }
  - key: engaged
    type: branch
    delay: 2 days
    branches:
      - key: opened
        when: { opened: intro }
        steps: [{ key: a1, type: email, body: Saw you read it }]
      - key: clicked
        when: { clicked: intro }
        steps: [{ key: c1, type: email, body: You clicked }]
        then: end
      - key: otherwise
        steps: [{ key: b1, type: email, body: Another try }]
        then: { move_to: nurture, after: 4 weeks }
  - { key: breakup, type: email, delay: 3 days, body: Bye }
`;

function load(yaml: string): SequenceDefinition {
  return validateDefinition(parseYaml(yaml));
}

/** The engine's view of a definition, as applyDefinition and toSequenceDef would store and read it (ids = 'id-' + key). */
function engineView(def: SequenceDefinition): SequenceDef {
  const flat = flattenSteps(def.steps);
  const steps: StepDef[] = flat.map((s, i) => {
    const cfg = s.config as { arms?: StepDef['arms']; arm?: { branch: string; key: string } };
    return {
      id: `id-${s.key}`,
      key: s.key,
      position: i * POSITION_GAP,
      kind: s.kind,
      delay: s.delay,
      archived: false,
      ...(cfg.arms ? { arms: cfg.arms } : {}),
      ...(cfg.arm ? { arm: { branchId: `id-${cfg.arm.branch}`, key: cfg.arm.key } } : {}),
    };
  });
  return { id: 'seq', workspaceId: 'ws', window: { kind: 'any' }, skipHolidays: false, jitterMinutes: 0, stopRules: { ...defaultStopRules, ...(def.stopRules as Partial<StopRules>) }, steps };
}

function fresh(): Enrollment {
  return enrollmentFixture(T0);
}

/**
 * Runs an enrollment to its end: every timer fires when due, every send succeeds at once; the
 * branch is given `facts`. Returns the keys of the steps run, the final enrollment and all effects.
 */
function drive(seq: SequenceDef, facts: BranchFacts, e = fresh(), events: Array<{ afterSteps: number; ev: EngineEvent }> = []) {
  const keyOf = (id: string) => seq.steps.find((s) => s.id === id)!.key;
  const ran: string[] = [];
  const effects = [];
  let now = T0;
  let r = transition(e, { type: 'enrolled' }, now, seq);
  for (let i = 0; i < 50 && r.next.state === 'active'; i++) {
    effects.push(...r.effects);
    const pending = events.find((x) => x.afterSteps === ran.length);
    if (pending) {
      events.splice(events.indexOf(pending), 1);
      r = transition(r.next, pending.ev, now, seq);
      continue;
    }
    const cur = r.next;
    if (cur.waitingFor === 'timer') {
      now = Math.max(now, cur.dueAt!);
      const step = seq.steps.find((s) => s.id === cur.nextStepId)!;
      r = transition(cur, step.kind === 'branch' ? { type: 'step_due', facts } : { type: 'step_due' }, now, seq);
      if (step.kind === 'branch') ran.push(step.key);
    } else if (cur.waitingFor === 'send') {
      ran.push(keyOf(cur.nextStepId!));
      r = transition(cur, { type: 'step_sent', stepId: cur.nextStepId!, at: now }, now, seq);
    } else break;
  }
  effects.push(...r.effects);
  return { ran, e: r.next, effects, now };
}

describe('branch definitions', () => {
  it('reads arms, conditions, then and reply rules; weeks are days', () => {
    const d = load(YAML);
    const b = d.steps[1]!;
    expect(b.kind).toBe('branch');
    expect(b.branches!.map((a) => [a.key, a.then])).toEqual([
      ['opened', 'continue'],
      ['clicked', 'end'],
      ['otherwise', { moveTo: 'nurture', after: { amount: 28, unit: 'days' } }],
    ]);
    expect(b.branches![0]!.steps.map((s) => s.key)).toEqual(['a1']);
    expect(d.stopRules.onReply).toEqual({ interested: 'notify', not_interested: { moveTo: 'nurture', after: { amount: 28, unit: 'days' } } });
  });

  it('exports a branched definition that reads back the same', () => {
    const d = load(YAML);
    expect(validateDefinition(parseYaml(toYaml(toDocument(d))))).toEqual(d);
  });

  it('flattens arms after their branch, then the rejoin', () => {
    const flat = flattenSteps(load(YAML).steps);
    expect(flat.map((s) => s.key)).toEqual(['intro', 'engaged', 'a1', 'c1', 'b1', 'breakup']);
    expect(flat[2]!.config).toEqual({ arm: { branch: 'engaged', key: 'opened' } });
    expect((flat[1]!.config as { arms: unknown[] }).arms).toHaveLength(3);
  });

  it('reports every problem with its path', () => {
    const bad = `
key: bad
name: Bad
steps:
  - { key: intro, type: email, subject: Hi, body: Hello }
  - { key: ring, type: call }
  - key: fork
    type: branch
    branches:
      - { key: x, steps: [] }
      - { key: y, when: { opened: later }, steps: [{ key: intro, type: email, body: dup }] }
      - { key: z, when: { opened: ring }, steps: [] }
      - { key: w, when: { call_outcome: { step: intro, in: [connected] } }, steps: [] }
      - { key: v, when: { lead: { field: company, equals: Acme, exists: true } }, steps: [] }
      - { key: u, steps: [{ key: inner, type: branch }] }
  - { key: later, type: email, body: Later }
  - { key: plain, type: email, body: x, branches: [{ key: q, steps: [] }] }
`;
    let problems: string[] = [];
    try {
      load(bad);
    } catch (e) {
      problems = (e as { details: { problems: string[] } }).details.problems;
    }
    const text = problems.join('\n');
    expect(text).toMatch(/steps\.2\.branches\.5\.steps\.0\.type/); // no branch inside an arm (schema)
    expect(text).toMatch(/lead condition takes exactly one/);
    // The schema problems come first and alone; the rest is checked on a file that passes the schema.
    const semantic = bad.replace('{ key: u, steps: [{ key: inner, type: branch }] }', '{ key: u, when: { clicked: intro }, steps: [] }').replace(', exists: true', '');
    try {
      load(semantic);
      expect.unreachable();
    } catch (e) {
      const p = (e as { details: { problems: string[] } }).details.problems.join('\n');
      expect(p).toMatch(/steps\.2 \(fork\)\.branches\.0 \(x\): the arm without `when` \(the default\) must be the last/);
      expect(p).toMatch(/branches\.1 \(y\)\.when: no email step 'later' before this branch/);
      expect(p).toMatch(/branches\.1 \(y\)\.steps\.0 \(intro\): duplicate step key/);
      expect(p).toMatch(/branches\.2 \(z\)\.when: step 'ring' is a call step/);
      expect(p).toMatch(/branches\.3 \(w\)\.when: step 'intro' is a email step/);
      expect(p).toMatch(/steps\.4 \(plain\): only branch steps have branches/);
    }
  });

  it('refuses more than 8 arms and a reply rule for unsubscribe', () => {
    const arms = Array.from({ length: 9 }, (_, i) => `      - { key: a${i}, when: { opened: intro }, steps: [] }`).join('\n');
    expect(() => load(`key: k\nname: n\nsteps:\n  - { key: intro, type: email, subject: Hi, body: x }\n  - key: b\n    type: branch\n    branches:\n${arms}\n`)).toThrow(/branches/);
    expect(() => load(`key: k\nname: n\nstop_rules: { on_reply: { unsubscribe: notify } }\nsteps:\n  - { key: intro, type: email, subject: Hi, body: x }\n`)).toThrow(/on_reply/);
  });
});

describe('conditions', () => {
  const ids = (k: string) => `id-${k}`;
  const f: BranchFacts = { openedByPerson: ['id-intro'], clicked: [], callOutcomes: { 'id-ring': 'voicemail' }, lead: { company: ' Acme Ltd ', country: 'DE', title: null, plan: 'pro' } };
  const cases: Array<[Condition, boolean]> = [
    [{ opened: 'intro' }, true],
    [{ opened: 'other' }, false],
    [{ clicked: 'intro' }, false],
    [{ call_outcome: { step: 'ring', in: ['voicemail', 'no_answer'] } }, true],
    [{ call_outcome: { step: 'ring', in: ['connected'] } }, false],
    [{ lead: { field: 'company', equals: 'acme ltd' } }, true],
    [{ lead: { field: 'company', contains: 'ACME' } }, true],
    [{ lead: { field: 'country', in: ['fr', 'de'] } }, true],
    [{ lead: { field: 'title', exists: true } }, false],
    [{ lead: { field: 'title', exists: false } }, true],
    [{ lead: { field: 'plan', equals: 'pro' } }, true],
    [{ lead: { field: 'missing', equals: 'x' } }, false],
    [{ all: [{ opened: 'intro' }, { lead: { field: 'plan', equals: 'pro' } }] }, true],
    [{ all: [{ opened: 'intro' }, { clicked: 'intro' }] }, false],
    [{ any: [{ clicked: 'intro' }, { opened: 'intro' }] }, true],
    [{ not: { clicked: 'intro' } }, true],
  ];
  it.each(cases)('%j holds: %s', (c, want) => {
    expect(holds(c, f, ids)).toBe(want);
  });
});

describe('the engine at a branch', () => {
  const seq = engineView(load(YAML));

  it('a person who opened takes the opened arm and rejoins', () => {
    const r = drive(seq, { ...noFacts, openedByPerson: ['id-intro'] });
    expect(r.ran).toEqual(['intro', 'engaged', 'a1', 'breakup']);
    expect(r.e.state).toBe('finished');
    expect(r.e.branchChoices).toEqual({ 'id-engaged': 'opened' });
  });

  it('the branch comes due after its own delay', () => {
    const e = transition(fresh(), { type: 'enrolled' }, T0, seq).next;
    const sent = transition({ ...e, waitingFor: 'send', dueAt: null }, { type: 'step_sent', stepId: 'id-intro', at: T0 }, T0, seq).next;
    expect(sent.nextStepId).toBe('id-engaged');
    expect(sent.dueAt).toBe(T0 + 2 * DAY);
  });

  it('then: end finishes after the arm', () => {
    const r = drive(seq, { ...noFacts, clicked: ['id-intro'] });
    expect(r.ran).toEqual(['intro', 'engaged', 'c1']);
    expect(r.e).toMatchObject({ state: 'finished', stateReason: 'arm clicked of engaged ends the sequence' });
  });

  it('then: move_to ends moved and asks for the move, due no earlier than after', () => {
    const r = drive(seq, noFacts);
    expect(r.ran).toEqual(['intro', 'engaged', 'b1']);
    expect(r.e.state).toBe('moved');
    const move = r.effects.find((x) => x.type === 'move_to_sequence');
    expect(move).toMatchObject({ sequenceKey: 'nurture' });
    expect((move as { notBefore: number }).notBefore).toBeGreaterThanOrEqual(r.now + 28 * DAY);
  });

  it('no arm matching and no default arm: continues after the branch', () => {
    const d = load(YAML.replace(/      - key: otherwise[\s\S]*?after: 4 weeks }\n/, ''));
    const r = drive(engineView(d), noFacts);
    expect(r.ran).toEqual(['intro', 'engaged', 'breakup']);
    expect(r.e.branchChoices).toEqual({ 'id-engaged': NO_ARM });
  });

  it('an empty arm that ends finishes at the branch', () => {
    const d = load(YAML.replace('steps: [{ key: c1, type: email, body: You clicked }]', 'steps: []'));
    const r = drive(engineView(d), { ...noFacts, clicked: ['id-intro'] });
    expect(r.ran).toEqual(['intro', 'engaged']);
    expect(r.e.state).toBe('finished');
  });

  it('a decided branch stays decided: an edit that reorders the arms never leads into another', () => {
    const r = drive(seq, { ...noFacts, openedByPerson: ['id-intro'] }, fresh(), []);
    expect(r.ran).toContain('a1');
    // Mid-arm: decided 'opened', a1 not yet run; the edit puts the clicked arm first.
    let e = transition(fresh(), { type: 'enrolled' }, T0, seq).next;
    e = transition({ ...e, waitingFor: 'send', dueAt: null }, { type: 'step_sent', stepId: 'id-intro', at: T0 }, T0, seq).next;
    e = transition(e, { type: 'step_due', facts: { ...noFacts, openedByPerson: ['id-intro'] } }, T0 + 2 * DAY, seq).next;
    expect(e.nextStepId).toBe('id-a1');
    const edited: SequenceDef = { ...seq, steps: seq.steps.map((s) => (s.key === 'c1' ? { ...s, position: 15 } : s.key === 'a1' ? { ...s, position: 25 } : s)) };
    const after = transition(e, { type: 'sequence_edited' }, T0 + 2 * DAY + 1, edited);
    expect(after.outcome).toBe('ignored');
    expect(after.next.nextStepId).toBe('id-a1');
  });

  it('a reply stops it, even at the branch; intents apply their rules', () => {
    const interested = drive(seq, noFacts, fresh(), [{ afterSteps: 1, ev: { type: 'reply', intent: 'interested', from: 'ana@acme.test' } }]);
    expect(interested.ran).toEqual(['intro']);
    expect(interested.e.state).toBe('replied');
    expect(interested.effects).toContainEqual({ type: 'notify_owner', title: 'Interested reply from ana@acme.test: follow up' });
    const notNow = drive(seq, noFacts, fresh(), [{ afterSteps: 1, ev: { type: 'reply', intent: 'not_interested' } }]);
    expect(notNow.e.state).toBe('replied');
    const move = notNow.effects.find((x) => x.type === 'move_to_sequence') as { sequenceKey: string; notBefore: number };
    expect(move.sequenceKey).toBe('nurture');
    expect(move.notBefore).toBeGreaterThanOrEqual(T0 + 28 * DAY);
    const plain = drive(seq, noFacts, fresh(), [{ afterSteps: 1, ev: { type: 'reply', intent: 'question' } }]);
    expect(plain.effects.some((x) => x.type === 'notify_owner' || x.type === 'move_to_sequence')).toBe(false);
  });

  it('enrolled with notBefore: the first step is due no earlier', () => {
    const r = transition(fresh(), { type: 'enrolled', notBefore: T0 + 28 * DAY }, T0, seq);
    expect(r.next.dueAt).toBe(T0 + 28 * DAY);
  });
});

describe('never two arms (property)', () => {
  const base = engineView(load(YAML));
  type Op = { kind: 'fire'; opened: boolean; clicked: boolean } | { kind: 'send' } | { kind: 'edit'; shuffle: number[]; archive: number };

  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('fire' as const), opened: fc.boolean(), clicked: fc.boolean() }),
    fc.constant({ kind: 'send' as const }),
    fc.record({ kind: fc.constant('edit' as const), shuffle: fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 6, maxLength: 6 }), archive: fc.integer({ min: -1, max: 5 }) }),
  );

  it('random facts, sends and edits (reordered and removed steps) never run steps of two arms of one branch', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        let seq = base;
        let now = T0;
        let e = transition(fresh(), { type: 'enrolled' }, now, seq).next;
        // The arm each run step belonged to when it ran, by branch.
        const arms = new Map<string, Set<string>>();
        for (const o of ops) {
          if (o.kind === 'fire' && e.waitingFor === 'timer' && e.dueAt !== null) {
            now = Math.max(now, e.dueAt);
            e = transition(e, { type: 'step_due', facts: { ...noFacts, openedByPerson: o.opened ? ['id-intro'] : [], clicked: o.clicked ? ['id-intro'] : [] } }, now, seq).next;
          } else if (o.kind === 'send' && e.waitingFor === 'send' && e.nextStepId) {
            const s = seq.steps.find((x) => x.id === e.nextStepId)!;
            if (s.arm) arms.set(s.arm.branchId, (arms.get(s.arm.branchId) ?? new Set()).add(s.arm.key));
            e = transition(e, { type: 'step_sent', stepId: s.id, at: now }, now, seq).next;
          } else if (o.kind === 'edit') {
            // Reorder the arm steps among themselves and maybe remove one step: an arm's steps stay after their branch.
            const armSteps = seq.steps.filter((x) => x.arm);
            const positions = armSteps.map((x) => x.position).sort((a, b) => a - b);
            const order = armSteps.map((x, i) => ({ x, w: o.shuffle[i] ?? 0 })).sort((a, b) => a.w - b.w).map((y) => y.x.id);
            seq = { ...seq, steps: seq.steps.map((x, i) => ({ ...x, ...(x.arm ? { position: positions[order.indexOf(x.id)]! } : {}), archived: x.archived || i === o.archive + 1 })).sort((a, b) => a.position - b.position) };
            e = transition(e, { type: 'sequence_edited' }, now, seq).next;
          }
          for (const keys of arms.values()) expect(keys.size).toBeLessThanOrEqual(1);
          if (e.state !== 'active' && e.state !== 'paused') break;
        }
        // A chosen arm is never changed.
        for (const [branch, keys] of arms) expect([...keys]).toEqual([e.branchChoices![branch]]);
      }),
      { numRuns: 300 },
    );
  });
});
