import type { Clock } from '../common/clock.ts';
import { startGmailEmulator, type GmailEmulator } from '../sim/emulators/gmail/emulator.ts';
import { startGraphEmulator, type GraphEmulator } from '../sim/emulators/graph/emulator.ts';
import type { AccessTokenProvider } from '../mailbox/access-token.ts';

/**
 * Google's and Microsoft's mail APIs for the demo: the same emulators the tests use (src/sim/emulators,
 * imported, not copied), started in-process on loopback with the demo's clock, so the real Gmail
 * and Graph connectors send and sync against them unchanged. The demo watches what reaches each
 * rep's Sent folder to let the simulated prospects react (and to hand warmup mail to the network's
 * other members, warmup-network.ts).
 */
export type EmulatedProvider = 'gmail' | 'graph';

export interface SentMail {
  provider: EmulatedProvider;
  mailbox: string;
  raw: Buffer;
}

export interface EmulatedProviders {
  gmail: GmailEmulator;
  graph: GraphEmulator;
  addMailbox(provider: EmulatedProvider, address: string): void;
  /** What an OAuth grant gives: an access token, and a fresh one when the connector asks for a refresh. */
  tokenProvider(provider: EmulatedProvider, address: string, current: string | undefined): AccessTokenProvider;
  issueToken(provider: EmulatedProvider, address: string): string;
  /** Mail from outside arriving in the rep's inbox (or junk, as a filter may leave it), threaded by its headers as the provider does. */
  deliver(provider: EmulatedProvider, to: string, raw: Buffer, opts?: { junk?: boolean }): Promise<void>;
  close(): Promise<void>;
}

export async function startEmulatedProviders(clock: Clock, onSent: (m: SentMail) => void): Promise<EmulatedProviders> {
  const gmail = await startGmailEmulator({ clock });
  let graph: GraphEmulator;
  try {
    graph = await startGraphEmulator({ clock });
  } catch (e) {
    await gmail.close();
    throw e;
  }
  const emu = (p: EmulatedProvider) => (p === 'gmail' ? gmail : graph);
  return {
    gmail,
    graph,
    addMailbox(provider, address) {
      if (provider === 'gmail') {
        const mb = gmail.addUser(address);
        mb.listeners.push((_historyId, change) => {
          if (change.type !== 'messageAdded') return;
          const m = mb.messages.get(change.messageId);
          if (m?.labelIds.has('SENT')) onSent({ provider, mailbox: mb.address, raw: m.raw });
        });
      } else {
        const mb = graph.addUser(address);
        // A sendMail is a draft until its submission completes; it reaches the prospect then.
        mb.listeners.push((change) => {
          if (change.folder !== 'sentitems' || change.type !== 'moved') return;
          for (let i = mb.messages.length - 1; i >= 0; i--) {
            const m = mb.messages[i]!;
            if (m.immutableId === change.immutableId) return onSent({ provider, mailbox: mb.address, raw: m.raw });
          }
        });
      }
    },
    issueToken: (provider, address) => emu(provider).tokens.issue(address),
    tokenProvider(provider, address, current) {
      let token = current;
      return async ({ forceRefresh }) => {
        if (forceRefresh || token === undefined) token = emu(provider).tokens.issue(address);
        return token;
      };
    },
    async deliver(provider, to, raw, opts) {
      if (provider === 'gmail') await gmail.deliver(to, raw, opts?.junk ? { spam: true } : undefined);
      else await graph.deliver(to, raw, opts?.junk ? { folder: 'junkemail' } : undefined);
    },
    async close() {
      await Promise.all([gmail.close(), graph.close()]);
    },
  };
}
