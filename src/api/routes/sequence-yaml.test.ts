import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { loadDefinition, toDocument } from '../../sequence/definition-document.ts';
import { stringify as toYaml } from 'yaml';

/** The web editor's YAML view: the server reads and writes the definition file's YAML, bounded (it is untrusted text). */
describe.each(testBackends())('sequence YAML routes (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let workspaceId: string;
  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Yaml Co', 'owner@yaml.test');
    workspaceId = w.workspaceId;
    b = await login(h.app, 'owner@yaml.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
  });
  afterAll(() => h?.close());

  const body = {
    key: 'intro',
    name: 'Intro',
    window: 'Mon-Fri 09:00-17:00',
    stopRules: { onMeetingBooked: 'continue' },
    steps: [
      { key: 'hello', type: 'email', delay: '0 minutes', subject: 'Hi {{first_name | default: "there"}}', body: 'Hello', variants: [{ key: 'b', subject: 'Hello again', body: 'Hey', weight: 2 }] },
      { key: 'ring', type: 'call', delay: '2 business days', subject: '', body: '', title: 'Call them', variants: [] },
    ],
  };

  it('renders the body exactly as `cadenza sequence export` writes the saved sequence, and parses it back to the same body', async () => {
    const put = await b.call('PUT', `${base}/sequences`, body);
    expect(put.statusCode, put.body).toBe(200);
    const def = await loadDefinition(h.store.db, workspaceId, put.json().sequenceId);
    const { id: _id, version: _v, ...definition } = def!;
    const got = (await b.call('GET', `${base}/sequences/${put.json().sequenceId}`)).json();
    const { id: _i, version: _ver, ...editor } = got;
    const rendered = await b.call('POST', `${base}/sequences/yaml/render`, { body: editor });
    expect(rendered.statusCode, rendered.body).toBe(200);
    expect(rendered.json()).toEqual({ yaml: toYaml(toDocument(definition)), problems: [] });
    const parsed = await b.call('POST', `${base}/sequences/yaml/parse`, { yaml: rendered.json().yaml });
    expect(parsed.statusCode, parsed.body).toBe(200);
    expect(parsed.json()).toEqual(editor);
  });

  it('renders a body that does not validate yet as given, with its problems', async () => {
    const r = (await b.call('POST', `${base}/sequences/yaml/render`, { body: { ...body, steps: [{ ...body.steps[0], delay: 'soon' }] } })).json();
    expect(r.yaml).toContain('delay: soon');
    expect(r.problems).toEqual([expect.stringMatching(/^steps\.0 \(hello\)\.delay: /)]);
  });

  it('lists every problem of a YAML that parses but is no definition, each with its path', async () => {
    const yaml = 'key: x\nname: X\nwindow: sometimes\nsteps:\n  - key: a\n    type: email\n    delay: soon\n    subject: Hi\n    body: Hello\n  - key: a\n    type: fax\n';
    const r = await b.call('POST', `${base}/sequences/yaml/parse`, { yaml });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.code).toBe('INVALID_INPUT');
    expect(r.json().error.details.problems).toEqual([expect.stringMatching(/^steps\.1\.type: /)]);
    const second = await b.call('POST', `${base}/sequences/yaml/parse`, { yaml: yaml.replace(/type: fax\n/, 'type: call\n    delay: later\n') });
    const problems: string[] = second.json().error.details.problems;
    expect(problems).toEqual(expect.arrayContaining([expect.stringMatching(/^steps\.0 \(a\)\.delay: /), expect.stringMatching(/^steps\.1 \(a\): duplicate step key/), expect.stringMatching(/^window: /)]));
  });

  it('names the line and column of a YAML syntax error, and refuses duplicate keys', async () => {
    const r = await b.call('POST', `${base}/sequences/yaml/parse`, { yaml: 'key: x\nname: [unclosed\nsteps: {' });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.details.problems[0]).toMatch(/^line \d+, column \d+: /);
    const dup = await b.call('POST', `${base}/sequences/yaml/parse`, { yaml: 'key: x\nkey: y\nname: X\nsteps: []\n' });
    expect(dup.statusCode).toBe(400);
    expect(dup.json().error.details.problems[0]).toMatch(/^line 2, column 1: .*unique/i);
  });

  it('refuses a YAML over 512 KiB before parsing it', async () => {
    // Multi-byte characters: under the limit in characters, over it in bytes.
    const big = `key: x\nname: X\nsteps:\n  - key: a\n    type: email\n    subject: Hi\n    body: "${'é'.repeat(300 * 1024)}"\n`;
    const r = await b.call('POST', `${base}/sequences/yaml/parse`, { yaml: big });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.details.problems[0]).toMatch(/bytes, more than the 524288/);
    const longer = await b.call('POST', `${base}/sequences/yaml/parse`, { yaml: 'x'.repeat(600 * 1024) });
    expect(longer.statusCode).toBe(400);
    expect(longer.json().error.code).toBe('INVALID_INPUT');
  });

  it('refuses an alias bomb ("billion laughs") without expanding it', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      levels.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const yaml = `${levels.join('\n')}\nkey: bomb\nname: Bomb\nsteps: *i\n`;
    const started = Date.now();
    const r = await b.call('POST', `${base}/sequences/yaml/parse`, { yaml });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.details.problems[0]).toMatch(/alias/i);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('is for members of the workspace only (another workspace is not found)', async () => {
    const other = await seedWorkspace(h.store, 'Other Co', 'owner@other.test');
    const stranger = await login(h.app, 'owner@other.test', other.password);
    expect((await stranger.call('POST', `${base}/sequences/yaml/parse`, { yaml: 'key: x' })).statusCode).toBe(404);
    expect((await stranger.call('POST', `${base}/sequences/yaml/render`, { body })).statusCode).toBe(404);
  });
});
