import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect, it } from 'vitest';

// semver is untyped here; only its subset() is used.
const semver = createRequire(import.meta.url)('semver') as { subset(sub: string, dom: string): boolean; satisfies(v: string, r: string): boolean };

interface LockPackage { version?: string; engines?: { node?: string } | string[]; dev?: boolean }

/**
 * Every installed package runs on every Node version Cadenza declares: a dependency that asks for
 * a newer Node (cookie 2 and content-disposition 3 ask for 22) is pinned back with an npm
 * override, or Cadenza's own range is raised, never left to fail on a user's machine.
 */
it("no package in package-lock.json excludes a Node version in Cadenza's engines range", () => {
  const root = new URL('../', import.meta.url);
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };
  const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as { packages: Record<string, LockPackage> };
  const ours = pkg.engines.node;
  const excluding = Object.entries(lock.packages)
    .filter(([path, p]) => path !== '' && p.engines && !Array.isArray(p.engines) && p.engines.node && !semver.subset(ours, p.engines.node))
    .map(([path, p]) => `${path.replace(/^node_modules\//, '')}@${p.version} needs node ${(p.engines as { node: string }).node}`);
  expect(excluding).toEqual([]);
  // And the Node running the tests is one of them.
  expect(semver.satisfies(process.version, ours)).toBe(true);
});
