import { cadenzaError } from '../../common/errors.ts';
import { checkEndpointUrl, type DestinationPolicy } from '../webhooks/destination.ts';
import type { SecretSealer } from '../webhooks/secrets.ts';
import type { Tx } from '../../store/store.ts';

/**
 * A member's Slack incoming-webhook URL is a secret (whoever has it posts to the channel): sealed
 * with the workspace's data key through the vault, bound to its member (associated data
 * 'notify-slack:<user id>'), opened only by the delivery at posting time, never returned by the API
 * (its host alone is shown) and never logged. Checked on save as webhook endpoints are (https,
 * public destinations unless CADENZA_WEBHOOK_ALLOW_PRIVATE) and again at every connection.
 */
export const slackContext = (userId: string) => `notify-slack:${userId}`;

export async function sealSlackUrl(sealer: SecretSealer, policy: DestinationPolicy, workspaceId: string, userId: string, text: string, tx?: Tx): Promise<{ sealed: Buffer; host: string }> {
  let url: URL;
  try {
    url = checkEndpointUrl(text.trim(), policy);
  } catch (e) {
    // The check's own message quotes the URL: say what is wrong without repeating the secret.
    const message = (e as Error).message.replace(/: ".*"$/, '');
    throw cadenzaError('INVALID_INPUT', message.replace(/webhook URL/g, 'Slack webhook URL'), { field: 'url' });
  }
  return { sealed: await sealer.seal(workspaceId, slackContext(userId), url.toString(), tx), host: url.host };
}

export function openSlackUrl(sealer: SecretSealer, workspaceId: string, userId: string, sealed: Buffer): Promise<string> {
  return sealer.open(workspaceId, slackContext(userId), sealed);
}
