import type { Command } from 'commander';
import { cadenzaError } from '../../common/errors.ts';
import { normalizeEmail } from '../../leads/email.ts';
import { resolveWorkspace } from '../../workspace/workspaces.ts';
import { blockedOf, listEnrollmentEvents, listEnrollments, listEnrollmentSends, type EnrollmentRow } from '../../sequence/enrollment-query.ts';
import { sequenceIdByKey } from '../../sequence/sql/sequences.ts';
import type { Store } from '../../store/store.ts';
import { deps, globals, output, table, withStore } from '../context.ts';

const STATES = ['active', 'paused', 'replied', 'bounced', 'unsubscribed', 'finished', 'stopped', 'failed', 'moved'] as const;
type State = (typeof STATES)[number];

interface ListOpts {
  workspace?: string;
  sequence?: string;
  lead?: string;
  state?: string;
  limit: string;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

function view(r: EnrollmentRow) {
  const blocked = blockedOf(r, deps.clock.now());
  return {
    id: r.id,
    lead: r.lead_email,
    sequence: r.sequence_key,
    state: r.state,
    reason: r.state_reason,
    waitingFor: r.waiting_for,
    nextStep: r.next_step_key,
    dueAt: iso(r.due_at),
    timeZone: r.time_zone,
    mailboxId: r.mailbox_id,
    movedTo: r.moved_to,
    createdAt: r.created_at.toISOString(),
    blocked: blocked ? `${blocked.reason} ${blocked.action}` : null,
  };
}

async function sequenceId(store: Store, workspaceId: string, key: string): Promise<string> {
  const id = await sequenceIdByKey(store.db, workspaceId, key);
  if (!id) throw cadenzaError('NOT_FOUND', `sequence '${key}' not found (see \`cadenza sequence list\`)`);
  return id;
}

function parseLimit(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw cadenzaError('INVALID_INPUT', `--limit must be a whole number from 1 to 10000, got '${text}'`, { field: 'limit' });
  return n;
}

function parseState(text: string | undefined): State | undefined {
  if (text === undefined) return undefined;
  if (!(STATES as readonly string[]).includes(text)) throw cadenzaError('INVALID_INPUT', `--state must be one of ${STATES.join(', ')}; got '${text}'`, { field: 'state' });
  return text as State;
}

function leadNorm(text: string): string {
  const norm = normalizeEmail(text);
  if (norm === null) throw cadenzaError('INVALID_INPUT', `'${text}' is not a valid email address`, { field: 'lead' });
  return norm;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function register(program: Command): void {
  const en = program.command('enrollments');

  en.command('list')
    .description('enrollments, newest first')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--sequence <key>', 'only this sequence')
    .option('--lead <email>', "only this lead's enrollments")
    .option('--state <state>', `only this state (${STATES.join(', ')})`)
    .option('--limit <n>', 'at most this many', '50')
    .action(async (o: ListOpts, cmd: Command) => {
      const g = globals(cmd);
      const limit = parseLimit(o.limit);
      const state = parseState(o.state);
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const filter = { sequenceId: o.sequence ? await sequenceId(store, w.id, o.sequence) : undefined, leadEmailNorm: o.lead ? leadNorm(o.lead) : undefined, state };
        const rows = (await listEnrollments(store.db, w.id, filter, limit + 1)).map(view);
        const more = rows.length > limit;
        const items = rows.slice(0, limit);
        output(g, { items, more }, () =>
          [
            table(items.map((e) => ({ id: e.id, lead: e.lead, sequence: e.sequence, state: e.state, next: e.nextStep ?? '', due: e.dueAt ?? '', reason: e.reason ?? '' }))),
            ...(more ? [`(more than ${limit}: narrow with --sequence, --lead or --state, or raise --limit)`] : []),
          ].join('\n'),
        );
      });
    });

  en.command('show <id|lead-email>')
    .description('one enrollment: its state, each step it sent or planned, and its journal')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--sequence <key>', 'with a lead address: the enrollment in this sequence (needed when the lead is in several)')
    .option('--events <n>', 'how many journal entries to show (newest)', '20')
    .action(async (ref: string, o: { workspace?: string; sequence?: string; events: string }, cmd: Command) => {
      const g = globals(cmd);
      const eventLimit = parseLimit(o.events);
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        let which: { id: string } | { leadEmailNorm: string };
        if (UUID.test(ref)) which = { id: ref.toLowerCase() };
        else if (ref.includes('@')) which = { leadEmailNorm: leadNorm(ref) };
        else throw cadenzaError('INVALID_INPUT', `'${ref}' is neither an enrollment id nor a lead's address`);
        const found = await listEnrollments(store.db, w.id, { ...which, sequenceId: o.sequence ? await sequenceId(store, w.id, o.sequence) : undefined }, 21);
        if (found.length === 0) throw cadenzaError('NOT_FOUND', `no enrollment '${ref}' in workspace ${w.name}`);
        if (found.length > 1) {
          const list = found.slice(0, 20).map((r) => `${r.sequence_key} (${r.id}, ${r.state})`).join(', ');
          throw cadenzaError('CONFLICT', `${ref} is enrolled in several sequences; name one with --sequence <key> or give the id: ${list}`);
        }
        const e = view(found[0]!);
        const sends = (await listEnrollmentSends(store.db, w.id, e.id, 'step')).map((s) => ({
          step: s.step_key,
          state: s.state,
          messageId: s.message_id,
          mailbox: s.mailbox_email,
          attempts: s.attempts,
          dueAt: iso(s.due_at),
          sendAt: iso(s.send_at),
          updatedAt: iso(s.updated_at),
          lastError: s.last_error,
        }));
        const events = (await listEnrollmentEvents(store.db, w.id, e.id, eventLimit)).map((x) => ({ at: x.at.toISOString(), type: x.type, payload: x.payload }));
        output(g, { enrollment: e, sends, events }, () =>
          [
            `${e.lead} in ${e.sequence}: ${e.state}${e.reason ? ` (${e.reason})` : ''}`,
            `  id ${e.id}, zone ${e.timeZone}, enrolled ${e.createdAt}`,
            e.nextStep ? `  next: ${e.nextStep}${e.waitingFor ? `, waiting for ${e.waitingFor}` : ''}${e.dueAt ? `, due ${e.dueAt}` : ''}` : '  next: nothing',
            ...(e.movedTo ? [`  moved to enrollment ${e.movedTo}`] : []),
            '',
            'steps',
            table(sends.map((s) => ({ step: s.step, state: s.state, at: s.state === 'queued' ? (s.sendAt ?? s.dueAt ?? '') : (s.updatedAt ?? ''), mailbox: s.mailbox ?? '', 'message-id': s.messageId ?? '', note: s.lastError ?? '' }))),
            '',
            'journal',
            table(events.map((x) => ({ at: x.at, event: x.type, detail: JSON.stringify(x.payload).slice(0, 100) }))),
          ].join('\n'),
        );
      });
    });
}
