import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../web/src/api.ts';
import { normalPath, problemsOf } from '../../web/src/screens/flow-problems.ts';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../api.ts';

/**
 * The flow editor shows a refused save's problems next to their fields (flow-problems.ts): the
 * server's two forms of refusal, the body's validation and the definition's checks, as the real
 * API answers them, each land on the field path the editor gives that field.
 */
describe('a refused sequence save: each problem at its field path', () => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  beforeAll(async () => {
    h = await apiHarness('pglite');
    const w = await seedWorkspace(h.store, 'Problems Co', 'owner@problems.test');
    b = await login(h.app, 'owner@problems.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
  });
  afterAll(() => h?.close());

  const email = (key: string, variants: string[] = []) => ({
    key,
    type: 'email',
    delay: '1 day',
    subject: key === 'intro' ? 'Hi' : '',
    body: 'Hello',
    variants: variants.map((v) => ({ key: v, subject: '', body: `Hello ${v}`, weight: 1 })),
  });
  /** PUT, refused: the error as the web client raises it, read by the editor. */
  const refused = async (body: unknown) => {
    const r = await b.call('PUT', `${base}/sequences`, body);
    expect(r.statusCode, r.body).toBe(400);
    const e = r.json().error as { code: string; message: string; details: Record<string, unknown> };
    return problemsOf(new ApiError(r.statusCode, e.code, e.message, e.details));
  };

  it("the body's validation: an A/B test's alpha and a sequence experiment's reply window", async () => {
    const problems = await refused({
      key: 'p1',
      name: 'P1',
      steps: [{ ...email('intro', ['b']), experiment: { alpha: 0.5 } }],
      experiments: [{ key: 'x', replyWindowDays: 0, arms: [{ key: 'a', weight: 1, steps: [] }, { key: 'b', weight: 1, steps: [] }] }],
    });
    expect(problems).toContainEqual({ path: 'steps.0.experiment.alpha', message: 'alpha (the false positive rate) is between 0.001 and 0.2; 0.05 is usual' });
    expect(problems).toContainEqual({ path: 'experiments.0.replyWindowDays', message: 'the reply window is 1 to 90 days' });
  });

  it("the definition's checks: send hours outside the window, a variant the step lacks, an arm that chooses no variant where the others do", async () => {
    const problems = await refused({
      key: 'p2',
      name: 'P2',
      window: 'Mon-Fri 09:00-17:00',
      steps: [
        email('intro', ['b']),
        { key: 'fork', type: 'branch', delay: '1 day', branches: [{ key: 'otherwise', then: 'continue', steps: [email('inner')] }] },
        email('follow', ['b']),
        email('last'),
      ],
      experiments: [
        {
          key: 'x',
          arms: [
            { key: 'a', weight: 1, steps: [{ step: 'follow', variant: 'a' }, { step: 'last', sendHours: '07:00-09:00' }] },
            { key: 'b', weight: 1, steps: [{ step: 'follow', variant: 'c' }] },
            { key: 'c', weight: 1, steps: [{ step: 'last', delay: '2 days' }] },
          ],
        },
      ],
    });
    const at = (path: string) => problems.filter((p) => p.path === path).map((p) => p.message);
    expect(at('experiments.0.arms.0.steps.last.sendHours')).toEqual([expect.stringMatching(/^07:00-09:00 is outside the sequence's window 09:00-17:00/)]);
    expect(at('experiments.0.arms.1.steps.follow.variant')).toEqual(["step 'follow' has no variant 'c' (it has a, b)"]);
    expect(at('experiments.0')).toEqual([expect.stringMatching(/^arms that choose a variant of 'follow' must all choose one/)]);
    // A field the file spells in snake_case is found under the body's name; a step key stays as it is.
    expect(normalPath('steps.1 (fork).branches.0 (otherwise).steps.0 (my_step).experiment.reply_window_days')).toBe('steps.1.branches.0.steps.0.experiment.replyWindowDays');
    expect(normalPath('experiments.0 (x).arms.1 (b).steps.send_hours.send_hours')).toBe('experiments.0.arms.1.steps.send_hours.sendHours');
    expect(normalPath('experiments.0 (x).arms.1 (b).steps.auto_winner')).toBe('experiments.0.arms.1.steps.auto_winner');
  });
});
