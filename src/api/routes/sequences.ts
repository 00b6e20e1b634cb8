import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { renderEmail } from '../../sequence/template/render.ts';
import { templateProblems } from '../../sequence/template/validate.ts';
import { applyDefinition } from '../../sequence/apply-definition.ts';
import { enrollLeads } from '../enroll-leads.ts';
import { loadDefinition } from '../../sequence/definition-document.ts';
import { gapWarnings } from '../../sequence/gap-warnings.ts';
import { threadWarnings } from '../../sequence/thread-entry.ts';
import { poolGaps } from '../../mailbox/pacing/pacing-settings.ts';
import { validateDefinition } from '../../sequence/definition.ts';
import { TEMPLATE_CHECK_SAMPLE, templatesFailingForAll } from '../../sequence/template-check.ts';
import { leadValues, senderValues } from '../../sending/send-context.ts';
import { findSequenceId, listSequences } from '../../sequence/sql/sequences.ts';
import { findLead, oldestLeads } from '../../leads/sql/leads.ts';
import { leadIdsNotIn } from '../../leads/sql/lead-ids.ts';
import { poolMailboxes } from '../../mailbox/sql/mailboxes.ts';
import { stepSignature } from '../../mailbox/signature.ts';
import { withSignature } from '../../common/email-html.ts';
import { enrollmentService } from '../context.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { MAX_YAML_BYTES, parseDefinitionYaml, renderDefinitionYaml } from '../../sequence/definition-yaml.ts';
import { isCadenzaError } from '../../common/errors.ts';
import { stringify as stringifyYaml } from 'yaml';
import { bodyToDocument, definitionToBody, definitionToInput, sequenceDetail, sequenceInput } from './sequence-body.ts';

const status = z.enum(['draft', 'active', 'paused', 'archived']);

/** What an enrollment of many leads did, each refusal with its reason (a sequence's Launch, a list's enroll). */
export const enrollOutcome = z
  .object({
    enrolled: z.number().int(),
    invalid: z.number().int().describe('Leads skipped: list hygiene found the address invalid, or it was rejected on review (reason invalid_address)'),
    held: z.number().int().describe('Risky leads held until approved in the review queue (reason held_for_review)'),
    refused: z.array(z.object({ leadId: z.string(), email: z.string().optional(), reason: z.string(), detail: z.string().optional() })),
  })
  .meta({ id: 'EnrollOutcome' });

