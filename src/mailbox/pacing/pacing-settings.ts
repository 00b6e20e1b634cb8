import { cadenzaError } from '../../common/errors.ts';
import { mailboxCaps, workspaceCaps } from './mailbox.ts';
import { applyPacingPatch, effectivePacing, type CapOverrides, type EffectivePacing, type PacingLevel, type PacingPatch } from './pacing-patch.ts';
import type { PacingOverrides } from './settings.ts';
import type { Db, Store, Tx } from '../../store/store.ts';

/**
 * The store side of pacing settings (the rules are in pacing-patch.ts): a
 * workspace's defaults live in workspace.settings (`pacing`, `mailboxCaps`), a mailbox's
 * overrides in its columns (daily_cap, hourly_cap, ramp; null inherits) and settings.pacing.
 * The API, the CLI and the web app read and change them only through here.
 */

export interface PacingView {
  /** What this level sets itself. */
  own: PacingLevel;
  /** For a mailbox: what it inherits from its workspace. */
  inherited?: PacingLevel;
  /** The settings in force. */
  effective: EffectivePacing;
}

function pacingOf(settings: unknown): PacingOverrides {
  const p = settings !== null && typeof settings === 'object' ? (settings as { pacing?: unknown }).pacing : undefined;
  return p !== null && typeof p === 'object' ? (p as PacingOverrides) : {};
}

async function workspaceLevel(db: Db | Tx, workspaceId: string, lock = false): Promise<{ level: PacingLevel; settings: Record<string, unknown> }> {
  let q = db.selectFrom('workspace').select('settings').where('id', '=', workspaceId);
  if (lock) q = q.forUpdate();
  const w = await q.executeTakeFirst();
  if (!w) throw cadenzaError('NOT_FOUND', 'no such workspace');
  const settings = (w.settings ?? {}) as Record<string, unknown>;
  return { level: { caps: workspaceCaps(settings), pacing: pacingOf(settings) }, settings };
}

async function mailboxRow(db: Db | Tx, workspaceId: string, mailboxId: string, lock = false) {
  let q = db.selectFrom('mailbox').select(['id', 'daily_cap', 'hourly_cap', 'ramp', 'settings']).where('workspace_id', '=', workspaceId).where('id', '=', mailboxId).where('removed_at', 'is', null);
  if (lock) q = q.forUpdate();
  const m = await q.executeTakeFirst();
  if (!m) throw cadenzaError('NOT_FOUND', 'no such mailbox in this workspace');
  return m;
}

export async function readWorkspacePacing(db: Db | Tx, workspaceId: string): Promise<PacingView> {
  const { level } = await workspaceLevel(db, workspaceId);
  return { own: level, effective: effectivePacing(null, level, 'workspace pacing') };
}

export async function readMailboxPacing(db: Db | Tx, workspaceId: string, mailboxId: string): Promise<PacingView> {
  const ws = (await workspaceLevel(db, workspaceId)).level;
  const m = await mailboxRow(db, workspaceId, mailboxId);
  const own = { caps: mailboxCaps(m), pacing: pacingOf(m.settings) };
  return { own, inherited: ws, effective: effectivePacing(ws, own, `mailbox ${m.id}`) };
}

export async function patchWorkspacePacing(store: Store, workspaceId: string, patch: PacingPatch): Promise<PacingView> {
  return store.db.transaction().execute(async (tx) => {
    const { level, settings } = await workspaceLevel(tx, workspaceId, true);
    const next = applyPacingPatch(level, patch, null, 'workspace pacing');
    await tx
      .updateTable('workspace')
      .set({ settings: JSON.stringify({ ...settings, pacing: next.pacing, mailboxCaps: next.caps }) })
      .where('id', '=', workspaceId)
      .execute();
    return readWorkspacePacing(tx, workspaceId);
  });
}

function capColumns(caps: CapOverrides) {
  return {
    daily_cap: caps.dailyCap ?? null,
    hourly_cap: caps.hourlyCap ?? null,
    // {} is "no ramp", set on purpose; null inherits the workspace's.
    ramp: caps.ramp === undefined ? null : JSON.stringify(caps.ramp ?? {}),
  };
}

export async function patchMailboxPacing(store: Store, workspaceId: string, mailboxId: string, patch: PacingPatch): Promise<PacingView> {
  return store.db.transaction().execute(async (tx) => {
    const ws = (await workspaceLevel(tx, workspaceId)).level;
    const m = await mailboxRow(tx, workspaceId, mailboxId, true);
    const next = applyPacingPatch({ caps: mailboxCaps(m), pacing: pacingOf(m.settings) }, patch, ws, `mailbox ${m.id}`);
    const settings = { ...((m.settings ?? {}) as Record<string, unknown>), pacing: next.pacing };
    await tx
      .updateTable('mailbox')
      .set({ ...capColumns(next.caps), settings: JSON.stringify(settings) })
      .where('id', '=', m.id)
      .execute();
    return readMailboxPacing(tx, workspaceId, mailboxId);
  });
}

/**
 * The shortest gap between two sends of each mailbox of a sequence's pool (every mailbox of the
 * workspace when the pool is empty): what `sequence apply` compares step delays with.
 */
export async function poolGaps(db: Db | Tx, workspaceId: string, emails: string[]): Promise<Array<{ email: string; gapMinutes: [number, number] }>> {
  const ws = (await workspaceLevel(db, workspaceId)).level;
  let q = db.selectFrom('mailbox').select(['id', 'email', 'daily_cap', 'hourly_cap', 'ramp', 'settings']).where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).orderBy('email');
  if (emails.length) q = q.where('email', 'in', emails);
  const out: Array<{ email: string; gapMinutes: [number, number] }> = [];
  for (const m of await q.execute()) {
    try {
      out.push({ email: m.email, gapMinutes: effectivePacing(ws, { caps: {}, pacing: pacingOf(m.settings) }, `mailbox ${m.id}`).gapMinutes });
    } catch {
      // Unreadable settings are the dispatcher's to report; no gap to compare with here.
    }
  }
  return out;
}
