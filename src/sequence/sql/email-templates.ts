import type { Db } from '../../store/store.ts';

/**
 * The workspace's template library (0091_email_editor.sql): saved emails a rep inserts into a
 * step. Every statement is scoped by workspace; a name is unique in its workspace.
 */

export interface EmailTemplateRow {
  id: string;
  name: string;
  subject: string;
  body_html: string | null;
  body_text: string;
  updated_at: Date | string;
}

const COLUMNS = ['id', 'name', 'subject', 'body_html', 'body_text', 'updated_at'] as const;

export async function listTemplates(db: Db, workspaceId: string): Promise<EmailTemplateRow[]> {
  return db.selectFrom('email_template').select(COLUMNS).where('workspace_id', '=', workspaceId).orderBy('name').execute();
}

export async function findTemplate(db: Db, workspaceId: string, templateId: string): Promise<EmailTemplateRow | undefined> {
  return db.selectFrom('email_template').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', templateId).executeTakeFirst();
}

/** false: the workspace has a template of that name. */
export async function insertTemplate(db: Db, t: { id: string; workspaceId: string; name: string; subject: string; html: string | null; text: string; createdBy: string | null; at: Date }): Promise<boolean> {
  const r = await db
    .insertInto('email_template')
    .values({ id: t.id, workspace_id: t.workspaceId, name: t.name, subject: t.subject, body_html: t.html, body_text: t.text, created_by: t.createdBy, created_at: t.at, updated_at: t.at })
    .onConflict((oc) => oc.columns(['workspace_id', 'name']).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** 'taken': another template of the workspace has the name. */
export async function renameTemplate(db: Db, workspaceId: string, templateId: string, name: string, at: Date): Promise<'ok' | 'missing' | 'taken'> {
  const clash = await db.selectFrom('email_template').select('id').where('workspace_id', '=', workspaceId).where('name', '=', name).where('id', '<>', templateId).executeTakeFirst();
  if (clash) return 'taken';
  const r = await db.updateTable('email_template').set({ name, updated_at: at }).where('workspace_id', '=', workspaceId).where('id', '=', templateId).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0 ? 'ok' : 'missing';
}

export async function deleteTemplate(db: Db, workspaceId: string, templateId: string): Promise<boolean> {
  const r = await db.deleteFrom('email_template').where('workspace_id', '=', workspaceId).where('id', '=', templateId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
