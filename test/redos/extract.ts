import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * Every regular expression in a TypeScript source file, found with the TypeScript parser (not a
 * regex over the code): literals `/…/flags`, and `new RegExp(…)` / `RegExp(…)` whose pattern is a
 * string literal; any other `new RegExp(expression)` is reported as dynamic, with its expression.
 */
export interface FoundRegex {
  file: string;
  line: number;
  /** The pattern's source and flags; null for a dynamic pattern. */
  source: string | null;
  flags: string;
  /** How it is written in the file (a dynamic pattern's expression). */
  text: string;
}

export function regexesIn(file: string, root: string): FoundRegex[] {
  const code = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const rel = path.relative(root, file).split(path.sep).join('/');
  const out: FoundRegex[] = [];
  const at = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const visit = (n: ts.Node) => {
    if (n.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const t = n.getText(sf);
      const end = t.lastIndexOf('/');
      out.push({ file: rel, line: at(n), source: t.slice(1, end), flags: t.slice(end + 1), text: t });
    } else if ((ts.isNewExpression(n) || ts.isCallExpression(n)) && ts.isIdentifier(n.expression) && n.expression.text === 'RegExp' && n.arguments?.length) {
      const [pattern, flags] = n.arguments;
      const flagText = flags && (ts.isStringLiteral(flags) || ts.isNoSubstitutionTemplateLiteral(flags)) ? flags.text : '';
      if (ts.isStringLiteral(pattern!) || ts.isNoSubstitutionTemplateLiteral(pattern!)) out.push({ file: rel, line: at(n), source: pattern.text, flags: flagText, text: n.getText(sf) });
      // `new RegExp(RE.source, 'g')`: the literal RE is checked where it is written.
      else if (!(ts.isPropertyAccessExpression(pattern!) && pattern.name.text === 'source')) out.push({ file: rel, line: at(n), source: null, flags: flagText, text: pattern!.getText(sf) });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** Source files under `dir` (tests, test support and the fuzzer's generators excluded: they read only what they generate). */
export function sourceFiles(dir: string): string[] {
  if (statSync(dir).isFile()) return [dir];
  const out: string[] = [];
  for (const e of readdirSync(dir).sort()) {
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) {
      if (e !== 'fuzz') out.push(...sourceFiles(p));
    }
    else if (p.endsWith('.ts') && !p.endsWith('.test.ts') && !p.endsWith('-test-support.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}
