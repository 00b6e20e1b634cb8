import { describeFailure, type ApiFailure, type ApiResult } from '../providers/call.ts';
import type { FolderActionResult } from './outcomes.ts';

/**
 * A Gmail or Graph folder action's answer as a FolderActionResult (outcomes.ts):
 *   2xx                                    done, with the key the answer names
 *   404                                    not_found: the message is gone (or its id is stale)
 *   403 with a grant code (`grantCodes`),  forbidden: the grant lacks gmail.modify / Mail.ReadWrite,
 *   401 after a refresh, a dead grant      or is dead; reconnecting the mailbox is the fix
 *   anything else (429, 5xx, network, a    unavailable: try later
 *   403 for a rate limit)
 */
export function folderResult<T>(r: ApiResult<T>, api: string, grantCodes: ReadonlySet<string>, keyOf: (value: T) => string | null): FolderActionResult {
  if (r.ok) return { status: 'done', key: keyOf(r.value) };
  const f: ApiFailure = r.failure;
  const reason = describeFailure(f, api);
  if (f.kind === 'http' && f.status === 404) return { status: 'not_found', reason };
  if (f.kind === 'http' && (f.status === 401 || (f.status === 403 && f.error.codes.some((c) => grantCodes.has(c))))) return { status: 'forbidden', reason };
  if (f.kind === 'token' && !f.transient) return { status: 'forbidden', reason };
  return { status: 'unavailable', reason };
}
