import { composeEmail, leadDisplayName } from '../compose/compose.ts';
import { trackingLinks } from '../compose/tracking.ts';
import { withSignature } from '../../common/email-html.ts';
import { renderEmail, type EmailTemplate } from '../../sequence/template/render.ts';
import type { LeadValues, SenderValues } from '../../sequence/template/variables.ts';
import { contentFindings, worstLevel, type Finding, type FindingLevel } from './findings.ts';
import type { ContentScorer, ScoreResult } from './rspamd-scorer.ts';

/**
 * The content check of one email step, before launch: the step rendered for a sample lead and
 * composed exactly as the sender would (the same renderer, the same MIME, List-Unsubscribe and
 * tracking), then judged twice: by Cadenza's own checks (findings.ts) and, when one is
 * installed, by a real spam filter (the scorer). A template that does not render for this lead
 * is the answer itself (`rendered: false`), nothing is scored.
 */

export interface ContentCheckRequest {
  workspaceId: string;
  /** The step and the variant checked, for the spintax seed (the lead sees this very spin). */
  stepId: string;
  template: EmailTemplate;
  lead: LeadValues;
  sender: SenderValues & { email: string };
  /** The sending mailbox's signature, appended as the sender appends it. */
  signature?: { html: string; text: string } | null;
  tracking: { key: Buffer; baseUrl: string; customDomain: string | null; waiting?: { host: string; why: string } | null; opens: boolean; clicks: boolean };
  /** Epoch ms, from the injected clock (the Date header). */
  now: number;
  scorer: ContentScorer | null;
  signal?: AbortSignal;
}

export type ContentCheckResult =
  | { rendered: false; code: string; reason: string }
  | {
      rendered: true;
      subject: string;
      /** The composed message's size: what the filter saw. */
      bytes: number;
      findings: Finding[];
      level: FindingLevel;
      score: ScoreResult | { status: 'not_configured'; reason: string };
    };

// The check's own identifiers: never a real send request, so its links open nothing.
const CHECK_REQUEST_ID = '00000000-0000-4000-8000-00000000c4ec';

export async function checkStepContent(r: ContentCheckRequest): Promise<ContentCheckResult> {
  const links = trackingLinks({ key: r.tracking.key, baseUrl: r.tracking.baseUrl, workspaceId: r.workspaceId, sendRequestId: CHECK_REQUEST_ID });
  const result = renderEmail(r.template, { lead: r.lead, sender: r.sender, unsubscribeUrl: links.unsubscribeUrl }, { enrollmentId: CHECK_REQUEST_ID, stepId: r.stepId });
  if (!result.ok) return { rendered: false, code: result.code, reason: result.reason };
  const rendered = withSignature(result, r.signature);
  const domain = r.sender.email.split('@')[1] ?? 'invalid';
  const email = await composeEmail({
    messageId: `<content-check.${r.now}@${domain}>`,
    date: r.now,
    from: { address: r.sender.email, name: r.sender.name ?? null },
    to: { address: r.lead.email ?? `lead@${domain}`, name: leadDisplayName(r.lead) },
    content: rendered,
    links,
    track: { opens: r.tracking.opens, clicks: r.tracking.clicks },
  });
  const findings = contentFindings({
    subject: email.subject,
    text: rendered.text,
    html: rendered.html ?? null,
    tracking: { opens: r.tracking.opens, clicks: r.tracking.clicks, customDomain: r.tracking.customDomain, waiting: r.tracking.waiting ?? null },
    listUnsubscribe: !!email.listUnsubscribe.listUnsubscribe,
    unsubscribeUrl: links.unsubscribeUrl,
  });
  const score = r.scorer ? await r.scorer.score(email.raw, r.signal ? { signal: r.signal } : {}) : { status: 'not_configured' as const, reason: 'no spam scorer configured (CADENZA_RSPAMD_URL)' };
  return { rendered: true, subject: email.subject, bytes: email.raw.length, findings, level: worstLevel(findings), score };
}
