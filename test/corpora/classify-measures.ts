import { readFileSync } from 'node:fs';
import path from 'node:path';
import { classifyRaw, type ClassifiedFile } from '../../src/ingest/classify-file.ts';
import type { BounceClass } from '../../src/ingest/types.ts';
import { CORPORA, corporaHave } from './location.ts';

/**
 * Accuracy of `cadenza classify` (the same classifyRaw) on the shared labelled corpora, per set.
 * Labels come from the upstream projects' own tests (see the corpora's README).
 */

export { CORPORA };

export function corporaPresent(): boolean {
  return corporaHave('sisimai-labels.jsonl');
}

/** A measure: how many agreed out of how many were labelled. */
export interface Ratio {
  ok: number;
  n: number;
}

export interface SetFigures {
  set: string;
  files: number;
  /** label 'bounce' exactly when the upstream label says bounce, over every file of the set. */
  bounceDetection: Ratio;
  hardSoft: Ratio;
  /** Excludes sisimai's pseudo codes (X.0.9NN), which are not RFC 3463 codes. */
  status: Ratio;
  recipient: Ratio;
  reason: Ratio;
  /** Auto-reply / auto-generated samples labelled auto_reply or auto_generated. */
  autoDetected: Ratio;
  /** Auto samples labelled human_reply: must be 0. */
  autoAsHuman: number;
  /** Human replies labelled human_reply (or unsubscribe_request). */
  humanKept: Ratio;
  feedback: Ratio;
  deliveryReport: Ratio;
  /** Files the parser refused (quarantined): they get an `error` line, no label. */
  errors: number;
  misses: string[];
}

const ratio = (): Ratio => ({ ok: 0, n: 0 });
const count = (r: Ratio, ok: boolean) => {
  r.n++;
  if (ok) r.ok++;
};

export function pct(r: Ratio): string {
  return r.n === 0 ? '   n/a' : `${((100 * r.ok) / r.n).toFixed(1).padStart(5)}%`;
}

/** Our classes against sisimai's reasons: the sisimai reasons each class covers. */
const SISIMAI_REASONS: Record<BounceClass, string[]> = {
  // Sisimai files "user unknown" answered after DATA under filtered.
  user_unknown: ['userunknown', 'filtered'],
  mailbox_full: ['mailboxfull'],
  domain_not_found: ['hostunknown', 'notaccept', 'networkerror'],
  blocked: ['blocked', 'spamdetected', 'badreputation', 'requireptr', 'toomanyconn', 'speeding', 'rejected', 'virusdetected'],
  policy: ['policyviolation', 'authfailure', 'filtered', 'securityerror', 'contenterror', 'notcompliantrfc', 'failedstarttls', 'rejected', 'virusdetected', 'requireptr'],
  message_too_large: ['mesgtoobig', 'exceedlimit'],
  user_disabled: ['suspend', 'hasmoved', 'filtered', 'notaccept'],
  relay_denied: ['norelaying', 'rejected'],
  network: ['networkerror', 'expired', 'notaccept', 'systemfull', 'toomanyconn'],
  other: ['systemerror', 'onhold', 'undefined', 'mailererror', 'systemfull', 'syntaxerror', 'notaccept'],
};

/** Our classes against BounceParser's std_reason. */
const BOUNCEPARSER_REASONS: Record<BounceClass, string[]> = {
  user_unknown: ['user_unknown'],
  mailbox_full: ['over_quota'],
  domain_not_found: ['domain_error'],
  blocked: ['spam'],
  policy: ['spam'],
  message_too_large: ['message_too_large'],
  // BounceParser files deactivated and suspended mailboxes under user_unknown as often as not.
  user_disabled: ['user_disabled', 'user_unknown'],
  relay_denied: ['domain_error'],
  network: ['unknown'],
  other: ['unknown'],
};

type Row = Record<string, unknown> & { file: string };

function readLabels(name: string): Row[] {
  return readFileSync(path.join(CORPORA, name), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Row);
}

async function run(f: SetFigures, file: string): Promise<ClassifiedFile> {
  const out = await classifyRaw(file, readFileSync(path.join(CORPORA, file)));
  if (out.row.error) f.errors++;
  return out;
}

function empty(set: string): SetFigures {
  return { set, files: 0, bounceDetection: ratio(), hardSoft: ratio(), status: ratio(), recipient: ratio(), reason: ratio(), autoDetected: ratio(), autoAsHuman: 0, humanKept: ratio(), feedback: ratio(), deliveryReport: ratio(), errors: 0, misses: [] };
}

const isAuto = (label: string | undefined) => label === 'auto_reply' || label === 'auto_generated';

