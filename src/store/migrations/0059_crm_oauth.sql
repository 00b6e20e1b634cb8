-- CRM connections made with OAuth 2 (issue 17, src/crm/oauth/, docs/crm.md "Connecting"): the
-- flows of the mailbox OAuth connect (0007_oauth.sql, 0016) hold the CRM ones too, so that one
-- single-use, expiring, session-bound state table and one consume statement serve both.
--
--   provider    the CRM's kind besides google and microsoft
--   mode        'crm' for a CRM flow (the mailbox modes are api and imap)
--   nonce       null for a CRM flow: OpenID Connect's nonce binds an ID token, and no CRM flow asks for one
--   base_url    the CRM API address the connection will use when the token answer does not name
--               one (HubSpot's API host, or an admin's own); Salesforce and Pipedrive name theirs
alter table oauth_flow drop constraint oauth_flow_provider_check;
alter table oauth_flow add constraint oauth_flow_provider_check check (provider in ('google', 'microsoft', 'hubspot', 'salesforce', 'pipedrive'));
alter table oauth_flow drop constraint oauth_flow_mode_check;
alter table oauth_flow add constraint oauth_flow_mode_check check (mode in ('api', 'imap', 'crm'));
alter table oauth_flow alter column nonce drop not null;
alter table oauth_flow add column base_url text;
