import type { Clock } from '../common/clock.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import type { Store } from '../store/store.ts';
import { agencyOf, insertClient, upsertBranding } from './sql/agency.ts';

export type CreateClientResult = { ok: true; workspaceId: string } | { ok: false; why: 'nested'; message: string };

/**
 * A client workspace under the agency, branded with its name and the default colours. Nobody is
 * a member yet: the agency's admins reach it through the agency (src/api/auth/agency.ts), and
 * they invite the client's own people (as viewers for the portal, or members).
 * One level only: a client workspace cannot own clients itself.
 */
export async function createClient(store: Store, deps: { clock: Clock; random: Random }, o: { agencyId: string; name: string; timeZone: string }): Promise<CreateClientResult> {
  return store.db.transaction().execute(async (tx) => {
    if ((await agencyOf(tx, o.agencyId)) != null) return { ok: false as const, why: 'nested' as const, message: 'this workspace is itself a client of an agency; only the agency creates clients' };
    const workspaceId = newId(deps.clock.now(), deps.random);
    await insertClient(tx, { id: workspaceId, agencyId: o.agencyId, name: o.name, timeZone: o.timeZone });
    await upsertBranding(tx, workspaceId, { displayName: o.name, ...DEFAULT_COLOURS }, new Date(deps.clock.now()));
    return { ok: true as const, workspaceId };
  });
}

export const DEFAULT_COLOURS = { primaryColor: '#3d5afe', accentColor: '#00897b' };
