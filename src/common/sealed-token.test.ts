import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seal, unseal } from './sealed-token.ts';
import { createMasterKey, deriveKey, readMasterKey } from './secrets.ts';

describe('sealed tokens', () => {
  const key = randomBytes(32);

  it('round-trips a payload and hides it', () => {
    const t = seal(key, { k: 'click', url: 'https://example.com/pricing?x=1' });
    expect(t).not.toContain('example');
    expect(unseal(key, t)).toEqual({ k: 'click', url: 'https://example.com/pricing?x=1' });
  });

  it('refuses a token sealed with another key, or any change to a token', () => {
    const t = seal(key, { a: 1 });
    expect(unseal(randomBytes(32), t)).toBeNull();
    fc.assert(
      fc.property(fc.nat({ max: t.length - 1 }), fc.constantFrom(...'ABCabc012_-'), (i, ch) => {
        fc.pre(t[i] !== ch);
        const changed = t.slice(0, i) + ch + t.slice(i + 1);
        expect(unseal(key, changed)).toBeNull();
      }),
    );
  });

  it('never throws on garbage', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (s) => {
        expect(unseal(key, s)).toBeNull();
      }),
    );
  });
});

describe('the master key', () => {
  it('is created once in the data folder with mode 0600 and read back the same', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-key-'));
    try {
      const a = createMasterKey({ env: {}, dataDir: dir });
      expect(statSync(join(dir, 'master.key')).mode & 0o777).toBe(0o600);
      expect(readMasterKey({ env: {}, dataDir: dir })!.equals(a)).toBe(true);
      expect(deriveKey(a, 'x').equals(deriveKey(a, 'y'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('comes from the environment when set, and a wrong one is a clear error', () => {
    const k = randomBytes(32).toString('base64');
    expect(readMasterKey({ env: { CADENZA_MASTER_KEY: k }, dataDir: '/nonexistent' })!.toString('base64')).toBe(k);
    expect(() => readMasterKey({ env: { CADENZA_MASTER_KEY: 'short' }, dataDir: '/x' })).toThrow(/32 bytes/);
  });
});
