import { describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { assertMessageId, sameMessageId } from './message-id.ts';
import { chooseFolder, type ListedFolder } from './special-folders.ts';

const f = (path: string, flags: string[] = [], specialUse?: string): ListedFolder => ({ path, flags: new Set(flags), ...(specialUse ? { specialUse } : {}) });

describe('chooseFolder', () => {
  it('takes the SPECIAL-USE attribute over any name (RFC 6154)', () => {
    const list = [f('INBOX'), f('Sent'), f('Gesendete Objekte', ['\\HasNoChildren', '\\Sent']), f('Junk'), f('Spam', ['\\Junk']), f('Papierkorb', ['\\trash'])];
    expect(chooseFolder(list, 'sent')).toBe('Gesendete Objekte');
    expect(chooseFolder(list, 'junk')).toBe('Spam');
    expect(chooseFolder(list, 'trash')).toBe('Papierkorb'); // attributes compare case-insensitively
  });

  it("then imapflow's detection from a (localized) name, then the common names", () => {
    expect(chooseFolder([f('INBOX'), f('Éléments envoyés', [], '\\Sent')], 'sent')).toBe('Éléments envoyés');
    expect(chooseFolder([f('INBOX'), f('INBOX.Sent Items'), f('INBOX.Trash')], 'sent')).toBe('INBOX.Sent Items');
    expect(chooseFolder([f('INBOX'), f('[Gmail]/Sent Mail'), f('[Gmail]/Spam')], 'junk')).toBe('[Gmail]/Spam');
    expect(chooseFolder([f('INBOX'), f('deleted items')], 'trash')).toBe('deleted items');
  });

  it('never picks a folder that cannot be selected, and says null when there is none', () => {
    expect(chooseFolder([f('[Gmail]', ['\\Noselect', '\\Sent']), f('Sent')], 'sent')).toBe('Sent');
    expect(chooseFolder([f('INBOX'), f('Archive')], 'sent')).toBeNull();
    expect(chooseFolder([], 'junk')).toBeNull();
  });
});

describe('Message-IDs', () => {
  it('accepts <left@right> and refuses what would break or widen an IMAP search', () => {
    expect(() => assertMessageId('<0192f7a0-1d2b.7c3d+x=y@mail.example.com>')).not.toThrow();
    for (const bad of ['0192@x.test', '<>', '<no-at-sign>', '<a@b>\r\nA1 LOGOUT', '<a b@c>', '<a"b@c>', '<a\\b@c>', `<${'a'.repeat(1000)}@b>`, '']) {
      let err: unknown;
      try {
        assertMessageId(bad);
      } catch (e) {
        err = e;
      }
      expect(isCadenzaError(err, 'INVALID_INPUT'), JSON.stringify(bad)).toBe(true);
    }
  });

  it('compares exactly, ignoring surrounding white space only', () => {
    expect(sameMessageId(' <a@b> ', '<a@b>')).toBe(true);
    expect(sameMessageId('<xa@b>', '<a@b>')).toBe(false);
    expect(sameMessageId('<A@b>', '<a@b>')).toBe(false);
    expect(sameMessageId(undefined, '<a@b>')).toBe(false);
  });
});
