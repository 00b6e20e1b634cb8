import { Readable } from 'node:stream';
import type { Clock } from '../common/clock.ts';
import { cadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import { importLeads } from '../leads/import.ts';
import type { Vault } from '../mailbox/vault.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { validateDefinition } from '../sequence/definition.ts';
import type { Store } from '../store/store.ts';
import type { EmulatedProvider } from './emulated-providers.ts';
import { generateLeads, leadsCsv, type DemoLead } from './people.ts';
import { planPersonas, type Persona } from './personas.ts';

/**
 * Fills the demo workspace through the paths a user's own actions take: the workspace and its
 * mailboxes (OAuth grants sealed in the vault), the leads through the CSV importer, the two
 * sequences through their definition files, the enrollments through bulk enroll. What is relaxed
 * for the demo is relaxed in the workspace's settings (pacing over the whole day, every day, short
 * gaps, no lunch) and the sequences' windows, never in the engine.
 */

export interface DemoRep {
  name: string;
  email: string;
  provider: EmulatedProvider;
  zone: string;
}

export const demoReps: readonly DemoRep[] = [
  { name: 'Maya Chen', email: 'maya@cadenza-demo.test', provider: 'gmail', zone: 'America/New_York' },
  { name: 'Jonas Weber', email: 'jonas@cadenza-demo.test', provider: 'graph', zone: 'Europe/Berlin' },
  { name: 'Priya Raman', email: 'priya@cadenza-demo.test', provider: 'gmail', zone: 'Europe/London' },
  { name: 'Tom Becker', email: 'tom@cadenza-demo.test', provider: 'graph', zone: 'America/Los_Angeles' },
];

/** The demo's pacing (workspace settings.pacing): a rep who works around the clock, briskly. */
export const demoPacing = {
  dayStart: '00:00',
  dayEnd: '23:59',
  dayJitterMinutes: 0,
  workDays: [1, 2, 3, 4, 5, 6, 7],
  lunch: null,
  gapMinutes: [1, 3],
  hourlyCeiling: [40, 60],
  pickupMinutes: 2,
};

/** Sequence definitions as a user writes them (`cadenza sequence apply`). */
export function demoSequences(reps: readonly DemoRep[]): Array<Record<string, unknown>> {
  return [
    {
      key: 'outbound-revops',
      name: 'Outbound: RevOps leaders',
      window: 'Mon-Sun 07:00-21:00',
      holidays: true,
      jitter_minutes: 20,
      stop_rules: { on_out_of_office: 'pause', ooo_default_pause_days: 2 },
      mailboxes: [reps[0]!.email, reps[1]!.email],
      steps: [
        {
          key: 'intro',
          type: 'email',
          subject: '{{company}} and outbound that stops on a reply',
          body: 'Hi {{first_name}},\n\nTeams like {{company}} lose deals when a follow-up goes out after the prospect already answered. Cadenza stops a sequence the moment a reply lands.\n\nWorth 15 minutes next week?\n\n{{sender.first_name}}',
        },
        { key: 'call', type: 'call', delay: '4 hours', title: 'Intro call', notes: 'Mention the reply-to-stop latency.', wait_for_task: false },
        {
          key: 'bump',
          type: 'email',
          delay: '1 day',
          body: 'Hi {{first_name}},\n\nBumping this up in case it got buried. Happy to show it on your own mailboxes.\n\n{{sender.first_name}}',
        },
      ],
    },
    {
      key: 'event-follow-up',
      name: 'Follow-up: event visitors',
      window: 'Mon-Sun 08:00-20:00',
      holidays: true,
      jitter_minutes: 20,
      stop_rules: { on_out_of_office: 'pause', ooo_default_pause_days: 2 },
      mailboxes: [reps[2]!.email, reps[3]!.email],
      steps: [
        {
          key: 'thanks',
          type: 'email',
          subject: 'Great meeting you, {{first_name}}',
          body: 'Hi {{first_name}},\n\nThanks for stopping by our booth. Here is the deck on sending from your reps\' own mailboxes, as promised.\n\nWould a short call help?\n\n{{sender.first_name}}',
        },
        { key: 'nudge', type: 'email', delay: '1 day', body: 'Hi {{first_name}}, any thoughts on the deck? Glad to answer questions by mail too.\n\n{{sender.first_name}}' },
      ],
    },
  ];
}

export interface DemoWorkspace {
  workspaceId: string;
  mailboxes: Array<DemoRep & { id: string }>;
  sequences: Array<{ id: string; key: string; name: string; emails: number; leads: DemoLead[] }>;
  personas: Map<string, Persona>;
}

export interface FillOptions {
  leads: number;
  /** Fill this existing workspace instead of creating one named `name`. */
  workspaceId?: string;
  name: string;
  /** An access token per mailbox, as an OAuth grant would give (sealed in the vault). */
  tokenFor: (rep: DemoRep) => string;
}

/** A demo mailbox on an emulated provider: its row, and its OAuth grant's token sealed in the vault. */
export async function addDemoMailbox(store: Store, vault: Vault, mailboxId: string, workspaceId: string, rep: DemoRep, dailyCap: number, accessToken: string): Promise<string> {
  await store.db
    .insertInto('mailbox')
    .values({ id: mailboxId, workspace_id: workspaceId, email: rep.email, display_name: rep.name, provider: rep.provider, daily_cap: dailyCap, time_zone: rep.zone, settings: JSON.stringify({}) })
    .execute();
  await vault.put(workspaceId, mailboxId, { kind: 'oauth', accessToken, scope: 'mail' });
  return mailboxId;
}

export async function fillDemoWorkspace(store: Store, vault: Vault, deps: { clock: Clock; random: Random }, o: FillOptions): Promise<DemoWorkspace> {
  const { clock } = deps;
  const r = deps.random;
  const id = () => newId(clock.now(), r);
  let workspaceId: string;
  if (o.workspaceId) {
    // The workspace someone just set up (first-run page): keep its name and zone, add the demo's pacing.
    workspaceId = o.workspaceId;
    const w = await store.db.selectFrom('workspace').select('settings').where('id', '=', workspaceId).executeTakeFirst();
    if (!w) throw cadenzaError('NOT_FOUND', `no workspace ${workspaceId}`, { workspaceId });
    await store.db.updateTable('workspace').set({ settings: JSON.stringify({ ...w.settings, demo: true, pacing: demoPacing }) }).where('id', '=', workspaceId).execute();
  } else {
    workspaceId = id();
    await store.db
      .insertInto('workspace')
      .values({ id: workspaceId, name: o.name, time_zone: 'America/New_York', country: 'US', settings: JSON.stringify({ demo: true, pacing: demoPacing }) })
      .execute();
  }

  const mailboxes: DemoWorkspace['mailboxes'] = [];
  for (const rep of demoReps) mailboxes.push({ ...rep, id: await addDemoMailbox(store, vault, id(), workspaceId, rep, 1000, o.tokenFor(rep)) });

  const leads = generateLeads(r.fork('people'), o.leads);
  const imported = await importLeads(store, { workspaceId, input: Readable.from([leadsCsv(leads)]), clock, random: r.fork('import') });
  if (imported.imported !== leads.length) {
    throw new Error(`demo leads: ${imported.imported} of ${leads.length} imported (${JSON.stringify(imported.rejectsByReason)})`);
  }
  const personas = planPersonas(r.fork('personas'), leads.length);
  const byEmail = new Map(leads.map((l, i) => [l.email, personas[i]!]));
  const ids = new Map(
    (await store.db.selectFrom('lead').select(['id', 'email_norm']).where('workspace_id', '=', workspaceId).execute()).map((x) => [x.email_norm, x.id]),
  );

  // Two thirds of the leads get the outbound sequence, the rest the event follow-up.
  const split = Math.ceil((leads.length * 2) / 3);
  const groups = [leads.slice(0, split), leads.slice(split)];
  const sequences: DemoWorkspace['sequences'] = [];
  const defs = demoSequences(mailboxes);
  for (const [i, raw] of defs.entries()) {
    const def = validateDefinition(raw);
    const applied = await applyDefinition(store, deps, workspaceId, def);
    const group = groups[i]!;
    const leadIds = group.map((l) => ids.get(l.email.toLowerCase())!);
    const res = await bulkEnroll(store, deps, { workspaceId, sequenceId: applied.sequenceId, leadIds });
    if (res.refused.length) throw new Error(`demo enrollment refused ${res.refused.length} leads (${JSON.stringify(res.refused.slice(0, 3))})`);
    sequences.push({ id: applied.sequenceId, key: def.key, name: def.name, emails: def.steps.filter((s) => s.kind === 'email').length, leads: group });
  }
  return { workspaceId, mailboxes, sequences, personas: byEmail };
}
