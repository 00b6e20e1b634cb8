/**
 * rspamd rule symbols in plain words, for reps who have never read a filter's log. Symbols not
 * listed fall back to rspamd's own description, then to the symbol itself. Only the rules that
 * outbound sales mail actually trips are worth a sentence of our own.
 */
const PLAIN: Record<string, string> = {
  SUBJ_ALL_CAPS: 'The subject is written in capital letters.',
  MIME_HTML_ONLY: 'The email has HTML but no plain-text version.',
  HTTP_TO_IP: 'A link points to a bare IP address instead of a domain.',
  HTTP_TO_HTTPS: 'A link shows one web address but goes to another (different scheme).',
  PHISHING: 'A link shows one domain but goes to another, as phishing mail does.',
  LEAKED_PASSWORD_SCAM: 'It mentions a bitcoin wallet with scam wording (extortion spam pattern).',
  R_SUSPICIOUS_URL: 'A link looks obfuscated or suspicious.',
  R_MIXED_CHARSET: 'Words mix alphabets (a trick used to dodge filters).',
  MIME_BAD_ATTACHMENT: 'An attachment type often used for malware.',
  R_PARTS_DIFFER: 'The text and HTML versions say different things.',
  MANY_INVISIBLE_PARTS: 'Much of the content is invisible to the reader.',
  HTML_SHORT_LINK_IMG_1: 'An image that is a link, with very little text.',
  HTML_SHORT_LINK_IMG_2: 'An image that is a link, with very little text.',
  HTML_SHORT_LINK_IMG_3: 'An image that is a link, with very little text.',
  R_EMPTY_IMAGE: 'The message is an image with no text.',
  CTYPE_MIXED_BOGUS: 'The MIME structure is unusual.',
  MISSING_DATE: 'The Date header is missing.',
  MISSING_MID: 'The Message-ID header is missing.',
  FORGED_SENDER: 'The envelope sender and the From address differ.',
  R_SPF_FAIL: "The sending server is not allowed by the domain's SPF record.",
  R_SPF_SOFTFAIL: "The sending server is only weakly allowed by the domain's SPF record.",
  R_SPF_ALLOW: "The sending server is allowed by the domain's SPF record.",
  R_DKIM_REJECT: 'The DKIM signature does not verify.',
  R_DKIM_ALLOW: 'The DKIM signature verifies.',
  DMARC_POLICY_REJECT: "The domain's DMARC policy says to reject mail like this.",
  DMARC_POLICY_QUARANTINE: "The domain's DMARC policy says to quarantine mail like this.",
  DMARC_POLICY_ALLOW: 'DMARC passes: the From domain is authenticated.',
  HFILTER_HOSTNAME_UNKNOWN: 'The sending server has no matching reverse DNS name.',
  FREEMAIL_FROM: 'Sent from a free webmail address.',
  URI_COUNT_ODD: 'An unusual number of links.',
  BAD_REP_POLICIES: 'Authentication results are poor.',
  ONCE_RECEIVED: 'The message passed through only one server.',
  RDNS_NONE: 'The sending server has no reverse DNS name.',
  HAS_LIST_UNSUB: 'The email has a List-Unsubscribe header.',
  SUBJ_EXCESS_QP: 'The subject is needlessly encoded.',
  R_BAD_CTE_7BIT: 'The text claims to be 7-bit but has 8-bit characters.',
  SUSPICIOUS_RECIPS: 'The recipient list looks generated.',
  MULTIPLE_UNIQUE_HEADERS: 'A header that must appear once appears several times.',
};

export function explainSymbol(symbol: string, description?: string | null): string {
  return PLAIN[symbol] ?? (description && description.trim() ? `${description.trim().replace(/\.?$/, '.')}` : `Rule ${symbol}.`);
}
