import { CrmTransientError } from '../connector.ts';
import { apiVersion, type SalesforceClient } from './client.ts';

/**
 * One bounded read of a Streaming API channel over CometD long polling (Bayeux 1.0; Streaming API
 * Developer Guide, "Message Durability", "Clients and Timeouts"), with the REST session of
 * client.ts: handshake, subscribe with the replay extension, one connect, disconnect.
 *
 * Why one short session per read, not a client kept connected: the change reader calls
 * readChanges once per step of its round and stores each page with its cursor before asking for
 * the next (the cursor is the truth). A CometD session that outlived the call would have taken
 * events from the bus that no stored cursor accounts for, and a connect held open (Salesforce holds
 * one up to 110 s) would stall the sync round. So each call subscribes from the stored replay id and
 * connects once asking for an immediate answer (`advice.timeout` 0: what is waiting, nothing held;
 * CometD servers honour a client's timeout, unverified for Salesforce, and the client's own request
 * timeout bounds the call either way). The handshake, subscribe and disconnect are small and do not
 * count against the REST API allocation; the price is four requests per read.
 */
export type ChannelRead =
  /** The Bayeux messages that carried events (`data`), in delivery order. */
  | { kind: 'events'; messages: Array<{ channel: string; data: unknown }> }
  /** The replay id is not one the bus can resume after (older than the events kept). */
  | { kind: 'invalid-replay'; error: string }
  /** The org serves no such channel (Change Data Capture off, or not for this user). */
  | { kind: 'unavailable'; error: string };

type Message = { channel?: unknown; successful?: unknown; error?: unknown; clientId?: unknown; data?: unknown };

const path = `/cometd/${apiVersion.slice(1)}`;

export async function readChannel(client: SalesforceClient, channel: string, replay: number): Promise<ChannelRead> {
  let n = 0;
  const send = async (message: Record<string, unknown>): Promise<Message[]> => {
    const res = await client.request('POST', path, {}, [{ ...message, id: String(++n) }]);
    if (!Array.isArray(res.body)) throw new CrmTransientError(`Salesforce's CometD endpoint answered ${message.channel} with something other than a list of messages`);
    return res.body as Message[];
  };
  const reply = (messages: Message[], meta: string) => messages.find((m) => m.channel === meta);

  const hs = reply(await send({ channel: '/meta/handshake', version: '1.0', minimumVersion: '1.0', supportedConnectionTypes: ['long-polling'] }), '/meta/handshake');
  if (hs?.successful !== true || typeof hs.clientId !== 'string') throw new CrmTransientError(`Salesforce refused the CometD handshake: ${String(hs?.error ?? 'no answer')}`);
  const clientId = hs.clientId;
  try {
    const sub = reply(await send({ channel: '/meta/subscribe', clientId, subscription: channel, ext: { replay: { [channel]: replay } } }), '/meta/subscribe');
    if (sub?.successful !== true) {
      const error = String(sub?.error ?? 'no answer');
      // Documented: "400::The replayId {x} you provided was invalid. …"
      if (/replayId/i.test(error)) return { kind: 'invalid-replay', error };
      // A client the server lost between two requests (403::Unknown client): try again later.
      if (/unknown client/i.test(error) || sub === undefined) throw new CrmTransientError(`Salesforce's CometD subscribe failed: ${error}`);
      return { kind: 'unavailable', error };
    }
    const answer = await send({ channel: '/meta/connect', clientId, connectionType: 'long-polling', advice: { timeout: 0 } });
    const connect = reply(answer, '/meta/connect');
    if (connect?.successful !== true) throw new CrmTransientError(`Salesforce's CometD connect failed: ${String(connect?.error ?? 'no answer')}`);
    return { kind: 'events', messages: answer.filter((m): m is { channel: string; data: unknown } => typeof m.channel === 'string' && !m.channel.startsWith('/meta/') && m.data !== undefined) };
  } finally {
    // Frees the server's client at once instead of after its idle timeout; a lost answer here changes nothing.
    await send({ channel: '/meta/disconnect', clientId }).catch(() => undefined);
  }
}
