import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTemplate } from './parse.ts';
import { renderEmail, type RenderContext, type RenderResult } from './render.ts';
import { templateProblems, validateTemplate } from './validate.ts';

const ann: RenderContext = {
  lead: {
    email: 'ann@acme.test',
    first_name: 'ann',
    last_name: 'Lee',
    company: 'ACME WIDGETS, Inc.',
    title: 'VP Sales',
    country: 'us',
    custom: { industry: 'logistics', deal_size: 12000, frist_name: 'typo field', Region_Code: 'EMEA' },
  },
  sender: { email: 'rep@cadenza.test', name: 'Sam Rep Smith' },
  unsubscribeUrl: 'https://t.example.com/t/u/TOKEN?a=1&b=2',
};
const seed = { enrollmentId: 'enr-1', stepId: 'step-1' };

function text(t: string, ctx: RenderContext = ann, s = seed): string {
  const r = renderEmail({ text: t }, ctx, s);
  if (!r.ok) throw new Error(`${r.code}: ${r.reason}`);
  return r.text;
}

function fail(t: string, ctx: RenderContext = ann): Extract<RenderResult, { ok: false }> {
  const r = renderEmail({ text: t }, ctx, seed);
  if (r.ok) throw new Error(`rendered: ${r.text}`);
  return r;
}

describe('variables', () => {
  it('reads lead fields, full name, custom fields (plain and explicit) and the sender', () => {
    expect(text('{{first_name}} {{last_name}} / {{full_name}} / {{email}} / {{title}}')).toBe('ann Lee / ann Lee / ann@acme.test / VP Sales');
    expect(text('{{custom.industry}} {{industry}} {{deal_size}}')).toBe('logistics logistics 12000');
    expect(text('{{lead.company}}')).toBe('ACME WIDGETS, Inc.');
    expect(text('{{sender.name}} | {{sender.first_name}} | {{sender.last_name}} | {{sender.email}}')).toBe('Sam Rep Smith | Sam | Rep Smith | rep@cadenza.test');
    expect(text('{{unsubscribe_url}}')).toBe('https://t.example.com/t/u/TOKEN?a=1&b=2');
  });

  it('matches names without case, and custom keys exactly then without case', () => {
    expect(text('{{First_Name}} {{CUSTOM.Industry}} {{custom.region_code}}')).toBe('ann logistics EMEA');
  });

  it('treats a plain name close to a built-in as a typo, unless this lead has that custom field', () => {
    const r = fail('Hi {{frist_nme}}');
    expect(r.code).toBe('unknown_variable');
    expect(r.variable).toBe('frist_nme');
    expect(r.reason).toMatch(/did you mean \{\{first_name\}\}/);
    expect(r.reason).toMatch(/line 1, column 4/);
    // 'frist_name' is a custom field of this lead, so it is that field.
    expect(text('{{frist_name}}')).toBe('typo field');
  });

  it('blocks names that can never resolve', () => {
    for (const [t, re] of [
      ['{{sender.phone}}', /the sender has/],
      ['{{lead.industry}}', /custom fields are \{\{custom.name\}\}/],
      ['{{custom.a.b}}', /custom fields are flat/],
      ['{{custom}}', /needs a field name/],
      ['{{foo.bar}}', /unknown variable 'foo.bar'/],
    ] as const) {
      const r = fail(t);
      expect(r.code, t).toBe('unknown_variable');
      expect(r.reason, t).toMatch(re);
    }
  });

  it('with the workspace custom fields known, a plain name outside them is unknown (a custom field absent for this lead is missing)', () => {
    const ctx = { ...ann, customFields: ['industry', 'deal_size', 'city'] };
    expect(renderEmail({ text: '{{colour}}' }, ctx, seed)).toMatchObject({ ok: false, code: 'unknown_variable', variable: 'colour' });
    expect(renderEmail({ text: '{{city}}' }, ctx, seed)).toMatchObject({ ok: false, code: 'missing_value', variable: 'city' });
    expect(renderEmail({ text: '{{industry}}' }, ctx, seed)).toMatchObject({ ok: true, text: 'logistics' });
  });

  it('a missing value without a default blocks the email, naming every missing variable', () => {
    const lead = { email: 'x@y.test', first_name: '  ', custom: {} };
    const r = fail('Hi {{first_name}},\nhow is {{company}}? {{first_name}}', { lead });
    expect(r).toMatchObject({ code: 'missing_value', variable: 'first_name' });
    expect(r.reason).toMatch(/line 1, column 4/);
    expect(r.reason).toMatch(/\{\{first_name\}\}, \{\{company\}\}/);
    expect(r.reason).toMatch(/default/);
    expect(fail('{{custom.industry}}', { lead }).code).toBe('missing_value');
    expect(fail('{{sender.name}}', { lead }).code).toBe('missing_value');
    expect(fail('{{unsubscribe_url}}', { lead }).code).toBe('missing_value');
  });

  it('refuses a value that itself holds template braces, rather than send it', () => {
    const r = fail('{{company}}', { lead: { email: 'x@y.test', company: 'Hi {{first_name}}' } });
    expect(r.code).toBe('missing_value');
    expect(r.reason).toMatch(/contains template braces/);
  });

  it('uses non-text custom values sensibly: numbers and booleans as text, objects as missing', () => {
    const lead = { email: 'x@y.test', custom: { n: 3.5, b: true, o: { a: 1 } } };
    expect(text('{{n}} {{b}}', { lead })).toBe('3.5 yes');
    expect(fail('{{o}}', { lead }).code).toBe('missing_value');
  });
});

