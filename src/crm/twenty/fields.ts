import type { CrmFieldWriter } from '../connector.ts';
import type { OwnActor } from './actor.ts';
import { TwentyRefusal, firstDataValue, type TwentyClient } from './client.ts';

/**
 * Field ownership, the out half, for Twenty: each update is one PATCH /rest/people/<id> with the
 * fields Cadenza owns (Twenty's REST API has no batch update by id). Cadenza's names map to
 * Twenty's fields:
 *
 *   cadenzaSequenceStatus   cadenzaSequenceStatus (custom TEXT, prepare.ts)
 *   cadenzaLastActivityAt   cadenzaLastActivityAt (custom DATE_TIME; ISO 8601)
 *   title                   jobTitle
 *
 * A key outside these is refused before anything is written (a person's name or address is a
 * composite Twenty would replace whole). null clears the field. A person that is gone (404) is
 * skipped: there is nothing left to write to. Each answer's updatedBy teaches the connection its
 * own actor (actor.ts).
 */
export const ownedPersonFields = [
  { name: 'cadenzaSequenceStatus', type: 'TEXT' as const, label: 'Cadenza sequence status', description: 'Written by Cadenza: the sequence state of this person.' },
  { name: 'cadenzaLastActivityAt', type: 'DATE_TIME' as const, label: 'Cadenza last activity', description: 'Written by Cadenza: when Cadenza last touched this person.' },
];

const fieldMap: Record<string, string> = {
  cadenzaSequenceStatus: 'cadenzaSequenceStatus',
  cadenzaLastActivityAt: 'cadenzaLastActivityAt',
  title: 'jobTitle',
};

export async function writeTwentyContactFields(
  client: TwentyClient,
  own: OwnActor,
  updates: Parameters<CrmFieldWriter['writeContactFields']>[0],
): Promise<void> {
  const bodies = updates.map((u) => {
    const body: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(u.fields)) {
      const twentyName = fieldMap[k];
      if (!twentyName) throw new Error(`Twenty: Cadenza does not write the contact field '${k}' (it writes ${Object.keys(fieldMap).join(', ')})`);
      body[twentyName] = v;
    }
    return { id: u.crmId, body };
  });
  for (const { id, body } of bodies) {
    if (Object.keys(body).length === 0) continue;
    try {
      const updated = firstDataValue(await client.request('PATCH', `/rest/people/${encodeURIComponent(id)}`, {}, body));
      if (updated && typeof updated === 'object') own.learnFrom(updated as Record<string, unknown>, 'updatedBy');
    } catch (e) {
      if (e instanceof TwentyRefusal && e.status === 404) continue;
      throw e;
    }
  }
}
