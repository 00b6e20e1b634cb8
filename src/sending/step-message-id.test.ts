import { describe, expect, it } from 'vitest';
import { messageIdLocalPart, stepLocalPart, stepMessageId } from './step-message-id.ts';

const e1 = '0190a3c4-1111-7000-8000-000000000001';
const e2 = '0190a3c4-1111-7000-8000-000000000002';
const s1 = '0190a3c4-2222-7000-8000-000000000001';
const s2 = '0190a3c4-2222-7000-8000-000000000002';

describe('stepMessageId: a step\'s Message-ID is a function of its key', () => {
  it('the same (enrollment, step) always gives the same id, in the mailbox\'s domain, UUID-shaped (version 8)', () => {
    const id = stepMessageId('Rep@Acme.Test', e1, s1);
    expect(id).toBe(stepMessageId('rep@acme.test', e1.toUpperCase(), s1));
    expect(id).toMatch(/^<[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}@acme\.test>$/);
  });

  it('another enrollment or another step gives another id; the ids themselves appear nowhere in it', () => {
    const ids = new Set([stepLocalPart(e1, s1), stepLocalPart(e1, s2), stepLocalPart(e2, s1), stepLocalPart(e2, s2)]);
    expect(ids.size).toBe(4);
    for (const id of ids) expect(id).not.toContain('0190a3c4');
  });

  it('a restored database recognises a copy by recomputing the local part', () => {
    expect(messageIdLocalPart(` ${stepMessageId('rep@acme.test', e2, s2)} `)).toBe(stepLocalPart(e2, s2));
    expect(messageIdLocalPart('no-brackets@acme.test')).toBeNull();
    expect(messageIdLocalPart('<a@b@c>')).toBeNull();
  });
});