describe('filters', () => {
  it('default applies to missing and blank values, not to present ones', () => {
    const lead = { email: 'x@y.test', first_name: ' ', last_name: 'Lee' };
    expect(text('Hi {{first_name | default: "there"}}', { lead })).toBe('Hi there');
    expect(text("Hi {{last_name | default: 'there'}}", { lead })).toBe('Hi Lee');
    expect(text('Hi {{first_name|default:"the \\"team\\""}}', { lead })).toBe('Hi the "team"');
    // An explicit empty default is the author's choice.
    expect(text('Hi{{first_name | default: ""}}!', { lead })).toBe('Hi!');
  });

  it('capitalize, titlecase, lowercase, uppercase, first_word, trim', () => {
    expect(text('{{first_name | capitalize}}')).toBe('Ann');
    expect(text('{{company | titlecase}}')).toBe('Acme Widgets, Inc.');
    expect(text('{{company | lowercase}}')).toBe('acme widgets, inc.');
    expect(text('{{country | uppercase}}')).toBe('US');
    expect(text('{{company | first_word | titlecase}}')).toBe('Acme');
    expect(text('{{title | trim}}')).toBe('VP Sales');
    // capitalize leaves the rest alone (McKinsey stays McKinsey); titlecase handles hyphens.
    const lead = { email: 'x@y.test', first_name: 'jean-luc', company: 'McKinsey', last_name: 'élodie' };
    expect(text('{{company | capitalize}} {{first_name | titlecase}} {{last_name | capitalize}}', { lead })).toBe('McKinsey Jean-Luc Élodie');
  });

  it('chains left to right, and a filter passes a missing value on to a later default', () => {
    const lead = { email: 'x@y.test' };
    expect(text('{{first_name | capitalize | default: "there"}}', { lead })).toBe('there');
    expect(text('{{first_name | default: "there" | capitalize}}', { lead })).toBe('There');
    // first_word of punctuation only is blank, so the default applies
    expect(text('{{company | first_word | default: "your team"}}', { lead: { email: 'x@y.test', company: '...' } })).toBe('your team');
  });
});

