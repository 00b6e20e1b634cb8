import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * A real SMTP server in this process (nodemailer's smtp-server), for tests of mail Cadenza sends as
 * itself: each message's envelope recipients and raw text go to `onMessage`, which may answer an
 * error (a 4xx or 5xx the client then sees). No TLS, no AUTH: the system mailer's plain smtp:// URL.
 */
export async function smtpSink(onMessage: (m: { to: string[]; raw: string }) => Error | null): Promise<{ url: string; close(): Promise<void> }> {
  const srv = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS', 'AUTH'],
    closeTimeout: 50,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => cb(onMessage({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') })));
    },
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `smtp://127.0.0.1:${(srv.server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => srv.close(() => resolve())),
  };
}
