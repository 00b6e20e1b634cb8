/**
 * An SMTP sink for benchmarks: accepts every message on loopback and counts it, and greets at
 * once. smtp-server (used by the tests) waits a hard-coded 100 ms before its greeting on every
 * connection to catch early talkers (SMTPConnection.init), which made a benchmark of the send loop
 * measure that wait. Speaks what nodemailer's client uses: EHLO, AUTH PLAIN/LOGIN, MAIL, RCPT,
 * DATA (dot-terminated), RSET, NOOP, QUIT.
 */
import net from 'node:net';

export interface SmtpSink {
  port: number;
  /** Messages accepted (250 after the terminator). */
  received: number;
  /** Message-IDs seen, each counted: a duplicate shows as a count above 1. */
  messageIds: Map<string, number>;
  /** TCP connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const sockets = new Set<net.Socket>();
  const sink: SmtpSink = { port: 0, received: 0, messageIds: new Map(), connections: 0, close: async () => undefined };
  const server = net.createServer((socket) => {
    sink.connections++;
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buf = '';
    let inData = false;
    let authLogin = 0;
    const reply = (line: string) => socket.write(`${line}\r\n`);
    reply('220 sink.bench ESMTP');
    socket.on('data', (chunk: Buffer) => {
      buf += chunk.toString('latin1');
      for (;;) {
        if (inData) {
          const end = buf.indexOf('\r\n.\r\n');
          if (end === -1) return;
          const body = buf.slice(0, end);
          buf = buf.slice(end + 5);
          inData = false;
          const mid = /^message-id:\s*(\S+)/im.exec(body)?.[1];
          if (mid) sink.messageIds.set(mid, (sink.messageIds.get(mid) ?? 0) + 1);
          sink.received++;
          reply('250 2.0.0 Ok: queued');
          continue;
        }
        const nl = buf.indexOf('\r\n');
        if (nl === -1) return;
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        if (authLogin > 0) {
          authLogin = authLogin === 1 ? 2 : 0;
          reply(authLogin === 2 ? '334 UGFzc3dvcmQ6' : '235 2.7.0 Authentication successful');
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') reply('250-sink.bench\r\n250-PIPELINING\r\n250-8BITMIME\r\n250-SIZE 52428800\r\n250 AUTH PLAIN LOGIN');
        else if (verb === 'AUTH') {
          if (/^AUTH LOGIN/i.test(line)) {
            authLogin = 1;
            reply('334 VXNlcm5hbWU6');
          } else reply('235 2.7.0 Authentication successful');
        } else if (verb === 'MAIL' || verb === 'RCPT' || verb === 'RSET' || verb === 'NOOP') reply('250 2.0.0 Ok');
        else if (verb === 'DATA') {
          inData = true;
          reply('354 End data with <CR><LF>.<CR><LF>');
        } else if (verb === 'QUIT') {
          reply('221 2.0.0 Bye');
          socket.end();
        } else reply('502 5.5.2 Command not recognized');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  sink.port = (server.address() as net.AddressInfo).port;
  sink.close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return sink;
}
