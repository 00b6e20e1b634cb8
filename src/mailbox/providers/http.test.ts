import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { httpRequest } from './http.ts';

/** How far an exchange got when it failed decides whether a send may have happened; each stage, on a real socket. */
let server: http.Server | null = null;
afterEach(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise((r) => server!.close(r));
    server = null;
  }
});

async function serve(handler: http.RequestListener, onConnection?: (s: import('node:net').Socket) => void): Promise<URL> {
  server = http.createServer(handler);
  if (onConnection) server.on('connection', onConnection);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
}

describe('httpRequest stages', () => {
  it('connect: nothing listening', async () => {
    const url = await serve(() => undefined);
    await new Promise((r) => server!.close(r));
    server = null;
    const r = await httpRequest(systemClock, { method: 'POST', url, body: Buffer.from('x'), timeoutMs: 2_000 });
    expect(r).toMatchObject({ kind: 'failed', stage: 'connect', status: null });
  });

  it('request: the server drops the connection before the body could be written', async () => {
    const url = await serve(() => undefined, (s) => s.destroy());
    // Far more than the socket buffers hold, so the write cannot have completed.
    const r = await httpRequest(systemClock, { method: 'POST', url, body: Buffer.alloc(16 * 1024 * 1024, 97), timeoutMs: 5_000 });
    expect(r).toMatchObject({ kind: 'failed', stage: 'request' });
  });

  it('response: the body was read, then the connection dropped', async () => {
    const url = await serve((req) => {
      req.resume();
      req.on('end', () => req.socket.destroy());
    });
    const r = await httpRequest(systemClock, { method: 'POST', url, body: Buffer.from('{"raw":"x"}'), timeoutMs: 2_000 });
    expect(r).toMatchObject({ kind: 'failed', stage: 'response', status: null, timedOut: false });
  });

  it('response: a status line, then a cut-off body keeps the status', async () => {
    const url = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-length': '100' });
      res.write('{"id":');
      setTimeout(() => res.destroy(), 20);
    });
    const r = await httpRequest(systemClock, { method: 'POST', url, body: Buffer.from('x'), timeoutMs: 2_000 });
    expect(r).toMatchObject({ kind: 'failed', stage: 'response', status: 200 });
  });

  it('response: an answer over the size limit is cut off; a timeout says so', async () => {
    const url = await serve((req, res) => {
      req.resume();
      if (req.headers['x-mode'] === 'slow') return; // never answers
      res.end(Buffer.alloc(4096, 120));
    });
    const big = await httpRequest(systemClock, { method: 'GET', url, timeoutMs: 2_000, maxResponseBytes: 1024 });
    expect(big).toMatchObject({ kind: 'failed', stage: 'response', status: 200 });
    const slow = await httpRequest(systemClock, { method: 'GET', url, headers: { 'x-mode': 'slow' }, timeoutMs: 100 });
    expect(slow).toMatchObject({ kind: 'failed', stage: 'response', timedOut: true });
    const ok = await httpRequest(systemClock, { method: 'GET', url, timeoutMs: 2_000 });
    expect(ok).toMatchObject({ kind: 'response', status: 200 });
    expect(ok.kind === 'response' && ok.body.length).toBe(4096);
  });

  it('an already aborted signal never opens a connection', async () => {
    let connections = 0;
    const url = await serve(() => undefined, () => void connections++);
    const r = await httpRequest(systemClock, { method: 'GET', url, timeoutMs: 1_000, signal: AbortSignal.abort() });
    expect(r).toMatchObject({ kind: 'failed', stage: 'connect', aborted: true });
    expect(connections).toBe(0);
  });
});
