import { z } from 'zod';
import { htmlToText, MAX_EMAIL_HTML, sanitizeEmailHtml } from '../../common/email-html.ts';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import { deleteTemplate, findTemplate, insertTemplate, listTemplates, renameTemplate, type EmailTemplateRow } from '../../sequence/sql/email-templates.ts';
import { templateProblems } from '../../sequence/template/validate.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

/**
 * The workspace's email template library (docs/web.md "The email editor"): save a step's email
 * as a template, insert one into a step, list, rename, delete. The HTML goes through the email
 * allow-list before it is stored, as a step's does (common/email-html.ts).
 */

const templateBody = z
  .object({
    id: z.uuid(),
    name: z.string(),
    subject: z.string(),
    html: z.string().describe("Sanitized HTML; '' for a text-only template"),
    text: z.string().describe('The plain-text part'),
    updatedAt: z.string(),
  })
  .meta({ id: 'EmailTemplate' });

const templateName = z.string().trim().min(1, 'a template needs a name').max(200, 'a template name is at most 200 characters');

function view(t: EmailTemplateRow): z.output<typeof templateBody> {
  return { id: t.id, name: t.name, subject: t.subject, html: t.body_html ?? '', text: t.body_text, updatedAt: new Date(t.updated_at).toISOString() };
}

export const emailTemplateRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/email-templates',
    summary: "The workspace's email templates, by name",
    tags: ['sequences'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({ templates: z.array(templateBody) }),
    handler: async ({ ctx, ws }) => ({ templates: (await listTemplates(ctx.store.db, ws.workspaceId)).map(view) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/email-templates',
    summary: "Save an email as a template (the HTML is sanitized; a text left out is made from it)",
    tags: ['sequences'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({
      name: templateName,
      subject: z.string().max(998).default(''),
      html: z.string().max(MAX_EMAIL_HTML, `a template's HTML is at most ${MAX_EMAIL_HTML} characters`).default(''),
      text: z.string().max(100_000).default(''),
    }),
    example: () => ({ body: { name: 'Intro', subject: 'Quick question', html: '<p>Hi {{first_name | default: "there"}},</p>' } }),
    response: templateBody,
    handler: async ({ ctx, ws, body }) => {
      const html = body.html.trim() ? sanitizeEmailHtml(body.html) : '';
      const text = body.text.trim() ? body.text : htmlToText(html);
      if (!text.trim()) throw cadenzaError('INVALID_INPUT', 'a template needs some text');
      const problems = templateProblems({ subject: body.subject || null, text, html: html || null }, 'template');
      if (problems.length) throw cadenzaError('INVALID_INPUT', problems.join('; '));
      const id = newId(ctx.clock.now(), ctx.random);
      const at = new Date(ctx.clock.now());
      if (!(await insertTemplate(ctx.store.db, { id, workspaceId: ws.workspaceId, name: body.name, subject: body.subject, html: html || null, text, createdBy: ws.userId, at }))) {
        throw cadenzaError('CONFLICT', `a template named "${body.name}" already exists in this workspace`);
      }
      return view((await findTemplate(ctx.store.db, ws.workspaceId, id))!);
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/workspaces/:workspaceId/email-templates/:templateId',
    summary: 'Rename a template',
    tags: ['sequences'],
    access: { workspace: 'member' },
    params: workspaceParams({ templateId: z.uuid() }),
    body: z.object({ name: templateName }),
    example: () => ({ body: { name: 'Intro (short)' } }),
    response: templateBody,
    handler: async ({ ctx, ws, params, body }) => {
      const r = await renameTemplate(ctx.store.db, ws.workspaceId, params.templateId, body.name, new Date(ctx.clock.now()));
      if (r === 'missing') throw cadenzaError('NOT_FOUND', 'no such template in this workspace');
      if (r === 'taken') throw cadenzaError('CONFLICT', `a template named "${body.name}" already exists in this workspace`);
      return view((await findTemplate(ctx.store.db, ws.workspaceId, params.templateId))!);
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/email-templates/:templateId',
    summary: 'Delete a template (steps it was inserted into keep their text)',
    tags: ['sequences'],
    access: { workspace: 'member' },
    params: workspaceParams({ templateId: z.uuid() }),
    response: z.object({ ok: z.literal(true) }),
    handler: async ({ ctx, ws, params }) => {
      if (!(await deleteTemplate(ctx.store.db, ws.workspaceId, params.templateId))) throw cadenzaError('NOT_FOUND', 'no such template in this workspace');
      return { ok: true as const };
    },
  }),
];
