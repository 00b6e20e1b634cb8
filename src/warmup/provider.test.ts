import { describe, expect, it } from 'vitest';
import { baseDomain, familyOf, warmupProvider } from './provider.ts';

const smtpImap = (domain: string, smtp?: string | null, imap?: string | null, mx?: string[], ports?: { smtp?: number; imap?: number }) => ({
  kind: 'smtp_imap',
  domain,
  smtp: smtp === undefined ? null : { host: smtp, port: ports?.smtp ?? 587 },
  imap: imap === undefined ? null : { host: imap, port: ports?.imap ?? 993 },
  mx: mx ?? [],
});

describe('warmupProvider', () => {
  it('takes the connector kind first: the Gmail API is Google, Graph is Microsoft', () => {
    expect(warmupProvider({ kind: 'gmail', domain: 'acme.test' })).toEqual({ label: 'google', reason: 'connected through the Gmail API' });
    expect(warmupProvider({ kind: 'graph', domain: 'acme.test', mx: ['mx.zoho.eu'] }).label).toBe('microsoft');
  });

  it('tells the known families apart by their SMTP and IMAP hosts', () => {
    const cases: Array<[string, string, string]> = [
      ['smtp.zoho.eu', 'imap.zoho.eu', 'zoho'],
      ['smtppro.zoho.com', 'imappro.zoho.com', 'zoho'],
      ['smtp.mail.yahoo.com', 'imap.mail.yahoo.com', 'yahoo'],
      ['smtp.aol.com', 'imap.aol.com', 'yahoo'],
      ['smtp.fastmail.com', 'imap.fastmail.com', 'fastmail'],
      ['smtp.mail.me.com', 'imap.mail.me.com', 'icloud'],
      ['mail.gmx.net', 'imap.gmx.net', 'gmx'],
      ['smtp.web.de', 'imap.web.de', 'gmx'],
      ['ssl0.ovh.net', 'ssl0.ovh.net', 'ovh'],
      ['smtp.ionos.de', 'imap.ionos.de', 'ionos'],
      ['smtp.yandex.ru', 'imap.yandex.com', 'yandex'],
      ['smtp.mail.ru', 'imap.mail.ru', 'mailru'],
    ];
    for (const [smtp, imap, label] of cases) expect(warmupProvider(smtpImap('acme.test', smtp, imap)), smtp).toMatchObject({ label, reason: `SMTP host ${smtp}` });
    // Only the IMAP host known (the SMTP host a custom name): the IMAP host decides.
    expect(warmupProvider(smtpImap('acme.test', null, 'imap.zoho.eu'))).toEqual({ label: 'zoho', reason: 'IMAP host imap.zoho.eu' });
  });

  it('counts a Google Workspace or Microsoft 365 domain reached over SMTP/IMAP as Google or Microsoft', () => {
    expect(warmupProvider(smtpImap('acme.test', 'smtp.gmail.com', 'imap.gmail.com')).label).toBe('google');
    expect(warmupProvider(smtpImap('acme.test', 'smtp.office365.com', 'outlook.office365.com')).label).toBe('microsoft');
    // Hosts under the company's own names, the MX tells: Google's and Microsoft 365's exchanges.
    expect(warmupProvider(smtpImap('acme.test', 'mail.acme.test', 'mail.acme.test', ['aspmx.l.google.com.', 'alt1.aspmx.l.google.com']))).toEqual({ label: 'google', reason: 'MX aspmx.l.google.com' });
    expect(warmupProvider(smtpImap('acme.test', undefined, undefined, ['acme-test.mail.protection.outlook.com'])).label).toBe('microsoft');
    expect(warmupProvider(smtpImap('acme.test', undefined, undefined, ['in1-smtp.messagingengine.com'])).label).toBe('fastmail');
    expect(warmupProvider(smtpImap('acme.test', undefined, undefined, ['mta5.am0.yahoodns.net'])).label).toBe('yahoo');
    expect(warmupProvider(smtpImap('acme.test', undefined, undefined, ['mx00.kundenserver.de'])).label).toBe('ionos');
    expect(warmupProvider(smtpImap('acme.test', undefined, undefined, ['mail.protonmail.ch', 'mailsec.protonmail.ch'])).label).toBe('proton');
  });

  it('knows Proton Mail Bridge on loopback by its default ports, and only by them', () => {
    expect(warmupProvider(smtpImap('acme.test', '127.0.0.1', '127.0.0.1', [], { smtp: 1025, imap: 1143 }))).toMatchObject({ label: 'proton' });
    // Another local server (a test bed, a relay on this machine): the domain's own.
    expect(warmupProvider(smtpImap('acme.test', '127.0.0.1', '127.0.0.1', [], { smtp: 2525, imap: 3143 }))).toMatchObject({ label: 'self:acme.test' });
  });

  it('labels a self-hosted domain as its own provider, a hosting company by its domain', () => {
    expect(warmupProvider(smtpImap('acme.test', 'mail.acme.test', 'mail.acme.test'))).toEqual({ label: 'self:acme.test', reason: 'its own server (mail.acme.test)' });
    expect(warmupProvider(smtpImap('sales.acme.co.uk', 'mx.acme.co.uk', null)).label).toBe('self:sales.acme.co.uk');
    expect(warmupProvider(smtpImap('acme.test', undefined, undefined, ['mx1.acme.test'])).label).toBe('self:acme.test');
    expect(warmupProvider(smtpImap('acme.test', '203.0.113.7', null)).label).toBe('self:acme.test');
    expect(warmupProvider(smtpImap('acme.test', 'smtp.hoster.example.net', 'imap.hoster.example.net'))).toEqual({ label: 'host:example.net', reason: 'hosted at smtp.hoster.example.net' });
    expect(warmupProvider(smtpImap('acme.test', undefined, undefined, ['mx.hostingco.com'])).label).toBe('host:hostingco.com');
    expect(warmupProvider(smtpImap('acme.test'))).toEqual({ label: 'other', reason: 'no host names or MX known' });
  });

  it('two Zoho mailboxes share a label; Zoho and Fastmail do not (what the planner mixes by)', () => {
    const a = warmupProvider(smtpImap('a.test', 'smtp.zoho.eu', 'imap.zoho.eu')).label;
    const b = warmupProvider(smtpImap('b.test', 'smtp.zoho.com', 'imap.zoho.com')).label;
    const c = warmupProvider(smtpImap('c.test', 'smtp.fastmail.com', 'imap.fastmail.com')).label;
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });

  it('takes odd input without throwing: blank, upper-case, trailing dots, a null MX', () => {
    expect(familyOf('SMTP.ZOHO.EU.')).toBe('zoho');
    expect(familyOf('')).toBeNull();
    expect(familyOf('notzoho.eu')).toBeNull();
    expect(familyOf('evilgmail.com')).toBeNull();
    expect(warmupProvider({ kind: 'smtp_imap', domain: '', smtp: { host: '   ' }, imap: null, mx: ['.'] })).toEqual({ label: 'other', reason: 'no host names or MX known' });
    expect(baseDomain('a.b.example.com.au')).toBe('example.com.au');
    expect(baseDomain('localhost')).toBe('localhost');
  });
});
