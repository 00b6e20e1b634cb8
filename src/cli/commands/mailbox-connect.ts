import type { Command } from 'commander';
import { loadConfig } from '../../common/config.ts';
import { cadenzaError } from '../../common/errors.ts';
import { OAuthClients, oauthSettingsFrom } from '../../mailbox/oauth/client.ts';
import { connectWithLoopback } from '../../mailbox/oauth/loopback.ts';
import { isOAuthMode } from '../../mailbox/oauth/providers.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { resolveWorkspace } from '../../workspace/workspaces.ts';
import { deps, globals, masterKey, nudgeRunning, output, withStore } from '../context.ts';

interface ConnectOptions {
  workspace?: string;
  mode: string;
  email?: string;
  port?: string;
}

/**
 * `cadenza mailbox connect google|microsoft`: OAuth 2 + PKCE from the terminal. Prints the
 * consent URL and waits on a loopback listener (mailbox/oauth/loopback.ts) for the browser to come
 * back; the tokens go straight into the vault and are never printed.
 */
export function registerConnect(mb: Command): void {
  mb.command('connect <provider>')
    .description('connect a Google or Microsoft mailbox with OAuth (open the printed URL in a browser on this machine)')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--mode <mode>', 'api (Gmail API / Microsoft Graph) or imap (IMAP + SMTP with XOAUTH2)', 'api')
    .option('--email <address>', 'the address to connect (preselects the account)')
    .option('--port <n>', 'loopback port for the redirect (default: any free port; fix it for a Google web client)')
    .action(async (provider: string, o: ConnectOptions, cmd: Command) => {
      const g = globals(cmd);
      if (provider !== 'google' && provider !== 'microsoft') throw cadenzaError('INVALID_INPUT', `provider is google or microsoft, got '${provider}'`);
      if (!isOAuthMode(o.mode)) throw cadenzaError('INVALID_INPUT', `--mode is api or imap, got '${o.mode}'`);
      const port = o.port === undefined ? 0 : Number(o.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw cadenzaError('INVALID_INPUT', `--port must be a port number, got '${o.port}'`);
      const clients = new OAuthClients(oauthSettingsFrom(loadConfig()), { clock: deps.clock });
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const vault = new Vault(store, localKeyWrapper(await masterKey(g, store)));
        const done = await connectWithLoopback(
          { store, vault, clients, clock: deps.clock, random: deps.random },
          {
            workspaceId: w.id,
            provider,
            mode: o.mode as 'api' | 'imap',
            port,
            ...(o.email ? { loginHint: o.email } : {}),
            onUrl: (url) => {
              if (g.json) process.stdout.write(`${JSON.stringify({ authorizationUrl: url.href })}\n`);
              else process.stderr.write(`Open this URL in a browser on this machine to connect the mailbox:\n\n  ${url.href}\n\nWaiting for the browser…\n`);
            },
          },
        );
        await nudgeRunning(store, 'mailboxes');
        output(g, { id: done.mailboxId, email: done.email, provider: done.provider, mode: done.mode, created: done.created }, () =>
          `mailbox ${done.email} ${done.created ? 'connected' : 'reconnected'} (${done.provider}, ${done.mode === 'api' ? 'API' : 'IMAP/SMTP with XOAUTH2'}; ${done.mailboxId}); tokens stored encrypted`,
        );
      });
    });
}
