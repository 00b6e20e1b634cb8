import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { DIGEST_EVERY_HOURS, KIND_LABELS, NOTIFICATION_KINDS, kindsFor, type DigestEvery } from '../notify/kinds.ts';
import { sealSlackUrl } from '../notify/slack-url.ts';
import { listBell, markRead } from '../notify/sql/bell.ts';
import { readChannels, readSettings, saveChoices, saveSlackUrl } from '../notify/sql/preferences.ts';
import type { Db } from '../../store/store.ts';
import { audit } from '../audit/actor.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

/**
 * Notifications (issue 19, src/api/notify/): the bell (a member's notifications, unread count, mark
 * read) and each member's own choices: which events reach which channel, whose events, the
 * digest's rhythm, the Slack URL (write-only: only its host comes back). Every route is a
 * member's own: an API key is no member, so it is refused.
 */

const kindSchema = z.enum(NOTIFICATION_KINDS);
const channels = z.object({ inApp: z.boolean(), browser: z.boolean(), email: z.boolean(), slack: z.boolean() });

const bellView = z
  .object({
    unread: z.number().int().describe('Unread notifications in the bell'),
    items: z.array(
      z.object({
        id: z.number().int(),
        kind: kindSchema,
        title: z.string(),
        body: z.string(),
        link: z.string().describe("The app's path the notification opens"),
        occurredAt: z.string(),
        readAt: z.string().nullable(),
        inApp: z.boolean().describe('Shown in the bell'),
        browser: z.boolean().describe("Shown by the browser's notifications (when the person allowed them)"),
      }),
    ),
  })
  .meta({ id: 'Notifications' });

const prefsView = z
  .object({
    kinds: z.array(channels.extend({ kind: kindSchema, label: z.string() })),
    scope: z.enum(['mine', 'all']).describe("mine: events of your own mailboxes (and those nobody owns); all: the whole workspace's"),
    digestEveryHours: z.number().int().describe('The email digest goes out this many hours after the oldest event it holds'),
    digest: z.object({ lastAt: z.string().nullable(), nextAt: z.string().nullable(), error: z.string().nullable() }),
    slack: z.object({
      configured: z.boolean(),
      host: z.string().nullable().describe("The URL's host; the URL itself is a secret and never returned"),
      disabledReason: z.string().nullable().describe('Why nothing is posted to the URL: it answered 404 or 410 (the webhook is gone); saving a URL again lifts it'),
    }),
    mailConfigured: z.boolean().describe('Whether this installation can send mail as itself (CADENZA_SMTP_URL); without it no digest goes out'),
  })
  .meta({ id: 'NotificationPreferences' });

function member(userId: string | null | undefined): string {
  if (!userId) throw cadenzaError('INVALID_INPUT', 'an API key is not a member: notifications belong to a signed-in person');
  return userId;
}

