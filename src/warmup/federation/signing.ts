/**
 * Signed requests between installations (pure but for the injected lookups). Every request, and
 * every answer, carries four headers:
 *
 *   cadenza-key        the signer's Ed25519 public key (its card's signKey): who signs
 *   cadenza-timestamp  ms since the epoch; refused outside ±5 minutes of the receiver's clock
 *   cadenza-nonce      32 hex digits, accepted once per peer (a replay inside the window is refused)
 *   cadenza-signature  Ed25519 over the lines below, base64
 *
 * The signed text names the recipient's key too, so a request signed for one peer cannot be
 * replayed to another peer of the same signer, and the SHA-256 of the exact body bytes:
 *
 *   cadenza-federation-v1 \n METHOD \n /path \n recipient key \n timestamp \n nonce \n sha256(body) hex
 *
 * An answer is signed the same way with the method RESPONSE and the request's nonce, which binds
 * it to the request it answers (the client checks both).
 */
import { createHash, randomBytes } from 'node:crypto';
import { signBytes, verifyBytes, type FederationIdentity } from './identity.ts';

export const SIGNATURE_WINDOW_MS = 5 * 60_000;
const NONCE = /^[0-9a-f]{32}$/;

export interface SignedHeaders {
  'cadenza-key': string;
  'cadenza-timestamp': string;
  'cadenza-nonce': string;
  'cadenza-signature': string;
}

function signedText(method: string, path: string, to: string, ts: string, nonce: string, body: Buffer): Buffer {
  const hash = createHash('sha256').update(body).digest('hex');
  return Buffer.from(['cadenza-federation-v1', method.toUpperCase(), path, to, ts, nonce, hash].join('\n'));
}

export function signRequest(me: FederationIdentity, to: string, req: { method: string; path: string; body: Buffer }, now: number, nonce = randomBytes(16).toString('hex')): SignedHeaders {
  const ts = String(now);
  return { 'cadenza-key': me.card.signKey, 'cadenza-timestamp': ts, 'cadenza-nonce': nonce, 'cadenza-signature': signBytes(me, signedText(req.method, req.path, to, ts, nonce, req.body)) };
}

/** A peer as the verifier sees it. */
export interface KnownPeer {
  id: string;
  state: 'pending' | 'active' | 'left';
}

export interface VerifyDeps {
  /** Our own signing key (the recipient named in the signed text). */
  me: string;
  now: number;
  /** The live peering (or the ended one) with this signing key, if any. */
  peer(signKey: string): Promise<KnownPeer | undefined>;
  /** Records the nonce for the peer; false when it was seen before. Called only for a good signature. */
  claimNonce(peerId: string, nonce: string, now: number): Promise<boolean>;
}

export type Verdict =
  | { ok: true; peer: KnownPeer }
  | { ok: false; status: 400 | 401 | 403; reason: 'missing-headers' | 'bad-timestamp' | 'outside-window' | 'unknown-peer' | 'peer-left' | 'bad-signature' | 'replayed'; message: string };

const refuse = (status: 400 | 401 | 403, reason: Extract<Verdict, { ok: false }>['reason'], message: string): Verdict => ({ ok: false, status, reason, message });

/** Checks a signed request (or, with method RESPONSE, an answer). The cheap checks come first; the nonce is claimed last, so a forged request cannot burn a nonce. */
export async function verifySigned(headers: Record<string, string | string[] | undefined>, req: { method: string; path: string; body: Buffer }, d: VerifyDeps): Promise<Verdict> {
  const h = (k: keyof SignedHeaders) => (typeof headers[k] === 'string' ? (headers[k] as string) : undefined);
  const key = h('cadenza-key');
  const ts = h('cadenza-timestamp');
  const nonce = h('cadenza-nonce');
  const sig = h('cadenza-signature');
  if (!key || !ts || !nonce || !sig) return refuse(400, 'missing-headers', 'a federation request needs the cadenza-key, cadenza-timestamp, cadenza-nonce and cadenza-signature headers');
  if (!/^\d{1,15}$/.test(ts) || !NONCE.test(nonce)) return refuse(400, 'bad-timestamp', 'cadenza-timestamp must be ms since the epoch and cadenza-nonce 32 hex digits');
  if (Math.abs(Number(ts) - d.now) > SIGNATURE_WINDOW_MS) return refuse(401, 'outside-window', 'the request was signed more than 5 minutes from our clock: check both clocks');
  const peer = await d.peer(key);
  if (!peer) return refuse(403, 'unknown-peer', 'this installation has not added you as a warmup peer');
  if (peer.state === 'left') return refuse(403, 'peer-left', 'the warmup peering with you has ended');
  if (!verifyBytes(key, signedText(req.method, req.path, d.me, ts, nonce, req.body), sig)) return refuse(401, 'bad-signature', 'the signature does not match the request');
  if (!(await d.claimNonce(peer.id, nonce, d.now))) return refuse(401, 'replayed', 'this request was already received (nonce seen)');
  return { ok: true, peer };
}
