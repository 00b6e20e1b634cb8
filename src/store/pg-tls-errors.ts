/**
 * A refused PostgreSQL connection said in plain words, for the TLS and client-certificate cases
 * of docs/security.md "Database connections" (hostssl … cert, sslmode=verify-full). OpenSSL's own
 * text ("sslv3 alert certificate expired … SSL alert number 45") names the alert, not what to do;
 * what the server or Node said is kept after the explanation, for whoever digs further.
 */
const CASES: Array<{ test: (msg: string, code: string) => boolean; say: string }> = [
  {
    test: (m) => /requires a valid client certificate/i.test(m),
    say: "PostgreSQL admits this role only with a client certificate, and this process gave none: set sslcert and sslkey in its database URL (the role's certificate from `cadenza ca issue <role>`)",
  },
  {
    test: (m) => /alert unknown ca|SSL alert number 48/i.test(m),
    say: "PostgreSQL does not trust this process's client certificate: it was issued by a CA that is not in the server's ssl_ca_file (another CA's certificate, or trust.pem not copied to the server after `cadenza ca rotate --new-ca`)",
  },
  {
    test: (m) => /alert certificate expired|SSL alert number 45/i.test(m),
    say: "PostgreSQL refused this process's client certificate because it has expired: `cadenza ca list` shows when, `cadenza ca rotate` issues a new one",
  },
  {
    test: (m) => /alert bad certificate|alert certificate (revoked|unknown)|SSL alert number 4[2-4]/i.test(m),
    say: "PostgreSQL refused this process's client certificate (bad, revoked or not yet valid): `cadenza ca list` shows its dates",
  },
  {
    test: (m) => /certificate authentication failed for user/i.test(m),
    say: "the client certificate's common name is not the database role this URL logs in as: a client certificate is issued per role (`cadenza ca issue <role>`), and the URL's user must be that role",
  },
  {
    test: (m) => /pg_hba\.conf rejects connection.*no encryption/i.test(m),
    say: 'PostgreSQL admits this role over TLS only: add sslmode=verify-full, sslrootcert, sslcert and sslkey to its database URL',
  },
  {
    test: (m, c) => c === 'CERT_HAS_EXPIRED' && !/alert/i.test(m),
    say: "PostgreSQL's server certificate has expired: reissue it with `cadenza ca rotate` and reload the server",
  },
  {
    test: (m, c) => ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'].includes(c),
    say: "this process does not trust PostgreSQL's server certificate: its sslrootcert (trust.pem) does not hold the CA that issued it",
  },
  {
    test: (m, c) => c === 'ERR_TLS_CERT_ALTNAME_INVALID',
    say: "PostgreSQL's server certificate does not name the host this URL connects to (sslmode=verify-full checks it): issue it with that name in --host",
  },
  {
    test: (m, c) => c === 'ENOENT' || c === 'EACCES',
    say: 'a certificate or key file named in the database URL (sslrootcert, sslcert, sslkey) cannot be read',
  },
  {
    test: (m) => /server does not support SSL/i.test(m),
    say: 'PostgreSQL has TLS off (ssl = off), and the database URL asks for it (sslmode=verify-full)',
  },
];

export function explainConnectFailure(e: unknown): string {
  const msg = e instanceof Error ? e.message.trim() : String(e);
  const code = typeof (e as { code?: unknown })?.code === 'string' ? (e as { code: string }).code : '';
  const hit = CASES.find((c) => c.test(msg, code));
  return hit ? `${hit.say} (${msg.split('\n')[0]!.replace(/^[0-9A-F]+:error:[0-9A-F]+:SSL routines:[a-z0-9_]+:/, '').replace(/:\.\.\/deps\/.*$/, '')})` : msg;
}
