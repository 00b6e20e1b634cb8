import type { ParsedMessage } from '../mime.ts';

/**
 * One emulated Exchange Online mailbox as Graph shows it: well-known folders, messages with
 * regular ids (which change when an item moves to another folder) and immutable ids (which do
 * not; concepts/outlook-immutable-id.md), conversations by header references.
 *
 * A sendMail is a draft until its submission time (store.ts), then it moves to Sent Items; the
 * move is applied lazily from the emulator's clock (settle), so a test with a SimClock controls
 * exactly when the Sent copy shows.
 */
export const wellKnownFolders = ['inbox', 'drafts', 'sentitems', 'deleteditems', 'junkemail', 'outbox', 'archive'] as const;
export type FolderName = (typeof wellKnownFolders)[number];

export interface GraphStoredMessage {
  seq: number;
  immutableId: string;
  folder: FolderName;
  raw: Buffer;
  parsed: ParsedMessage;
  /** Exchange gives every message one; null only where a test files an item without (an answer the connector must survive). */
  internetMessageId: string | null;
  conversationId: string;
  isDraft: boolean;
  isRead: boolean;
  /** The Outlook flag (followupFlag.flagStatus). */
  flagStatus: 'notFlagged' | 'flagged' | 'complete';
  createdAt: number;
  lastModifiedAt: number;
  sentAt: number | null;
  receivedAt: number;
  /** While a sendMail is being submitted: when it moves from Drafts to Sent Items. */
  submitAt: number | null;
  /** A send the emulator will never complete (fault 'lost'): it stays a draft. */
  lost: boolean;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

export function folderId(name: FolderName): string {
  return `AQMkAD${b64(`folder:${name}`)}`;
}

/** A folder named in a URL: a well-known name (any case) or a folder id. */
export function resolveFolder(nameOrId: string): FolderName | null {
  const lower = nameOrId.toLowerCase();
  for (const f of wellKnownFolders) if (f === lower || folderId(f) === nameOrId) return f;
  return null;
}

export function regularId(m: GraphStoredMessage): string {
  return `AAMkAD${b64(`${m.seq}:${m.folder}`)}`;
}

/**
 * Every change to the mailbox, in order: what delta queries per folder will be served from (a
 * move is a removal from one folder and an addition to another, as delta shows it).
 */
export interface GraphChange {
  n: number;
  type: 'created' | 'moved' | 'updated';
  immutableId: string;
  folder: FolderName;
  fromFolder?: FolderName;
  at: number;
}

export class GraphMailbox {
  /** In creation order. */
  readonly messages: GraphStoredMessage[] = [];
  readonly changes: GraphChange[] = [];
  /** Called after every change (change notifications hang here). */
  readonly listeners: Array<(change: GraphChange) => void> = [];
  /**
   * Delta tokens carry the generation they were issued in; expireDeltaTokens() raises it, and
   * older tokens are then answered as evicted from Graph's cache (delta-query-overview.md).
   */
  deltaGeneration = 0;
  /** How the next evicted token is answered (test hook; see routes/delta.ts). */
  deltaExpiryCode: 'syncStateNotFound' | 'resyncRequired' = 'syncStateNotFound';
  private conversations = 0;

  constructor(
    readonly address: string,
    private readonly nextSeq: () => number,
  ) {}

  add(init: Omit<GraphStoredMessage, 'seq' | 'immutableId' | 'conversationId' | 'lastModifiedAt' | 'lost' | 'flagStatus'> & { lost?: boolean }): GraphStoredMessage {
    const seq = this.nextSeq();
    const m: GraphStoredMessage = {
      ...init,
      seq,
      immutableId: `AAkALg${b64(`imm:${this.address}:${seq}`)}`,
      conversationId: this.conversationFor(init.parsed),
      lastModifiedAt: init.createdAt,
      lost: init.lost ?? false,
      flagStatus: 'notFlagged',
    };
    this.messages.push(m);
    this.log({ n: this.changes.length + 1, type: 'created', immutableId: m.immutableId, folder: m.folder, at: m.createdAt });
    return m;
  }

  /** Replies share the conversation of a message they reference (In-Reply-To, References). */
  private conversationFor(p: ParsedMessage): string {
    const refs = new Set([...(p.inReplyTo ? [p.inReplyTo] : []), ...p.references]);
    for (let i = this.messages.length - 1; i >= 0; i--) {
      const m = this.messages[i]!;
      if (m.internetMessageId !== null && refs.has(m.internetMessageId)) return m.conversationId;
    }
    return `AAQkAD${b64(`conv:${this.address}:${++this.conversations}`)}`;
  }

  /** A message by regular id (valid only in its current folder) or immutable id. */
  byId(id: string): GraphStoredMessage | undefined {
    return this.messages.find((m) => m.immutableId === id || regularId(m) === id);
  }

  /** Every message whose internetMessageId is `id` (a test's view; duplicates and drafts included). */
  byInternetMessageId(id: string): GraphStoredMessage[] {
    return this.messages.filter((m) => m.internetMessageId === id);
  }

  move(m: GraphStoredMessage, to: FolderName, at: number): void {
    const from = m.folder;
    m.folder = to;
    m.lastModifiedAt = at;
    this.log({ n: this.changes.length + 1, type: 'moved', immutableId: m.immutableId, folder: to, fromFolder: from, at });
  }

  /** A property of the message changed (isRead, flag): delta shows it again, subscriptions say 'updated'. */
  update(m: GraphStoredMessage, at: number): void {
    m.lastModifiedAt = at;
    this.log({ n: this.changes.length + 1, type: 'updated', immutableId: m.immutableId, folder: m.folder, at });
  }

  private log(c: GraphChange): void {
    this.changes.push(c);
    for (const l of this.listeners) l(c);
  }

  /** Each message's folder after the first `n` changes (what a delta round saw at that point). */
  foldersAt(n: number): Map<string, FolderName> {
    const out = new Map<string, FolderName>();
    for (let i = 0; i < n && i < this.changes.length; i++) out.set(this.changes[i]!.immutableId, this.changes[i]!.folder);
    return out;
  }

  byImmutableId(id: string): GraphStoredMessage | undefined {
    return this.messages.find((m) => m.immutableId === id);
  }
}
