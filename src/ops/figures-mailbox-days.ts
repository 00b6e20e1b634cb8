import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../store/store.ts';
import { readFolded, windowFacts } from './figure-rollup.ts';
import { dayKeyOf, type Window } from './figures.ts';

/**
 * Mailbox health over time (issue 18): per mailbox and day of the window's zone, the sends and
 * bounces credited to its emails (the breakdown's facts by mailbox, ops/figures.ts breakdown, read
 * through the rollup's per-mailbox hours, level 'b') and the placement its warmup mail found (warmup_mail:
 * the receiver's folder, inbox or junk, by when the receiver read it; src/warmup/). Placement is the
 * only inbox-or-junk evidence Cadenza has: a mailbox outside the warmup network has none.
 *
 * Cost: the rollup's hours of the window (quarter hours in a zone whose midnight is not on the
 * hour), per mailbox and series (24 rows a day per mailbox that sent), plus the rows past the fold; warmup mail through `warmup_mail_sender_received`
 * (sender_mailbox_id, received_at), one range per mailbox.
 */

export interface MailboxDay {
  day: string;
  sends: number;
  bounces: number;
  hardBounces: number;
  /** bounces / sends (null: nothing sent that day). */
  bounceRate: number | null;
  /** Warmup mail from this mailbox its receivers found in the inbox, and in junk. */
  inbox: number;
  junk: number;
}

export interface MailboxDays {
  id: string;
  email: string;
  days: MailboxDay[];
}

// -- name: figures-mailbox-days
export async function mailboxDays(db: Db, workspaceId: string, w: Window, mailboxId?: string): Promise<MailboxDays[]> {
  const day = (at: RawBuilder<unknown>) => dayKeyOf(w, at);
  const boxes = await sql<{ id: string; email: string }>`
    select id, case when removed_at is null then email else email || ' (removed mailbox)' end as email
    from mailbox where workspace_id = ${workspaceId} ${mailboxId ? sql`and id = ${mailboxId}` : sql``}
    order by email`.execute(db);
  const r = await readFolded(db, (db, fold) => sql<{ mailbox_id: string; day: string; series: string; n: number }>`
    select f.mailbox_id, ${day(sql`f.at`)} as day, f.series, sum(f.n)::int as n
    from (${windowFacts(fold, workspaceId, w.since, w.until, 'b', undefined, { perDay: true })}) f
    where f.series in ('sends', 'bounces', 'bouncesHard') and f.mailbox_id is not null ${mailboxId ? sql`and f.mailbox_id = ${mailboxId}` : sql``}
    group by 1, 2, 3
    union all
    select x.sender_mailbox_id, ${day(sql`x.received_at`)}, x.received_folder, count(*)::int
    from mailbox m join warmup_mail x on x.sender_mailbox_id = m.id
    where m.workspace_id = ${workspaceId} ${mailboxId ? sql`and m.id = ${mailboxId}` : sql``}
      and x.received_folder is not null and x.received_at >= ${w.since} and x.received_at < ${w.until}
    group by 1, 2, 3`.execute(db));
  const out = new Map(boxes.rows.map((b) => [b.id, { id: b.id, email: b.email, days: w.dayKeys.map((d) => ({ day: d, sends: 0, bounces: 0, hardBounces: 0, bounceRate: null as number | null, inbox: 0, junk: 0 })) }]));
  const field = { sends: 'sends', bounces: 'bounces', bouncesHard: 'hardBounces', inbox: 'inbox', junk: 'junk' } as const;
  for (const x of r.rows) {
    const d = out.get(x.mailbox_id)?.days.find((y) => y.day === x.day);
    const k = field[x.series as keyof typeof field];
    if (d && k) d[k] += Number(x.n);
  }
  for (const b of out.values()) for (const d of b.days) d.bounceRate = d.sends > 0 ? d.bounces / d.sends : null;
  return [...out.values()];
}
