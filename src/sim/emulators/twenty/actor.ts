/**
 * Twenty's ACTOR composite, stamped on every record as createdBy and updatedBy
 * (field-metadata/composite-types/actor.composite-type.ts): who made the change.
 *
 *   an API key      {source: 'API', workspaceMemberId: null, name: <the key's name>, context: {}}
 *                   (core-modules/actor/utils/build-created-by-from-api-key.util.ts)
 *   a user in the   {source: 'MANUAL', workspaceMemberId: <member id>, name: <first and last name>,
 *   app             context: {}} (build-created-by-from-full-name-metadata.util.ts)
 *
 * That Twenty also stamps updatedBy this way on every update is read from its actor module's
 * update hook; the exact version that added updatedBy is unverified.
 */
export interface Actor {
  source: 'API' | 'MANUAL' | 'IMPORT' | 'WORKFLOW' | 'EMAIL' | 'CALENDAR' | 'SYSTEM';
  workspaceMemberId: string | null;
  name: string;
  context: Record<string, unknown>;
}

export function apiKeyActor(keyName: string): Actor {
  return { source: 'API', workspaceMemberId: null, name: keyName, context: {} };
}

export function memberActor(member: { id: string; name?: unknown }): Actor {
  const n = (member.name ?? {}) as { firstName?: string; lastName?: string };
  return { source: 'MANUAL', workspaceMemberId: member.id, name: [n.firstName, n.lastName].filter(Boolean).join(' '), context: {} };
}
