/**
 * Email address syntax and normalisation for leads.
 *
 * Accepted: a dot-atom local part (RFC 5322 §3.2.3 atext, no leading, trailing or doubled dot) and
 * a host name of at least two labels (letters, digits, hyphens; RFC 1035/1123), internationalised
 * domains included (checked in their IDNA ASCII form), within RFC 5321's lengths.
 *
 * Refused although RFC 5322 allows them, because no prospect list needs them and most mailbox
 * providers refuse to send to them: quoted local parts ("john doe"@x.com), comments, address
 * literals (user@[192.0.2.1]), single-label domains (user@localhost), all-numeric top-level
 * labels, and non-ASCII local parts (RFC 6531 SMTPUTF8, which a rep's mailbox may not support).
 *
 * Normal form: surrounding blanks removed, the domain lowercased (an IDN in its Unicode form, however
 * it was written), the local part as written (RFC 5321 §2.4: it may be case-sensitive, so we send to
 * it as given). email_norm is the whole address lowercased: the key for duplicates and suppression,
 * because in practice no mail host distinguishes case. Sub-addresses (+tag) and Gmail dots are kept: they may be different
 * people's aliases, and suppressing more than the address asked for is not ours to decide.
 */
import { domainToASCII, domainToUnicode } from 'node:url';
import { MAX_DOMAIN_LABEL_OCTETS, MAX_DOMAIN_OCTETS, MAX_EMAIL_LOCAL_OCTETS, MAX_EMAIL_OCTETS } from './limits.ts';

export type EmailCheck = { ok: true; email: string; norm: string } | { ok: false; message: string };

const ATEXT = "A-Za-z0-9!#$%&'*+/=?^_`{|}~-";
const DOT_ATOM = new RegExp(`^[${ATEXT}]+(?:\\.[${ATEXT}]+)*$`);
const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
// A top-level label is alphabetic (or an IDNA A-label); an all-numeric one would make '1.2.3.4' a domain.
const TOP_LABEL = /^(?:[a-z]{2,}|xn--[a-z0-9-]+)$/;
// Invisible characters that survive copy and paste from web pages and String#trim leaves alone.
const EDGE_INVISIBLES = /^[\s\u200b-\u200d\u2060\ufeff]+|[\s\u200b-\u200d\u2060\ufeff]+$/g;
const NON_ASCII = /[^\x00-\x7f]/;

/** Checks and normalises one address. Never throws, whatever the string. */
export function checkEmail(raw: string): EmailCheck {
  const s = raw.replace(EDGE_INVISIBLES, '');
  if (s === '') return { ok: false, message: 'the email is empty' };
  // Far past any valid length: answer before doing more work on it.
  if (s.length > MAX_EMAIL_OCTETS * 4) return { ok: false, message: `longer than ${MAX_EMAIL_OCTETS} characters` };
  if (/[\s,;]/.test(s) && s.indexOf('@') !== s.lastIndexOf('@')) {
    return { ok: false, message: 'holds several addresses; put one address per row' };
  }
  if (/\s/.test(s)) return { ok: false, message: 'contains spaces' };
  if (s.startsWith('mailto:') || s.includes('<') || s.includes('>')) {
    return { ok: false, message: "must be a bare address like jane@example.com, without 'mailto:', a name or angle brackets" };
  }
  const at = s.lastIndexOf('@');
  if (at === -1) return { ok: false, message: "has no '@'" };
  const local = s.slice(0, at);
  const domain = s.slice(at + 1);
  if (local === '') return { ok: false, message: "has nothing before the '@'" };
  if (domain === '') return { ok: false, message: "has nothing after the '@'" };
  if (local.includes('@')) return { ok: false, message: "has more than one '@'" };

  if (local.startsWith('"')) return { ok: false, message: 'quoted local parts ("…"@domain) are not accepted' };
  if (NON_ASCII.test(local)) return { ok: false, message: "non-ASCII characters before the '@' (SMTPUTF8 addresses) are not accepted" };
  if (!DOT_ATOM.test(local)) {
    return /^\.|\.$|\.\./.test(local)
      ? { ok: false, message: "a dot cannot start or end the part before the '@' or follow another dot" }
      : { ok: false, message: "has a character not allowed before the '@'" };
  }
  if (local.length > MAX_EMAIL_LOCAL_OCTETS) {
    return { ok: false, message: `the part before the '@' is longer than ${MAX_EMAIL_LOCAL_OCTETS} characters (RFC 5321)` };
  }

  if (domain.startsWith('[')) return { ok: false, message: 'address literals (user@[192.0.2.1]) are not accepted' };
  const checked = checkDomain(domain);
  if (typeof checked === 'string') return { ok: false, message: checked };
  if (local.length + 1 + checked.ascii.length > MAX_EMAIL_OCTETS) {
    return { ok: false, message: `longer than ${MAX_EMAIL_OCTETS} characters (RFC 5321)` };
  }
  const email = `${local}@${checked.display}`;
  return { ok: true, email, norm: email.toLowerCase() };
}

/** The email_norm of an address, or null when it is not a valid address. */
export function normalizeEmail(raw: string): string | null {
  const r = checkEmail(raw);
  return r.ok ? r.norm : null;
}

function checkDomain(domain: string): { ascii: string; display: string } | string {
  let ascii: string;
  let display: string;
  if (NON_ASCII.test(domain)) {
    // UTS #46 mapping and Punycode; '' when the name cannot be an IDN.
    ascii = domainToASCII(domain);
    if (ascii === '') return 'the domain is not a valid internationalised domain name';
    display = domainToUnicode(ascii);
  } else {
    ascii = domain.toLowerCase();
    display = ascii;
    // An A-label ('xn--bcher-kva.de') is shown, and keyed, as its Unicode form ('bücher.de'), so the
    // two spellings of one domain give one email_norm and one suppression.
    if (ascii.startsWith('xn--') || ascii.includes('.xn--')) {
      display = domainToUnicode(ascii);
      if (display === '' || domainToASCII(display) !== ascii) return 'the domain is not a valid internationalised domain name';
    }
  }
  if (ascii.endsWith('.')) return 'the domain ends with a dot';
  if (ascii.length > MAX_DOMAIN_OCTETS) return `the domain is longer than ${MAX_DOMAIN_OCTETS} characters`;
  const labels = ascii.split('.');
  if (labels.length < 2) return 'the domain has no dot (like example.com)';
  for (const label of labels) {
    if (label === '') return 'the domain has an empty label (two dots in a row, or a leading dot)';
    if (label.length > MAX_DOMAIN_LABEL_OCTETS) return `a domain label is longer than ${MAX_DOMAIN_LABEL_OCTETS} characters`;
    if (!LABEL.test(label)) return `the domain label '${label}' may hold only letters, digits and inner hyphens`;
  }
  if (!TOP_LABEL.test(labels[labels.length - 1]!)) return 'the domain does not end in a valid top-level domain';
  return { ascii, display };
}
