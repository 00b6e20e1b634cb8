import { describe, expect, it } from 'vitest';
import { isTransientStoreError } from './transient.ts';

describe('isTransientStoreError', () => {
  it("a connect that ran out of time is transient (a host cut off answers no SYN: the next host is tried); a statement's error is not", () => {
    expect(isTransientStoreError(new Error('timeout expired'))).toBe(true); // pg.Client connectionTimeoutMillis
    expect(isTransientStoreError(new Error('timeout exceeded when trying to connect'))).toBe(true); // pg-pool
    expect(isTransientStoreError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isTransientStoreError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }))).toBe(false);
    expect(isTransientStoreError(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
  });
});
