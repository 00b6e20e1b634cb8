import { describe, expect, it } from 'vitest';
import { loadConfig } from '../common/config.ts';
import { systemMailerSettingsFrom } from './system-mailer.ts';

describe('system mailer settings (CADENZA_SMTP_URL, CADENZA_MAIL_FROM)', () => {
  it('is off without a URL, and takes the From from CADENZA_MAIL_FROM or else the SMTP user', () => {
    expect(systemMailerSettingsFrom(loadConfig({}))).toBeUndefined();
    const url = 'smtp://cadenza%40example.com:p%40ss@mail.example.com:587';
    expect(systemMailerSettingsFrom(loadConfig({ CADENZA_SMTP_URL: url }))).toEqual({ url, from: 'cadenza@example.com' });
    expect(systemMailerSettingsFrom(loadConfig({ CADENZA_SMTP_URL: url, CADENZA_MAIL_FROM: 'Cadenza <team@example.com>' }))?.from).toBe('Cadenza <team@example.com>');
  });

  it('refuses a URL that is not smtp(s), and a From it cannot guess', () => {
    expect(() => loadConfig({ CADENZA_SMTP_URL: 'https://mail.example.com' })).toThrow(/CADENZA_SMTP_URL: an smtp:\/\/ or smtps:\/\/ URL/);
    expect(() => systemMailerSettingsFrom({ CADENZA_SMTP_URL: 'smtps://apikey:secret@smtp.example.com:465' })).toThrow(/CADENZA_MAIL_FROM is needed/);
  });
});
