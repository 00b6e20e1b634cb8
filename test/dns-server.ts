import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server, type Socket as TcpSocket } from 'node:net';
import dnsPacket from 'dns-packet';

/**
 * A small authoritative DNS server for tests, on loopback only: answers TXT questions from a
 * table, over UDP and TCP (c-ares retries over TCP when an answer is truncated) on the same port.
 * A name in the table answers its records; `servfail` names answer SERVFAIL; anything else
 * NXDOMAIN. Long TXT values are served split into 255-octet strings, as real zones hold them, so
 * the code under test must join them.
 */

export interface TestDnsServer {
  host: string;
  port: number;
  /** 'HOST:PORT' for --resolver. */
  address: string;
  /** Sets (or with [] clears) the TXT records of a name; each record is one value, split on the wire. */
  setTxt(name: string, records: string[]): void;
  /** Sets the A records (IPv4 addresses) of a name: a mail host that resolves to them. */
  setA(name: string, addresses: string[]): void;
  servfail(name: string): void;
  /** Questions received, for assertions. */
  queries: Array<{ name: string; type: string; transport: 'udp' | 'tcp' }>;
  close(): Promise<void>;
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;

export async function startTestDnsServer(): Promise<TestDnsServer> {
  const txt = new Map<string, string[]>();
  const a = new Map<string, string[]>();
  const failing = new Set<string>();
  const queries: TestDnsServer['queries'] = [];
  const key = (n: string) => n.toLowerCase().replace(/\.$/, '');

  const FLAGS = dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE;

  /** The answer to a query, or null for a packet that is not one; tcp answers are never truncated. */
  const answer = (query: Buffer, transport: 'udp' | 'tcp'): Buffer | null => {
    let q: dnsPacket.Packet;
    try {
      q = dnsPacket.decode(query);
    } catch {
      return null;
    }
    const question = q.questions?.[0];
    if (!question) return null;
    queries.push({ name: question.name, type: question.type, transport });
    const name = key(question.name);
    let rcode: number = RCODE.NOERROR;
    const answers: dnsPacket.Answer[] = [];
    if (failing.has(name)) rcode = RCODE.SERVFAIL;
    else if (!txt.has(name) && !a.has(name)) rcode = RCODE.NXDOMAIN;
    else if (question.type === 'A') {
      for (const address of a.get(name) ?? []) answers.push({ type: 'A', class: 'IN', name: question.name, ttl: 1, data: address });
    } else if (question.type === 'TXT' && txt.has(name)) {
      for (const value of txt.get(name)!) {
        const chunks: string[] = [];
        for (let i = 0; i < value.length; i += 255) chunks.push(value.slice(i, i + 255));
        answers.push({ type: 'TXT', class: 'IN', name: question.name, ttl: 60, data: chunks.length ? chunks : [''] });
      }
    }
    const full = dnsPacket.encode({ id: q.id ?? 0, type: 'response', flags: FLAGS | rcode, questions: [question], answers });
    if (transport === 'tcp' || full.length <= 512) return full;
    // Too big for plain UDP (RFC 1035 §4.2.1): no answers and TC set, so the client asks again over TCP.
    return dnsPacket.encode({ id: q.id ?? 0, type: 'response', flags: FLAGS | dnsPacket.TRUNCATED_RESPONSE | rcode, questions: [question] });
  };

  const sockets = new Set<TcpSocket>();
  const serveTcp = (sock: TcpSocket) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => sock.destroy());
    let buf = Buffer.alloc(0);
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      // Each message is preceded by its length in two octets (RFC 1035 §4.2.2).
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const len = buf.readUInt16BE(0);
        const out = answer(buf.subarray(2, 2 + len), 'tcp');
        buf = buf.subarray(2 + len);
        if (out) {
          const framed = Buffer.alloc(2 + out.length);
          framed.writeUInt16BE(out.length, 0);
          out.copy(framed, 2);
          sock.write(framed);
        }
      }
    });
  };

  // UDP takes a free port; TCP must get the same number. Should another process hold that TCP
  // port, start over with a new one.
  for (let attempt = 0; ; attempt++) {
    const udp: Socket = createSocket('udp4');
    udp.on('message', (msg, rinfo) => {
      const out = answer(msg, 'udp');
      if (out) udp.send(out, rinfo.port, rinfo.address);
    });
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, '127.0.0.1', () => resolve());
    });
    const port = udp.address().port;
    const tcp: Server = createServer(serveTcp);
    const listened = await new Promise<boolean>((resolve, reject) => {
      tcp.once('error', (e: NodeJS.ErrnoException) => (e.code === 'EADDRINUSE' && attempt < 5 ? resolve(false) : reject(e)));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!listened) {
      await new Promise<void>((r) => udp.close(() => r()));
      continue;
    }
    return server(udp, tcp, port);
  }

  function server(udp: Socket, tcp: Server, port: number): TestDnsServer {
    return {
      host: '127.0.0.1',
      port,
      address: `127.0.0.1:${port}`,
      setTxt(name, records) {
        txt.set(key(name), [...records]);
      },
      setA(name, addresses) {
        a.set(key(name), [...addresses]);
      },
      servfail(name) {
        failing.add(key(name));
      },
      queries,
      async close() {
        for (const s of sockets) s.destroy();
        await Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
      },
    };
  }
}
