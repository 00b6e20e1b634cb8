/**
 * A workspace's single sign-on settings (0095_sso.sql): which OpenID provider its people sign in
 * with, which email domains join on their first sign-in, and which role each group gets. The client
 * secret is sealed with the workspace's data key (the vault, context 'sso:<workspace>'), like
 * webhook secrets and CRM tokens, and never leaves this file but to the token request.
 */
import { sql } from 'kysely';
import { cadenzaError } from '../../../common/errors.ts';
import type { Db } from '../../../store/store.ts';
import type { SecretSealer } from '../../webhooks/secrets.ts';
import { syncDomainProofs } from './domain-proof.ts';

export type SsoRole = 'admin' | 'member';

export interface RoleRule {
  /** A value of the groups claim, compared exactly. */
  group: string;
  role: SsoRole;
}

/** What an admin sees and sets (never the secret). */
export interface SsoSettings {
  enabled: boolean;
  issuer: string;
  clientId: string;
  allowedDomains: string[];
  groupsClaim: string;
  roleMapping: RoleRule[];
  defaultRole: SsoRole;
  passwordAllowed: boolean;
  updatedAt: Date;
}

/** The settings with the client secret opened, for a sign-in. */
export interface SsoProvider extends SsoSettings {
  workspaceId: string;
  clientSecret: string;
}

export const ssoSecretContext = (workspaceId: string) => `sso:${workspaceId}`;

/** A domain as stored: lower case, no leading @ or trailing dot. */
export function normalizeDomain(d: string): string {
  return d.trim().toLowerCase().replace(/^@/, '').replace(/\.$/, '');
}

/** The domain of an address (after the last @), normalized; '' when there is none. */
export function emailDomain(email: string): string {
  const at = email.lastIndexOf('@');
  return at < 0 ? '' : normalizeDomain(email.slice(at + 1));
}

type Row = {
  workspace_id: string;
  enabled: boolean;
  issuer: string;
  client_id: string;
  client_secret_sealed: Buffer;
  allowed_domains: string[];
  groups_claim: string;
  role_mapping: unknown;
  default_role: SsoRole;
  password_allowed: boolean;
  updated_at: Date;
};

function settingsOf(r: Row): SsoSettings {
  const mapping = typeof r.role_mapping === 'string' ? (JSON.parse(r.role_mapping) as RoleRule[]) : (r.role_mapping as RoleRule[]);
  return {
    enabled: r.enabled,
    issuer: r.issuer,
    clientId: r.client_id,
    allowedDomains: r.allowed_domains,
    groupsClaim: r.groups_claim,
    roleMapping: mapping,
    defaultRole: r.default_role,
    passwordAllowed: r.password_allowed,
    updatedAt: r.updated_at,
  };
}

// -- name: sso-settings
export async function readSsoSettings(db: Db, workspaceId: string): Promise<SsoSettings | undefined> {
  const r = await db.selectFrom('workspace_sso').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
  return r && settingsOf(r);
}

/** The enabled provider of the workspace, its secret opened; undefined when it has none (or it is off). */
export async function ssoProvider(db: Db, sealer: SecretSealer, workspaceId: string): Promise<SsoProvider | undefined> {
  const r = await db.selectFrom('workspace_sso').selectAll().where('workspace_id', '=', workspaceId).where('enabled', '=', true).executeTakeFirst();
  if (!r) return undefined;
  return { ...settingsOf(r), workspaceId, clientSecret: await sealer.open(workspaceId, ssoSecretContext(workspaceId), r.client_secret_sealed) };
}

// -- name: sso-workspace-by-domain
/**
 * The workspace whose enabled provider admits this domain and has proven it (domain-proof.ts), if
 * any: a domain is proven by one workspace at most; an unproven claim routes nobody.
 */
export async function workspaceForDomain(db: Db, domain: string): Promise<string | undefined> {
  const d = normalizeDomain(domain);
  const r = await db
    .selectFrom('workspace_sso as s')
    .innerJoin('workspace_sso_domain as p', 'p.workspace_id', 's.workspace_id')
    .select('s.workspace_id')
    .where('s.enabled', '=', true)
    .where('p.domain', '=', d)
    .where('p.verified_at', 'is not', null)
    .where(sql<boolean>`${d} = any(s.allowed_domains)`)
    .executeTakeFirst();
  return r?.workspace_id;
}

