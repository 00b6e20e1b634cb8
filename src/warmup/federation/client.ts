/**
 * Calling a peer: a signed POST, and its answer checked before anything of it is believed (signed
 * by the peer's key, for our nonce; routes.ts signs its answers so). Bounded: one deadline for the
 * whole call, and the answer read up to MAX_BODY_BYTES.
 */
import type { FederationIdentity } from './identity.ts';
import type { Peer } from './peers.ts';
import { signRequest, verifySigned } from './signing.ts';
import { FEDERATION_TYPE, MAX_BODY_BYTES } from './wire.ts';

export const CALL_TIMEOUT_MS = 10_000;

export type CallResult =
  | { ok: true; body: Buffer }
  /** The peer answered with a refusal: its status and, when it said, its reason ('unknown-peer', 'peer-left'...). */
  | { ok: false; kind: 'refused'; status: number; reason: string | null; message: string }
  /** Unreachable, timed out, or an answer that is not the peer's (unsigned, forged, too large). */
  | { ok: false; kind: 'failed'; message: string };

export async function callPeer(me: FederationIdentity, peer: Pick<Peer, 'url' | 'signKey'>, path: string, payload: unknown, now: () => number): Promise<CallResult> {
  const body = Buffer.from(JSON.stringify(payload));
  const headers = signRequest(me, peer.signKey, { method: 'POST', path, body }, now());
  let res: Response;
  try {
    res = await fetch(peer.url + path, { method: 'POST', headers: { ...headers, 'content-type': FEDERATION_TYPE }, body, signal: AbortSignal.timeout(CALL_TIMEOUT_MS), redirect: 'error' });
  } catch (e) {
    return { ok: false, kind: 'failed', message: `could not reach the peer: ${e instanceof Error ? e.message : String(e)}` };
  }
  let raw: Buffer;
  try {
    raw = await readBounded(res);
  } catch (e) {
    return { ok: false, kind: 'failed', message: e instanceof Error ? e.message : String(e) };
  }
  if (res.status >= 400) {
    // A refusal is unsigned when the peer does not know us: believed only as a reason to retry or to stop asking.
    let reason: string | null = null;
    let message = `the peer answered ${res.status}`;
    try {
      const e = JSON.parse(raw.toString('utf8')) as { error?: { message?: unknown; details?: { reason?: unknown } } };
      if (typeof e.error?.details?.reason === 'string') reason = e.error.details.reason;
      if (typeof e.error?.message === 'string') message = `${message}: ${e.error.message.slice(0, 300)}`;
    } catch {
      /* not JSON: the status says enough */
    }
    return { ok: false, kind: 'refused', status: res.status, reason, message };
  }
  const h: Record<string, string> = {};
  res.headers.forEach((v, k) => (h[k] = v));
  const v = await verifySigned(h, { method: 'RESPONSE', path, body: raw }, {
    me: me.card.signKey,
    now: now(),
    peer: async (key) => (key === peer.signKey ? { id: 'peer', state: 'active' } : undefined),
    claimNonce: async (_p, nonce) => nonce === headers['cadenza-nonce'],
  });
  if (!v.ok) return { ok: false, kind: 'failed', message: `the answer is not the peer's: ${v.message}` };
  return { ok: true, body: raw };
}

async function readBounded(res: Response): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  if (!res.body) return Buffer.alloc(0);
  for await (const c of res.body as AsyncIterable<Uint8Array>) {
    size += c.length;
    if (size > MAX_BODY_BYTES) throw new Error(`the peer's answer is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(Buffer.from(c));
  }
  return Buffer.concat(chunks);
}
