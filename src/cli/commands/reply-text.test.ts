import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'cadenza-reply-text-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('cadenza reply-text', () => {
  it('prints one JSON line per file: .eml, .txt, .html, and an error for what it cannot read or parse', () => {
    const eml = join(dir, 'reply.eml');
    writeFileSync(eml, 'From: Ann <ann@example.com>\r\nSubject: Re: x\r\nContent-Type: text/plain\r\n\r\nYes, Thursday works.\r\n\r\nOn Mon, 2 Apr 2012 at 09:00, Rep <rep@vendor.test> wrote:\r\n> Reply STOP to opt out\r\n');
    const txt = join(dir, 'body.txt');
    writeFileSync(txt, 'Sure.\n\nSent from my iPhone\n');
    const html = join(dir, 'body.html');
    writeFileSync(html, '<div>Call me</div><div class="gmail_quote">On Mon, Rep wrote:<blockquote>old</blockquote></div>');
    const bad = join(dir, 'bad.eml');
    writeFileSync(bad, Buffer.from([0, 1, 2, 3, 0, 0]));
    const r = spawnSync(process.execPath, [join(root, 'bin', 'cadenza.js'), 'reply-text', eml, txt, html, bad, join(dir, 'missing.txt')], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status).toBe(0);
    const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { file: string; text?: string; withSignature?: string; error?: string });
    expect(rows.map((x) => x.text ?? null)).toEqual(['Yes, Thursday works.', 'Sure.', 'Call me', null, null]);
    expect(rows.map((x) => x.withSignature ?? null)).toEqual(['Yes, Thursday works.', 'Sure.\n\nSent from my iPhone', 'Call me', null, null]);
    expect(rows[3]!.error).toMatch(/cannot parse: (binary|no_header)/);
    expect(rows[4]!.error).toMatch(/cannot read: ENOENT/);
    expect(rows.map((x) => x.file)).toEqual([eml, txt, html, bad, join(dir, 'missing.txt')]);
  }, 180_000);
});
