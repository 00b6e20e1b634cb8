/**
 * What the JS heap holds, by kind: a V8 heap snapshot (v8.getHeapSnapshot, which collects first)
 * read into counts and shallow sizes per constructor name (objects, closures by function name) or
 * per V8 node type (strings, arrays, code). Two censuses subtracted say what some work left
 * alive; divided by the number of things it made (watched mailboxes), what each one holds.
 * Shallow sizes only: a Buffer's bytes outside the heap are in process.memoryUsage().external.
 */
import { getHeapSnapshot } from 'node:v8';

export type Census = Map<string, { count: number; bytes: number }>;

export async function heapCensus(): Promise<Census> {
  const chunks: Buffer[] = [];
  for await (const c of getHeapSnapshot()) chunks.push(c as Buffer);
  const snap = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const types = snap.snapshot.meta.node_types[0];
  const out: Census = new Map();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!]!;
    const name = snap.strings[snap.nodes[i + nameAt]!]!;
    const key = type === 'object' || type === 'closure' ? `${type === 'closure' ? 'closure ' : ''}${name}` : `(${type})`;
    const e = out.get(key) ?? { count: 0, bytes: 0 };
    e.count++;
    e.bytes += snap.nodes[i + sizeAt]!;
    out.set(key, e);
  }
  return out;
}

/** The kinds that grew most from `before` to `after`, per `per` things made: [kind, count, bytes] each. */
export function censusGrowth(before: Census, after: Census, per: number, top = 20): Array<[string, number, number]> {
  const rows: Array<[string, number, number]> = [];
  for (const [k, a] of after) {
    const b = before.get(k) ?? { count: 0, bytes: 0 };
    rows.push([k, (a.count - b.count) / per, (a.bytes - b.bytes) / per]);
  }
  return rows.sort((x, y) => y[2] - x[2]).slice(0, top);
}
