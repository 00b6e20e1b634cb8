import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { cadenzaError } from '../common/errors.ts';
import { keyFingerprint } from '../common/secrets.ts';
import type { Store, Tx } from '../store/store.ts';

/**
 * The credential vault: envelope encryption (promise 7). A random 256-bit data key per workspace
 * encrypts that workspace's credentials; the data key is stored only wrapped by the master key
 * (AES-256-GCM, bound to the workspace id as associated data, so a wrapped key cannot be moved to
 * another workspace). The master key lives outside the database (common/secrets.ts), so a database
 * dump alone reveals no credential. Rotating the master key rewraps the data keys; credentials
 * themselves are not touched.
 *
 * A KMS can replace the master key behind `KeyWrapper` without changing callers.
 */
export interface KeyWrapper {
  fingerprint(): string;
  wrap(dataKey: Buffer, context: string): Buffer;
  unwrap(wrapped: Buffer, context: string): Buffer;
}

export function localKeyWrapper(master: Buffer): KeyWrapper {
  return {
    fingerprint: () => keyFingerprint(master),
    wrap: (dataKey, context) => gcmSeal(master, dataKey, context),
    unwrap: (wrapped, context) => gcmOpen(master, wrapped, context, 'the master key does not unwrap this workspace key (was the master key changed?)'),
  };
}

export type Credential =
  | { kind: 'password'; username: string; password: string }
  | { kind: 'oauth'; accessToken: string; refreshToken?: string; expiresAt?: number; scope?: string };

/** What a keeper of sealed personal data needs of the vault (call recordings, voicemail messages): tests give a stand-in. */
export type BytesSealer = Pick<Vault, 'sealBytes' | 'openBytes'>;

export class Vault {
  private readonly cache = new Map<string, Buffer>();

  constructor(
    private readonly store: Store,
    private readonly wrapper: KeyWrapper,
  ) {}

  /** Stores (or replaces) a mailbox's credential, encrypted with its workspace's data key. */
  async put(workspaceId: string, mailboxId: string, credential: Credential, tx?: Tx): Promise<void> {
    const key = await this.dataKey(workspaceId, tx);
    const ciphertext = gcmSeal(key, Buffer.from(JSON.stringify(credential), 'utf8'), `mailbox:${mailboxId}`);
    await (tx ?? this.store.db)
      .insertInto('mailbox_credential')
      .values({ mailbox_id: mailboxId, kind: credential.kind, ciphertext })
      .onConflict((oc) => oc.column('mailbox_id').doUpdateSet({ kind: credential.kind, ciphertext, updated_at: new Date() }))
      .execute();
  }

  /** A mailbox's credential, decrypted, or undefined when none is stored. */
  async get(mailboxId: string): Promise<Credential | undefined> {
    const row = await this.store.db
      .selectFrom('mailbox_credential as c')
      .innerJoin('mailbox as m', 'm.id', 'c.mailbox_id')
      .select(['c.ciphertext', 'm.workspace_id'])
      .where('c.mailbox_id', '=', mailboxId)
      .executeTakeFirst()
      .catch((e: unknown) => {
        // Least privilege (docs/security.md "Database connections"): the API's database role may store a credential, never read one back.
        if ((e as { code?: string }).code === '42501') {
          throw cadenzaError('FORBIDDEN', "this process's database role may not read mailbox credentials (least privilege: only the sender and sync roles may); what needs one runs in those roles", { mailboxId });
        }
        throw e;
      });
    if (!row) return undefined;
    return this.openCredential(row.workspace_id, mailboxId, row.ciphertext);
  }

  /**
   * A credential as put() sealed it, from wherever it now lies: mailbox_credential, or a
   * revocation task the credential's deletion moved it into (sending/credential-tasks/).
   */
  async openCredential(workspaceId: string, mailboxId: string, sealed: Buffer): Promise<Credential> {
    const key = await this.dataKey(workspaceId);
    return JSON.parse(gcmOpen(key, sealed, `mailbox:${mailboxId}`, 'a stored credential failed to decrypt').toString('utf8')) as Credential;
  }

  /**
   * Seals any other secret of the workspace (a webhook signing key) with its data key, as put()
   * seals a credential; `context` (e.g. 'webhook:<id>') is bound as associated data, so a sealed
   * value copied onto another row or into another workspace does not open.
   */
  async seal(workspaceId: string, context: string, plaintext: string, tx?: Tx): Promise<Buffer> {
    return gcmSeal(await this.dataKey(workspaceId, tx), Buffer.from(plaintext, 'utf8'), context);
  }

