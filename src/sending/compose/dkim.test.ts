import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import DKIM from 'nodemailer/lib/dkim/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { dnsResolver, type TxtResolver } from '../dns/check.ts';
import { sendingRecords } from '../dns/records.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';
import { composeEmail, type ComposeInput } from './compose.ts';
import { checkDkimKey, dkimSign, dkimTxtValue, generateDkimKey } from './dkim.ts';
import { trackingLinks } from './tracking.ts';

/**
 * Signatures are verified by an independent implementation (mailauth's DKIM verifier), which
 * fetches the public key over real DNS from a loopback server publishing exactly the record
 * `cadenza dns` prints.
 */

let dns: TestDnsServer;
let resolver: TxtResolver;
const rsa = generateDkimKey();

beforeAll(async () => {
  dns = await startTestDnsServer();
  resolver = dnsResolver({ server: dns.address, timeoutMs: 2000 });
  const plan = sendingRecords({ domain: 'acme.test', selector: 'sel1', dkimKey: rsa.privateKeyPem, relayHost: 'relay.cadenza.test' });
  const rec = plan.records.find((r) => r.kind === 'dkim')!;
  expect(rec.name).toBe('sel1._domainkey.acme.test');
  dns.setTxt(rec.name, [rec.value]);
});
afterAll(async () => {
  await dns.close();
});

const verify = async (raw: Buffer | string) =>
  (await dkimVerify(raw, { resolver: async (name, type) => (type === 'TXT' ? resolver.resolveTxt(name) : Promise.reject(Object.assign(new Error('no'), { code: 'ENOTFOUND' }))) })).results;

function input(over: Partial<ComposeInput> = {}): ComposeInput {
  return {
    messageId: '<0190a3c4-1111-7000-8000-000000000001@acme.test>',
    date: Date.UTC(2025, 2, 4, 14, 30, 5),
    from: { address: 'sam@acme.test', name: 'Sam Rep' },
    to: { address: 'ann@prospect.test', name: 'Ann Lee' },
    content: { subject: 'Quick question', text: 'Hi Ann,\nline two\n\n\n', html: '<p>Hi Ann</p>\n<p>€ and ü</p>' },
    links: trackingLinks({ key: randomBytes(32), baseUrl: 'https://t.acme.test', workspaceId: 'w', sendRequestId: 's' }),
    thread: { messageIds: ['<a1@acme.test>'], firstSubject: 'Quick question' },
    track: { opens: true, clicks: true },
    dkim: { domain: 'acme.test', selector: 'sel1', privateKey: rsa.privateKeyPem },
    ...over,
  };
}

describe('DKIM signing', () => {
  it('signs so that an independent verifier passes it, aligned with From, covering List-Unsubscribe and List-Unsubscribe-Post', async () => {
    const c = await composeEmail(input());
    expect(c.dkimSigned).toBe(true);
    const results = await verify(c.raw);
    expect(results).toHaveLength(1);
    const r = results[0]!;
    expect(r.status.result).toBe('pass');
    expect(r.signingDomain).toBe('acme.test');
    expect(r.selector).toBe('sel1');
    expect(r.status.aligned).toBe('acme.test');
    const h = /\bh=([^;]+);/.exec(c.raw.toString('latin1').replace(/\r\n\s+/g, ' '))![1]!.split(':');
    expect(h).toEqual(expect.arrayContaining(['from', 'to', 'subject', 'date', 'message-id', 'in-reply-to', 'references', 'list-unsubscribe', 'list-unsubscribe-post']));
    expect(dns.queries.some((q) => q.name === 'sel1._domainkey.acme.test' && q.type === 'TXT')).toBe(true);
  });

  it('fails verification when the body or a signed header is changed', async () => {
    const raw = (await composeEmail(input({ content: { subject: 'Hi', text: 'Pay 100 EUR' } }))).raw.toString('latin1');
    expect((await verify(raw))[0]!.status.result).toBe('pass');
    // A changed body fails the body hash, which mailauth reports as neutral (RFC 6376 §6.3 leaves the label to the verifier).
    const body = (await verify(raw.replace('Pay 100 EUR', 'Pay 900 EUR')))[0]!.status;
    expect(body.result).not.toBe('pass');
    expect(body.comment).toMatch(/body hash/);
    expect((await verify(raw.replace('List-Unsubscribe-Post: List-Unsubscribe=One-Click', 'List-Unsubscribe-Post: List-Unsubscribe=Nope')))[0]!.status.result).toBe('fail');
    expect((await verify(raw.replace('Subject: Hi', 'Subject: Ho')))[0]!.status.result).toBe('fail');
  });

  it('fails verification against another published key', async () => {
    const other = generateDkimKey();
    const raw = (await composeEmail(input({ dkim: { domain: 'acme.test', selector: 'sel1', privateKey: other.privateKeyPem } }))).raw;
    expect((await verify(raw))[0]!.status.result).toBe('fail');
  });

  it('refuses ed25519 keys (nodemailer would silently send unsigned), weak, public and encrypted keys', async () => {
    const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    // The reason for the check: nodemailer's signer drops the signature without an error.
    const chunks: Buffer[] = [];
    for await (const c of new DKIM({ domainName: 'acme.test', keySelector: 's', privateKey: ed }).sign('From: a@acme.test\r\nSubject: x\r\n\r\nbody\r\n')) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).not.toMatch(/DKIM-Signature/i);

    const cases: Array<[string, RegExp]> = [
      [ed, /ed25519 keys \(RFC 8463\) are not supported.*RSA/],
      [generateKeyPairSync('rsa', { modulusLength: 768 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), /768 bits; at least 1024/],
      [rsa.publicKeyPem, /needs the private key/],
      [generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), /a ec key/],
      [generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'x' }).toString(), /encrypted/],
      ['-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n', /not a PEM key/],
    ];
    for (const [pem, re] of cases) {
      const e = await composeEmail(input({ dkim: { domain: 'acme.test', selector: 'sel1', privateKey: pem } })).catch((x: unknown) => x);
      expect(isCadenzaError(e, 'INVALID_INPUT'), String(re)).toBe(true);
      expect((e as Error).message).toMatch(re);
    }
    expect(() => dkimTxtValue(ed)).toThrow(/ed25519/);
  });

  it('refuses a bad domain or selector', async () => {
    await expect(dkimSign(Buffer.from('x'), { domain: 'not a domain', selector: 's', privateKey: rsa.privateKeyPem })).rejects.toThrow(/not a domain name/);
    await expect(dkimSign(Buffer.from('x'), { domain: 'acme.test', selector: 'bad_selector!', privateKey: rsa.privateKeyPem })).rejects.toThrow(/selector/);
  });

  it('generates 2048-bit RSA keys whose TXT value carries the public key', () => {
    const k = checkDkimKey(rsa.privateKeyPem, { need: 'private' });
    expect(k.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const v = dkimTxtValue(rsa.privateKeyPem);
    expect(v).toMatch(/^v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA[A-Za-z0-9+/]+=*$/);
    expect(dkimTxtValue(rsa.publicKeyPem)).toBe(v);
  });
});
