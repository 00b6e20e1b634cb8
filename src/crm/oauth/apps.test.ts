import { describe, expect, it } from 'vitest';
import { crmOAuthAppsFrom } from './apps.ts';

/** The OAuth apps from the settings: the CRMs' own hosts by default, an override replacing them, an app without its secret off. */
describe('crmOAuthAppsFrom', () => {
  it("each CRM's documented endpoints, client authentication and PKCE", () => {
    const apps = crmOAuthAppsFrom({
      CADENZA_HUBSPOT_CLIENT_ID: 'h',
      CADENZA_HUBSPOT_CLIENT_SECRET: 'hs',
      CADENZA_PIPEDRIVE_CLIENT_ID: 'p',
      CADENZA_PIPEDRIVE_CLIENT_SECRET: 'ps',
      CADENZA_SALESFORCE_CLIENT_ID: 's',
      CADENZA_SALESFORCE_CLIENT_SECRET: 'ss',
      CADENZA_SALESFORCE_LOGIN_URL: 'https://test.salesforce.com/',
    });
    expect(apps.hubspot).toMatchObject({ authorizeUrl: 'https://app.hubspot.com/oauth/authorize', tokenUrl: 'https://api.hubapi.com/oauth/v1/token', clientAuth: 'post', pkce: false });
    expect(apps.hubspot!.scopes).toContain('oauth');
    expect(apps.pipedrive).toMatchObject({ authorizeUrl: 'https://oauth.pipedrive.com/oauth/authorize', tokenUrl: 'https://oauth.pipedrive.com/oauth/token', clientAuth: 'basic', pkce: false, scopes: [] });
    expect(apps.salesforce).toMatchObject({ authorizeUrl: 'https://test.salesforce.com/services/oauth2/authorize', tokenUrl: 'https://test.salesforce.com/services/oauth2/token', clientAuth: 'post', pkce: true, scopes: ['api', 'refresh_token'] });
  });

  it('an override replaces both hosts; an id without its secret leaves the CRM to tokens', () => {
    const apps = crmOAuthAppsFrom({ CADENZA_HUBSPOT_CLIENT_ID: 'h', CADENZA_HUBSPOT_CLIENT_SECRET: 'hs', CADENZA_HUBSPOT_OAUTH_URL: 'http://127.0.0.1:9/', CADENZA_PIPEDRIVE_CLIENT_ID: 'p' });
    expect(apps.hubspot).toMatchObject({ authorizeUrl: 'http://127.0.0.1:9/oauth/authorize', tokenUrl: 'http://127.0.0.1:9/oauth/v1/token' });
    expect(Object.keys(apps)).toEqual(['hubspot']);
    expect(crmOAuthAppsFrom({})).toEqual({});
  });
});
