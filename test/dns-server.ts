import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server, type Socket as TcpSocket } from 'node:net';
import dnsPacket from 'dns-packet';

/**
 * A small authoritative DNS server for tests, on loopback only: answers TXT, A, AAAA, MX and CNAME
 * questions from a table, over UDP and TCP (c-ares retries over TCP when an answer is truncated) on
 * the same port. A name in the table answers its records (a name with records of other types only:
 * NOERROR with no answer, as real zones do); a CNAME is followed within the table, its target's
 * records answered after it; `servfail` names answer SERVFAIL; `delay` holds a name's answers back
 * (a slow or dead server); anything else NXDOMAIN. Long TXT values are served split into 255-octet
 * strings, as real zones hold them, so the code under test must join them.
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
  /** Sets the AAAA records (IPv6 addresses) of a name. */
  setAaaa(name: string, addresses: string[]): void;
  /** Sets the MX records of a name; `[{ exchange: '.', priority: 0 }]` is a null MX (RFC 7505). */
  setMx(name: string, records: Array<{ exchange: string; priority: number }>): void;
  /** Makes a name an alias of another (or, with null, removes the alias). */
  setCname(name: string, target: string | null): void;
  /** Makes a name answer SERVFAIL (or, with false, answer again). */
  servfail(name: string, on?: boolean): void;
  /** Answers questions for a name only after `ms` (0 to answer at once again). */
  delay(name: string, ms: number): void;
  /** Questions received, for assertions. */
  queries: Array<{ name: string; type: string; transport: 'udp' | 'tcp' }>;
  close(): Promise<void>;
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;

/**
 * `port`: listen there (UDP and TCP) instead of a free port, for a resolver whose address is fixed
 * in its configuration (the spam-filter bed's rspamd, 127.0.0.1:10053); EADDRINUSE if it is taken.
 */
export async function startTestDnsServer(opts: { port?: number } = {}): Promise<TestDnsServer> {
  const txt = new Map<string, string[]>();
  const a = new Map<string, string[]>();
  const aaaa = new Map<string, string[]>();
  const mx = new Map<string, Array<{ exchange: string; priority: number }>>();
  const cname = new Map<string, string>();
  const failing = new Set<string>();
  const delays = new Map<string, number>();
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
    let name = key(question.name);
    let rcode: number = RCODE.NOERROR;
    const answers: dnsPacket.Answer[] = [];
    // Follow aliases inside the table (bounded, so a loop in a test's table ends).
    for (let hops = 0; hops < 8 && cname.has(name) && question.type !== 'CNAME'; hops++) {
      const target = cname.get(name)!;
      answers.push({ type: 'CNAME', class: 'IN', name, ttl: 60, data: target });
      name = key(target);
    }
    const known = (n: string) => txt.has(n) || a.has(n) || aaaa.has(n) || mx.has(n) || cname.has(n);
    if (failing.has(name)) rcode = RCODE.SERVFAIL;
    else if (!known(name)) rcode = answers.length ? RCODE.NOERROR : RCODE.NXDOMAIN;
    else if (question.type === 'A') {
      for (const address of a.get(name) ?? []) answers.push({ type: 'A', class: 'IN', name, ttl: 1, data: address });
    } else if (question.type === 'AAAA') {
      for (const address of aaaa.get(name) ?? []) answers.push({ type: 'AAAA', class: 'IN', name, ttl: 1, data: address });
    } else if (question.type === 'MX') {
      for (const r of mx.get(name) ?? []) answers.push({ type: 'MX', class: 'IN', name, ttl: 60, data: { preference: r.priority, exchange: r.exchange } });
    } else if (question.type === 'CNAME' && cname.has(name)) {
      answers.push({ type: 'CNAME', class: 'IN', name, ttl: 60, data: cname.get(name)! });
    } else if (question.type === 'TXT' && txt.has(name)) {
      for (const value of txt.get(name)!) {
        const chunks: string[] = [];
        for (let i = 0; i < value.length; i += 255) chunks.push(value.slice(i, i + 255));
        answers.push({ type: 'TXT', class: 'IN', name, ttl: 60, data: chunks.length ? chunks : [''] });
      }
    }
    const full = dnsPacket.encode({ id: q.id ?? 0, type: 'response', flags: FLAGS | rcode, questions: [question], answers });
    if (transport === 'tcp' || full.length <= 512) return full;
    // Too big for plain UDP (RFC 1035 §4.2.1): no answers and TC set, so the client asks again over TCP.
    return dnsPacket.encode({ id: q.id ?? 0, type: 'response', flags: FLAGS | dnsPacket.TRUNCATED_RESPONSE | rcode, questions: [question] });
  };

  /** Runs `reply` now, or after the delay set for the packet's name. */
  const pending = new Set<NodeJS.Timeout>();
  let closed = false;
  const later = (packet: Buffer, reply: () => void) => {
    let ms = 0;
    try {
      const name = dnsPacket.decode(packet).questions?.[0]?.name;
      if (name) ms = delays.get(key(name)) ?? 0;
    } catch {
      /* answer() drops what does not decode */
    }
    if (ms <= 0) return reply();
    const t = setTimeout(() => {
      pending.delete(t);
      reply();
    }, ms);
    pending.add(t);
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
        const packet = buf.subarray(2, 2 + len);
        buf = buf.subarray(2 + len);
        later(packet, () => {
          const out = answer(packet, 'tcp');
          if (!out || sock.destroyed) return;
          const framed = Buffer.alloc(2 + out.length);
          framed.writeUInt16BE(out.length, 0);
          out.copy(framed, 2);
          sock.write(framed);
        });
      }
    });
  };

  // UDP takes a free port; TCP must get the same number. Should another process hold that TCP
  // port, start over with a new one.
  for (let attempt = 0; ; attempt++) {
    const udp: Socket = createSocket('udp4');
    udp.on('message', (msg, rinfo) => {
      later(msg, () => {
        const out = answer(msg, 'udp');
        if (out && !closed) udp.send(out, rinfo.port, rinfo.address);
      });
    });
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(opts.port ?? 0, '127.0.0.1', () => resolve());
    });
    const port = udp.address().port;
    const tcp: Server = createServer(serveTcp);
    const listened = await new Promise<boolean>((resolve, reject) => {
      tcp.once('error', (e: NodeJS.ErrnoException) => (e.code === 'EADDRINUSE' && attempt < 5 && opts.port === undefined ? resolve(false) : reject(e)));
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
      setAaaa(name, addresses) {
        aaaa.set(key(name), [...addresses]);
      },
      setMx(name, records) {
        mx.set(key(name), records.map((r) => ({ ...r })));
      },
      setCname(name, target) {
        if (target === null) cname.delete(key(name));
        else cname.set(key(name), target);
      },
      servfail(name, on = true) {
        if (on) failing.add(key(name));
        else failing.delete(key(name));
      },
      delay(name, ms) {
        delays.set(key(name), ms);
      },
      queries,
      async close() {
        closed = true;
        for (const t of pending) clearTimeout(t);
        for (const s of sockets) s.destroy();
        await Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
      },
    };
  }
}
