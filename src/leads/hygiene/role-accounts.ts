/**
 * Role accounts: local parts that name a function, not a person. Mail to them is read by a team,
 * a ticket system or nobody; they complain more and reply less, and RFC 2142 reserves several of
 * them (postmaster, abuse, hostmaster) for operations. Kept short and maintained here: a longer
 * list starts catching people (a 'john' at a company is not a role).
 */
const ROLES = new Set([
  // RFC 2142 mailbox names
  'abuse', 'hostmaster', 'postmaster', 'webmaster', 'security', 'noc', 'usenet', 'news', 'uucp', 'www', 'ftp',
  // no one reads them
  'noreply', 'no-reply', 'donotreply', 'do-not-reply', 'bounce', 'bounces', 'mailer-daemon', 'nobody',
  // shared team inboxes
  'admin', 'administrator', 'billing', 'careers', 'contact', 'enquiries', 'hello', 'help', 'hr', 'info',
  'inquiries', 'jobs', 'legal', 'marketing', 'media', 'office', 'press', 'privacy', 'sales', 'support',
  'team', 'all', 'everyone', 'staff', 'accounts', 'accounting', 'finance', 'feedback', 'service',
  'compliance', 'dmarc', 'list', 'root', 'sysadmin', 'it', 'spam', 'unsubscribe',
]);

/** Whether the local part is a role account; '+tag' and case are ignored (sales+eu@ is sales@). */
export function isRoleAccount(local: string): boolean {
  const base = local.toLowerCase().split('+', 1)[0]!;
  return ROLES.has(base);
}
