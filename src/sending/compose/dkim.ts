import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import DKIM from 'nodemailer/lib/dkim/index.js';
import { cadenzaError } from '../../common/errors.ts';

/**
 * DKIM (RFC 6376) for mail that Cadenza's own SMTP relay sends for a custom domain. Mail sent
 * through a rep's Google, Microsoft or SMTP mailbox is signed by that provider, not here.
 *
 * Signing is nodemailer's (lib/dkim: rsa-sha256, relaxed/relaxed). It signs with RSA only and,
 * given any other key, returns the message unsigned without a word (its sign() swallows the
 * error), so keys are checked here first: ed25519 (RFC 8463) is refused with a clear error, and so
 * is RSA under 1024 bits (RFC 8301 §3.2: verifiers must not accept them). dkimSign also checks
 * that a signature was really added.
 */

export interface DkimKey {
  /** The d= domain: the From domain, or a parent of it (relaxed DMARC alignment). */
  domain: string;
  /** The s= selector: the record lives at <selector>._domainkey.<domain>. */
  selector: string;
  /** PKCS#8 or PKCS#1 PEM. */
  privateKey: string;
}

/**
 * The header fields signed: nodemailer's default list (RFC 6376 §5.4.1) plus
 * List-Unsubscribe-Post, which RFC 8058 §4 requires to be signed for one-click to be honoured.
 */
export const SIGNED_HEADER_FIELDS = [
  'From', 'Sender', 'Reply-To', 'Subject', 'Date', 'Message-ID', 'To', 'Cc', 'MIME-Version', 'Content-Type',
  'Content-Transfer-Encoding', 'Content-ID', 'Content-Description', 'Resent-Date', 'Resent-From', 'Resent-Sender',
  'Resent-To', 'Resent-Cc', 'Resent-Message-ID', 'In-Reply-To', 'References', 'List-Id', 'List-Help',
  'List-Unsubscribe', 'List-Unsubscribe-Post', 'List-Subscribe', 'List-Post', 'List-Owner', 'List-Archive',
].join(':');

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;

export function isHostname(s: string): boolean {
  return s.length <= 253 && s.split('.').length >= 2 && s.split('.').every((l) => LABEL.test(l));
}

function isSelector(s: string): boolean {
  return s.length <= 253 && s.split('.').every((l) => LABEL.test(l));
}

function keyError(what: string, problem: string): never {
  throw cadenzaError('INVALID_INPUT', `${what}: ${problem}`);
}

/** Checks an RSA key for signing (private) or publishing (either); returns it as a KeyObject. */
export function checkDkimKey(pem: string, opts: { need: 'private' | 'any'; what?: string }): KeyObject {
  const what = opts.what ?? 'DKIM key';
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,ENCRYPTED/.test(pem)) keyError(what, 'the key is encrypted; give an unencrypted PEM key (it is read without a passphrase)');
  let key: KeyObject;
  try {
    key = /PUBLIC KEY-----/.test(pem) ? createPublicKey(pem) : createPrivateKey(pem);
  } catch (e) {
    const msg = (e as Error).message;
    keyError(what, /passphrase/i.test(msg) ? 'the key is encrypted; give an unencrypted PEM key' : `not a PEM key (${msg})`);
  }
  if (opts.need === 'private' && key.type !== 'private') keyError(what, 'signing needs the private key, this is a public key');
  const type = key.asymmetricKeyType;
  if (type === 'ed25519') {
    keyError(what, "ed25519 keys (RFC 8463) are not supported: nodemailer's DKIM signer only signs with RSA and would send the mail unsigned; generate an RSA key (cadenza dns DOMAIN --generate-key FILE)");
  }
  if (type !== 'rsa') keyError(what, `a ${type ?? 'unknown'} key; DKIM here uses RSA keys (rsa-sha256)`);
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < 1024) keyError(what, `an RSA key of ${bits} bits; at least 1024 are required (RFC 8301), 2048 recommended`);
  return key;
}

/** A new RSA key pair for DKIM (2048 bits: RFC 8301's recommendation, and it still fits one TXT record when split). */
export function generateDkimKey(bits = 2048): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

/** The TXT value to publish at <selector>._domainkey.<domain>: "v=DKIM1; k=rsa; p=<base64 SPKI>". */
export function dkimTxtValue(keyPem: string): string {
  const key = checkDkimKey(keyPem, { need: 'any' });
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return `v=DKIM1; k=rsa; p=${pub.export({ type: 'spki', format: 'der' }).toString('base64')}`;
}

export function dkimRecordName(selector: string, domain: string): string {
  return `${selector}._domainkey.${domain}`;
}

/** Options for nodemailer's DKIM signer, after checking the key, domain and selector. */
export function dkimSigningOptions(k: DkimKey): DKIM.SingleKeyOptions {
  const domain = k.domain.toLowerCase().replace(/\.$/, '');
  if (!isHostname(domain)) throw cadenzaError('INVALID_INPUT', `DKIM domain '${k.domain}' is not a domain name`);
  if (!isSelector(k.selector)) throw cadenzaError('INVALID_INPUT', `DKIM selector '${k.selector}' is not valid (letters, digits and hyphens, dot-separated)`);
  checkDkimKey(k.privateKey, { need: 'private' });
  return {
    domainName: domain,
    keySelector: k.selector,
    privateKey: k.privateKey,
    headerFieldNames: SIGNED_HEADER_FIELDS,
    // Never spill a message to disk: sequence emails are small, and a temp file would outlive a crash.
    cacheDir: false,
  };
}

/** Signs a complete RFC 5322 message; the result starts with its DKIM-Signature header. */
export async function dkimSign(raw: Buffer, k: DkimKey): Promise<Buffer> {
  const signer = new DKIM(dkimSigningOptions(k));
  const chunks: Buffer[] = [];
  for await (const c of signer.sign(raw)) chunks.push(c as Buffer);
  const signed = Buffer.concat(chunks);
  if (!/^DKIM-Signature:/i.test(signed.subarray(0, 16).toString('latin1'))) {
    throw cadenzaError('INVALID_INPUT', `DKIM signing with selector '${k.selector}' for ${k.domain} produced no signature`);
  }
  return signed;
}
