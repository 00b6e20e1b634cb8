import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Tests that need the real mail test bed (Postfix + Dovecot, test/mail/mailbed.sh). They form the
 * 'mail' project, whose global setup starts the bed: vitest runs a project's global setup only when
 * the run includes one of its files, so unit-test runs never start (or need) the mail servers.
 * Name a test `*.mail.test.ts` to put it there from anywhere in src/ or test/.
 */
const mailTests = ['test/mail/**/*.test.ts', 'src/**/*.mail.test.ts', 'test/**/*.mail.test.ts'];
/**
 * Tests that need the telephony bed (Kamailio, rtpengine, coturn: test/telephony/telbed.sh). Their
 * own project for the same reason, one file at a time: every file's "carrier" (sipp) listens on the
 * bed's one trunk address.
 */
const telephonyTests = ['test/telephony/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The mail bed, the test servers and the emulators listen on 127.0.0.1: mailbox hosts on
    // loopback are refused unless the operator allows them (mailbox/mail-hosts.ts), so tests do.
    // List hygiene asks DNS, and tests never ask the machine's resolver: commands and servers the
    // tests start keep it off; the hygiene tests give their checker the local DNS server (test/dns-server.ts).
    env: { CADENZA_ALLOW_LOOPBACK_MAIL_HOSTS: 'true', CADENZA_LIST_HYGIENE: 'off' },
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...mailTests, ...telephonyTests],
          globalSetup: ['test/global-setup.ts'],
          // Files run one after another in each worker with the modules it already loaded: every
          // file imported most of the app again before, an eighth of the suite's time.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'mail',
          include: mailTests,
          globalSetup: ['test/global-setup.ts', 'test/mail/global-setup.ts'],
          // One bed, one file at a time, after the unit tests: a file may then reset the mailboxes
          // it uses (resetMailBed) without pulling mail from under another file.
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'telephony',
          include: telephonyTests,
          globalSetup: ['test/global-setup.ts', 'test/telephony/global-setup.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
