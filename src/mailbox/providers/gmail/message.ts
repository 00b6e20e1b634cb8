import type { Parsed } from '../call.ts';

/** What the Gmail API says about a message (users.messages resource), as far as Cadenza reads it. */
export interface GmailMessageRef {
  id: string;
  threadId: string;
}

export interface GmailMessage extends GmailMessageRef {
  labelIds: string[];
  /** `internalDate` (ms since the epoch, sent as a string), null when absent. */
  internalDate: number | null;
  historyId: string | null;
  /** format=raw: the RFC 822 bytes. */
  raw: Buffer | null;
  /** format=metadata/full: the top-level headers, in order. */
  headers: Array<{ name: string; value: string }>;
}

export function readRef(v: unknown): GmailMessageRef | null {
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  return typeof o.id === 'string' && o.id !== '' && typeof o.threadId === 'string' ? { id: o.id, threadId: o.threadId } : null;
}

export function readMessage(v: unknown): Parsed<GmailMessage> {
  const ref = readRef(v);
  if (!ref) return { ok: false, reason: 'message without id/threadId' };
  const o = v as Record<string, unknown>;
  const labelIds = Array.isArray(o.labelIds) ? o.labelIds.filter((x): x is string => typeof x === 'string') : [];
  const internalDate = typeof o.internalDate === 'string' && /^\d+$/.test(o.internalDate) ? Number(o.internalDate) : null;
  const historyId = typeof o.historyId === 'string' ? o.historyId : null;
  let raw: Buffer | null = null;
  if (o.raw !== undefined) {
    if (typeof o.raw !== 'string' || !/^[A-Za-z0-9_\-+/=]*$/.test(o.raw)) return { ok: false, reason: 'raw is not base64url' };
    raw = Buffer.from(o.raw, 'base64url');
  }
  const headers: Array<{ name: string; value: string }> = [];
  const payload = o.payload as { headers?: unknown } | undefined;
  if (payload && Array.isArray(payload.headers)) {
    for (const h of payload.headers) {
      if (h && typeof h.name === 'string' && typeof h.value === 'string') headers.push({ name: h.name, value: h.value });
    }
  }
  return { ok: true, value: { ...ref, labelIds, internalDate, historyId, raw, headers } };
}
