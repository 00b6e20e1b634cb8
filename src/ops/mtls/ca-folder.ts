import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cadenzaError } from '../../common/errors.ts';
import { ensurePrivateDir } from '../../common/private-files.ts';
import { createCa, issueLeaf, readCert, signedBy, validFor, type CertInfo, type Issued } from './certificates.ts';
import { daysLeft, lifetimeDays, rotationPlan, trustedCas, type RotationPlan } from './rotation.ts';

/**
 * The private CA's folder (`cadenza ca`), readable by its account only:
 *
 *   ca.crt, ca.key          the CA that signs now
 *   retired/<serial>.crt    CAs replaced by `ca rotate --new-ca`, still trusted until `ca retire`
 *   trust.pem               every CA trusted now: PostgreSQL's ssl_ca_file and each role's sslrootcert
 *   certs/<name>.crt, .key  servers' and clients' certificates; a client's name is its database role
 *
 * Only the certificates and keys in certs/ leave this folder (copied to the server or the role's
 * machine); ca.key never does.
 */
export interface CaEntry {
  name: string;
  file: string;
  info: CertInfo;
  daysLeft: number;
  /** ca, retired-ca, server, client */
  role: 'ca' | 'retired-ca' | 'server' | 'client';
  /** Signed by a CA in trust.pem (a CA: listed in it). */
  trusted: boolean;
}

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$/;

