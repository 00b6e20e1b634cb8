import { domainToASCII } from 'node:url';
import { checkEmail } from '../email.ts';
import { isDisposableDomain } from './disposable.ts';
import type { MailDomainStatus } from './mail-domain.ts';
import { HYGIENE_REASONS, type HygieneReason, type HygieneReasonCode, type HygieneResult } from './reasons.ts';
import { isRoleAccount } from './role-accounts.ts';

/**
 * The verdict on one address, pure: what the syntax, the domain's DNS status, the disposable list,
 * the role list and the workspace's history say, each as a reason; the worst reason decides.
 * The DNS answer comes in (domain-cache.ts asks); nothing here does I/O.
 */

export type ParsedAddress =
  | { ok: true; norm: string; local: string; /** IDNA ASCII form, lower case: what DNS is asked. */ asciiDomain: string }
  | { ok: false; message: string };

/** Syntax (email.ts: RFC 5321/5322, international domains) and the parts the other checks need. Never throws. */
export function parseAddress(raw: string): ParsedAddress {
  const c = checkEmail(raw);
  if (!c.ok) return { ok: false, message: c.message };
  const at = c.email.lastIndexOf('@');
  // checkEmail accepted the domain, so its IDNA form exists.
  return { ok: true, norm: c.norm, local: c.email.slice(0, at), asciiDomain: domainToASCII(c.email.slice(at + 1)) };
}

/** What the workspace knows of the address: its suppression's reason, when it is a bounce or a complaint. */
export type AddressHistory = 'hard_bounce' | 'complaint' | null;

const reason = (code: HygieneReasonCode, detail?: string): HygieneReason => ({
  code,
  message: detail ? `${HYGIENE_REASONS[code].what}: ${detail}` : HYGIENE_REASONS[code].what,
});

const DOMAIN_REASON: Partial<Record<MailDomainStatus['kind'], HygieneReasonCode>> = {
  nxdomain: 'no_such_domain',
  null_mx: 'null_mx',
  no_mail_host: 'no_mail_host',
  unknown: 'domain_unchecked',
};

/**
 * The verdict. `domain` is the DNS status of the address's domain, or null when it was not asked
 * (a disposable domain need not be). Reasons are listed invalid first.
 */
export function decideVerdict(a: ParsedAddress, domain: MailDomainStatus | null, history: AddressHistory): HygieneResult {
  if (!a.ok) return { verdict: 'invalid', reasons: [reason('syntax', a.message)] };
  const reasons: HygieneReason[] = [];
  if (history) reasons.push(reason(history));
  if (isDisposableDomain(a.asciiDomain)) reasons.push(reason('disposable', a.asciiDomain));
  const code = domain ? DOMAIN_REASON[domain.kind] : undefined;
  if (code) reasons.push(reason(code, domain?.kind === 'unknown' ? domain.error : a.asciiDomain));
  if (isRoleAccount(a.local)) reasons.push(reason('role_account', `${a.local}@`));
  reasons.sort((x, y) => rank(x.code) - rank(y.code));
  const verdict = reasons.length === 0 ? 'valid' : HYGIENE_REASONS[reasons[0]!.code].verdict;
  return { verdict, reasons };
}

const rank = (c: HygieneReasonCode) => (HYGIENE_REASONS[c].verdict === 'invalid' ? 0 : 1);

/** Whether the domain must be asked: not when the address is already invalid without it. */
export function needsDns(a: ParsedAddress, history: AddressHistory): a is Extract<ParsedAddress, { ok: true }> {
  return a.ok && history === null && !isDisposableDomain(a.asciiDomain);
}
