import mailchecker from 'mailchecker';

/**
 * Disposable (throwaway) mail domains, from the mailchecker package: its list ships inside the
 * package (pinned in package.json), so it is updated by updating the package and nothing is
 * downloaded at run time. Only its list is used, not its address regex: our syntax check is
 * email.ts, and a regex of that size on untrusted text is a time risk.
 */
const LIST: ReadonlySet<string> = mailchecker.blacklist();

/**
 * Whether the domain (ASCII, lower case) or a parent of it is on the list: the list names
 * 'mailinator.com', so 'x.mailinator.com' is disposable too. At most one lookup per label.
 */
export function isDisposableDomain(asciiDomain: string): boolean {
  let d = asciiDomain.toLowerCase();
  for (;;) {
    if (LIST.has(d)) return true;
    const dot = d.indexOf('.');
    if (dot === -1) return false;
    d = d.slice(dot + 1);
  }
}

/** How many domains the list holds (the docs and the bench say it). */
export function disposableListSize(): number {
  return LIST.size;
}
