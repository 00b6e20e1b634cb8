/**
 * The privacy card's counts in a person's words: the export's and erasure's sections
 * (src/privacy/sql/personal-data.ts) and the purge's kinds (src/privacy/sql/purge.ts). A name the
 * server adds later reads as itself with spaces rather than disappear.
 */
const SECTIONS: Record<string, [one: string, many: string]> = {
  leads: ['lead', 'leads'],
  enrollments: ['enrollment', 'enrollments'],
  sends: ['planned or made send', 'planned or made sends'],
  tasks: ['task', 'tasks'],
  messages: ['message', 'messages'],
  replies_sent_from_inbox: ['reply sent from the inbox', 'replies sent from the inbox'],
  events: ['journal event', 'journal events'],
  opens_clicks_unsubscribes: ['open, click or unsubscribe', 'opens, clicks and unsubscribes'],
  suppressions: ['suppression', 'suppressions'],
  webhook_deliveries: ['webhook delivery', 'webhook deliveries'],
  import_rejects: ['rejected import row', 'rejected import rows'],
  quarantined_messages: ['quarantined message', 'quarantined messages'],
  audit_log: ['audit log entry', 'audit log entries'],
  invitations: ['invitation', 'invitations'],
  members: ['member', 'members'],
  mailboxes: ['mailbox', 'mailboxes'],
  warmup_mail: ['warmup email', 'warmup emails'],
};

// The purge's kinds, in the sections' words where they are the same rows.
const PURGED: Record<string, [one: string, many: string]> = {
  message_bodies: ["message's text cleared", "messages' text cleared"],
  quarantine_raw: ["quarantined message's raw mail cleared", "quarantined messages' raw mail cleared"],
  messages: SECTIONS.messages!,
  quarantine: SECTIONS.quarantined_messages!,
  reply_requests: SECTIONS.replies_sent_from_inbox!,
  events: SECTIONS.events!,
  tracking_events: SECTIONS.opens_clicks_unsubscribes!,
  webhook_deliveries: SECTIONS.webhook_deliveries!,
  import_rejects: SECTIONS.import_rejects!,
};

function counted(counts: Record<string, number>, words: Record<string, [string, string]>): string[] {
  return Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => {
      const [one, many] = words[k] ?? [k.replace(/_/g, ' '), k.replace(/_/g, ' ')];
      return `${n.toLocaleString()} ${n === 1 ? one : many}`;
    });
}

/** "1 lead, 2 messages, 3 journal events": the export's or the erasure's rows by section; '' when none. */
export function sectionCounts(counts: Record<string, number>): string {
  return counted(counts, SECTIONS).join(', ');
}

/** The same for what a purge removed. */
export function purgeCounts(counts: Record<string, number>): string {
  return counted(counts, PURGED).join(', ');
}
