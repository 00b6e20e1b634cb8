/**
 * What list hygiene can say about an address: a verdict and the reasons for it, each reason with a
 * stable code (stored on the lead, counted on the import report, filtered in the API) and the
 * verdict it forces. The worst reason decides: one invalid reason makes the address invalid.
 */
export const VERDICTS = ['valid', 'risky', 'invalid'] as const;
export type Verdict = (typeof VERDICTS)[number];

export const HYGIENE_REASONS = {
  // invalid: mail to it cannot arrive, or must not be sent.
  syntax: { verdict: 'invalid', what: 'not a valid address (RFC 5321/5322)' },
  no_such_domain: { verdict: 'invalid', what: 'the domain does not exist (NXDOMAIN)' },
  null_mx: { verdict: 'invalid', what: 'the domain publishes a null MX: it accepts no mail (RFC 7505)' },
  no_mail_host: { verdict: 'invalid', what: 'the domain has no MX and no A/AAAA record: nothing receives its mail' },
  disposable: { verdict: 'invalid', what: 'a disposable (throwaway) mail domain' },
  hard_bounce: { verdict: 'invalid', what: 'the address hard-bounced before in this workspace' },
  complaint: { verdict: 'invalid', what: 'the address complained (marked spam) before in this workspace' },
  // risky: may be fine, a person decides (the review queue).
  role_account: { verdict: 'risky', what: 'a role account (info@, sales@…): read by many or by none, complaints likelier' },
  domain_unchecked: { verdict: 'risky', what: 'the domain could not be checked (DNS timeout or server failure)' },
} as const satisfies Record<string, { verdict: Exclude<Verdict, 'valid'>; what: string }>;

export type HygieneReasonCode = keyof typeof HYGIENE_REASONS;

export interface HygieneReason {
  code: HygieneReasonCode;
  /** Says why, with the detail of this address (the DNS error, the syntax problem). */
  message: string;
}

export interface HygieneResult {
  verdict: Verdict;
  reasons: HygieneReason[];
}
