// Compiles src/ to dist/ (run by `npm run build:src`, and by postinstall) so that `cadenza` starts
// on plain Node instead of compiling TypeScript at every start (3–8 s through tsx).
//
// One output file per source file, imports left as they are but for .ts → .js: the module graph,
// the lazily imported commands and every `import.meta.url`-relative path stay the same as in src/.
// Files src/ reads at run time (migrations, the intent model) are copied beside their modules.
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildDir, isTest, manifestFile, sourceState } from './src-build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = buildDir(root);
const started = Date.now();
const sources = sourceState(root);
const names = Object.keys(sources);
const tsFiles = names.filter((f) => f.endsWith('.ts') && !isTest(f));

// A stale manifest must not survive a failed build: remove it first, write it last.
rmSync(manifestFile(root), { force: true });
for (const top of new Set(names.map((f) => f.split('/')[0]))) if (top !== 'web') rmSync(join(out, top.replace(/\.ts$/, '.js')), { recursive: true, force: true });

const relativeImports = {
  name: 'keep-relative-imports',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      if (args.path.startsWith('.')) return { path: args.path.replace(/\.ts$/, '.js'), external: true };
      return { path: args.path, external: true };
    });
  },
};

await build({
  entryPoints: tsFiles.map((f) => join(root, 'src', f)),
  outbase: join(root, 'src'),
  outdir: out,
  bundle: true,
  plugins: [relativeImports],
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
});
for (const f of names.filter((n) => !n.endsWith('.ts'))) {
  mkdirSync(dirname(join(out, f)), { recursive: true });
  copyFileSync(join(root, 'src', f), join(out, f));
}
writeFileSync(manifestFile(root), `${JSON.stringify({ builtAt: new Date().toISOString(), sources })}\n`);
process.stdout.write(`compiled ${tsFiles.length} modules of src/ to dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