describe('spintax', () => {
  it('chooses one option per group, nested groups included, and may hold variables', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) seen.add(text('{Hi|Hello {there|{{first_name}}}}', ann, { enrollmentId: `e${i}`, stepId: 's' }));
    expect(seen).toEqual(new Set(['Hi', 'Hello there', 'Hello ann']));
  });

  it('is the same for the same enrollment and step, and varies across enrollments', () => {
    const t = '{a|b|c|d} {e|f|g|h} {i|j|k|l}';
    expect(text(t, ann, seed)).toBe(text(t, ann, seed));
    const outs = new Set(Array.from({ length: 50 }, (_, i) => text(t, ann, { enrollmentId: `e${i}`, stepId: 'x' })));
    expect(outs.size).toBeGreaterThan(20);
    const steps = new Set(Array.from({ length: 50 }, (_, i) => text(t, ann, { enrollmentId: 'e', stepId: `s${i}` })));
    expect(steps.size).toBeGreaterThan(20);
  });

  it('makes the same choices in the text and HTML bodies when they are written alike', () => {
    for (let i = 0; i < 30; i++) {
      const r = renderEmail({ text: '{Hi|Hello|Hey} {a|b}', html: '<p>{Hi|Hello|Hey} {a|b}</p>' }, ann, { enrollmentId: `e${i}`, stepId: 's' });
      expect(r.ok && r.html).toBe(r.ok && `<p>${r.text}</p>`);
    }
  });

  it('allows empty options, a plain | outside groups, and escapes', () => {
    const r = new Set(Array.from({ length: 40 }, (_, i) => text('Acme | Sales{|!}', ann, { enrollmentId: `${i}`, stepId: 's' })));
    expect(r).toEqual(new Set(['Acme | Sales', 'Acme | Sales!']));
    expect(text('\\{not spintax\\} a\\|b \\\\ c:\\d')).toBe('{not spintax} a|b \\ c:\\d');
    expect(text('{a\\|b|a\\|b}')).toBe('a|b');
  });
});

describe('escaping', () => {
  it('HTML-escapes values in the HTML body only; the subject is one line', () => {
    const lead = { email: 'x@y.test', first_name: 'Tom & <b>"Jerry"</b>', company: "O'Neil\nCo" };
    const r = renderEmail({ subject: 'For {{company}}', text: 'Hi {{first_name}}', html: '<p class="x">Hi {{first_name}} {{first_name | default: "<none>"}}</p>' }, { lead }, seed);
    expect(r).toEqual({
      ok: true,
      subject: "For O'Neil Co",
      text: 'Hi Tom & <b>"Jerry"</b>',
      html: '<p class="x">Hi Tom &amp; &lt;b&gt;&quot;Jerry&quot;&lt;/b&gt; Tom &amp; &lt;b&gt;&quot;Jerry&quot;&lt;/b&gt;</p>',
    });
    const d = renderEmail({ text: 'x', html: '{{first_name | default: "<you>"}}' }, { lead: { email: 'x@y.test' } }, seed);
    expect(d.ok && d.html).toBe('&lt;you&gt;');
  });

  it('a step without a subject renders subject null (a follow-up); a subject that renders blank blocks', () => {
    expect(renderEmail({ text: 'x' }, ann, seed)).toMatchObject({ ok: true, subject: null });
    expect(renderEmail({ subject: '{{first_name | default: ""}}', text: 'x' }, { lead: { email: 'a@b.test' } }, seed)).toMatchObject({ ok: false, code: 'missing_value' });
  });

  it('names the part of the email a problem is in', () => {
    expect(renderEmail({ subject: '{{nope.x}}', text: 'x' }, ann, seed)).toMatchObject({ ok: false, reason: expect.stringMatching(/^subject: /) });
    expect(renderEmail({ text: 'x', html: '<p>{{first_name}' }, ann, seed)).toMatchObject({ ok: false, code: 'template_syntax', reason: expect.stringMatching(/^html: line 1, column 4/) });
  });
});