export interface SsoChange {
  enabled: boolean;
  issuer: string;
  clientId: string;
  /** Absent: keep the stored one (required the first time). */
  clientSecret?: string | undefined;
  allowedDomains: string[];
  groupsClaim: string;
  roleMapping: RoleRule[];
  defaultRole: SsoRole;
  passwordAllowed: boolean;
}

/**
 * Saves the settings. A domain another workspace has proven (domain-proof.ts) is refused: a sign-in
 * by email domain must find one workspace, and one workspace's provider must not vouch for
 * another's people. A domain merely listed elsewhere is not: an unproven claim must not lock the
 * domain's owner out. Each listed domain gets its proof token here.
 */
export async function saveSsoSettings(db: Db, sealer: SecretSealer, workspaceId: string, c: SsoChange, now: Date): Promise<SsoSettings> {
  const domains = [...new Set(c.allowedDomains.map(normalizeDomain).filter(Boolean))].sort();
  return db.transaction().execute(async (tx) => {
    for (const d of domains) {
      const other = await tx.selectFrom('workspace_sso_domain').select('workspace_id').where('workspace_id', '!=', workspaceId).where('domain', '=', d).where('verified_at', 'is not', null).executeTakeFirst();
      if (other) throw cadenzaError('CONFLICT', `${d} already signs in to another workspace of this installation; a domain can belong to one workspace only`, { field: 'allowedDomains', domain: d });
    }
    const existing = await tx.selectFrom('workspace_sso').select('workspace_id').where('workspace_id', '=', workspaceId).forUpdate().executeTakeFirst();
    if (!existing && !c.clientSecret) throw cadenzaError('INVALID_INPUT', 'the client secret is needed the first time single sign-on is set up', { field: 'clientSecret' });
    const values = {
      enabled: c.enabled,
      issuer: c.issuer,
      client_id: c.clientId,
      allowed_domains: domains,
      groups_claim: c.groupsClaim,
      role_mapping: JSON.stringify(c.roleMapping),
      default_role: c.defaultRole,
      password_allowed: c.passwordAllowed,
      updated_at: now,
      ...(c.clientSecret ? { client_secret_sealed: await sealer.seal(workspaceId, ssoSecretContext(workspaceId), c.clientSecret, tx) } : {}),
    };
    if (existing) await tx.updateTable('workspace_sso').set(values).where('workspace_id', '=', workspaceId).execute();
    else await tx.insertInto('workspace_sso').values({ workspace_id: workspaceId, ...values, client_secret_sealed: values.client_secret_sealed! }).execute();
    await syncDomainProofs(tx, workspaceId, domains);
    const r = await tx.selectFrom('workspace_sso').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
    return settingsOf(r);
  });
}

export async function deleteSsoSettings(db: Db, workspaceId: string): Promise<boolean> {
  const r = await db.deleteFrom('workspace_sso').where('workspace_id', '=', workspaceId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

// -- name: sso-password-refused
/**
 * The first workspace of the account whose provider forbids password sign-in for it (any role but
 * owner: an owner keeps the password as the way in when the provider is down or misconfigured).
 */
export async function passwordRefusedBy(db: Db, accountId: string): Promise<string | undefined> {
  const r = await db
    .selectFrom('app_user as u')
    .innerJoin('workspace_sso as s', 's.workspace_id', 'u.workspace_id')
    .innerJoin('workspace as w', 'w.id', 'u.workspace_id')
    .select('w.name')
    .where('u.account_id', '=', accountId)
    .where('u.role', '!=', 'owner')
    .where('s.enabled', '=', true)
    .where('s.password_allowed', '=', false)
    .executeTakeFirst();
  return r?.name;
}

/** The role the groups claim maps to: the first rule whose group the person is in, else the default. */
export function mappedRole(s: Pick<SsoSettings, 'roleMapping' | 'defaultRole'>, groups: readonly string[]): SsoRole {
  return s.roleMapping.find((r) => groups.includes(r.group))?.role ?? s.defaultRole;
}
