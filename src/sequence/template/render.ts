import { seededRandom, type Random } from '../../common/random.ts';
import { escapeHtml } from '../../common/html.ts';
import { applyFilters } from './filters.ts';
import { parseTemplate, positionOf, type TemplateNode } from './parse.ts';
import { classifyVariable, lookupValue, type LeadValues, type SenderValues, type VariableRef } from './variables.ts';

/**
 * Rendering an email step for one enrollment. The result either holds the text to send or says,
 * in words a user can act on, why this step cannot be sent to this lead: an unknown variable, a
 * missing value without a default, or a syntax error. A send containing `{{first_name}}` is
 * impossible: any variable that does not resolve blocks the whole email.
 *
 * Spintax is chosen from a random stream seeded by the enrollment and the step, so a retry (or a
 * preview) renders exactly the same email. The subject and the body draw from separate streams,
 * and the text and HTML bodies from the same one, so that two bodies written with the same groups
 * make the same choices.
 *
 * Escaping: in the HTML body every inserted value (variables and defaults alike) is HTML-escaped,
 * while the template's own text is the author's HTML and is kept as written. In the text body and
 * the subject, values are inserted as they are. Line breaks in the subject become spaces (a header
 * is one line).
 */

export type RenderErrorCode = 'unknown_variable' | 'missing_value' | 'template_syntax';

export type RenderResult =
  | {
      ok: true;
      /** null when the step sets no subject: a follow-up, sent as "Re: <first subject>" (threading.ts). */
      subject: string | null;
      text: string;
      html?: string;
    }
  | { ok: false; code: RenderErrorCode; reason: string; variable?: string };

export interface EmailTemplate {
  subject?: string | null;
  /** The plain-text body; always sent (the text alternative when there is HTML). */
  text: string;
  /** An optional HTML body, sent with the text as multipart/alternative. */
  html?: string | null;
}

export interface RenderContext {
  lead: LeadValues;
  sender?: SenderValues | null;
  /** This email's unsubscribe page (tracking.ts), for {{unsubscribe_url}}. */
  unsubscribeUrl?: string | null;
  /** The workspace's custom field names; when given, a plain name outside them is unknown. */
  customFields?: Iterable<string>;
}

export interface RenderSeed {
  enrollmentId: string;
  stepId: string;
}

type Part = 'subject' | 'text' | 'html';
type VarNode = Extract<TemplateNode, { kind: 'var' }>;

interface Missing {
  variable: string;
  at: number;
}

class Blocked {
  constructor(
    readonly code: RenderErrorCode,
    readonly reason: string,
    readonly variable?: string,
  ) {}
}

/** The lowercased set classifyVariable expects. */
export function customFieldSet(names: Iterable<string> | undefined): ReadonlySet<string> | undefined {
  if (names === undefined) return undefined;
  const s = new Set<string>();
  for (const n of names) s.add(n.toLowerCase());
  return s;
}

function hasCustomKey(lead: LeadValues, key: string): boolean {
  const c = lead.custom;
  if (!c || typeof c !== 'object') return false;
  const want = key.toLowerCase();
  return Object.keys(c).some((k) => k.toLowerCase() === want);
}

function spinRandom(seed: RenderSeed, stream: 'subject' | 'body'): Random {
  return seededRandom(`spintax:${seed.enrollmentId}:${seed.stepId}`).fork(stream);
}

function renderPart(part: Part, source: string, ctx: RenderContext, custom: ReadonlySet<string> | undefined, random: Random): string {
  const parsed = parseTemplate(source);
  if (!parsed.ok) {
    throw new Blocked('template_syntax', `${part}: line ${parsed.at.line}, column ${parsed.at.column}: ${parsed.reason}`);
  }
  const refs = new Map<VarNode, VariableRef>();
  // Every variable in every option is checked before anything is chosen: a wrong name is wrong
  // for every lead, so it blocks every lead, not only those whose spintax happens to reach it.
  const classify = (nodes: TemplateNode[]): void => {
    for (const n of nodes) {
      if (n.kind === 'spin') n.options.forEach(classify);
      if (n.kind !== 'var') continue;
      let ref: VariableRef = classifyVariable(n.path, custom);
      // A plain name this lead has as a custom field is that field, even if it looks like a typo.
      if (ref.kind === 'unknown' && n.path.length === 1 && hasCustomKey(ctx.lead, n.path[0]!)) ref = { kind: 'custom', key: n.path[0]! };
      if (ref.kind === 'unknown') {
        const at = positionOf(source, n.at);
        throw new Blocked('unknown_variable', `${part}: line ${at.line}, column ${at.column}: ${ref.reason}`, n.source);
      }
      refs.set(n, ref);
    }
  };
  classify(parsed.nodes);
  const missing: Missing[] = [];
  const resolve = (node: VarNode): string => {
    const ref = refs.get(node)!;
    const raw = lookupValue(ref, { lead: ctx.lead, sender: ctx.sender, unsubscribeUrl: ctx.unsubscribeUrl });
    if (raw !== undefined && (raw.includes('{{') || raw.includes('}}'))) {
      // Broken data (an import of an unrendered mail-merge column, say) would otherwise be sent as is.
      throw new Blocked('missing_value', `${part}: the value of {{${node.source}}} contains template braces ('${truncate(raw)}'); fix the lead's data`, node.source);
    }
    const v = applyFilters(raw, node.filters);
    if (v === undefined) {
      missing.push({ variable: node.source, at: node.at });
      return '';
    }
    return part === 'html' ? escapeHtml(v) : v;
  };
  const walk = (nodes: TemplateNode[]): string => {
    let out = '';
    for (const n of nodes) {
      if (n.kind === 'text') out += n.value;
      else if (n.kind === 'var') out += resolve(n);
      else out += walk(n.options[random.int(0, n.options.length - 1)]!);
    }
    return out;
  };
  const out = walk(parsed.nodes);
  if (missing.length) {
    const first = missing[0]!;
    const at = positionOf(source, first.at);
    const names = [...new Set(missing.map((m) => m.variable))];
    const list = names.map((n) => `{{${n}}}`).join(', ');
    throw new Blocked(
      'missing_value',
      `${part}: line ${at.line}, column ${at.column}: this lead has no value for ${list} and the template gives no default (e.g. {{${first.variable} | default: "…"}})`,
      first.variable,
    );
  }
  return out;
}

function truncate(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** Renders a step's subject and bodies for one enrollment. Never throws for any template text. */
export function renderEmail(tpl: EmailTemplate, ctx: RenderContext, seed: RenderSeed): RenderResult {
  const custom = customFieldSet(ctx.customFields);
  try {
    let subject: string | null = null;
    if (tpl.subject !== undefined && tpl.subject !== null && tpl.subject.trim() !== '') {
      subject = renderPart('subject', tpl.subject, ctx, custom, spinRandom(seed, 'subject')).replace(/\s+/gu, ' ').trim();
      if (subject === '') throw new Blocked('missing_value', 'subject: renders empty for this lead');
    }
    const text = renderPart('text', tpl.text, ctx, custom, spinRandom(seed, 'body'));
    if (text.trim() === '') throw new Blocked('missing_value', 'text: the body renders empty for this lead');
    if (tpl.html === undefined || tpl.html === null || tpl.html.trim() === '') return { ok: true, subject, text };
    const html = renderPart('html', tpl.html, ctx, custom, spinRandom(seed, 'body'));
    return { ok: true, subject, text, html };
  } catch (e) {
    if (e instanceof Blocked) return { ok: false, code: e.code, reason: e.reason, ...(e.variable !== undefined ? { variable: e.variable } : {}) };
    throw e;
  }
}
