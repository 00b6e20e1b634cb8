import { sql } from 'kysely';
import type { Db, Tx } from '../../store/store.ts';

/** workspace.agency_id and workspace_branding (migration 0103): the statements, each scoped to its agency or workspace. */

// -- name: agency-of
export async function agencyOf(db: Db | Tx, workspaceId: string): Promise<string | null | undefined> {
  const r = await db.selectFrom('workspace').select('agency_id').where('id', '=', workspaceId).executeTakeFirst();
  return r === undefined ? undefined : r.agency_id;
}

// -- name: insert-client
export async function insertClient(db: Db | Tx, o: { id: string; agencyId: string; name: string; timeZone: string }): Promise<void> {
  await db.insertInto('workspace').values({ id: o.id, name: o.name, time_zone: o.timeZone, agency_id: o.agencyId }).execute();
}

// -- name: clients-of-agency
export function clientsOfAgency(db: Db | Tx, agencyId: string) {
  return db
    .selectFrom('workspace as w')
    .leftJoin('workspace_branding as b', 'b.workspace_id', 'w.id')
    .select(['w.id', 'w.name', 'w.created_at', 'b.display_name', 'b.primary_color', 'b.accent_color'])
    .where('w.agency_id', '=', agencyId)
    .orderBy('w.name')
    .execute();
}

// -- name: clients-reached-by
// The client workspaces an account reaches through its admin or owner role in their agency
// (src/api/auth/agency.ts states the rule), for the workspace switcher.
export function clientsReachedBy(db: Db | Tx, accountId: string, roles: readonly string[]) {
  return db
    .selectFrom('workspace as c')
    .innerJoin('app_user as u', 'u.workspace_id', 'c.agency_id')
    .select(['c.id', 'c.name', 'c.agency_id'])
    .where('u.account_id', '=', accountId)
    .where('u.role', 'in', [...roles] as Array<'admin' | 'owner'>)
    .orderBy('c.name')
    .execute();
}

export interface BrandingRow {
  workspace_id: string;
  display_name: string;
  primary_color: string;
  accent_color: string;
  logo_type: string | null;
  logo_version: number;
}

// -- name: branding-of
export async function brandingOf(db: Db | Tx, workspaceId: string): Promise<BrandingRow | undefined> {
  return db
    .selectFrom('workspace_branding')
    .select(['workspace_id', 'display_name', 'primary_color', 'accent_color', 'logo_type', 'logo_version'])
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
}

// -- name: branding-by-app-host
// The branding of the workspace whose app host (a tracking_domain row of purpose 'app') is `host`.
export async function brandingByAppHost(db: Db | Tx, host: string): Promise<BrandingRow | undefined> {
  const r = await sql<BrandingRow>`
    select b.workspace_id, b.display_name, b.primary_color, b.accent_color, b.logo_type, b.logo_version
      from tracking_domain d join workspace_branding b on b.workspace_id = d.workspace_id
     where d.host = ${host} and d.purpose = 'app'`.execute(db);
  return r.rows[0];
}

// -- name: upsert-branding
export async function upsertBranding(db: Db | Tx, workspaceId: string, b: { displayName: string; primaryColor: string; accentColor: string }, now: Date): Promise<void> {
  await db
    .insertInto('workspace_branding')
    .values({ workspace_id: workspaceId, display_name: b.displayName, primary_color: b.primaryColor, accent_color: b.accentColor, updated_at: now })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ display_name: b.displayName, primary_color: b.primaryColor, accent_color: b.accentColor, updated_at: now }))
    .execute();
}

// -- name: set-logo
// Only once the workspace has branding (its colours and name): the caller saves those first.
export async function setLogo(db: Db | Tx, workspaceId: string, logo: { bytes: Buffer; type: 'image/png' | 'image/jpeg' | 'image/webp' } | null, now: Date): Promise<boolean> {
  const r = await db
    .updateTable('workspace_branding')
    .set((eb) => ({ logo: logo?.bytes ?? null, logo_type: logo?.type ?? null, logo_version: eb('logo_version', '+', 1), updated_at: now }))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

// -- name: logo-of
export async function logoOf(db: Db | Tx, workspaceId: string): Promise<{ bytes: Buffer; type: string } | undefined> {
  const r = await db.selectFrom('workspace_branding').select(['logo', 'logo_type']).where('workspace_id', '=', workspaceId).executeTakeFirst();
  return r?.logo && r.logo_type ? { bytes: Buffer.from(r.logo), type: r.logo_type } : undefined;
}

export interface UsageRow {
  workspace_id: string;
  sends: number;
  replies: number;
  mailboxes: number;
  leads: number;
  seats: number;
}

// -- name: client-usage
// Per client of the agency over [from, to): emails sent (outbound messages of an enrollment),
// replies (inbound messages threaded to an enrollment), leads added; and, as of now, the
// mailboxes connected and the seats (memberships, the client's own people only).
export async function clientUsage(db: Db | Tx, agencyId: string, from: Date, to: Date): Promise<UsageRow[]> {
  const r = await sql<UsageRow>`
    select w.id as workspace_id,
      (select count(*) from message m where m.workspace_id = w.id and m.direction = 'outbound' and m.enrollment_id is not null and m.at >= ${from} and m.at < ${to})::int as sends,
      (select count(*) from message m where m.workspace_id = w.id and m.direction = 'inbound' and m.enrollment_id is not null and m.at >= ${from} and m.at < ${to})::int as replies,
      (select count(*) from mailbox x where x.workspace_id = w.id)::int as mailboxes,
      (select count(*) from lead l where l.workspace_id = w.id and l.created_at >= ${from} and l.created_at < ${to})::int as leads,
      (select count(*) from app_user u where u.workspace_id = w.id)::int as seats
    from workspace w where w.agency_id = ${agencyId} order by w.name`.execute(db);
  return r.rows.map((x) => ({ ...x, sends: Number(x.sends), replies: Number(x.replies), mailboxes: Number(x.mailboxes), leads: Number(x.leads), seats: Number(x.seats) }));
}