async function prefs(db: Db, workspaceId: string, userId: string, role: string, mailConfigured: boolean) {
  const [ch, s] = await Promise.all([readChannels(db, workspaceId, userId), readSettings(db, workspaceId, userId)]);
  return {
    kinds: kindsFor(role).map((kind) => ({ kind, label: KIND_LABELS[kind], ...ch[kind] })),
    scope: s.scope,
    digestEveryHours: s.digestEveryHours,
    digest: { lastAt: s.digestLastAt?.toISOString() ?? null, nextAt: s.digestNextAt?.toISOString() ?? null, error: s.digestError },
    slack: { configured: s.slackConfigured, host: s.slackHost, disabledReason: s.slackDisabledReason },
    mailConfigured,
  };
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export const notificationRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/notifications',
    summary: 'Your notifications, newest first (the bell and the browser), and how many in the bell are unread',
    tags: ['notifications'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: z.object({
      limit: z.coerce.number().int().min(1, 'limit is 1 to 100').max(100, 'limit is 1 to 100').default(30),
      unread: z.enum(['true', 'false']).default('false').describe('true: unread ones only'),
    }),
    example: () => ({ query: { limit: 30, unread: 'false' as const } }),
    response: bellView,
    handler: async ({ ctx, ws, query }) => {
      const r = await listBell(ctx.store.db, ws.workspaceId, member(ws.userId), { limit: query.limit, unreadOnly: query.unread === 'true' });
      return { unread: r.unread, items: r.items.map((i) => ({ ...i, occurredAt: iso(i.occurredAt)!, readAt: iso(i.readAt) })) };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/notifications/read',
    summary: 'Mark your notifications read: the ones named, or all',
    tags: ['notifications'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.union([z.object({ ids: z.array(z.number().int()).max(500, 'at most 500 at a time') }), z.object({ all: z.literal(true) })]),
    example: () => ({ body: { all: true as const } }),
    response: z.object({ marked: z.number().int(), unread: z.number().int() }),
    handler: async ({ ctx, ws, body }) => {
      const userId = member(ws.userId);
      const marked = await markRead(ctx.store.db, ws.workspaceId, userId, 'all' in body ? 'all' : body.ids, new Date(ctx.clock.now()));
      const { unread } = await listBell(ctx.store.db, ws.workspaceId, userId, { limit: 1, unreadOnly: true });
      return { marked, unread };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/notification-preferences',
    summary: 'Your notification choices: which events reach the bell, the browser, the email digest and Slack',
    tags: ['notifications'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: prefsView,
    handler: async ({ ctx, ws }) => prefs(ctx.store.db, ws.workspaceId, member(ws.userId), ws.role, ctx.mailer !== undefined),
  }),
  defineRoute({
    method: 'PUT',
    url: '/api/workspaces/:workspaceId/notification-preferences',
    summary: 'Choose which events reach which channel, whose events, and how often the digest goes out',
    tags: ['notifications'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({
      kinds: z.array(channels.extend({ kind: kindSchema })).max(NOTIFICATION_KINDS.length),
      scope: z.enum(['mine', 'all']),
      digestEveryHours: z.number().int().refine((h) => (DIGEST_EVERY_HOURS as readonly number[]).includes(h), 'the digest goes out every 1, 4 or 24 hours'),
    }),
    example: () => ({ body: { kinds: [{ kind: 'reply_positive' as const, inApp: true, browser: true, email: true, slack: false }], scope: 'mine' as const, digestEveryHours: 24 } }),
    response: prefsView,
    handler: async ({ ctx, ws, body }) => {
      const userId = member(ws.userId);
      const kinds = Object.fromEntries(body.kinds.map(({ kind, ...c }) => [kind, c]));
      await saveChoices(ctx.store.db, ws.workspaceId, userId, { kinds, scope: body.scope, digestEveryHours: body.digestEveryHours as DigestEvery }, new Date(ctx.clock.now()));
      return prefs(ctx.store.db, ws.workspaceId, userId, ws.role, ctx.mailer !== undefined);
    },
  }),
  defineRoute({
    method: 'PUT',
    url: '/api/workspaces/:workspaceId/notification-preferences/slack',
    summary: "Set your Slack-compatible incoming webhook URL (sealed at rest, never shown again), or remove it with null",
    tags: ['notifications'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({ url: z.string().max(2000, 'a URL is at most 2000 characters').nullable() }),
    example: () => ({ body: { url: 'https://hooks.slack.com/services/T000/B000/XXXXXXXX' } }),
    response: prefsView,
    handler: async (c) => {
      const { ctx, ws, body } = c;
      const userId = member(ws.userId);
      const now = new Date(ctx.clock.now());
      if (body.url === null) {
        await saveSlackUrl(ctx.store.db, ws.workspaceId, userId, null, null, now);
      } else {
        if (!ctx.vault) throw cadenzaError('CONFIG_INVALID', 'this server has no vault (master key) to seal the Slack URL with');
        const s = await sealSlackUrl(ctx.vault, { allowPrivate: ctx.webhooks?.allowPrivate ?? false }, ws.workspaceId, userId, body.url);
        await saveSlackUrl(ctx.store.db, ws.workspaceId, userId, s.sealed, s.host, now);
      }
      // The host only: the URL is the secret.
      await audit(c, { action: 'settings.changed', target: 'notifications-slack', detail: { set: body.url !== null } });
      return prefs(ctx.store.db, ws.workspaceId, userId, ws.role, ctx.mailer !== undefined);
    },
  }),
];
