import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HUBSPOT_MAX_AGE_MS, verifyBasicAuth, verifyHubSpotV3 } from './signature.ts';

/** HubSpot's v3 signature and Pipedrive's basic auth, each against a value computed by hand here. */
describe('CRM webhook verification', () => {
  const secret = 'hs-client-secret';
  const uri = 'https://cadenza.example/hooks/crm/0190c0de-0000-7000-8000-000000000001';
  const body = '[{"eventId":1,"objectId":51001,"subscriptionType":"contact.propertyChange"}]';
  const now = Date.UTC(2026, 11, 5, 12, 0);
  const ts = String(now - 1_000);
  const signed = createHmac('sha256', secret).update(`POST${uri}${body}${ts}`).digest('base64');

  it('HubSpot v3: the documented HMAC verifies', () => {
    expect(verifyHubSpotV3(secret, { method: 'POST', uri, body, signature: signed, timestamp: ts }, now)).toEqual({ ok: true });
  });

  it('HubSpot v3: a tampered body, another URI, a wrong secret, a changed timestamp do not', () => {
    expect(verifyHubSpotV3(secret, { method: 'POST', uri, body: body.replace('51001', '51002'), signature: signed, timestamp: ts }, now)).toMatchObject({ ok: false });
    expect(verifyHubSpotV3(secret, { method: 'POST', uri: `${uri}x`, body, signature: signed, timestamp: ts }, now)).toMatchObject({ ok: false });
    expect(verifyHubSpotV3('another-secret', { method: 'POST', uri, body, signature: signed, timestamp: ts }, now)).toMatchObject({ ok: false, reason: 'a signature that does not match' });
    expect(verifyHubSpotV3(secret, { method: 'POST', uri, body, signature: signed, timestamp: String(now) }, now)).toMatchObject({ ok: false });
  });

  it('HubSpot v3: older than 5 minutes is refused even with a right signature; missing headers too', () => {
    const old = String(now - HUBSPOT_MAX_AGE_MS - 1);
    const sig = createHmac('sha256', secret).update(`POST${uri}${body}${old}`).digest('base64');
    expect(verifyHubSpotV3(secret, { method: 'POST', uri, body, signature: sig, timestamp: old }, now)).toEqual({ ok: false, reason: 'a timestamp more than 5 minutes away' });
    const edge = String(now - HUBSPOT_MAX_AGE_MS);
    expect(verifyHubSpotV3(secret, { method: 'POST', uri, body, signature: createHmac('sha256', secret).update(`POST${uri}${body}${edge}`).digest('base64'), timestamp: edge }, now)).toEqual({ ok: true });
    expect(verifyHubSpotV3(secret, { method: 'POST', uri, body, signature: undefined, timestamp: ts }, now)).toMatchObject({ ok: false });
    expect(verifyHubSpotV3(secret, { method: 'POST', uri, body, signature: signed, timestamp: 'yesterday' }, now)).toMatchObject({ ok: false });
  });

  it('Pipedrive: basic auth with the registered password; another password, user or scheme is refused', () => {
    const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
    expect(verifyBasicAuth('cadenza', 'pw-1', basic('cadenza', 'pw-1'))).toEqual({ ok: true });
    expect(verifyBasicAuth('cadenza', 'pw-1', basic('cadenza', 'pw-2'))).toMatchObject({ ok: false });
    expect(verifyBasicAuth('cadenza', 'pw-1', basic('admin', 'pw-1'))).toMatchObject({ ok: false });
    expect(verifyBasicAuth('cadenza', 'pw-1', basic('cadenza', 'pw-1x'))).toMatchObject({ ok: false });
    expect(verifyBasicAuth('cadenza', 'pw-1', 'Bearer pw-1')).toMatchObject({ ok: false, reason: 'no basic auth' });
    expect(verifyBasicAuth('cadenza', 'pw-1', undefined)).toMatchObject({ ok: false });
  });
});
