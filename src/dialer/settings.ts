import type { Config } from '../common/config.ts';
import { cadenzaError } from '../common/errors.ts';
import type { SipCredentialSettings } from './sip-credentials.ts';
import type { TranscriptionModelConfig } from './transcribe/model.ts';

/**
 * The dialer's settings from the configuration (common/config.ts): on when CADENZA_SIP_WS_URL,
 * CADENZA_SIP_DOMAIN and CADENZA_SIP_SECRET are all set, off when none is. Half a configuration is
 * an error at start, not a softphone that fails in every rep's browser.
 */
export function dialerSettingsFrom(cfg: Config): SipCredentialSettings | undefined {
  const sip = { CADENZA_SIP_WS_URL: cfg.CADENZA_SIP_WS_URL, CADENZA_SIP_DOMAIN: cfg.CADENZA_SIP_DOMAIN, CADENZA_SIP_SECRET: cfg.CADENZA_SIP_SECRET };
  const set = Object.entries(sip).filter(([, v]) => v !== undefined).map(([k]) => k);
  if (set.length === 0) {
    if (cfg.CADENZA_TURN_URLS || cfg.CADENZA_TURN_SECRET) throw cadenzaError('CONFIG_INVALID', 'CADENZA_TURN_URLS and CADENZA_TURN_SECRET are for the dialer: set CADENZA_SIP_WS_URL, CADENZA_SIP_DOMAIN and CADENZA_SIP_SECRET too');
    return undefined;
  }
  if (set.length < 3) {
    const missing = Object.keys(sip).filter((k) => !set.includes(k));
    throw cadenzaError('CONFIG_INVALID', `the dialer needs ${missing.join(' and ')} as well as ${set.join(' and ')}`, { missing });
  }
  const turnUrls = (cfg.CADENZA_TURN_URLS ?? '').split(',').map((u) => u.trim()).filter(Boolean);
  if (turnUrls.some((u) => /^turns?:/.test(u)) && !cfg.CADENZA_TURN_SECRET) throw cadenzaError('CONFIG_INVALID', 'CADENZA_TURN_URLS names a TURN server: set CADENZA_TURN_SECRET (coturn static-auth-secret)');
  return {
    wsUrl: cfg.CADENZA_SIP_WS_URL!,
    domain: cfg.CADENZA_SIP_DOMAIN!,
    sipSecret: cfg.CADENZA_SIP_SECRET!,
    turnUrls,
    ...(cfg.CADENZA_TURN_SECRET ? { turnSecret: cfg.CADENZA_TURN_SECRET } : {}),
    ttlSeconds: cfg.CADENZA_SIP_CREDENTIAL_TTL_S,
  };
}

/** The origin a browser connects to for SIP (the CSP's connect-src names exactly it). */
export function sipWsOrigin(wsUrl: string): string {
  const u = new URL(wsUrl);
  return `${u.protocol}//${u.host}`;
}

/**
 * Call transcription's model from the configuration: CADENZA_TRANSCRIPTION_MODEL is the folder;
 * the file names only where it holds several. Absent: undefined (recordings stay untranscribed).
 * File names without the folder are a configuration error, not a silent "off".
 */
export function transcriptionSettingsFrom(cfg: Config): TranscriptionModelConfig | undefined {
  const files = { encoder: cfg.CADENZA_TRANSCRIPTION_ENCODER, decoder: cfg.CADENZA_TRANSCRIPTION_DECODER, joiner: cfg.CADENZA_TRANSCRIPTION_JOINER };
  if (!cfg.CADENZA_TRANSCRIPTION_MODEL) {
    if (Object.values(files).some((v) => v !== undefined)) throw cadenzaError('CONFIG_INVALID', 'CADENZA_TRANSCRIPTION_ENCODER, _DECODER and _JOINER name files in CADENZA_TRANSCRIPTION_MODEL: set the folder too');
    return undefined;
  }
  return {
    dir: cfg.CADENZA_TRANSCRIPTION_MODEL,
    numThreads: cfg.CADENZA_TRANSCRIPTION_THREADS,
    ...Object.fromEntries(Object.entries(files).filter(([, v]) => v !== undefined)),
  };
}
