import { parseTemplate, positionOf, type TemplateNode } from './parse.ts';
import { customFieldSet } from './render.ts';
import { classifyVariable } from './variables.ts';

/**
 * Checks a template when a sequence is applied, before any lead sees it: a syntax error, or a
 * variable name that cannot resolve for any lead, in any spintax option. Missing values are a
 * per-lead matter and are only found when rendering.
 */

export interface TemplateProblem {
  code: 'template_syntax' | 'unknown_variable';
  /** One line a user can act on, with line and column: "line 2, column 5: unknown filter 'lower'…". */
  reason: string;
  variable?: string;
  line: number;
  column: number;
}

export type TemplateValidation =
  | {
      ok: true;
      /** Each variable used (as written, first use first), e.g. ['first_name', 'custom.industry']. */
      variables: string[];
    }
  | { ok: false; problems: TemplateProblem[] };

export interface ValidateOptions {
  /** The workspace's custom field names; when given, a plain name outside them is unknown. */
  customFields?: Iterable<string>;
}

const MAX_PROBLEMS = 20;

export function validateTemplate(text: string, opts: ValidateOptions = {}): TemplateValidation {
  const parsed = parseTemplate(text);
  if (!parsed.ok) {
    return { ok: false, problems: [{ code: 'template_syntax', reason: `line ${parsed.at.line}, column ${parsed.at.column}: ${parsed.reason}`, line: parsed.at.line, column: parsed.at.column }] };
  }
  const custom = customFieldSet(opts.customFields);
  const problems: TemplateProblem[] = [];
  const variables = new Set<string>();
  const walk = (nodes: TemplateNode[]) => {
    for (const n of nodes) {
      if (n.kind === 'spin') n.options.forEach(walk);
      if (n.kind !== 'var') continue;
      variables.add(n.source);
      const ref = classifyVariable(n.path, custom);
      // The first few are enough to act on (and each costs a scan for its line number).
      if (ref.kind === 'unknown' && problems.length < MAX_PROBLEMS) {
        const at = positionOf(text, n.at);
        problems.push({ code: 'unknown_variable', reason: `line ${at.line}, column ${at.column}: ${ref.reason}`, variable: n.source, line: at.line, column: at.column });
      }
    }
  };
  walk(parsed.nodes);
  return problems.length ? { ok: false, problems } : { ok: true, variables: [...variables] };
}

/**
 * The problems of a whole email (subject and bodies) as lines for a definition error, each prefixed
 * with where it is: `templateProblems({ subject, text: body }, 'steps.0 (intro)')` →
 * ["steps.0 (intro).subject: line 1, column 4: unknown variable 'frist_name' — did you mean …"].
 */
export function templateProblems(parts: { subject?: string | null; text?: string | null; html?: string | null }, where: string, opts: ValidateOptions = {}): string[] {
  const out: string[] = [];
  for (const [name, text] of [['subject', parts.subject], ['body', parts.text], ['html', parts.html]] as const) {
    if (text === undefined || text === null) continue;
    const r = validateTemplate(text, opts);
    if (!r.ok) for (const p of r.problems) out.push(`${where}.${name}: ${p.reason}`);
  }
  return out;
}
