import { createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';

/**
 * The emulator's ID-token signer: a real RSA key made at start, published as a JWKS, and RS256
 * JWTs (RFC 7515/7519) signed with it, as Google and Microsoft sign theirs.
 */
export interface Signer {
  jwks: { keys: Array<Record<string, unknown>> };
  kid: string;
  /** `kid`: the key id to put in the header (another signer's, to forge a token that names the published key). */
  sign(claims: Record<string, unknown>, kid?: string): string;
}

export function createSigner(): Signer {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomBytes(8).toString('hex');
  const jwk = (publicKey as KeyObject).export({ format: 'jwk' }) as Record<string, unknown>;
  return {
    jwks: { keys: [{ ...jwk, kid, alg: 'RS256', use: 'sig' }] },
    kid,
    sign(claims, headerKid = kid) {
      const header = b64url(JSON.stringify({ alg: 'RS256', kid: headerKid, typ: 'JWT' }));
      const payload = b64url(JSON.stringify(claims));
      const signature = createSign('RSA-SHA256').update(`${header}.${payload}`).sign(privateKey).toString('base64url');
      return `${header}.${payload}.${signature}`;
    },
  };
}

function b64url(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64url');
}
