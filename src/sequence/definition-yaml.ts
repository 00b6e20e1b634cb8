import { parseDocument, stringify } from 'yaml';
import { cadenzaError } from '../common/errors.ts';
import { validateDefinition, type SequenceDefinition } from './definition.ts';
import { toDocument } from './definition-document.ts';

/**
 * The definition file's YAML text, both ways, for the web editor's YAML view: the server is the
 * one owner of the format (the editor never parses YAML itself). The text is untrusted, so the
 * parser is bounded: its size before parsing, and aliases (a "billion laughs" document expands a
 * few hundred bytes into gigabytes through nested aliases; the yaml package counts alias
 * resolutions against maxAliasCount and throws past it).
 */

/** The largest YAML text accepted: a 50-step sequence with 10 variants each is far below it. */
export const MAX_YAML_BYTES = 512 * 1024;
/** Aliases a document may resolve; a definition needs none, a hand-written one a few. */
const MAX_ALIASES = 20;

/** Every problem at once, each with where it is: "line 3, column 5: …" for syntax, the field's path for content. */
export function parseDefinitionYaml(text: string): SequenceDefinition {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_YAML_BYTES) {
    const problem = `(root): the YAML is ${bytes} bytes, more than the ${MAX_YAML_BYTES} a sequence may have`;
    throw cadenzaError('INVALID_INPUT', problem, { problems: [problem] });
  }
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    const problems = doc.errors.map((e) => (e.linePos ? `line ${e.linePos[0].line}, column ${e.linePos[0].col}: ${firstLine(e.message)}` : firstLine(e.message)));
    throw cadenzaError('INVALID_INPUT', `the YAML does not parse:\n  ${problems.join('\n  ')}`, { problems });
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (e) {
    // maxAliasCount: "Excessive alias count indicates a resource exhaustion attack".
    const problem = `(root): ${firstLine((e as Error).message)}`;
    throw cadenzaError('INVALID_INPUT', problem, { problems: [problem] });
  }
  return validateDefinition(data);
}

/** The definition as `cadenza sequence export` prints it. */
export function renderDefinitionYaml(def: SequenceDefinition): string {
  return `${stringify(toDocument(def)).trimEnd()}\n`;
}

function firstLine(s: string): string {
  return s.split('\n')[0]!;
}
