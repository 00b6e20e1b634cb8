import type { Claim } from '../outbox.ts';
import { withSignature } from '../../common/email-html.ts';
import { composeEmail, leadDisplayName, type ComposedEmail } from './compose.ts';
import type { DkimKey } from './dkim.ts';
import { renderEmail, type EmailTemplate, type RenderResult } from '../../sequence/template/render.ts';
import type { LeadValues, SenderValues } from '../../sequence/template/variables.ts';
import type { ThreadContext } from './threading.ts';
import { trackingLinks } from './tracking.ts';

/**
 * Render and compose in one call, for the sender: from a claimed send request to the bytes a
 * transport sends, or the reason this step is blocked for this enrollment (to be recorded with
 * outbox.recordFailure as permanent, so the user sees it and nothing containing `{{…}}` goes out).
 */

export interface PrepareInput {
  claim: Pick<Claim, 'requestId' | 'workspaceId' | 'enrollmentId' | 'stepId' | 'messageId' | 'to' | 'from'>;
  template: EmailTemplate;
  lead: LeadValues;
  /** The mailbox; its address should be claim.from. */
  sender: SenderValues;
  /** The mailbox's signature: appended after rendering, so its text is never read as a template. */
  signature?: { html: string; text: string } | null;
  /** Epoch ms from the injected clock: the Date header. */
  now: number;
  tracking: {
    /** trackingKey(master) */
    key: Buffer;
    /** The workspace's custom tracking domain, else Cadenza's public URL. */
    baseUrl: string;
    opens?: boolean;
    clicks?: boolean;
  };
  thread?: ThreadContext | null;
  dkim?: DkimKey | null;
  customFields?: Iterable<string>;
}

export type PrepareResult = { ok: true; email: ComposedEmail } | Extract<RenderResult, { ok: false }>;

export async function prepareEmail(i: PrepareInput): Promise<PrepareResult> {
  const links = trackingLinks({ key: i.tracking.key, baseUrl: i.tracking.baseUrl, workspaceId: i.claim.workspaceId, sendRequestId: i.claim.requestId });
  const rendered = renderEmail(
    i.template,
    { lead: i.lead, sender: i.sender, unsubscribeUrl: links.unsubscribeUrl, ...(i.customFields ? { customFields: i.customFields } : {}) },
    { enrollmentId: i.claim.enrollmentId, stepId: i.claim.stepId },
  );
  if (!rendered.ok) return rendered;
  const email = await composeEmail({
    messageId: i.claim.messageId,
    date: i.now,
    from: { address: i.claim.from, name: i.sender.name ?? null },
    to: { address: i.claim.to, name: leadDisplayName(i.lead) },
    content: withSignature(rendered, i.signature),
    thread: i.thread ?? null,
    links,
    track: { opens: !!i.tracking.opens, clicks: !!i.tracking.clicks },
    dkim: i.dkim ?? null,
  });
  return { ok: true, email };
}
