/**
 * RFC 3464 delivery status notifications: the message/delivery-status body is one block of
 * per-message fields, then one block per recipient, blocks separated by blank lines, fields
 * folded like mail headers. Many MTAs (and forwarders that flatten the report) also put the same
 * fields in the text body, so the reader accepts any text and keeps only blocks that name a
 * recipient.
 */

export interface DsnRecipient {
  /**
   * Final-Recipient (else Original-Recipient), lower-cased, without the address type; null when
   * the field holds no address (Exim writes a file path for a local delivery).
   */
  recipient: string | null;
  originalRecipient: string | null;
  /** 'failed' | 'delayed' | 'delivered' | 'relayed' | 'expanded' | '' */
  action: string;
  status: string | null;
  /** Diagnostic-Code without its type ('smtp; '). */
  diagnostic: string | null;
  remoteMta: string | null;
}

export interface Dsn {
  reportingMta: string | null;
  recipients: DsnRecipient[];
}

/** The fields RFC 3464 (and the X- fields MTAs add) defines for a report's blocks. */
const DSN_FIELDS = new Set([
  'reporting-mta', 'dsn-gateway', 'received-from-mta', 'arrival-date', 'original-envelope-id', 'final-recipient', 'original-recipient',
  'x-actual-recipient', 'action', 'status', 'remote-mta', 'diagnostic-code', 'last-attempt-date', 'final-log-id', 'will-retry-until',
  'x-postfix-queue-id', 'x-postfix-sender', 'x-display-name', 'x-supplementary-info',
]);

/** Field name → unfolded value, for each block of `text`; names lower-cased. */
function fieldBlocks(text: string): Array<Map<string, string>> {
  const blocks: Array<Map<string, string>> = [];
  let block = new Map<string, string>();
  let last: string | null = null;
  for (const raw of text.replace(/\r/g, '').split('\n')) {
    // trimEnd, not /\s+$/: that regex is quadratic on a long run of spaces followed by a letter.
    const line = raw.trimEnd();
    if (line === '') {
      if (block.size) blocks.push(block);
      block = new Map();
      last = null;
      continue;
    }
    const field = /^([A-Za-z][A-Za-z0-9-]*)\s*:\s?(.*)$/.exec(line);
    // Some gateways indent the whole report; an indented line that names a DSN field is a field,
    // not the continuation of the one above.
    const indented = field ? null : /^[ \t]{1,16}([A-Za-z][A-Za-z0-9-]{0,40})[ \t]*:[ \t]?(.*)$/.exec(line);
    if (indented && DSN_FIELDS.has(indented[1]!.toLowerCase())) {
      last = indented[1]!.toLowerCase();
      if (!block.has(last)) block.set(last, indented[2]!.trim());
      else last = null;
    } else if (field && !/^\s/.test(line)) {
      last = field[1]!.toLowerCase();
      // The first occurrence wins: a second Status in one block is noise from a broken MTA.
      if (!block.has(last)) block.set(last, field[2]!.trim());
      else last = null;
    } else if (last && /^\s/.test(line)) {
      block.set(last, `${block.get(last)} ${line.trim()}`);
    } else {
      last = null;
    }
  }
  if (block.size) blocks.push(block);
  return blocks;
}

/** 'rfc822; <Foo@Example.com>' → 'foo@example.com'; null when no address. */
export function typedAddress(value: string | undefined): string | null {
  if (!value) return null;
  value = value.slice(0, 1000);
  const v = value.includes(';') ? value.slice(value.indexOf(';') + 1) : value;
  const m = /<?([^\s<>;"]+@[^\s<>;"]+?)>?(?:[\s;,]|$)/.exec(v.trim());
  return m ? m[1]!.toLowerCase().replace(/\.$/, '') : null;
}

function stripType(value: string | undefined): string | null {
  if (!value) return null;
  const v = /^[a-z0-9-]+\s*;\s*/i.test(value) ? value.replace(/^[a-z0-9-]+\s*;\s*/i, '') : value;
  return v.trim() || null;
}

const STATUS_VALUE = /(?<![\d.])([245]\.\d{1,3}\.\d{1,3})(?![\d])/;

const hasOutcome = (b: Map<string, string>) => b.has('action') || b.has('status') || b.has('diagnostic-code');
const namesRecipient = (b: Map<string, string>) => b.has('final-recipient') || b.has('original-recipient') || b.has('x-actual-recipient');

/**
 * A recipient block cut in two by a stray blank line ("Final-Recipient: …", blank, "Action:
 * failed", "Status: 5.1.1"), as flattening forwarders and some gateways write it: the block that
 * starts with the outcome and names no recipient belongs to the recipient block just above it.
 */
function mergeSplitBlocks(blocks: Array<Map<string, string>>): Array<Map<string, string>> {
  const out: Array<Map<string, string>> = [];
  for (const b of blocks) {
    const prev = out[out.length - 1];
    if (prev && namesRecipient(prev) && !hasOutcome(prev) && hasOutcome(b) && !namesRecipient(b)) {
      for (const [k, v] of b) if (!prev.has(k)) prev.set(k, v);
      continue;
    }
    out.push(b);
  }
  return out;
}

/** The DSN fields in `text`; null when no block names a recipient or an outcome. */
export function parseDsn(text: string): Dsn | null {
  const blocks = fieldBlocks(text);
  let reportingMta: string | null = null;
  const recipients: DsnRecipient[] = [];
  for (const b of mergeSplitBlocks(blocks)) {
    if (b.has('reporting-mta') && !b.has('final-recipient')) reportingMta = stripType(b.get('reporting-mta'));
    const finalRcpt = typedAddress(b.get('final-recipient')) ?? typedAddress(b.get('x-actual-recipient'));
    const original = typedAddress(b.get('original-recipient'));
    const recipient = finalRcpt ?? original;
    if (!hasOutcome(b)) continue;
    // A block with an Action or Status but no recipient field still reports one failure (some
    // MTAs fold the per-recipient fields into the per-message block): the address is then read
    // from the notice's prose.
    if (!recipient && !b.has('final-recipient') && !b.has('action')) continue;
    // The code may follow other words ("Status: smtp; 5.1.1 (unknown user)"), never precede them.
    const status = STATUS_VALUE.exec((b.get('status') ?? '').slice(0, 200))?.[1] ?? null;
    recipients.push({
      recipient,
      originalRecipient: original,
      action: (b.get('action') ?? '').toLowerCase().split(/[\s(]/)[0] ?? '',
      status,
      diagnostic: stripType(b.get('diagnostic-code')),
      remoteMta: stripType(b.get('remote-mta')),
    });
  }
  return recipients.length ? { reportingMta, recipients } : null;
}
