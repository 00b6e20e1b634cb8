/**
 * From the store's mailbox and workspace rows (plain values, already read) to what pacing needs.
 * Every field is checked: a bad ramp or pacing setting is an INVALID_INPUT naming the mailbox, so
 * the dispatcher can report it and go on with the other mailboxes.
 */
import { cadenzaError } from '../../common/errors.ts';
import { resolveZone } from '../../calendar/index.ts';
import type { MailboxPacing } from './bucket.ts';
import { capsOf, resolveCaps, type CapOverrides, type MailboxCaps } from './pacing-patch.ts';
import { compilePacing, resolvePacingSettings } from './settings.ts';

export interface MailboxFields {
  id: string;
  /** null: inherited from the workspace (settings.mailboxCaps), see pacing-patch.ts. */
  daily_cap: number | null;
  hourly_cap: number | null;
  ramp: unknown;
  ramp_started_at: Date | null;
  /** When the mailbox was added: the ramp's start when ramp_started_at is not set. */
  created_at?: Date | null;
  time_zone: string | null;
  settings: unknown;
  health: string;
  health_reason: string | null;
  /** warmup_member.cap_factor (placement health): the daily cap is multiplied by it; null or absent: 1. */
  cap_factor?: number | null;
  cap_reason?: string | null;
}

export interface WorkspaceFields {
  time_zone: string | null;
  settings: unknown;
}

/** A mailbox with its workspace's pacing columns, as the day planner and rotation read them in one query. */
export interface PacedMailboxRow {
  id: string;
  workspace_id: string;
  daily_cap: number;
  hourly_cap: number | null;
  ramp: unknown;
  ramp_started_at: Date | null;
  created_at: Date;
  time_zone: string | null;
  settings: unknown;
  health: string;
  health_reason: string | null;
  ws_zone: string | null;
  ws_settings: unknown;
  ws_cap: number | null;
  cap_factor: number | null;
  cap_reason: string | null;
}

function pacingOf(settings: unknown): unknown {
  return settings !== null && typeof settings === 'object' ? (settings as { pacing?: unknown }).pacing : undefined;
}

/** A workspace's defaults for its mailboxes' caps and ramp (`settings.mailboxCaps`). */
export function workspaceCaps(settings: unknown, where = 'workspace'): CapOverrides {
  const raw = settings !== null && typeof settings === 'object' ? (settings as { mailboxCaps?: unknown }).mailboxCaps : undefined;
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object') throw cadenzaError('INVALID_INPUT', `${where}: settings.mailboxCaps must be an object`, {});
  return capsOf(raw as Record<string, unknown>, `${where} settings.mailboxCaps`);
}

/** A mailbox's own caps (its columns; null: inherited). */
export function mailboxCaps(m: Pick<MailboxFields, 'id' | 'daily_cap' | 'hourly_cap' | 'ramp'>): CapOverrides {
  return capsOf({ dailyCap: m.daily_cap, hourlyCap: m.hourly_cap, ramp: m.ramp }, `mailbox ${m.id}`);
}

/** The caps in force for a mailbox, its workspace's defaults filled in. */
export function effectiveCaps(m: Pick<MailboxFields, 'id' | 'daily_cap' | 'hourly_cap' | 'ramp'>, wsSettings: unknown): MailboxCaps {
  return resolveCaps(workspaceCaps(wsSettings), mailboxCaps(m));
}

export function toMailboxPacing(m: MailboxFields, ws: WorkspaceFields): MailboxPacing {
  const where = `mailbox ${m.id}`;
  if (m.daily_cap !== null && (!Number.isInteger(m.daily_cap) || m.daily_cap < 0)) throw cadenzaError('INVALID_INPUT', `${where}: daily_cap must be an integer >= 0`, { mailboxId: m.id });
  if (m.hourly_cap !== null && (!Number.isInteger(m.hourly_cap) || m.hourly_cap < 0)) {
    throw cadenzaError('INVALID_INPUT', `${where}: hourly_cap must be an integer >= 0`, { mailboxId: m.id });
  }
  const capFactor = m.cap_factor ?? 1;
  if (!(capFactor > 0 && capFactor <= 1)) throw cadenzaError('INVALID_INPUT', `${where}: warmup cap factor must be in (0, 1]`, { mailboxId: m.id });
  return {
    id: m.id,
    zone: resolveZone({ mailbox: m.time_zone, workspace: ws.time_zone }).zone,
    ...effectiveCaps(m, ws.settings),
    ...(capFactor < 1 ? { capFactor, capReason: m.cap_reason ?? 'warmup placement' } : {}),
    rampStartedAt: (m.ramp_started_at ?? m.created_at ?? null)?.getTime() ?? null,
    pacing: compilePacing(resolvePacingSettings(pacingOf(ws.settings), pacingOf(m.settings), `${where} settings.pacing`)),
  };
}

/** Health states in which a mailbox sends. 'error' (credentials refused, say) stops it like 'paused'. */
export function isSendable(health: string): boolean {
  return health === 'ok' || health === 'warning';
}

/** Why the mailbox may not send, for a request's note; null when it may. */
export function blockedReason(m: Pick<MailboxFields, 'health' | 'health_reason'>): string | null {
  if (isSendable(m.health)) return null;
  return m.health_reason ? `${m.health}: ${m.health_reason}` : m.health;
}
