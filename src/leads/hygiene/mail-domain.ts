import type { Clock } from '../../common/clock.ts';

/**
 * Whether a domain can receive mail, from DNS (RFC 5321 §5.1):
 *
 *   mx           it publishes MX records naming a host
 *   implicit_mx  no MX, but an A or AAAA record: mail goes to the domain's own address (§5.1)
 *   null_mx      its only MX is '.' (RFC 7505): it says it accepts no mail
 *   no_mail_host the name exists and has neither MX nor A/AAAA
 *   nxdomain     the name does not exist
 *   unknown      the question was not answered (timeout, SERVFAIL, refused): nothing is known,
 *                so nothing is concluded (hygiene says risky, never invalid)
 */
export type MailDomainStatus =
  | { kind: 'mx' | 'implicit_mx' | 'null_mx' | 'no_mail_host' | 'nxdomain' }
  | { kind: 'unknown'; error: string };

/** The DNS questions asked: node:dns's Resolver answers them (common/dns-resolver.ts); tests point it at a local server. */
export interface MailDomainResolver {
  resolveMx(name: string): Promise<Array<{ exchange: string; priority: number }>>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
}

/** A lookup that did not end in time, so that a dead DNS server cannot stall an import. */
class LookupTimeout extends Error {
  readonly code = 'ETIMEOUT';
}

type Answer<T> = { ok: true; value: T } | { ok: false; code: string; message: string };

async function ask<T>(clock: Clock, timeoutMs: number, q: () => Promise<T>): Promise<Answer<T>> {
  let timer: { cancel(): void } | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = clock.setTimer(timeoutMs, () => reject(new LookupTimeout(`no answer within ${timeoutMs} ms`)));
  });
  try {
    return { ok: true, value: await Promise.race([q(), deadline]) };
  } catch (e) {
    return { ok: false, code: String((e as NodeJS.ErrnoException).code ?? 'ERROR'), message: (e as Error).message };
  } finally {
    timer?.cancel();
  }
}

// c-ares' codes: ENOTFOUND is NXDOMAIN, ENODATA is NOERROR with no record of that type.
const NO_SUCH_NAME = 'ENOTFOUND';
const NO_RECORDS = 'ENODATA';

/** Asks MX, then (no MX) A and AAAA; each question bounded by timeoutMs. */
export async function lookupMailDomain(resolver: MailDomainResolver, clock: Clock, asciiDomain: string, timeoutMs: number): Promise<MailDomainStatus> {
  const unknown = (a: { code: string; message: string }): MailDomainStatus => ({ kind: 'unknown', error: `${a.code}: ${a.message}` });
  const mx = await ask(clock, timeoutMs, () => resolver.resolveMx(asciiDomain));
  if (mx.ok && mx.value.length > 0) {
    // RFC 7505 §3: a null MX is a single record with an empty exchange ('.'); c-ares gives ''.
    const hosts = mx.value.filter((r) => r.exchange !== '' && r.exchange !== '.');
    return { kind: hosts.length === 0 ? 'null_mx' : 'mx' };
  }
  if (!mx.ok && mx.code === NO_SUCH_NAME) return { kind: 'nxdomain' };
  if (!mx.ok && mx.code !== NO_RECORDS) return unknown(mx);
  // No MX: the implicit MX rule (RFC 5321 §5.1) — the domain's own A or AAAA.
  const [a, aaaa] = await Promise.all([ask(clock, timeoutMs, () => resolver.resolve4(asciiDomain)), ask(clock, timeoutMs, () => resolver.resolve6(asciiDomain))]);
  if ((a.ok && a.value.length > 0) || (aaaa.ok && aaaa.value.length > 0)) return { kind: 'implicit_mx' };
  const failed = [a, aaaa].find((x): x is Extract<typeof x, { ok: false }> => !x.ok && x.code !== NO_RECORDS && x.code !== NO_SUCH_NAME);
  if (failed) return unknown(failed);
  return { kind: [a, aaaa].some((x) => !x.ok && x.code === NO_SUCH_NAME) ? 'nxdomain' : 'no_mail_host' };
}
