import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/**
 * X.509 for the private CA between Cadenza's role processes and PostgreSQL (docs/security.md
 * "Database connections"). @peculiar/x509 builds and reads certificates on Node's WebCrypto: no
 * child process, no openssl configuration file, and it is already what acme-client uses here.
 *
 * Keys are ECDSA P-256 with SHA-256 signatures: OpenSSL (PostgreSQL's side) and Node's TLS (the
 * roles' side) both take them, and a key is generated in milliseconds, so a rotation that reissues
 * every certificate is instant.
 */
x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

export type CertKind = 'ca' | 'server' | 'client';

/** A certificate and its private key, both PEM. */
export interface Issued {
  certPem: string;
  keyPem: string;
}

/** What `cadenza ca list` and rotation read back from a certificate. */
export interface CertInfo {
  kind: CertKind;
  /** The subject's CN: the CA's name, the server's name, or the database role a client logs in as. */
  commonName: string;
  issuer: string;
  serial: string;
  notBefore: Date;
  notAfter: Date;
  /** server: the DNS names and IP addresses clients verify (sslmode=verify-full). */
  hosts: string[];
}

export interface Validity {
  notBefore: Date;
  notAfter: Date;
}

/** From now (minus a minute of clock skew between machines) for `days` days. */
export function validFor(nowMs: number, days: number): Validity {
  return { notBefore: new Date(nowMs - 60_000), notAfter: new Date(nowMs + days * DAY_MS) };
}

export async function createCa(commonName: string, validity: Validity): Promise<Issued> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${escapeRdn(commonName)}`,
    ...validity,
    keys,
    signingAlgorithm: ALG,
    extensions: [
      // pathLen 0: this CA signs leaf certificates only, never another CA.
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await keyPem(keys.privateKey) };
}

export interface LeafRequest {
  kind: 'server' | 'client';
  commonName: string;
  /** server only: names and addresses in the subjectAltName (Node checks the SAN, never the CN). */
  hosts?: string[];
  validity: Validity;
}

export async function issueLeaf(ca: Issued, req: LeafRequest): Promise<Issued> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await importKey(ca.keyPem);
  const keys = await generateKeys();
  const hosts = req.kind === 'server' ? (req.hosts ?? []) : [];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension([req.kind === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth], false),
    await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
  ];
  if (hosts.length) extensions.push(new x509.SubjectAlternativeNameExtension(hosts.map((h) => (isIp(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h }))));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${escapeRdn(req.commonName)}`,
    issuer: caCert.subject,
    ...req.validity,
    signingKey: caKey,
    publicKey: keys.publicKey,
    signingAlgorithm: ALG,
    extensions,
  });
  return { certPem: cert.toString('pem'), keyPem: await keyPem(keys.privateKey) };
}

export function readCert(pem: string): CertInfo {
  const c = new x509.X509Certificate(pem);
  const basic = c.getExtension(x509.BasicConstraintsExtension);
  const eku = c.getExtension(x509.ExtendedKeyUsageExtension);
  const san = c.getExtension(x509.SubjectAlternativeNameExtension);
  const kind: CertKind = basic?.ca ? 'ca' : eku?.usages.includes(x509.ExtendedKeyUsage.serverAuth) ? 'server' : 'client';
  return {
    kind,
    commonName: c.subjectName.getField('CN')[0] ?? c.subject,
    issuer: c.issuerName.getField('CN')[0] ?? c.issuer,
    serial: c.serialNumber,
    notBefore: c.notBefore,
    notAfter: c.notAfter,
    hosts: san ? san.names.items.map((n) => n.value) : [],
  };
}

/** Whether `pem` was signed by the CA `caPem` (its signature checks with the CA's key). */
export async function signedBy(pem: string, caPem: string): Promise<boolean> {
  const c = new x509.X509Certificate(pem);
  const ca = new x509.X509Certificate(caPem);
  if (c.issuer !== ca.subject) return false;
  return c.verify({ publicKey: ca.publicKey, signatureOnly: true });
}

/** The PEM blocks of a bundle (a trust file holds several CAs). */
export function splitPem(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)?.map((b) => `${b}\n`) ?? [];
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`;
}

async function importKey(pem: string): Promise<CryptoKey> {
  const der = Buffer.from(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64');
  return webcrypto.subtle.importKey('pkcs8', der, ALG, false, ['sign']) as Promise<CryptoKey>;
}

/** 16 random bytes, the first bit cleared so the DER integer stays positive (RFC 5280 4.1.2.2). */
function serial(): string {
  const b = webcrypto.getRandomValues(new Uint8Array(16));
  b[0] = b[0]! & 0x7f;
  return Buffer.from(b).toString('hex');
}

/** RFC 4514: a CN holding ',', '+', '"', '\\', '<', '>', ';' or '=' is escaped, not split. */
function escapeRdn(v: string): string {
  return v.replace(/[,+"\\<>;=]/g, (c) => `\\${c}`);
}

function isIp(h: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(h) || h.includes(':');
}
