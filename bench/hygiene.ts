/**
 * List hygiene: addresses checked per second, the DNS cache cold (every domain asked) and warm
 * (every domain answered from the cache), against the local DNS server (test/dns-server.ts, UDP on
 * loopback), with two anchors measured in the same rounds: the syntax check alone (the floor of
 * the per-address work) and bare node:dns MX lookups of the same distinct domains, no cache (what
 * a cold pass cannot beat).
 *   npm run bench -- hygiene [--addresses=20000] [--domains=2000] [--rounds=5]
 */
import { systemClock } from '../src/common/clock.ts';
import { nodeResolver } from '../src/common/dns-resolver.ts';
import { checkEmail } from '../src/leads/email.ts';
import { HygieneChecker } from '../src/leads/hygiene/checker.ts';
import { startTestDnsServer } from '../test/dns-server.ts';
import { intFlag } from './lib/args.ts';
import { describeLoad, interleavedRounds, loadFigures, machineLoad, showSpread, spreadFigures } from './lib/rounds.ts';

type Case = 'syntax' | 'bare_dns' | 'cold' | 'warm';

export default async function hygieneBench(args: string[]): Promise<Record<string, unknown>> {
  const n = intFlag(args, 'addresses', 20_000);
  const domainCount = intFlag(args, 'domains', 2000);
  const rounds = intFlag(args, 'rounds', 5);
  const dns = await startTestDnsServer();
  const resolver = nodeResolver({ server: dns.address, timeoutMs: 2000 });
  try {
    // A list as imports see it: most domains with an MX, some with only an A record, a few that do
    // not exist or publish a null MX; a role account now and then, and one disposable domain.
    const domains = Array.from({ length: domainCount }, (_, i) => `company${i}.test`);
    domains.forEach((d, i) => {
      if (i % 50 === 7) return; // NXDOMAIN
      if (i % 50 === 11) dns.setMx(d, [{ exchange: '.', priority: 0 }]);
      else if (i % 10 === 3) dns.setA(d, ['192.0.2.10']);
      else dns.setMx(d, [{ exchange: `mx.${d}`, priority: 10 }]);
    });
    const addresses = Array.from({ length: n }, (_, i) => (i % 500 === 0 ? `x${i}@mailinator.com` : `${i % 40 === 0 ? 'info' : `person${i}`}@${domains[i % domainCount]}`));
    // The domains a cold pass must ask: every one an address uses, the disposable one aside (known without DNS).
    const asked = new Set(addresses.map((a) => a.slice(a.indexOf('@') + 1)).filter((d) => d !== 'mailinator.com')).size;
    let warm = new HygieneChecker(resolver, systemClock);
    await warm.checkAddresses(addresses);

    const before = machineLoad();
    console.log(`${n.toLocaleString('en')} addresses over ${asked.toLocaleString('en')} domains, ${rounds} rounds; ${describeLoad(before)}`);
    const perSecond = (ms: number) => ({ addresses_per_s: n / (ms / 1000) });
    const r = await interleavedRounds<Case>({
      rounds,
      cases: ['syntax', 'bare_dns', 'cold', 'warm'],
      async run(c) {
        const t = performance.now();
        if (c === 'syntax') {
          for (const a of addresses) checkEmail(a);
        } else if (c === 'bare_dns') {
          // The distinct domains' MX, 16 at a time like the checker, no cache, errors expected (NXDOMAIN).
          let next = 0;
          const worker = async () => {
            while (next < domains.length) await resolver.resolveMx(domains[next++]!).catch(() => undefined);
          };
          await Promise.all(Array.from({ length: 16 }, worker));
        } else if (c === 'cold') {
          const checker = new HygieneChecker(resolver, systemClock);
          await checker.checkAddresses(addresses);
          if (checker.domains.lookups !== asked) throw new Error(`cold pass asked ${checker.domains.lookups} domains, expected ${asked}`);
        } else {
          const lookups = warm.domains.lookups;
          const out = await warm.checkAddresses(addresses);
          if (warm.domains.lookups !== lookups) throw new Error('the warm pass asked DNS');
          if (out.length !== n) throw new Error('lost addresses');
        }
        return perSecond(performance.now() - t);
      },
      onRound: (i, f) => console.log(`round ${i + 1}: cold ${Math.round(f.cold.addresses_per_s!).toLocaleString('en')}/s, warm ${Math.round(f.warm.addresses_per_s!).toLocaleString('en')}/s, syntax only ${Math.round(f.syntax.addresses_per_s!).toLocaleString('en')}/s`),
    });
    const after = machineLoad();
    const fmt = (x: number) => Math.round(x).toLocaleString('en');
    console.log(`cold cache:  ${showSpread(r.spread('cold', 'addresses_per_s'), fmt)} addresses/s`);
    console.log(`warm cache:  ${showSpread(r.spread('warm', 'addresses_per_s'), fmt)} addresses/s`);
    console.log(`syntax only: ${showSpread(r.spread('syntax', 'addresses_per_s'), fmt)} addresses/s (anchor)`);
    console.log(`warm / syntax only: ${showSpread(r.ratio('warm', 'syntax', 'addresses_per_s'))}; cold / bare MX lookups of the same domains: ${showSpread(r.ratio('cold', 'bare_dns', 'addresses_per_s'))}`);
    console.log(`load after: ${describeLoad(after)}`);
    warm = undefined as unknown as HygieneChecker;
    return {
      addresses: n,
      domains: asked,
      rounds,
      ...loadFigures(before, after),
      ...spreadFigures('cold_per_s', r.spread('cold', 'addresses_per_s'), 0),
      ...spreadFigures('warm_per_s', r.spread('warm', 'addresses_per_s'), 0),
      ...spreadFigures('syntax_per_s', r.spread('syntax', 'addresses_per_s'), 0),
      ...spreadFigures('warm_over_syntax', r.ratio('warm', 'syntax', 'addresses_per_s'), 3),
      ...spreadFigures('cold_over_bare_dns', r.ratio('cold', 'bare_dns', 'addresses_per_s'), 3),
    };
  } finally {
    resolver.cancel();
    await dns.close();
  }
}
