import { z } from 'zod';
import { recordingSettings } from '../../dialer/recording/settings.ts';
import { issueSipCredentials } from '../../dialer/sip-credentials.ts';
import { cadenzaError } from '../../common/errors.ts';
import { workspaceRow } from '../../workspace/workspace-row.ts';
import { findMember } from '../auth/members.ts';
import { realClock } from '../context.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

const enabled = z.object({
  enabled: z.literal(true),
  wsUrl: z.string(),
  sipUri: z.string(),
  authorizationUser: z.string(),
  password: z.string(),
  expiresAt: z.string(),
  recorded: z.boolean().describe("Calls placed with this credential are recorded (the workspace's callRecording): Kamailio reads it from the signed username, the browser cannot change it"),
  phoneNumber: z.string().nullable().describe("The rep's number on the trunk (E.164), signed into the username: the caller ID their calls show and the DID that rings them; null: the trunk's default"),
  iceServers: z.array(z.object({ urls: z.array(z.string()), username: z.string().optional(), credential: z.string().optional() })),
});
const disabled = z.object({ enabled: z.literal(false), reason: z.string() });

export const dialerRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/dialer/config',
    summary: "The browser softphone's settings: where to register and a time-limited SIP and TURN credential for the caller",
    tags: ['dialer'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.union([enabled, disabled]),
    handler: async ({ ctx, ws }) => {
      if (!ctx.dialer) return { enabled: false as const, reason: 'the dialer is off on this server (CADENZA_SIP_WS_URL, CADENZA_SIP_DOMAIN and CADENZA_SIP_SECRET are not set)' };
      // A credential names a person: an API key has no phone.
      if (!ws.userId) return { enabled: false as const, reason: 'an API key has no SIP identity: sign in as a member' };
      // Real time: a demo's accelerated clock would issue credentials that expire at once or never.
      // Recording is decided here, when the credential is signed, not by the browser.
      const row = await workspaceRow(ctx.store.db, ws.workspaceId);
      const record = recordingSettings((row?.settings ?? {}) as Record<string, unknown>).enabled;
      const phoneNumber = (await findMember(ctx.store.db, ws.workspaceId, ws.userId))?.phone_number ?? null;
      return { enabled: true as const, recorded: record, phoneNumber, ...issueSipCredentials(ctx.dialer, ws.userId, realClock(ctx).now(), { record, phoneNumber }) };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/dialer/announcement',
    summary: "The consent announcement (WAV) of recorded calls: the prospect hears it from the media relay, the rep's browser plays the same file on answer; 404 when none is configured",
    tags: ['dialer'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.string().describe('audio/wav'),
    handler: async ({ ctx, reply }) => {
      if (!ctx.consentAnnouncement) throw cadenzaError('NOT_FOUND', 'no consent announcement is configured on this server (CADENZA_RECORDING_ANNOUNCEMENT)');
      // The same file for every workspace and call: cacheable by the browser for a day.
      reply.type('audio/wav').header('cache-control', 'private, max-age=86400');
      return Buffer.from(ctx.consentAnnouncement) as unknown as string;
    },
  }),
];
