import { cruise, type IModule } from 'dependency-cruiser';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The layout tells the architecture (docs/architecture.md, "The map"): these rules keep it true.
 *
 * - The folders of src/ form no loop: if `sending/` imports `mailbox/`, nothing in `mailbox/`
 *   imports `sending/`, directly or through a third folder. A loop means two folders are one
 *   concept split in two (or a shared mechanism sits inside a domain), and every later part that
 *   plugs into one of them drags in the other.
 * - The composition root (`app/`, which builds every role and wires the domains together) is
 *   imported by the command line only: no domain reaches up into the wiring.
 * - Nothing in src/ imports from test/: what ships does not depend on test harnesses.
 *
 * dependency-cruiser reads the imports (type-only imports count: a type is a dependency too) and
 * resolves them with the project's tsconfig; the rules are checked on the folder graph here, so
 * a failure names the files behind each edge of the loop.
 */

const COMPOSITION_ROOT = 'app';
/** Who may import the composition root: the command line starts it. */
const MAY_IMPORT_ROOT = new Set(['cli']);

interface Edge {
  from: string;
  to: string;
  /** One file → file import behind the folder edge, for the message. */
  example: string;
}

let modules: IModule[] = [];

beforeAll(async () => {
  const root = fileURLToPath(new URL('../', import.meta.url));
  const cwd = process.cwd();
  process.chdir(root);
  try {
    const r = await cruise(['src'], { exclude: { path: '\\.test\\.ts$' }, tsPreCompilationDeps: true, doNotFollow: { path: 'node_modules' } }, undefined, { tsConfig: { fileName: 'tsconfig.json' } });
    if (typeof r.output === 'string') throw new Error('dependency-cruiser answered text, not modules');
    modules = r.output.modules;
  } finally {
    process.chdir(cwd);
  }
}, 120_000);

/** `src/sending/outbox.ts` → 'sending'; a file in src/ itself → '(src)'; anything else → its first segment. */
function folderOf(path: string): string {
  const parts = path.split('/');
  if (parts[0] !== 'src') return parts[0]!;
  return parts.length > 2 ? parts[1]! : '(src)';
}

function folderEdges(): Map<string, Map<string, Edge>> {
  const out = new Map<string, Map<string, Edge>>();
  for (const m of modules) {
    if (!m.source.startsWith('src/')) continue;
    const from = folderOf(m.source);
    for (const d of m.dependencies) {
      if (d.coreModule || !d.resolved || d.resolved.startsWith('node_modules/')) continue;
      const to = folderOf(d.resolved);
      if (to === from) continue;
      let row = out.get(from);
      if (!row) out.set(from, (row = new Map()));
      if (!row.has(to)) row.set(to, { from, to, example: `${m.source} → ${d.resolved}` });
    }
  }
  return out;
}

/** Tarjan's strongly connected components: every component of more than one folder is a loop. */
function loops(edges: Map<string, Map<string, Edge>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const nodes = new Set<string>([...edges.keys(), ...[...edges.values()].flatMap((r) => [...r.keys()])]);
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc.sort());
    }
  };
  for (const v of [...nodes].sort()) if (!index.has(v)) visit(v);
  return found;
}

describe('the import graph', () => {
  it('reads the source (a broken resolution would make every rule pass vacuously)', () => {
    expect(modules.filter((m) => m.source.startsWith('src/')).length).toBeGreaterThan(300);
    const unresolved = modules.flatMap((m) => m.dependencies.filter((d) => d.couldNotResolve && d.module.startsWith('.')).map((d) => `${m.source} → ${d.module}`));
    expect(unresolved).toEqual([]);
  });

  it('has no loop between the folders of src/', () => {
    const edges = folderEdges();
    const described = loops(edges).map((scc) => {
      const inside = scc.flatMap((f) => [...(edges.get(f)?.values() ?? [])].filter((e) => scc.includes(e.to)));
      return `loop ${scc.join(' ⇄ ')}:\n${inside.map((e) => `  ${e.from} → ${e.to} (e.g. ${e.example})`).join('\n')}`;
    });
    expect(described, described.join('\n\n')).toEqual([]);
  });

  it(`is entered at the composition root (src/${COMPOSITION_ROOT}/) only from the command line`, () => {
    const wrong = [...folderEdges().values()].flatMap((row) => [...row.values()]).filter((e) => e.to === COMPOSITION_ROOT && !MAY_IMPORT_ROOT.has(e.from));
    expect(wrong.map((e) => `${e.from} imports the composition root (e.g. ${e.example})`)).toEqual([]);
  });

  it('ships nothing that imports from test/', () => {
    const wrong = modules.filter((m) => m.source.startsWith('src/')).flatMap((m) => m.dependencies.filter((d) => d.resolved?.startsWith('test/')).map((d) => `${m.source} → ${d.resolved}`));
    expect(wrong).toEqual([]);
  });
});
