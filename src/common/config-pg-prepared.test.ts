import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';

describe('CADENZA_PG_PREPARED_STATEMENTS', () => {
  it('keeps 256 by default; 0 turns named statements off; a negative or huge count is refused', () => {
    expect(loadConfig({}).CADENZA_PG_PREPARED_STATEMENTS).toBe(256);
    expect(loadConfig({ CADENZA_PG_PREPARED_STATEMENTS: '0' }).CADENZA_PG_PREPARED_STATEMENTS).toBe(0);
    expect(() => loadConfig({ CADENZA_PG_PREPARED_STATEMENTS: '-1' })).toThrow(/CADENZA_PG_PREPARED_STATEMENTS/);
    expect(() => loadConfig({ CADENZA_PG_PREPARED_STATEMENTS: '100000' })).toThrow(/CADENZA_PG_PREPARED_STATEMENTS/);
    expect(() => loadConfig({ CADENZA_PG_PREPARED_STATEMENTS: 'many' })).toThrow(/CADENZA_PG_PREPARED_STATEMENTS/);
  });
});