  /** Opens what seal() sealed, with the same workspace and context. */
  async open(workspaceId: string, context: string, sealed: Buffer): Promise<string> {
    return gcmOpen(await this.dataKey(workspaceId), sealed, context, `a sealed ${context.split(':')[0]} secret failed to decrypt`).toString('utf8');
  }

  /**
   * seal() for bytes (a call recording's audio, dialer/recording/; a rep's voicemail message,
   * dialer/voicemail.ts): personal data rather than a secret, with the same data key and the same
   * binding of `context` as associated data, without a detour through a string.
   */
  async sealBytes(workspaceId: string, context: string, plaintext: Uint8Array, tx?: Tx): Promise<Buffer> {
    return gcmSeal(await this.dataKey(workspaceId, tx), plaintext, context);
  }

  /** Opens what sealBytes() sealed, with the same workspace and context. */
  async openBytes(workspaceId: string, context: string, sealed: Buffer): Promise<Buffer> {
    return gcmOpen(await this.dataKey(workspaceId), sealed, context, `a sealed ${context.split(':')[0]} blob failed to decrypt`);
  }

  /**
   * Rewraps every workspace data key with a new master key, in one transaction. Everything sealed
   * with a data key (mailbox credentials, webhook signing secrets, tracking hosts' certificates)
   * stays as it is and opens with the rewrapped key.
   */
  static async rotateMaster(store: Store, from: KeyWrapper, to: KeyWrapper): Promise<{ rewrapped: number }> {
    return store.db.transaction().execute((tx) => Vault.rewrapDataKeys(tx, from, to));
  }

  /**
   * rotateMaster's work inside the caller's transaction, so that `cadenza keys rotate` rewraps the
   * data keys and the other keys the master key wraps (the ACME account's) all or none.
   */
  static async rewrapDataKeys(tx: Tx, from: KeyWrapper, to: KeyWrapper): Promise<{ rewrapped: number }> {
    const rows = await tx.selectFrom('workspace_key').selectAll().forUpdate().execute();
    for (const r of rows) {
      if (r.master_fingerprint === to.fingerprint()) continue;
      const dataKey = from.unwrap(r.wrapped_key, `workspace:${r.workspace_id}`);
      await tx
        .updateTable('workspace_key')
        .set({ wrapped_key: to.wrap(dataKey, `workspace:${r.workspace_id}`), master_fingerprint: to.fingerprint(), rotated_at: new Date() })
        .where('workspace_id', '=', r.workspace_id)
        .execute();
    }
    return { rewrapped: rows.filter((r) => r.master_fingerprint !== to.fingerprint()).length };
  }

  private async dataKey(workspaceId: string, tx?: Tx): Promise<Buffer> {
    const hit = this.cache.get(workspaceId);
    if (hit) return hit;
    const db = tx ?? this.store.db;
    let row = await db.selectFrom('workspace_key').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
    if (!row) {
      const fresh = randomBytes(32);
      await db
        .insertInto('workspace_key')
        .values({ workspace_id: workspaceId, wrapped_key: this.wrapper.wrap(fresh, `workspace:${workspaceId}`), master_fingerprint: this.wrapper.fingerprint() })
        .onConflict((oc) => oc.column('workspace_id').doNothing())
        .execute();
      row = await db.selectFrom('workspace_key').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
    }
    const key = this.wrapper.unwrap(row.wrapped_key, `workspace:${workspaceId}`);
    this.cache.set(workspaceId, key);
    return key;
  }
}

function gcmSeal(key: Buffer, plaintext: Uint8Array, aad: string): Buffer {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, nonce);
  c.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([c.update(plaintext), c.final()]);
  return Buffer.concat([nonce, ct, c.getAuthTag()]);
}

function gcmOpen(key: Buffer, sealed: Buffer, aad: string, failure: string): Buffer {
  try {
    const d = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
    d.setAAD(Buffer.from(aad, 'utf8'));
    d.setAuthTag(sealed.subarray(sealed.length - 16));
    return Buffer.concat([d.update(sealed.subarray(12, sealed.length - 16)), d.final()]);
  } catch {
    throw cadenzaError('CONFIG_INVALID', failure);
  }
}