export async function measureSisimai(): Promise<SetFigures> {
  const f = empty('sisimai');
  for (const r of readLabels('sisimai-labels.jsonl')) {
    const { row, classification: c } = await run(f, r.file);
    f.files++;
    const kind = r.kind as string;
    const miss = (what: string) => f.misses.push(`${r.file}: ${what} (got ${JSON.stringify(row)})`);
    const isBounce = row.label === 'bounce';
    count(f.bounceDetection, isBounce === (kind === 'bounce'));
    if (isBounce !== (kind === 'bounce')) miss(`kind ${kind}`);
    if (kind === 'autoreply') {
      count(f.autoDetected, isAuto(row.label));
      if (row.label === 'human_reply') f.autoAsHuman++;
      if (!isAuto(row.label)) miss('not auto');
    }
    if (kind === 'feedback') {
      const want = (r.recipients as Row[])[0]!.feedback_type;
      count(f.feedback, row.label === 'feedback' && c?.feedback?.type === want);
      if (row.label !== 'feedback' || c?.feedback?.type !== want) miss(`feedback ${String(want)}`);
    }
    if (kind === 'delivered') count(f.deliveryReport, row.label === 'delivery_report');
    if (kind !== 'bounce') continue;
    const first = (r.recipients as Row[])[0]!;
    if (r.hard_soft === 'hard' || r.hard_soft === 'soft') {
      count(f.hardSoft, row.hard_soft === r.hard_soft);
      if (row.hard_soft !== r.hard_soft) miss(`hard_soft ${String(r.hard_soft)} (${String(r.status)} ${String(r.reason)})`);
    }
    if (r.status && !first.status_is_sisimai_pseudo) {
      count(f.status, row.status === r.status);
      if (row.status !== r.status) miss(`status ${String(r.status)} (${String(r.reason)})`);
    }
    if (typeof r.recipient === 'string') count(f.recipient, row.recipient === r.recipient);
    if (typeof r.reason === 'string' && c?.bounce) count(f.reason, SISIMAI_REASONS[c.bounce.bounceClass].includes(r.reason));
  }
  return f;
}

export async function measureBounceParser(): Promise<SetFigures> {
  const f = empty('bounceparser');
  for (const r of readLabels('bounceparser-labels.jsonl')) {
    const { row, classification: c } = await run(f, r.file);
    f.files++;
    const miss = (what: string) => f.misses.push(`${r.file}: ${what} (got ${JSON.stringify(row)})`);
    const want = r.kind === 'bounce';
    count(f.bounceDetection, (row.label === 'bounce') === want);
    if ((row.label === 'bounce') !== want) miss(`kind ${String(r.kind)}`);
    if (!want) {
      if (row.label === 'human_reply') miss('not_bounce sample taken for a human reply');
      continue;
    }
    if (r.hard_soft === 'hard' || r.hard_soft === 'soft') {
      count(f.hardSoft, row.hard_soft === r.hard_soft);
      if (row.hard_soft !== r.hard_soft) miss(`hard_soft ${String(r.hard_soft)}`);
    }
    if (typeof r.status === 'string') {
      count(f.status, row.status === r.status);
      if (row.status !== r.status) miss(`status ${r.status}`);
    }
    if (typeof r.recipient === 'string') {
      count(f.recipient, row.recipient === r.recipient);
      if (row.recipient !== r.recipient) miss(`recipient ${r.recipient}`);
    }
    if (typeof r.reason === 'string' && c?.bounce) {
      const ok = BOUNCEPARSER_REASONS[c.bounce.bounceClass].includes(r.reason);
      count(f.reason, ok);
      if (!ok) miss(`reason ${r.reason}`);
    }
  }
  return f;
}

export async function measureAutoreplyExt(): Promise<SetFigures> {
  const f = empty('autoreply-ext');
  for (const r of readLabels('autoreply-ext-labels.jsonl')) {
    const { row } = await run(f, r.file);
    f.files++;
    const miss = (what: string) => f.misses.push(`${r.file}: ${what} (got ${JSON.stringify(row)})`);
    const label = r.label as string;
    const isBounce = row.label === 'bounce';
    count(f.bounceDetection, isBounce === (label === 'bounce'));
    if (isBounce !== (label === 'bounce')) miss(`label ${label}`);
    if (label === 'auto_reply' || label === 'auto_generated') {
      count(f.autoDetected, isAuto(row.label));
      if (row.label === 'human_reply') f.autoAsHuman++;
      if (!isAuto(row.label)) miss(`label ${label}`);
    }
    if (label === 'human_reply') {
      const ok = row.label === 'human_reply' || row.label === 'unsubscribe_request';
      count(f.humanKept, ok);
      if (!ok) miss('label human_reply');
    }
  }
  return f;
}

export function formatFigures(sets: SetFigures[]): string {
  const head = ['set', 'files', 'errors', 'bounce', 'hard/soft', 'status*', 'recipient', 'reason', 'auto', 'auto→human', 'human kept', 'feedback', 'delivered'];
  const cell = (r: Ratio) => `${pct(r)} (${r.ok}/${r.n})`;
  const rows = sets.map((s) => [s.set, String(s.files), String(s.errors), cell(s.bounceDetection), cell(s.hardSoft), cell(s.status), cell(s.recipient), cell(s.reason), cell(s.autoDetected), String(s.autoAsHuman), cell(s.humanKept), cell(s.feedback), cell(s.deliveryReport)]);
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
  lines.push('', 'errors: files the parser refused (quarantined); they count as misses in every measure that labels them.');
  lines.push('* status: exact match of the RFC 3463 code; sisimai rows whose label is one of its pseudo codes (X.0.9NN, status_is_sisimai_pseudo) are left out of this measure.');
  return lines.join('\n');
}
