import type { SalesforceClient } from './client.ts';

/**
 * Building the SOQL the connector sends (SOQL and SOSL Reference, "Quoted String Escape Sequences",
 * "Date Formats and Date Literals") and reading every page of its answer.
 */

/** A string literal: quotes and backslashes escaped, as SOQL requires. */
export function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A dateTime literal, unquoted (quoted, SOQL refuses it). */
export function dateTime(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * A query goes in the URL of a GET, and the REST API takes URIs of at most 16,384 bytes (REST API
 * Developer Guide, "Limits"); 12,000 characters of encoded IN list leave room for the rest.
 */
const maxEncodedList = 12_000;

/** `values` split so that each chunk's IN list stays within maxEncodedList once URL-encoded. */
export function inChunks(values: readonly string[]): string[][] {
  const out: string[][] = [];
  let cur: string[] = [];
  let size = 0;
  for (const v of values) {
    const len = encodeURIComponent(quote(v)).length + 3;
    if (cur.length && size + len > maxEncodedList) {
      out.push(cur);
      cur = [];
      size = 0;
    }
    cur.push(v);
    size += len;
  }
  if (cur.length) out.push(cur);
  return out;
}

/** The most chunks inChunks makes of `n` values none longer than `maxLength` characters (each may be all percent-encoded). */
export function worstChunks(n: number, maxLength: number): number {
  const worst = 3 * (maxLength + 2) + 3;
  return Math.ceil(n / Math.floor(maxEncodedList / worst));
}

export type Row = Record<string, any> & { Id: string };

/**
 * Every row of a query, following nextRecordsUrl. `withDeleted` asks the queryAll resource, which
 * also returns deleted records still in the Recycle Bin (IsDeleted = true).
 */
export async function queryAll(client: SalesforceClient, soql: string, withDeleted = false): Promise<Row[]> {
  const rows: Row[] = [];
  let answer = await client.request('GET', withDeleted ? '/queryAll' : '/query', { q: soql });
  for (;;) {
    rows.push(...((answer.body?.records ?? []) as Row[]));
    const next = answer.body?.nextRecordsUrl;
    if (answer.body?.done !== false || typeof next !== 'string') return rows;
    answer = await client.request('GET', next);
  }
}

/** Salesforce's `2026-01-05T09:30:00.000+0000` as milliseconds. */
export function parseDateTime(v: unknown): number {
  return Date.parse(String(v).replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
}
