import { X509Certificate } from 'node:crypto';
import { cadenzaError } from '../../common/errors.ts';

/**
 * A tracking host's certificate chain and private key, sealed together with the workspace's data
 * key (the vault, promise 7) and bound to the host: the sealed bytes copied onto another host's
 * row, or into another workspace, do not open.
 */

/** What sealing needs (mailbox/vault.ts's Vault has it); declared here, where it is used. */
export interface SecretSealer {
  seal(workspaceId: string, context: string, plaintext: string): Promise<Buffer>;
  open(workspaceId: string, context: string, sealed: Buffer): Promise<string>;
}

export interface CertificatePair {
  /** The leaf first, then the intermediates (PEM). */
  certPem: string;
  keyPem: string;
}

const context = (host: string) => `tracking-cert:${host}`;

export async function sealCertificate(vault: SecretSealer, workspaceId: string, host: string, pair: CertificatePair): Promise<Buffer> {
  return vault.seal(workspaceId, context(host), JSON.stringify({ cert: pair.certPem, key: pair.keyPem }));
}

export async function openCertificate(vault: SecretSealer, workspaceId: string, host: string, sealed: Buffer): Promise<CertificatePair> {
  const p = JSON.parse(await vault.open(workspaceId, context(host), sealed)) as { cert: string; key: string };
  return { certPem: p.cert, keyPem: p.key };
}

/**
 * The leaf's validity (epoch ms), and a check that it names the host: a CA answering with a
 * certificate for another name is refused rather than stored and served.
 */
export function leafValidity(certPem: string, host: string): { notBefore: number; notAfter: number } {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(certPem);
  } catch {
    throw cadenzaError('INVALID_INPUT', `the certificate issued for ${host} could not be read`);
  }
  if (leaf.checkHost(host) === undefined) throw cadenzaError('INVALID_INPUT', `the certificate issued for ${host} does not name it`, { subjectAltName: leaf.subjectAltName });
  return { notBefore: Date.parse(leaf.validFrom), notAfter: Date.parse(leaf.validTo) };
}
