/**
 * Whether a mailbox's connection was proved (issue 11: a mailbox with an unreachable host was
 * saved as healthy). Adding a mailbox tests it; the API and the CLI can skip the test, and the
 * mailbox is then "not verified" (mailbox.settings.verification) until a test passes.
 * Mailboxes without the record (OAuth grants, which prove themselves at the provider, and those
 * from before issue 11) count as verified.
 */
export interface Verification {
  state: 'verified' | 'skipped' | 'failed';
  at: string;
  /** The last test's failure, in the test's own words. */
  problem?: string;
}

export function verificationOf(settings: unknown): Verification | null {
  const v = (settings as { verification?: Verification } | null)?.verification;
  return v && typeof v === 'object' && typeof v.state === 'string' ? v : null;
}

export function isVerified(settings: unknown): boolean {
  const v = verificationOf(settings);
  return v === null || v.state === 'verified';
}