describe('syntax errors', () => {
  const cases: Array<[string, RegExp, number, number]> = [
    ['Hi {{first_name}', /'\{\{first_name\}' is closed with a single '\}': write '\}\}'/, 1, 4],
    ['Hi {{first_name', /never closed/, 1, 4],
    ['Hi {first_name}', /single braces: write \{\{first_name\}\}/, 1, 4],
    ['Hi {{first_name}}}', /'}' without a matching '{'/, 1, 18],
    ['a\nb }} c', /'}}' without a matching '\{\{'/, 2, 3],
    ['{Hi|Hello', /never closed/, 1, 1],
    ['{just text}', /at least two options/, 1, 1],
    ['{{}}', /names no variable/, 1, 1],
    ['{{ first name }}', /unexpected 'n'/, 1, 10],
    ['{{first_name | lower}}', /unknown filter 'lower'/, 1, 16],
    ['{{first_name | default}}', /takes 1 argument, got 0.*default: "there"/, 1, 16],
    ['{{first_name | capitalize: "x"}}', /takes 0 arguments/, 1, 16],
    ['{{first_name | default: there}}', /must be quoted/, 1, 25],
    ['{{first_name | default: "th{{ere"}}', /may not contain braces/, 1, 25],
    ['{{first_name | default: "there}}', /unterminated string/, 1, 25],
    ['{{a|b}|c}', /put a character between the braces/, 1, 1],
    ['{x'.repeat(40) + '|b' + '}'.repeat(40), /nested more than 16/, 1, 33],
  ];
  it.each(cases)('%j', (t, re, line, column) => {
    const r = parseTemplate(t);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toMatch(re);
    expect([r.at.line, r.at.column]).toEqual([line, column]);
    expect(renderEmail({ text: t }, ann, seed)).toMatchObject({ ok: false, code: 'template_syntax' });
  });
});

describe('validateTemplate (at sequence apply)', () => {
  it('lists variables, and reports unknown names in every spintax option', () => {
    expect(validateTemplate('Hi {{first_name | default: "there"}} at {{custom.industry}} {a|{{industry}}}')).toEqual({ ok: true, variables: ['first_name', 'custom.industry', 'industry'] });
    const r = validateTemplate('{Hi|Hey {{frist_name}}}\n{{sender.phone}}');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => [p.code, p.variable, p.line, p.column])).toEqual([
      ['unknown_variable', 'frist_name', 1, 9],
      ['unknown_variable', 'sender.phone', 2, 1],
    ]);
  });

  it('knows the workspace custom fields when given them', () => {
    expect(validateTemplate('{{colour}}').ok).toBe(true);
    expect(validateTemplate('{{colour}}', { customFields: ['Industry'] }).ok).toBe(false);
    expect(validateTemplate('{{industry}}', { customFields: ['Industry'] }).ok).toBe(true);
  });

  it('templateProblems gives definition-ready lines for a whole email', () => {
    expect(templateProblems({ subject: 'Hi {{frist_name}}', text: 'ok {{first_name}}', html: null }, 'steps.0 (intro)')).toEqual([
      "steps.0 (intro).subject: line 1, column 4: unknown variable 'frist_name' — did you mean {{first_name}}? (for a custom field of that name, write {{custom.frist_name}})",
    ]);
    expect(templateProblems({ subject: null, text: '{a|b' }, 'steps.1 (bump)')).toEqual([
      "steps.1 (bump).body: line 1, column 1: spintax group '{' is never closed with '}' (write \\{ for a literal brace)",
    ]);
    expect(templateProblems({ subject: 'x', text: 'y' }, 'w')).toEqual([]);
  });

  it('reports the syntax error with its position', () => {
    expect(validateTemplate('ok\n  {{x')).toEqual({
      ok: false,
      problems: [{ code: 'template_syntax', reason: "line 2, column 3: '{{' is never closed with '}}'", line: 2, column: 3 }],
    });
  });

  it('blocks at render whatever option an unknown name is in (a wrong name is wrong for every lead)', () => {
    for (let i = 0; i < 10; i++) {
      expect(renderEmail({ text: '{Hi|Hey {{frist_nme}}}' }, ann, { enrollmentId: `${i}`, stepId: 's' })).toMatchObject({ ok: false, code: 'unknown_variable' });
    }
  });
});

