/**
 * This installation's federation identity and the key it shares with each peer.
 *
 * Both key pairs are derived from the master key (secrets.ts deriveKey), so nothing secret is
 * stored or sent, and they follow the master key: an installation that rotates it has a new card
 * and its peers must add it again. The card (base URL, name, the two public keys) is public: it is
 * served at GET /federation/card and pasted or fetched by the peer's operator.
 *
 * The pair key: X25519(our private, their public) is the same number on both sides; HKDF over it,
 * salted with both signing keys in a fixed order, gives the key both write and verify warmup mail
 * between the two installations with (text/marker.ts). No key crosses the wire.
 */
import { createPrivateKey, createPublicKey, diffieHellman, hkdfSync, sign, verify, type KeyObject } from 'node:crypto';
import { cadenzaError } from '../../common/errors.ts';
import { deriveKey } from '../../common/secrets.ts';

// The fixed DER headers of RFC 8410 keys: PKCS#8 for a private seed, SPKI for a public key.
const PKCS8 = { ed25519: Buffer.from('302e020100300506032b657004220420', 'hex'), x25519: Buffer.from('302e020100300506032b656e04220420', 'hex') };
const SPKI = { ed25519: Buffer.from('302a300506032b6570032100', 'hex'), x25519: Buffer.from('302a300506032b656e032100', 'hex') };

export interface FederationCard {
  /** The base URL the peer reaches us at (CADENZA_PUBLIC_URL). */
  url: string;
  name: string;
  /** Ed25519 public key, raw 32 bytes, base64. */
  signKey: string;
  /** X25519 public key, raw 32 bytes, base64. */
  agreeKey: string;
}

export interface FederationIdentity {
  card: FederationCard;
  signPrivate: KeyObject;
  agreePrivate: KeyObject;
}

export function federationIdentity(master: Buffer, url: string, name: string): FederationIdentity {
  const signPrivate = createPrivateKey({ key: Buffer.concat([PKCS8.ed25519, deriveKey(master, 'federation:ed25519')]), format: 'der', type: 'pkcs8' });
  const agreePrivate = createPrivateKey({ key: Buffer.concat([PKCS8.x25519, deriveKey(master, 'federation:x25519')]), format: 'der', type: 'pkcs8' });
  const raw = (k: KeyObject) => (createPublicKey(k).export({ format: 'der', type: 'spki' }) as Buffer).subarray(-32).toString('base64');
  return { card: { url: url.replace(/\/+$/, ''), name, signKey: raw(signPrivate), agreeKey: raw(agreePrivate) }, signPrivate, agreePrivate };
}

/** A peer's public key from its card; a key that is not 32 bytes of base64 is INVALID_INPUT. */
export function publicKeyOf(kind: 'ed25519' | 'x25519', base64: string): KeyObject {
  const raw = Buffer.from(base64, 'base64');
  if (raw.length !== 32 || raw.toString('base64') !== base64) throw cadenzaError('INVALID_INPUT', `the ${kind === 'ed25519' ? 'signing' : 'agreement'} key must be 32 bytes in base64`, { field: kind === 'ed25519' ? 'signKey' : 'agreeKey' });
  return createPublicKey({ key: Buffer.concat([SPKI[kind], raw]), format: 'der', type: 'spki' });
}

/** The warmup key for mail between us and the peer: both sides compute the same. */
export function pairKey(me: FederationIdentity, peer: { signKey: string; agreeKey: string }): Buffer {
  const shared = diffieHellman({ privateKey: me.agreePrivate, publicKey: publicKeyOf('x25519', peer.agreeKey) });
  const salt = [me.card.signKey, peer.signKey].sort().join('|');
  return Buffer.from(hkdfSync('sha256', shared, salt, 'cadenza:warmup-federation:v1', 32));
}

export function signBytes(me: FederationIdentity, data: Buffer): string {
  return sign(null, data, me.signPrivate).toString('base64');
}

export function verifyBytes(signKey: string, data: Buffer, signature: string): boolean {
  try {
    return verify(null, data, publicKeyOf('ed25519', signKey), Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}
