import { CrmCursorExpiredError } from '../connector.ts';
import { startPosition, type StreamPosition } from './change-stream.ts';

/**
 * The readChanges cursor: the position of each of the four change streams (reader.ts), as base64url
 * JSON with a version. Twenty keeps no change log that could expire (the reader reads records'
 * current state by timestamp), so a cursor only "expires" when it cannot be read: another
 * connector's, or a version this code no longer knows; the sync then resyncs from the start.
 */
export const streamNames = ['peopleChanged', 'peopleDeleted', 'opportunitiesChanged', 'opportunitiesDeleted'] as const;
export type StreamName = (typeof streamNames)[number];
export type ChangeCursor = Record<StreamName, StreamPosition>;

const version = 1;

export function encodeChangeCursor(c: ChangeCursor): string {
  return Buffer.from(JSON.stringify({ v: version, ...c })).toString('base64url');
}

export function decodeChangeCursor(cursor: string | null): ChangeCursor {
  if (cursor === null) return Object.fromEntries(streamNames.map((n) => [n, startPosition])) as ChangeCursor;
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new CrmCursorExpiredError('Twenty: the change cursor cannot be read');
  }
  if (v?.v !== version || !streamNames.every((n) => isPosition(v[n]))) throw new CrmCursorExpiredError('Twenty: the change cursor is not one this connector wrote');
  return Object.fromEntries(streamNames.map((n) => [n, v[n]])) as ChangeCursor;
}

function isPosition(p: unknown): p is StreamPosition {
  if (typeof p !== 'object' || p === null) return false;
  const x = p as Record<string, unknown>;
  const strOrNull = (k: string) => x[k] === null || typeof x[k] === 'string';
  return strOrNull('t') && strOrNull('id') && strOrNull('hw') && typeof x.bucket === 'boolean' && Array.isArray(x.seen) && x.seen.every((s) => typeof s === 'string');
}