describe('properties', () => {
  // Valid templates, built from the grammar: plain text (no braces, bars or backslashes), variables
  // the lead has or that carry a default, and nested spintax groups.
  const plain = fc.string({ unit: fc.constantFrom(...'abc XYZ,.!?\n\té€😀<>&"\''.split('')), maxLength: 8 });
  const name = fc.constantFrom('first_name', 'company', 'custom.industry', 'sender.first_name', 'last_name', 'industry');
  const missing = fc.constantFrom('phone', 'region', 'custom.absent');
  const filter = fc.constantFrom('', ' | capitalize', ' | titlecase', ' | lowercase', ' | uppercase', ' | first_word', ' | trim');
  const variable = fc.oneof(
    fc.tuple(name, filter).map(([n, f]) => `{{${n}${f}}}`),
    fc.tuple(missing, filter, plain).map(([n, f, d]) => `{{ ${n}${f} | default: "${d.replace(/["\\\n]/g, '')}" }}`),
  );
  const { template } = fc.letrec<{ template: string; group: string; piece: string }>((tie) => ({
    template: fc.array(tie('piece'), { maxLength: 6 }).map((ps) => ps.join('')),
    piece: fc.oneof({ depthSize: 'small', withCrossShrink: true }, plain, variable, tie('group')),
    // An option never starts with '{' right after the group's '{' ("{{" opens a variable).
    group: fc.array(tie('template'), { minLength: 2, maxLength: 4 }).map((os) => `{${os.map((o) => (o.startsWith('{') ? ` ${o}` : o)).join('|')}}`),
  }));

  it('a valid template renders without {{, }} or any brace left over', () => {
    fc.assert(
      fc.property(template, fc.string({ maxLength: 10 }), (t, enr) => {
        expect(parseTemplate(t).ok).toBe(true);
        const r = renderEmail({ subject: `x${t}`, text: `${t}.`, html: `<p>${t}</p>` }, ann, { enrollmentId: enr, stepId: 's' });
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        for (const out of [r.subject ?? '', r.text, r.html ?? '']) {
          expect(out).not.toMatch(/[{}]/);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('any text at all returns a result, never throws; without backslashes a rendered result has no brace', () => {
    const anyText = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.string({ unit: fc.constantFrom('{', '}', '|', '{{', '}}', ':', '"', "'", ' ', 'a', 'first_name', 'default', '\\', '\n', '.'), maxLength: 40 }),
    );
    fc.assert(
      fc.property(anyText, (t) => {
        const r = renderEmail({ subject: t, text: t, html: t }, ann, seed);
        expect(['boolean']).toContain(typeof r.ok);
        if (!r.ok) expect(['template_syntax', 'unknown_variable', 'missing_value']).toContain(r.code);
        if (r.ok && !t.includes('\\')) expect(`${r.subject}${r.text}${r.html}`).not.toMatch(/[{}]/);
        const v = validateTemplate(t);
        if (!v.ok) expect(v.problems.length).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('what validateTemplate accepts at apply time can only be blocked at render by a missing value', () => {
    const anyText = fc.string({ unit: fc.constantFrom('{', '}', '|', '{{', '}}', ' | default: "x"', ' | capitalize', 'first_name', 'frist_name', 'custom.', 'sender.', 'industry', 'phone', 'x', ' '), maxLength: 30 });
    fc.assert(
      fc.property(anyText, (t) => {
        fc.pre(validateTemplate(t).ok);
        const r = renderEmail({ text: `${t}.` }, { lead: { email: 'a@b.test', custom: {} } }, seed);
        if (!r.ok) expect(r.code).toBe('missing_value');
      }),
      { numRuns: 1000 },
    );
  });

  it('renders the same email for the same seed, whatever the template', () => {
    fc.assert(
      fc.property(template, fc.string(), fc.string(), (t, e, s) => {
        const a = renderEmail({ text: `${t}x` }, ann, { enrollmentId: e, stepId: s });
        const b = renderEmail({ text: `${t}x` }, ann, { enrollmentId: e, stepId: s });
        expect(a).toEqual(b);
      }),
      { numRuns: 100 },
    );
  });

  it('a 100k-character template with many variables and groups renders in well under a second', () => {
    const t = 'Hi {{first_name}}, {a|b|{c|d}} at {{company | first_word}}. '.repeat(1700);
    const started = performance.now();
    const r = renderEmail({ text: t }, ann, seed);
    expect(r.ok).toBe(true);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
