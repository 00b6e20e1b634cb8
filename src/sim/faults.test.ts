import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { insertInto, isWrite } from './faults.ts';

/**
 * The crash points are found by the statement's text: a write made one CTE of a larger statement
 * (store/one-statement.ts) must still be seen, or a crash armed on it never fires (the outbox's
 * crash tests passed vacuously until this was fixed) and the simulation skips its re-read.
 */
describe('fault predicates', () => {
  const node = (b: { toOperationNode(): unknown }) => b.toOperationNode() as Parameters<typeof isWrite>[0];
  const update = sql`update enrollment as e set state = ${'active'} where e.id = ${'x'}`;
  const journal = sql`insert into event (type) select t from unnest(${['a']}::text[]) as t`;
  const ctes = sql.join([sql`${sql.raw('w0')} as (${update})`], sql`, `);

  it('sees the insert and the writes inside a statement of CTEs', () => {
    const one = node(sql`with ${ctes} ${journal}`);
    expect(insertInto('event')(one)).toBe(true);
    expect(insertInto('message')(one)).toBe(false);
    expect(isWrite(one)).toBe(true);
    expect(isWrite(node(sql`with ${ctes} select 1`))).toBe(true);
  });

  it('reads a plain write and a plain read as before', () => {
    expect(insertInto('event')(node(journal))).toBe(true);
    expect(isWrite(node(update))).toBe(true);
    expect(isWrite(node(sql`select e.* from enrollment e where e.id = ${'x'} for no key update skip locked`))).toBe(false);
    expect(isWrite(node(sql`with r as (select 1) select * from r`))).toBe(false);
  });
});
