import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCheckV2, rspamdScorer } from './rspamd-scorer.ts';

// An answer of rspamd 3.4 (/checkv2) to a spammy message on the filter bed, trimmed.
const ANSWER = JSON.stringify({
  is_skipped: false, score: 11.7, required_score: 6, action: 'add header',
  symbols: {
    SUBJ_ALL_CAPS: { name: 'SUBJ_ALL_CAPS', score: 3, metric_score: 3, description: 'All capital letters in subject', options: ['41'] },
    HTTP_TO_IP: { name: 'HTTP_TO_IP', score: 1, metric_score: 1, description: 'Anchor points to an IP address' },
    LEAKED_PASSWORD_SCAM: { name: 'LEAKED_PASSWORD_SCAM', score: 7, metric_score: 7, description: 'Contains BTC wallet address and scam patterns' },
    SOME_NEW_RULE: { name: 'SOME_NEW_RULE', score: 0.7, description: 'Rule added in a later release' },
    ARC_NA: { name: 'ARC_NA', score: 0, description: 'ARC signature absent' },
  },
});

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
});
async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

describe('rspamd scorer', () => {
  it('reads the score, the threshold and every hit that weighs, in plain words, heaviest first', () => {
    const r = parseCheckV2(ANSWER);
    expect(r).toMatchObject({ status: 'scored', score: 11.7, threshold: 6, action: 'add header', spam: true });
    if (r.status !== 'scored') throw new Error('unreachable');
    expect(r.hits.map((h) => h.symbol)).toEqual(['LEAKED_PASSWORD_SCAM', 'SUBJ_ALL_CAPS', 'HTTP_TO_IP', 'SOME_NEW_RULE']);
    expect(r.hits[1]).toEqual({ symbol: 'SUBJ_ALL_CAPS', score: 3, explanation: 'The subject is written in capital letters.', options: ['41'] });
    expect(r.hits[3]!.explanation).toBe('Rule added in a later release.');
  });

  it('answers that are not rspamd\'s are "unavailable", never a crash', () => {
    expect(parseCheckV2('<html>proxy error</html>')).toMatchObject({ status: 'unavailable' });
    expect(parseCheckV2('{"symbols": 3}')).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/without a score/) });
    expect(parseCheckV2('{"score": 1, "symbols": {"X": null, "Y": {"score": "a lot"}}}')).toMatchObject({ status: 'scored', hits: [] });
  });

  it('nothing listening: "not installed"; a silent server: "unavailable" at the deadline; HTTP errors: "unavailable"', async () => {
    const closed = await serve(() => {});
    const port = new URL(closed).port;
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
    expect(await rspamdScorer({ url: `http://127.0.0.1:${port}` }).score(Buffer.from('x'))).toMatchObject({ status: 'not_installed', reason: expect.stringMatching(/not installed/) });

    const silent = await serve(() => {});
    const t0 = Date.now();
    expect(await rspamdScorer({ url: silent, timeoutMs: 200 }).score(Buffer.from('x'))).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/within 200 ms/) });
    expect(Date.now() - t0).toBeLessThan(2_000);

    const failing = await serve((_req, res) => { res.statusCode = 500; res.end('oops'); });
    expect(await rspamdScorer({ url: failing }).score(Buffer.from('x'))).toMatchObject({ status: 'unavailable', reason: 'rspamd answered HTTP 500' });
  });

  it('posts the message to /checkv2 and reads the answer', async () => {
    let got = '';
    const url = await serve((req, res) => {
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => { got = `${req.method} ${req.url} ${req.headers.settings} ${b}`; res.setHeader('content-type', 'application/json'); res.end(ANSWER); });
    });
    expect(await rspamdScorer({ url: `${url}/` }).score(Buffer.from('Subject: hi\r\n\r\nbody'))).toMatchObject({ status: 'scored', score: 11.7 });
    expect(got).toBe('POST /checkv2 {"groups_disabled":["hfilter","policies"]} Subject: hi\r\n\r\nbody');
  });
});
