import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Route handlers call domain functions, never SQL: a handler keeps authorization, validation and
 * the mapping of results to HTTP, and every query is a named function in the query files of the
 * domain that owns the data (leads/sql/, sequence/sql/, mailbox/sql/, ingest/sql/, api/auth/…).
 * This test fails when a route file builds or runs a query itself.
 */
const ROUTES = join(import.meta.dirname);

/**
 * Route files still allowed to hold queries, each with why. Shrink it; never grow it: move the
 * query next to its domain instead. A file here that no longer holds SQL fails the test too, so
 * that the list only ever gets shorter. Empty since issue 12 moved every query out.
 */
const ALLOWED: Record<string, string> = {};

/** What a query looks like in TypeScript here: a Kysely builder, a `sql` template, or a chain on a builder a domain function returned. */
const QUERY_SIGNS: Array<[string, RegExp]> = [
  ['selectFrom(', /\bselectFrom\(/],
  ['insertInto(', /\binsertInto\(/],
  ['updateTable(', /\bupdateTable\(/],
  ['deleteFrom(', /\bdeleteFrom\(/],
  ['a sql`…` template', /\bsql(<[^`\n]*>)?`/],
  ["an import from 'kysely'", /from ['"]kysely['"]/],
  ['a builder chain (where, orderBy, execute…)', /\.(where|whereRef|orderBy|executeTakeFirst|executeTakeFirstOrThrow)\(/],
];

function routeFiles(): string[] {
  return readdirSync(ROUTES)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .sort();
}

/** Each query sign found in the file, with its line. */
function querySigns(file: string): string[] {
  const lines = readFileSync(join(ROUTES, file), 'utf8').split('\n');
  const found: string[] = [];
  lines.forEach((line, i) => {
    for (const [what, re] of QUERY_SIGNS) if (re.test(line)) found.push(`${file}:${i + 1}: ${what}`);
  });
  return found;
}

describe('route handlers hold no SQL', () => {
  it('finds the route files', () => {
    expect(routeFiles()).toContain('leads.ts');
  });

  it('no route file outside the allow-list builds or runs a query', () => {
    const offending = routeFiles()
      .filter((f) => !(f in ALLOWED))
      .flatMap(querySigns);
    expect(offending, 'move these queries into named functions in the query files of the domain that owns the data').toEqual([]);
  });

  it('every file on the allow-list still exists and still needs its place', () => {
    const files = new Set(routeFiles());
    const stale = Object.keys(ALLOWED).filter((f) => !files.has(f) || querySigns(f).length === 0);
    expect(stale, 'take these off ALLOWED in no-sql.test.ts: they hold no query now').toEqual([]);
  });

  it('recognises each kind of query', () => {
    const samples = [
      "db.selectFrom('lead')",
      "tx.insertInto('lead')",
      "db.updateTable('lead')",
      "db.deleteFrom('lead')",
      'sql`select 1`',
      'sql<number>`select 1`',
      "import { sql } from 'kysely';",
      "q.where('id', '=', id)",
      'q.executeTakeFirst()',
    ];
    for (const s of samples) expect(QUERY_SIGNS.some(([, re]) => re.test(s)), s).toBe(true);
    expect(QUERY_SIGNS.some(([, re]) => re.test('await db.transaction().execute(async (tx) => f(tx))'))).toBe(false);
  });
});