export function caFiles(dir: string) {
  return { cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key'), trust: join(dir, 'trust.pem'), retired: join(dir, 'retired'), certs: join(dir, 'certs') };
}

export async function initCa(dir: string, o: { name: string; days: number; nowMs: number }): Promise<CertInfo> {
  const f = caFiles(dir);
  if (existsSync(f.cert)) throw cadenzaError('CONFLICT', `${dir} already holds a CA (ca.crt); use \`cadenza ca rotate --new-ca\` to replace it`);
  ensurePrivateDir(dir);
  const ca = await createCa(o.name, validFor(o.nowMs, o.days));
  writePair(f.cert, f.key, ca);
  writeTrust(dir, o.nowMs);
  return readCert(ca.certPem);
}

export interface IssueOptions {
  name: string;
  kind: 'server' | 'client';
  hosts?: string[];
  days: number;
  nowMs: number;
}

/** Issues (or replaces) certs/<name>.crt and .key, signed by the current CA. */
export async function issueCert(dir: string, o: IssueOptions): Promise<CertInfo> {
  if (!NAME.test(o.name)) throw cadenzaError('INVALID_INPUT', `'${o.name}' cannot name a certificate: letters, digits, '_', '.', '-' (a client's name is its database role)`);
  if (o.kind === 'server' && !o.hosts?.length) throw cadenzaError('INVALID_INPUT', 'a server certificate needs --host: the names or addresses clients connect to (sslmode=verify-full checks them)');
  const ca = loadCa(dir);
  const leaf = await issueLeaf(ca, { kind: o.kind, commonName: o.name, ...(o.hosts ? { hosts: o.hosts } : {}), validity: validFor(o.nowMs, o.days) });
  const f = caFiles(dir);
  mkdirSync(f.certs, { recursive: true, mode: 0o700 });
  writePair(join(f.certs, `${o.name}.crt`), join(f.certs, `${o.name}.key`), leaf);
  return readCert(leaf.certPem);
}

export interface RotateResult {
  plan: RotationPlan;
  newCa?: CertInfo;
  trusted: string[];
}

/**
 * Reissues what rotationPlan says, with the same name, kind, hosts and lifetime. With newCa, the
 * current CA moves to retired/ (its key is deleted: it signs nothing more) and stays in trust.pem.
 */
export async function rotate(dir: string, o: { withinDays: number; newCa: boolean; caDays: number; caName?: string; nowMs: number }): Promise<RotateResult> {
  const f = caFiles(dir);
  const current = loadCa(dir);
  const certs = listLeaves(dir);
  const plan = rotationPlan(certs, o.nowMs, { withinDays: o.withinDays, newCa: o.newCa });
  let newCa: CertInfo | undefined;
  if (o.newCa) {
    const old = readCert(current.certPem);
    mkdirSync(f.retired, { recursive: true, mode: 0o700 });
    writeFileSync(join(f.retired, `${old.serial}.crt`), current.certPem, { mode: 0o600 });
    const next = await createCa(o.caName ?? old.commonName, validFor(o.nowMs, o.caDays));
    writePair(f.cert, f.key, next);
    newCa = readCert(next.certPem);
  }
  for (const r of plan.reissue) {
    const c = certs.find((x) => x.name === r.name)!;
    await issueCert(dir, { name: c.name, kind: c.info.kind === 'server' ? 'server' : 'client', hosts: c.info.hosts, days: lifetimeDays(c.info), nowMs: o.nowMs });
  }
  const trusted = writeTrust(dir, o.nowMs);
  return { plan, ...(newCa ? { newCa } : {}), trusted };
}

/** Ends a rotation: the retired CAs leave trust.pem (every server and role has its new files by now). */
export function retire(dir: string, nowMs: number): { removed: string[] } {
  const f = caFiles(dir);
  const removed = existsSync(f.retired) ? readdirSync(f.retired).filter((n) => n.endsWith('.crt')) : [];
  rmSync(f.retired, { recursive: true, force: true });
  writeTrust(dir, nowMs);
  return { removed: removed.map((n) => n.replace(/\.crt$/, '')) };
}

export async function listCa(dir: string, nowMs: number): Promise<CaEntry[]> {
  const f = caFiles(dir);
  const ca = loadCa(dir);
  const caInfo = readCert(ca.certPem);
  const trust = readFileSync(f.trust, 'utf8');
  const retired = retiredCas(dir);
  const out: CaEntry[] = [{ name: 'ca', file: f.cert, info: caInfo, daysLeft: daysLeft(caInfo, nowMs), role: 'ca', trusted: trust.includes(ca.certPem.trim()) }];
  for (const r of retired) out.push({ name: `retired/${r.name}`, file: r.file, info: r.info, daysLeft: daysLeft(r.info, nowMs), role: 'retired-ca', trusted: trust.includes(r.pem.trim()) });
  const trustedPems = [ca.certPem, ...retired.filter((r) => trust.includes(r.pem.trim())).map((r) => r.pem)];
  for (const c of listLeaves(dir)) {
    const pem = readFileSync(c.file, 'utf8');
    let trusted = false;
    for (const t of trustedPems) if (await signedBy(pem, t)) trusted = true;
    out.push({ name: c.name, file: c.file, info: c.info, daysLeft: daysLeft(c.info, nowMs), role: c.info.kind === 'server' ? 'server' : 'client', trusted });
  }
  return out;
}

function loadCa(dir: string): Issued {
  const f = caFiles(dir);
  if (!existsSync(f.cert) || !existsSync(f.key)) throw cadenzaError('NOT_FOUND', `${dir} holds no CA (ca.crt and ca.key): run \`cadenza ca init --dir ${dir}\` first`);
  return { certPem: readFileSync(f.cert, 'utf8'), keyPem: readFileSync(f.key, 'utf8') };
}

function listLeaves(dir: string): Array<{ name: string; file: string; info: CertInfo }> {
  const f = caFiles(dir);
  if (!existsSync(f.certs)) return [];
  return readdirSync(f.certs)
    .filter((n) => n.endsWith('.crt'))
    .sort()
    .map((n) => ({ name: n.replace(/\.crt$/, ''), file: join(f.certs, n), info: readCert(readFileSync(join(f.certs, n), 'utf8')) }));
}

function retiredCas(dir: string): Array<{ name: string; file: string; pem: string; info: CertInfo }> {
  const f = caFiles(dir);
  if (!existsSync(f.retired)) return [];
  return readdirSync(f.retired)
    .filter((n) => n.endsWith('.crt'))
    .sort()
    .map((n) => {
      const pem = readFileSync(join(f.retired, n), 'utf8');
      return { name: n.replace(/\.crt$/, ''), file: join(f.retired, n), pem, info: readCert(pem) };
    });
}

function writeTrust(dir: string, nowMs: number): string[] {
  const f = caFiles(dir);
  const pem = readFileSync(f.cert, 'utf8');
  const cas = trustedCas({ name: 'ca', file: f.cert, pem, info: readCert(pem) }, retiredCas(dir), nowMs);
  writeFileSync(`${f.trust}.new`, cas.map((c) => c.pem.trim()).join('\n') + '\n', { mode: 0o644 });
  renameSync(`${f.trust}.new`, f.trust);
  return cas.map((c) => c.info.serial);
}

/** The key first and private (0600: PostgreSQL refuses a server key others can read); each file replaced whole. */
function writePair(certFile: string, keyFile: string, issued: Issued): void {
  writeFileSync(`${keyFile}.new`, issued.keyPem, { mode: 0o600 });
  chmodSync(`${keyFile}.new`, 0o600);
  renameSync(`${keyFile}.new`, keyFile);
  writeFileSync(`${certFile}.new`, issued.certPem, { mode: 0o644 });
  renameSync(`${certFile}.new`, certFile);
}
