-- Webhook signing secrets at rest (promise 7): sealed with the workspace's data key, like mailbox
-- credentials (src/mailbox/vault.ts), so a database dump alone reveals none. The master key is not
-- in the database, so SQL cannot seal the existing secrets: they move to legacy_secret here and the
-- first process that starts with the master key seals them and clears the column
-- (sealLegacyWebhookSecrets, run right after the migrations). The dispatcher signs only with a
-- sealed secret.
alter table webhook_endpoint rename column secret to legacy_secret;
alter table webhook_endpoint alter column legacy_secret drop not null;
alter table webhook_endpoint add column secret_sealed bytea;
-- While a secret is rotated, deliveries are signed with both (two v1 values) until this expires.
alter table webhook_endpoint add column previous_secret_sealed bytea;
alter table webhook_endpoint add column previous_secret_expires_at timestamptz;
alter table webhook_endpoint add column secret_rotated_at timestamptz;
alter table webhook_endpoint add constraint webhook_endpoint_has_secret check (secret_sealed is not null or legacy_secret is not null);