export const sequenceRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/sequences',
    summary: 'Sequences with their step count and enrollments by state (the client portal reads it for its reports)',
    tags: ['sequences'],
    access: { workspace: 'viewer' },
    params: workspaceParams({}),
    response: z.object({
      sequences: z.array(z.object({ id: z.uuid(), key: z.string(), name: z.string(), status, steps: z.number().int(), active: z.number().int(), replied: z.number().int() })),
    }),
    handler: async ({ ctx, ws }) => {
      const rows = await listSequences(ctx.store.db, ws.workspaceId, 'newest');
      return { sequences: rows.map((r) => ({ id: r.id, key: r.key, name: r.name, status: r.status, steps: r.steps, active: r.active, replied: r.replied })) };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/sequences/:sequenceId',
    summary: 'A sequence with every field of its definition (as `cadenza sequence export` writes it): settings, stop rules, tracking, mailbox pool, steps and variants',
    tags: ['sequences'],
    access: { workspace: 'member' },
    params: workspaceParams({ sequenceId: z.uuid() }),
    response: sequenceDetail,
    handler: async ({ ctx, ws, params }) => {
      const def = await loadDefinition(ctx.store.db, ws.workspaceId, params.sequenceId);
      if (!def) throw cadenzaError('NOT_FOUND', 'no such sequence');
      return definitionToBody(def);
    },
  }),
  defineRoute({
    method: 'PUT',
    url: '/api/workspaces/:workspaceId/sequences',
    summary: 'Create or replace a sequence by key, as `cadenza sequence apply` does (steps matched by key; running enrollments re-planned; a field left out takes its default)',
    tags: ['sequences'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: sequenceInput.extend({ confirm: z.boolean().optional().describe('Save even if an email template renders for none of the leads (else 409 TEMPLATE_FAILS_FOR_ALL)') }),
    example: () => ({ body: { key: 'intro', name: 'Intro', window: 'Mon-Fri 09:00-17:00', steps: [{ key: 's1', type: 'email' as const, delay: '0 minutes', subject: 'Hi', body: 'Hello {{first_name}}', variants: [] }] } }),
    response: z.object({
      sequenceId: z.uuid(),
      created: z.boolean(),
      version: z.number().int(),
      replanned: z.number().int(),
      warnings: z.array(z.string()).describe('E.g. a step delay shorter than the gap its mailboxes keep between sends (the send waits for the gap)'),
    }),
    handler: async ({ ctx, ws, body }) => {
      const def = validateDefinition(bodyToDocument(body));
      if (!body.confirm) {
        // Before saving: a template that fails for every lead would block every send of its step.
        const leads = await oldestLeads(ctx.store.db, ws.workspaceId, TEMPLATE_CHECK_SAMPLE);
        const sender = (await poolMailboxes(ctx.store.db, ws.workspaceId, def.mailboxes))[0];
        const failures = templatesFailingForAll(def, leads.map(leadValues), sender ? senderValues(sender) : null);
        if (failures.length) {
          const list = failures.map((f) => `step ${f.step}, variant ${f.variant}: ${f.reason}`).join('; ');
          throw cadenzaError('TEMPLATE_FAILS_FOR_ALL', `a template renders for none of the ${leads.length} leads checked (${list}); save with confirm: true to save anyway`, { failures, leadsChecked: leads.length });
        }
      }
      const deps = { clock: ctx.clock, random: ctx.random };
      const summary = await applyDefinition(ctx.store, deps, ws.workspaceId, def);
      const replanned = summary.created ? 0 : await enrollmentService(ctx).replanSequence(summary.sequenceId);
      // An edit (a shorter delay, a wider window, a paused sequence set active) may make steps due now.
      if (replanned > 0) ctx.workDue?.();
      const warnings = [...threadWarnings(def), ...gapWarnings(def, await poolGaps(ctx.store.db, ws.workspaceId, def.mailboxes))];
      return { sequenceId: summary.sequenceId, created: summary.created, version: summary.version, replanned, warnings };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/sequences/yaml/parse',
    summary: "Read a definition file's YAML (as `cadenza sequence export` writes it) into the editor's body, as PUT takes it; a YAML or definition problem is INVALID_INPUT with every problem in details.problems (each with its line or field path)",
    tags: ['sequences'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    // Counted again in bytes by parseDefinitionYaml; this bounds the characters before anything is parsed.
    body: z.object({ yaml: z.string().max(MAX_YAML_BYTES).describe(`The YAML text, at most ${MAX_YAML_BYTES} bytes`) }),
    example: () => ({ body: { yaml: "key: intro\nname: Intro\nsteps:\n  - key: s1\n    type: email\n    delay: 0 minutes\n    subject: Hi\n    body: Hello {{first_name}}\n" } }),
    response: sequenceInput,
    handler: async ({ body }) => definitionToInput(parseDefinitionYaml(body.yaml)),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/sequences/yaml/render',
    summary: "The editor's body as the YAML `cadenza sequence export` would write once it is saved; a body that does not validate yet is written as given, with its problems listed",
    tags: ['sequences'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({ body: sequenceInput }),
    example: () => ({ body: { body: { key: 'intro', name: 'Intro', steps: [{ key: 's1', type: 'email' as const, delay: '0 minutes', subject: 'Hi', body: 'Hello {{first_name}}', variants: [] }] } } }),
    response: z.object({
      yaml: z.string(),
      problems: z.array(z.string()).describe("Empty: the YAML is exactly the export's. Else what PUT would refuse, and the YAML is the body's fields as given (delays as typed)"),
    }),
    handler: async ({ body }) => {
      const doc = bodyToDocument(body.body);
      try {
        return { yaml: renderDefinitionYaml(validateDefinition(doc)), problems: [] };
      } catch (e) {
        if (!isCadenzaError(e, 'INVALID_INPUT')) throw e;
        const problems = Array.isArray(e.details.problems) ? (e.details.problems as string[]) : [e.message];
        return { yaml: stringifyYaml(doc), problems };
      }
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/sequences/:sequenceId/enroll',
    summary: 'Enroll leads (by id, or every lead not yet in the sequence); each refusal has a reason',
    tags: ['sequences'],
    access: { workspace: 'member' },
    params: workspaceParams({ sequenceId: z.uuid() }),
    body: z.union([z.object({ leadIds: z.array(z.uuid()).min(1).max(100_000) }), z.object({ all: z.literal(true) })]),
    example: (ids) => ({ body: { leadIds: [ids.leadId ?? '00000000-0000-4000-8000-000000000000'] } }),
    response: enrollOutcome,
    handler: async ({ ctx, ws, params, body }) => {
      const sequenceId = await findSequenceId(ctx.store.db, ws.workspaceId, params.sequenceId);
      if (!sequenceId) throw cadenzaError('NOT_FOUND', 'no such sequence');
      const leadIds = 'leadIds' in body ? body.leadIds : await leadIdsNotIn(ctx.store.db, ws.workspaceId, sequenceId);
      return enrollLeads(ctx, ws.workspaceId, sequenceId, leadIds);
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/sequences/preview',
    summary: "Render a subject and body against a lead, as the sender would (variables, filters, spintax), sent from a mailbox of the pool (`{{sender.*}}`), that mailbox's signature appended unless the step says none",
    tags: ['sequences'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({
      leadId: z.uuid(),
      subject: z.string().max(998),
      body: z.string().max(100_000),
      mailboxes: z.array(z.string().max(320)).max(1000).default([]).describe("The sequence's mailbox pool (addresses); empty: every mailbox of the workspace"),
      mailboxId: z.uuid().optional().describe('The mailbox of the pool it is sent from; default: the first of the pool (by address)'),
      signature: z.boolean().default(true).describe("The step's signature choice: false previews it without a signature, as the sender sends it"),
    }),
    example: (ids) => ({ body: { leadId: ids.leadId ?? '00000000-0000-4000-8000-000000000000', subject: 'Hi', body: 'Hello {{first_name}}' } }),
    response: z.object({
      subject: z.string().nullable(),
      text: z.string(),
      problems: z.array(z.string()),
      sender: z.object({ id: z.uuid(), email: z.string(), name: z.string().nullable() }).nullable().describe('The mailbox it previews as sent from; null: the pool has none'),
    }),
    handler: async ({ ctx, ws, params, body }) => {
      void params;
      const lead = await findLead(ctx.store.db, ws.workspaceId, body.leadId);
      if (!lead) throw cadenzaError('NOT_FOUND', 'no such lead');
      const pool = await poolMailboxes(ctx.store.db, ws.workspaceId, body.mailboxes);
      const mailbox = body.mailboxId ? pool.find((m) => m.id === body.mailboxId) : pool[0];
      if (body.mailboxId && !mailbox) throw cadenzaError('NOT_FOUND', "no such mailbox in the sequence's pool");
      const sender = mailbox ? { id: mailbox.id, email: mailbox.email, name: mailbox.display_name } : null;
      const problems = templateProblems({ subject: body.subject, text: body.body }, 'step');
      if (problems.length) return { subject: null, text: '', problems, sender };
      // A fixed seed: the preview shows one spin and keeps it while the person types elsewhere.
      const r = renderEmail({ subject: body.subject, text: body.body }, { lead: leadValues(lead), sender: mailbox ? senderValues(mailbox) : null }, { enrollmentId: lead.id, stepId: 'preview' });
      if (!r.ok) return { subject: null, text: '', problems: [r.reason], sender };
      // The signature of the mailbox it is sent from, chosen and appended as the sender does at compose time.
      return { subject: r.subject, text: withSignature({ text: r.text }, stepSignature(body, mailbox)).text, problems: [], sender };
    },
  }),
];
