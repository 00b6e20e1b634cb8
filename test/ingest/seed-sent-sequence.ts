import { sql } from 'kysely';
import type { Clock } from '../../src/common/clock.ts';
import { newId } from '../../src/common/ids.ts';
import type { Random } from '../../src/common/random.ts';
import type { Vault } from '../../src/mailbox/vault.ts';
import { applyDefinition } from '../../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../../src/sequence/definition.ts';
import type { EnrollmentService } from '../../src/sequence/enrollment-service.ts';
import type { Store } from '../../src/store/store.ts';

/**
 * For ingestion tests: a workspace, a mailbox and a two-step sequence whose first email was sent to
 * each lead, recorded the way the outbox records a send (send request sent, outbound message row,
 * `step_sent` through the engine), so the enrollment waits on its timer for the follow-up.
 */
export interface SeededSend {
  enrollmentId: string;
  leadEmail: string;
  sendRequestId: string;
  messageId: string;
  subject: string;
}

export interface Seeded {
  workspaceId: string;
  mailboxId: string;
  sequenceId: string;
  sends: SeededSend[];
}

export interface SeedOptions {
  mailboxEmail: string;
  leads: string[];
  tag: string;
  stopCompanyOnReply?: boolean;
  provider?: 'smtp_imap' | 'gmail' | 'graph';
  settings?: unknown;
  credential?: { vault: Vault; username: string; password: string };
  /** Lead country (holidays) and zone. */
  country?: string;
  zone?: string;
  window?: string;
}

export async function seedSentSequence(store: Store, deps: { clock: Clock; random: Random; service: EnrollmentService }, o: SeedOptions): Promise<Seeded> {
  const { clock, random, service } = deps;
  const workspaceId = newId(clock.now(), random);
  const mailboxId = newId(clock.now(), random);
  await store.db.insertInto('workspace').values({ id: workspaceId, name: `ingest ${o.tag}`, time_zone: 'UTC' }).execute();
  await store.db
    .insertInto('mailbox')
    .values({ id: mailboxId, workspace_id: workspaceId, email: o.mailboxEmail, provider: o.provider ?? 'smtp_imap', settings: JSON.stringify(o.settings ?? {}), time_zone: 'UTC' })
    .execute();
  if (o.credential) await o.credential.vault.put(workspaceId, mailboxId, { kind: 'password', username: o.credential.username, password: o.credential.password });
  const leadIds = o.leads.map(() => newId(clock.now(), random));
  for (let i = 0; i < o.leads.length; i += 1000) {
    await store.db
      .insertInto('lead')
      .values(o.leads.slice(i, i + 1000).map((email, j) => ({ id: leadIds[i + j]!, workspace_id: workspaceId, email, email_norm: email.toLowerCase(), first_name: 'Pat', time_zone: o.zone ?? 'UTC', country: o.country ?? null })))
      .execute();
  }
  const def = validateDefinition({
    key: `ingest-${o.tag}`,
    name: 'Ingest',
    window: o.window ?? 'any',
    holidays: o.country !== undefined,
    jitter_minutes: 0,
    stop_rules: o.stopCompanyOnReply ? { stop_company_on_reply: true } : {},
    mailboxes: [o.mailboxEmail],
    steps: [
      { key: 'intro', type: 'email', subject: `Quick question ${o.tag}`, body: 'Hi {{first_name}}' },
      { key: 'follow', type: 'email', delay: '3 days', body: 'Following up' },
    ],
  });
  const seq = await applyDefinition(store, { clock, random }, workspaceId, def);
  await bulkEnroll(store, { clock, random }, { workspaceId, sequenceId: seq.sequenceId, leadIds });
  while ((await service.fireDue(5_000)).length > 0);
  const rows = await sql<{ id: string; enrollment_id: string; step_id: string; email_norm: string }>`
    select r.id, r.enrollment_id, r.step_id, l.email_norm
    from send_request r join enrollment e on e.id = r.enrollment_id join lead l on l.id = e.lead_id
    where r.workspace_id = ${workspaceId} and r.state = 'queued'`.execute(store.db);
  const sends: SeededSend[] = [];
  // Recorded in chunks, each in one transaction, set-based (benchmarks seed thousands).
  for (let i = 0; i < rows.rows.length; i += 500) {
    const chunk = rows.rows.slice(i, i + 500).map((r) => ({ ...r, messageId: `<${newId(clock.now(), random)}@${o.mailboxEmail.split('@')[1]}>` }));
    const subject = `Quick question ${o.tag}`;
    const at = clock.now();
    await store.db.transaction().execute(async (tx) => {
      await sql`
        update send_request r set state = 'sent', message_id = u.message_id, updated_at = ${new Date(at)}
        from unnest(${chunk.map((r) => r.id)}::uuid[], ${chunk.map((r) => r.messageId)}::text[]) as u(id, message_id)
        where r.id = u.id`.execute(tx);
      await tx
        .insertInto('message')
        .values(chunk.map((r) => ({ id: newId(at, random), workspace_id: workspaceId, mailbox_id: mailboxId, enrollment_id: r.enrollment_id, send_request_id: r.id, direction: 'outbound' as const, message_id: r.messageId, subject, from_addr: o.mailboxEmail, to_addrs: [r.email_norm], at: new Date(at) })))
        .execute();
      const applied = await service.applyEachInTx(tx, chunk.map((r) => ({ enrollmentId: r.enrollment_id, event: { type: 'step_sent' as const, stepId: r.step_id, at, messageId: r.messageId } })), at);
      service.notify(applied.flat());
    });
    for (const r of chunk) sends.push({ enrollmentId: r.enrollment_id, leadEmail: r.email_norm, sendRequestId: r.id, messageId: r.messageId, subject });
  }
  return { workspaceId, mailboxId, sequenceId: seq.sequenceId, sends };
}

/** A reply to one of our sends, as a mail client writes it. */
export function replyMail(o: { from: string; to: string; inReplyTo?: string; subject: string; body: string; messageId: string; date?: Date; headers?: Record<string, string> }): string {
  const lines = [
    `From: Pat <${o.from}>`,
    `To: ${o.to}`,
    `Subject: ${o.subject}`,
    `Message-ID: ${o.messageId}`,
    `Date: ${(o.date ?? new Date()).toUTCString()}`,
    ...(o.inReplyTo ? [`In-Reply-To: ${o.inReplyTo}`, `References: ${o.inReplyTo}`] : []),
    ...Object.entries(o.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    o.body,
    '',
  ];
  return lines.join('\r\n');
}
