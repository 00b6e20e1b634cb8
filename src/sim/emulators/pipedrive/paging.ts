import { pipedriveErrors } from './errors.ts';
import type { EmulatorReply } from '../server.ts';

/**
 * v2 cursor pagination: `limit` (default 100, at most 500) and `cursor`, the opaque
 * `additional_data.next_cursor` of the previous page (null on the last). The emulator's cursor is
 * the position in the sorted, filtered list, base64url-encoded; Pipedrive's encoding is its own
 * and a client must not read it. A cursor that does not decode is a 400 (text unverified).
 */
export const pageDefault = 100;
export const pageMax = 500;

export function page<T>(items: readonly T[], limitParam: string | undefined, cursorParam: string | undefined): { data: T[]; next_cursor: string | null } | EmulatorReply {
  let limit = pageDefault;
  if (limitParam !== undefined) {
    if (!/^\d+$/.test(limitParam) || Number(limitParam) < 1) return pipedriveErrors.badRequestV2(`Invalid limit '${limitParam}'`);
    if (Number(limitParam) > pageMax) return pipedriveErrors.badRequestV2(`limit must be at most ${pageMax}`);
    limit = Number(limitParam);
  }
  let start = 0;
  if (cursorParam !== undefined) {
    const decoded = /^o:(\d+)$/.exec(Buffer.from(cursorParam, 'base64url').toString('utf8'));
    if (!decoded) return pipedriveErrors.badRequestV2('Invalid cursor');
    start = Number(decoded[1]);
  }
  const data = items.slice(start, start + limit);
  const end = start + data.length;
  return { data, next_cursor: end < items.length ? Buffer.from(`o:${end}`).toString('base64url') : null };
}
