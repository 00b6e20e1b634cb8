import type { Clock } from '../common/clock.ts';
import { cadenzaError } from '../common/errors.ts';
import type { BytesSealer } from '../mailbox/vault.ts';
import type { Db } from '../store/store.ts';
import { checkClip, type ClipType } from './voicemail-clip.ts';

/**
 * A rep's recorded voicemail message (docs/dialer.md "Voicemail drop"): one per rep per workspace,
 * sealed with the workspace's data key before it is written, since a rep's voice is personal data
 * (promise 7's envelope encryption, applied to a blob). The rep's browser plays it into a call; the
 * server never decodes it.
 */

export interface VoicemailDeps {
  db: Db;
  clock: Clock;
  sealer: BytesSealer;
}

export interface VoicemailMeta {
  mimeType: ClipType;
  durationMs: number;
  bytes: number;
  updatedAt: Date;
}

/** Bound as the seal's associated data: a sealed clip copied onto another rep's row does not open. */
const context = (userId: string) => `voicemail:${userId}`;

/** Checks the clip (type, size, length), seals it and stores it as the rep's message, replacing any earlier one. */
export async function saveVoicemail(d: VoicemailDeps, workspaceId: string, userId: string, audio: Buffer, declaredType: string, declaredMs: number): Promise<VoicemailMeta> {
  const v = checkClip(audio, declaredType, declaredMs);
  if (!v.ok) throw cadenzaError('INVALID_INPUT', v.reason, { reason: v.code });
  const sealed = await d.sealer.sealBytes(workspaceId, context(userId), audio);
  const at = new Date(d.clock.now());
  const row = { audio: sealed, mime_type: v.mimeType, duration_ms: v.durationMs, bytes: audio.length, updated_at: at };
  await d.db
    .insertInto('rep_voicemail')
    .values({ user_id: userId, workspace_id: workspaceId, ...row })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(row))
    .execute();
  return { mimeType: v.mimeType, durationMs: v.durationMs, bytes: audio.length, updatedAt: at };
}

/** The rep's message, opened, or undefined when they have none. */
export async function loadVoicemail(d: VoicemailDeps, workspaceId: string, userId: string): Promise<(VoicemailMeta & { audio: Buffer }) | undefined> {
  const r = await d.db.selectFrom('rep_voicemail').selectAll().where('workspace_id', '=', workspaceId).where('user_id', '=', userId).executeTakeFirst();
  if (!r) return undefined;
  return { mimeType: r.mime_type as ClipType, durationMs: r.duration_ms, bytes: r.bytes, updatedAt: r.updated_at, audio: await d.sealer.openBytes(workspaceId, context(userId), r.audio) };
}

export async function deleteVoicemail(db: Db, workspaceId: string, userId: string): Promise<boolean> {
  const r = await db.deleteFrom('rep_voicemail').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
