import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { CLIP_TYPES, MAX_CLIP_BYTES, MAX_CLIP_MS, silentWav } from '../../dialer/voicemail-clip.ts';
import { deleteVoicemail, loadVoicemail, saveVoicemail, type VoicemailDeps, type VoicemailMeta } from '../../dialer/voicemail.ts';
import type { WorkspaceAccess } from '../auth/access.ts';
import type { ApiContext } from '../context.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

/**
 * The caller's own voicemail message (docs/dialer.md "Voicemail drop"). Always the signed-in rep's:
 * no route reads or writes another member's voice, and an API key (no person) has none.
 */
const meta = z
  .object({
    mimeType: z.enum(CLIP_TYPES),
    durationMs: z.number().int(),
    bytes: z.number().int(),
    updatedAt: z.string(),
  })
  .meta({ id: 'VoicemailClip' });

const view = (m: VoicemailMeta) => ({ mimeType: m.mimeType, durationMs: m.durationMs, bytes: m.bytes, updatedAt: m.updatedAt.toISOString() });

function rep(ws: WorkspaceAccess): string {
  if (!ws.userId) throw cadenzaError('FORBIDDEN', 'an API key has no voice: sign in as the rep whose message it is');
  return ws.userId;
}

function deps(ctx: ApiContext): VoicemailDeps {
  // Sealed or not at all: without the master key there is nothing to seal a rep's voice with.
  if (!ctx.vault) throw cadenzaError('CONFIG_INVALID', 'this server has no vault (master key) to seal recordings with');
  return { db: ctx.store.db, clock: ctx.clock, sealer: ctx.vault };
}

// Base64 of the largest clip, with its padding.
const MAX_BASE64 = Math.ceil(MAX_CLIP_BYTES / 3) * 4;

export const voicemailRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/dialer/voicemail',
    summary: "The caller's recorded voicemail message with its audio (base64), or null when they have none",
    tags: ['dialer'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({ voicemail: meta.extend({ audio: z.string().describe('The clip, base64') }).nullable() }),
    handler: async ({ ctx, ws }) => {
      const v = await loadVoicemail(deps(ctx), ws.workspaceId, rep(ws));
      return { voicemail: v ? { ...view(v), audio: v.audio.toString('base64') } : null };
    },
  }),
  defineRoute({
    method: 'PUT',
    url: '/api/workspaces/:workspaceId/dialer/voicemail',
    summary: `Record (or replace) the caller's voicemail message: WebM/Opus, Ogg, WAV or MP3, at most ${MAX_CLIP_BYTES / 1024} KB and ${MAX_CLIP_MS / 1000} s; stored encrypted`,
    tags: ['dialer'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z
      .object({
        mimeType: z.string().min(1).max(100).describe("The recording's type as the browser gives it (audio/webm;codecs=opus)"),
        durationMs: z.number().int().min(0).describe("The clip's length as the browser measured it (a WAV file's header is believed instead)"),
        audio: z.base64().max(MAX_BASE64, `the recording is larger than ${MAX_CLIP_BYTES / 1024} KB`).describe('The clip, base64'),
      })
      .strict(),
    example: () => ({ body: { mimeType: 'audio/wav', durationMs: 1000, audio: silentWav(1000).toString('base64') } }),
    response: z.object({ voicemail: meta }),
    handler: async ({ ctx, ws, body }) => {
      const m = await saveVoicemail(deps(ctx), ws.workspaceId, rep(ws), Buffer.from(body.audio, 'base64'), body.mimeType, body.durationMs);
      return { voicemail: view(m) };
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/dialer/voicemail',
    summary: "Delete the caller's voicemail message",
    tags: ['dialer'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({ deleted: z.boolean() }),
    handler: async ({ ctx, ws }) => ({ deleted: await deleteVoicemail(ctx.store.db, ws.workspaceId, rep(ws)) }),
  }),
];

