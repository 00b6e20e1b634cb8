import type { Parsed } from '../call.ts';
import { jsonBody } from '../http.ts';

/**
 * A Graph message resource, as far as Cadenza reads it. Only `id` is always present: Graph returns
 * the properties named in $select (and id).
 */
export interface GraphMessage {
  id: string;
  internetMessageId: string | null;
  conversationId: string | null;
  parentFolderId: string | null;
  isDraft: boolean | null;
  /** sentDateTime in ms since the epoch. */
  sentAt: number | null;
  receivedAt: number | null;
  subject: string | null;
  /** toRecipients' addresses (empty when not selected). */
  to: string[];
}

export function readGraphMessage(v: unknown): GraphMessage | null {
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  if (typeof o.id !== 'string' || o.id === '') return null;
  const str = (x: unknown) => (typeof x === 'string' ? x : null);
  const time = (x: unknown) => {
    const t = typeof x === 'string' ? Date.parse(x) : NaN;
    return Number.isFinite(t) ? t : null;
  };
  return {
    id: o.id,
    internetMessageId: str(o.internetMessageId),
    conversationId: str(o.conversationId),
    parentFolderId: str(o.parentFolderId),
    isDraft: typeof o.isDraft === 'boolean' ? o.isDraft : null,
    sentAt: time(o.sentDateTime),
    receivedAt: time(o.receivedDateTime),
    subject: str(o.subject),
    to: Array.isArray(o.toRecipients) ? o.toRecipients.map((r) => str((r as { emailAddress?: { address?: unknown } } | null)?.emailAddress?.address)).filter((a): a is string => !!a) : [],
  };
}

/**
 * An OData string literal: single quotes, an embedded quote doubled (OData URL conventions
 * §5.1.1.6.1). Message-IDs may legally contain a quote.
 */
export function odataString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/**
 * Query parameters with spaces as %20, not '+': OData reads the query string literally, and
 * URLSearchParams' form encoding turns spaces into '+', which a $filter does not decode.
 */
export function odataQuery(params: Record<string, string | undefined>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(params)) if (v !== undefined) parts.push(`${k}=${encodeURIComponent(v)}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

/** A verb's parseOk for an answer that is one message (get, move, update). */
export function messageAnswer(what: string): (status: number, headers: unknown, body: Buffer) => Parsed<GraphMessage> {
  return (_s, _h, b) => {
    const m = readGraphMessage(jsonBody(b));
    return m ? { ok: true, value: m } : { ok: false, reason: `${what} answer without an id` };
  };
}
