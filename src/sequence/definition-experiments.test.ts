import { describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { validateDefinition } from './definition.ts';
import { toDocument } from './definition-document.ts';

/** The definition file's `experiments:` (definition-experiments.ts): what it accepts, what it refuses and why, and its round trip. */

const base = `
key: exp
name: Experiments
window: Mon-Fri 08:00-18:00
steps:
  - key: intro
    type: email
    variants:
      - { key: a, subject: Hi, body: Hello }
      - { key: b, subject: Hey, body: Hello there }
  - { key: ring, type: call, delay: 1 day, title: Ring }
  - key: follow
    type: email
    delay: 3 business days
    variants:
      - { key: a, body: Following up }
      - { key: b, body: Any thoughts? }
  - { key: nudge, type: manual, delay: 2 days, title: LinkedIn }
  - { key: last, type: email, delay: 3 days, body: Closing the loop }
`;

function withExperiments(yaml: string, ownSettings = false) {
  // ownSettings: the intro step also carries a step experiment's settings.
  const steps = ownSettings ? base.replace('  - key: intro\n    type: email\n', '  - key: intro\n    type: email\n    experiment: { reply_window_days: 7 }\n') : base;
  return validateDefinition(parseYaml(`${steps}experiments:\n${yaml}`));
}

function problemsOf(yaml: string, ownSettings = false): string[] {
  try {
    withExperiments(yaml, ownSettings);
  } catch (e) {
    return (e as { details: { problems: string[] } }).details.problems;
  }
  return [];
}

const good = `
  - key: timing
    reply_window_days: 10
    arms:
      - key: early
        steps:
          intro: { variant: a }
          follow: { variant: a, delay: 2 business days, send_hours: "08:00-10:00" }
      - key: late
        weight: 2
        steps:
          intro: { variant: b }
          follow: { variant: b, delay: 4 business days, send_hours: "14:00-16:00" }
  - key: order
    auto_winner: true
    arms:
      - { key: email-first }
      - { key: call-first, order: [last, nudge] }
`;

describe('sequence experiments in the definition', () => {
  it('reads timing, multi-step and order arms', () => {
    const d = withExperiments(good);
    expect(d.experiments).toEqual([
      {
        key: 'timing',
        settings: { replyWindowDays: 10 },
        arms: [
          { key: 'early', weight: 1, steps: { intro: { variant: 'a' }, follow: { variant: 'a', delay: { amount: 2, unit: 'business_days' }, sendHours: '08:00-10:00' } } },
          { key: 'late', weight: 2, steps: { intro: { variant: 'b' }, follow: { variant: 'b', delay: { amount: 4, unit: 'business_days' }, sendHours: '14:00-16:00' } } },
        ],
      },
      { key: 'order', settings: { autoWinner: true }, arms: [{ key: 'email-first', weight: 1, steps: {} }, { key: 'call-first', weight: 1, steps: {}, order: ['last', 'nudge'] }] },
    ]);
  });

  it('round-trips exactly: validate(toDocument(d)) is d, and the YAML is stable', () => {
    const d = withExperiments(good);
    const text = toYaml(toDocument(d));
    expect(validateDefinition(parseYaml(text))).toEqual(d);
    expect(toYaml(toDocument(validateDefinition(parseYaml(text))))).toBe(text);
  });

  it('a definition without experiments exports none', () => {
    expect(toDocument(validateDefinition(parseYaml(base))).experiments).toBeUndefined();
  });

  it.each([
    ['send hours outside the window', `  - { key: x, arms: [{ key: a, steps: { follow: { send_hours: "03:00-05:00" } } }, { key: b }] }`, "experiments.0 (x).arms.0 (a).steps.follow.send_hours: 03:00-05:00 is outside the sequence's window 08:00-18:00"],
    ['send hours that cross midnight', `  - { key: x, arms: [{ key: a, steps: { follow: { send_hours: "17:00-09:00" } } }, { key: b }] }`, 'end before they start'],
    ['send hours that are not hours', `  - { key: x, arms: [{ key: a, steps: { follow: { send_hours: "morning" } } }, { key: b }] }`, `'morning' is not send hours`],
    ['an unknown step', `  - { key: x, arms: [{ key: a, steps: { nope: { delay: 2 days } } }, { key: b }] }`, "the sequence has no step 'nope'"],
    ['an unknown variant', `  - { key: x, arms: [{ key: a, steps: { intro: { variant: z } } }, { key: b, steps: { intro: { variant: a } } }] }`, "step 'intro' has no variant 'z' (it has a, b)"],
    ['a variant chosen by one arm only', `  - { key: x, arms: [{ key: a, steps: { intro: { variant: a } } }, { key: b }] }`, "arms that choose a variant of 'intro' must all choose one (1 do not)"],
    ['a variant on a call step', `  - { key: x, arms: [{ key: a, steps: { ring: { variant: a } } }, { key: b, steps: { ring: { variant: a } } }] }`, 'only email steps have variants'],
    ['a bad delay', `  - { key: x, arms: [{ key: a, steps: { follow: { delay: soon } } }, { key: b }] }`, 'invalid delay "soon"'],
    ['one arm', `  - { key: x, arms: [{ key: a }] }`, 'an experiment needs two arms or more'],
    ['duplicate arm keys', `  - { key: x, arms: [{ key: a }, { key: a }] }`, 'duplicate arm key'],
    ['no arm of positive weight', `  - { key: x, arms: [{ key: a, weight: 0 }, { key: b, weight: 0 }] }`, 'every arm has weight 0'],
    ['orders of different steps', `  - { key: x, arms: [{ key: a, order: [ring, follow] }, { key: b, order: [intro, ring] }] }`, 'every arm with an order lists the same steps'],
    ['an order of steps apart', `  - { key: x, arms: [{ key: a, order: [intro, follow] }, { key: b }] }`, 'must stand one after another'],
    ['a step in two experiments', `  - { key: x, arms: [{ key: a, steps: { follow: { delay: 1 day } } }, { key: b }] }\n  - { key: y, arms: [{ key: a, steps: { follow: { delay: 2 days } } }, { key: b }] }`, "step 'follow' is already in experiment 'x'"],
    ['an order that moves the first step', `  - { key: x, arms: [{ key: a, order: [intro, ring] }, { key: b }] }`, "step 'intro' is the first step; it opens the thread and stays first"],
    ['a step with its own experiment settings', `  - { key: x, arms: [{ key: a, steps: { intro: { variant: a } } }, { key: b, steps: { intro: { variant: b } } }] }`, "step 'intro' has its own experiment settings", true],
    ['an empty choice', `  - { key: x, arms: [{ key: a, steps: { follow: {} } }, { key: b }] }`, 'choose a variant, delay or send_hours'],
    ['an unknown field', `  - { key: x, arms: [{ key: a, steps: { follow: { hour: 9 } } }, { key: b }] }`, 'Unrecognized key'],
  ])('refuses %s, saying where and why', (_what, yaml, message, ownSettings?: boolean) => {
    const problems = problemsOf(yaml, ownSettings);
    expect(problems.join('\n')).toContain(message);
  });
});
