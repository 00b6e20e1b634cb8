import type { Clock } from '../../common/clock.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import type { ConnectorSetup } from '../../mailbox/connectors/connector.ts';
import type { OAuthClients } from '../../mailbox/oauth/client.ts';
import type { Vault } from '../../mailbox/vault.ts';
import type { Store } from '../../store/store.ts';
import type { SettlePolicy } from '../reply.ts';

/** What a process that may read credentials (the sender role) carries tasks out with. */
export interface TaskContext {
  store: Store;
  clock: Clock;
  random: Random;
  vault: Vault;
  /** How this process builds connectors (app.ts: its token source, API base URLs). */
  connectors?: ConnectorSetup;
  /** For revoking OAuth grants; absent: a revocation is reported 'unsupported'. */
  oauthClients?: OAuthClients;
  replySettle?: Partial<SettlePolicy>;
  log?: Logger;
}
