import { describe, expect, it } from 'vitest';
import { planDeliveries, type PlanMember } from './plan.ts';

const on = { inApp: true, browser: false, email: true, slack: true };
const off = { inApp: false, browser: false, email: false, slack: false };

describe('planDeliveries: who hears of an event, and where', () => {
  const rep: PlanMember = { userId: 'rep', role: 'member', scope: 'mine', channels: { reply_positive: on }, hasSlack: true };
  const lead: PlanMember = { userId: 'lead', role: 'member', scope: 'all', channels: { reply_positive: on }, hasSlack: false };
  const owner: PlanMember = { userId: 'owner', role: 'owner', scope: 'mine', channels: {}, hasSlack: false };

  it("gives a rep their own mailboxes' events, an 'all' member everyone's, and unowned ones to all", () => {
    const d = planDeliveries([{ id: 1, kind: 'reply_positive', userId: 'rep' }, { id: 2, kind: 'task_due', userId: null }], [rep, lead, owner]);
    expect(d.filter((x) => x.eventId === 1).map((x) => x.userId)).toEqual(['rep', 'lead']);
    expect(d.filter((x) => x.eventId === 2).map((x) => x.userId)).toEqual(['rep', 'lead', 'owner']);
  });

  it('applies each member\'s channels, the defaults without a choice, and Slack only with a URL', () => {
    const d = planDeliveries([{ id: 1, kind: 'reply_positive', userId: null }], [rep, lead, owner]);
    expect(d).toEqual([
      { eventId: 1, userId: 'rep', inApp: true, browser: false, email: true, slack: true },
      { eventId: 1, userId: 'lead', inApp: true, browser: false, email: true, slack: false },
      { eventId: 1, userId: 'owner', inApp: true, browser: true, email: false, slack: false },
    ]);
  });

  it('leaves out a member who turned every channel off, and treats a departed owner as nobody', () => {
    const quiet: PlanMember = { userId: 'quiet', role: 'member', scope: 'mine', channels: { mailbox_attention: off }, hasSlack: false };
    const d = planDeliveries([{ id: 7, kind: 'mailbox_attention', userId: 'gone' }], [quiet, owner]);
    expect(d.map((x) => x.userId)).toEqual(['owner']);
  });

  it("tells a settings kind (an SSO domain that lost its proof) to admins and owners only, whatever a member's scope", () => {
    const admin: PlanMember = { userId: 'admin', role: 'admin', scope: 'mine', channels: {}, hasSlack: false };
    const d = planDeliveries([{ id: 9, kind: 'sso_attention', userId: null }], [rep, lead, admin, owner]);
    expect(d.map((x) => x.userId)).toEqual(['admin', 'owner']);
  });
});
