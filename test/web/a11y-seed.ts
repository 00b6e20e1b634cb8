import { systemClock } from '../../src/common/clock.ts';
import { newId } from '../../src/common/ids.ts';
import { seededRandom } from '../../src/common/random.ts';
import { applyDefinition } from '../../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../../src/sequence/definition.ts';
import type { Store } from '../../src/store/store.ts';
import { addMembership } from '../../src/api/auth/accounts.ts';
import { hashPassword } from '../../src/api/auth/passwords.ts';
import { seedGraph, seedWorkspace } from '../api.ts';

export const A11Y_OWNER = { email: 'ada@cadenza.test', password: 'a long enough password' };

/**
 * A workspace with something on every screen, so that each control the screens can show is there
 * to be audited: the API tests' graph (a mailbox, a call task, a reply held for review), a ramping
 * and a paused mailbox, a sequence with an A/B email step and a manual step, a dozen leads, replies
 * of each kind threaded to what was sent, opens judged human and automatic, and a day of sends,
 * replies and bounces for the charts.
 */
export async function seedScreens(store: Store): Promise<{ workspaceId: string; leadId: string; sequenceId: string; replyFrom: string }> {
  const clock = systemClock;
  const random = seededRandom('a11y-screens');
  const id = () => newId(clock.now(), random);
  const db = store.db;
  const now = clock.now();
  const w = await seedWorkspace(store, 'Acme Outbound', A11Y_OWNER.email, A11Y_OWNER.password);
  const g = await seedGraph(store, w.workspaceId, 'a11y', w.userId);
  await db.updateTable('mailbox').set({ display_name: 'Ada Rep', daily_cap: 40, ramp: JSON.stringify({ start: 5, step: 5 }), ramp_started_at: new Date(now - 2 * 86_400_000) }).where('id', '=', g.mailboxId!).execute();
  await db
    .insertInto('mailbox')
    .values({ id: id(), workspace_id: w.workspaceId, user_id: w.userId, email: 'ada.second@example.test', provider: 'gmail', health: 'paused', health_reason: 'bounce rate 6% over the last 50 sends' })
    .execute();

  const sam = id();
  await db.insertInto('account').values({ id: sam, email: 'sam@cadenza.test', name: 'Sam Member', password_hash: await hashPassword('another long password') }).execute();
  await addMembership(db, { clock, random }, { accountId: sam, workspaceId: w.workspaceId, email: 'sam@cadenza.test', name: 'Sam Member', role: 'member' });

  const leads = Array.from({ length: 12 }, (_, i) => ({
    id: id(),
    workspace_id: w.workspaceId,
    email: `person${i}@prospect${i % 4}.test`,
    email_norm: `person${i}@prospect${i % 4}.test`,
    first_name: ['Grace', 'Alan', 'Linus', 'Edsger'][i % 4]!,
    last_name: `Example${i}`,
    company: `Prospect ${i % 4}`,
    title: 'Head of Sales',
    country: ['FR', 'US', 'DE', 'JP'][i % 4]!,
    time_zone: ['Europe/Paris', 'America/New_York', 'Europe/Berlin', 'Asia/Tokyo'][i % 4]!,
  }));
  await db.insertInto('lead').values(leads).execute();
  const def = validateDefinition({
    key: 'outbound-q3',
    name: 'Outbound Q3',
    window: 'Mon-Fri 09:00-17:00',
    holidays: false,
    jitter_minutes: 30,
    mailboxes: ['rep-a11y@example.test'],
    steps: [
      {
        key: 'intro',
        type: 'email',
        delay: '0 minutes',
        variants: [
          { key: 'a', subject: 'Quick question, {{first_name | default: "there"}}', body: '{Hi|Hello} {{first_name}},\n\nDoes {{company}} still book demos by hand?', weight: 1 },
          { key: 'b', subject: '{{company}} and outbound', body: 'Hello {{first_name}},\n\nA short one about {{company}}.', weight: 1 },
        ],
      },
      { key: 'linkedin', type: 'manual', delay: '2 business days', title: 'Connect on LinkedIn' },
      { key: 'bump', type: 'email', delay: '3 business days', body: 'Any thoughts, {{first_name}}?' },
    ],
  });
  const seq = await applyDefinition(store, { clock, random }, w.workspaceId, def);
  await bulkEnroll(store, { clock, random }, { workspaceId: w.workspaceId, sequenceId: seq.sequenceId, leadIds: leads.map((l) => l.id) });
  const enrollments = await db.selectFrom('enrollment').select(['id', 'lead_id']).where('sequence_id', '=', seq.sequenceId).execute();
  const byLead = new Map(enrollments.map((e) => [e.lead_id, e.id]));
  const intro = await db.selectFrom('step').select('id').where('sequence_id', '=', seq.sequenceId).where('key', '=', 'intro').executeTakeFirstOrThrow();
  const variants = await db.selectFrom('variant').select(['id', 'key']).where('step_id', '=', intro.id).orderBy('key').execute();

  // Each of the first four leads got the intro and answered it in its own way.
  const kinds = [
    { label: 'human_reply', confidence: 0.97, action: 'reply', intent: 'interested', reason: 'rules: a person wrote back', text: 'Yes, happy to talk. Thursday at 10?' },
    { label: 'auto_reply', confidence: 0.92, action: 'out_of_office', intent: null, reason: 'rules: out-of-office subject', text: 'I am away until Monday.' },
    { label: 'bounce', confidence: 0.99, action: 'hard_bounce', intent: null, reason: 'rules: DSN 5.1.1', text: 'The address does not exist.' },
    { label: 'human_reply', confidence: 0.55, action: 'needs_review', intent: 'question', reason: 'model: unsure between reply and auto-reply', text: 'Who gave you my address?' },
  ] as const;
  for (const [i, k] of kinds.entries()) {
    const lead = leads[i]!;
    const enrollmentId = byLead.get(lead.id)!;
    const sent = new Date(now - (60 - i) * 60_000);
    const sr = id();
    await db
      .insertInto('send_request')
      .values({ id: sr, workspace_id: w.workspaceId, enrollment_id: enrollmentId, step_id: intro.id, mailbox_id: g.mailboxId!, variant_id: variants[i % 2]!.id, state: 'sent', due_at: sent, ...(k.label === 'bounce' ? { bounced_at: new Date(now), bounce_kind: 'hard' as const } : {}) })
      .execute();
    const ourId = `<intro-${i}@example.test>`;
    await db
      .insertInto('message')
      .values({ id: id(), workspace_id: w.workspaceId, mailbox_id: g.mailboxId!, enrollment_id: enrollmentId, send_request_id: sr, direction: 'outbound', message_id: ourId, subject: `Quick question, ${lead.first_name}`, from_addr: 'rep-a11y@example.test', to_addrs: [lead.email], at: sent })
      .execute();
    await db
      .insertInto('message')
      .values({
        id: id(), workspace_id: w.workspaceId, mailbox_id: g.mailboxId!, enrollment_id: enrollmentId, direction: 'inbound', message_id: `<answer-${i}@prospect.test>`, in_reply_to: ourId,
        subject: `Re: Quick question, ${lead.first_name}`, from_addr: lead.email, at: new Date(now - (30 - i) * 60_000), received_at: new Date(now - (30 - i) * 60_000), folder: 'inbox',
        label: k.label, confidence: k.confidence, reason: k.reason, rung: k.confidence < 0.9 ? 'model' : 'rules', intent: k.intent, action: k.action, needs_review: k.action === 'needs_review',
        excerpt: k.text, new_text: k.text,
      })
      .execute();
    await db.insertInto('event').values({ workspace_id: w.workspaceId, enrollment_id: enrollmentId, type: 'step_sent', payload: JSON.stringify({ from: 'active', to: 'active' }), at: sent }).execute();
  }
  await db.updateTable('enrollment').set({ state: 'replied', last_step_id: intro.id }).where('id', '=', byLead.get(leads[0]!.id)!).execute();
  await db.insertInto('event').values([
    { workspace_id: w.workspaceId, enrollment_id: byLead.get(leads[0]!.id)!, type: 'reply', payload: JSON.stringify({ from: 'active', to: 'replied' }), at: new Date(now - 29 * 60_000) },
    { workspace_id: w.workspaceId, enrollment_id: byLead.get(leads[2]!.id)!, type: 'bounce', payload: JSON.stringify({ from: 'active', to: 'bounced' }), at: new Date(now - 27 * 60_000) },
  ]).execute();
  // Tasks: the call from the graph is overdue since yesterday; a manual step is due tomorrow.
  await db.updateTable('task').set({ due_at: new Date(now - 86_400_000) }).where('id', '=', g.taskId!).execute();
  const linkedin = await db.selectFrom('step').select('id').where('sequence_id', '=', seq.sequenceId).where('key', '=', 'linkedin').executeTakeFirstOrThrow();
  await db
    .insertInto('task')
    .values({ id: id(), workspace_id: w.workspaceId, enrollment_id: byLead.get(leads[5]!.id)!, step_id: linkedin.id, kind: 'manual', title: 'Connect on LinkedIn', notes: 'Mention the webinar', due_at: new Date(now + 86_400_000) })
    .execute();
  // The first lead opened twice: once as a person would, once through a mail provider's proxy.
  await db
    .insertInto('tracking_event')
    .values([
      { workspace_id: w.workspaceId, enrollment_id: byLead.get(leads[0]!.id)!, kind: 'open', verdict: 'human', confidence: 0.8, reason: 'opened 4 min after delivery', at: new Date(now - 50 * 60_000) },
      { workspace_id: w.workspaceId, enrollment_id: byLead.get(leads[0]!.id)!, kind: 'open', verdict: 'proxy', confidence: 0.9, reason: 'image proxy', at: new Date(now - 58 * 60_000) },
    ])
    .execute();
  return { workspaceId: w.workspaceId, leadId: leads[0]!.id, sequenceId: seq.sequenceId, replyFrom: leads[0]!.email };
}
