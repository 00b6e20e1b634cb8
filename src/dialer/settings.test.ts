import { describe, expect, it } from 'vitest';
import { loadConfig } from '../common/config.ts';
import { dialerSettingsFrom, sipWsOrigin, transcriptionSettingsFrom } from './settings.ts';

const SIP = { CADENZA_SIP_WS_URL: 'wss://sip.example.com:8443', CADENZA_SIP_DOMAIN: 'sip.example.com', CADENZA_SIP_SECRET: 'sixteen-chars-or-more' };

describe('dialer settings from the environment', () => {
  it('is off when nothing is set', () => {
    expect(dialerSettingsFrom(loadConfig({}))).toBeUndefined();
  });

  it('is on with the three SIP settings, TURN optional, a working day by default', () => {
    const s = dialerSettingsFrom(loadConfig({ ...SIP, CADENZA_TURN_URLS: 'turn:t.example.com:3478?transport=udp, stun:t.example.com:3478', CADENZA_TURN_SECRET: 'another-long-secret' }));
    expect(s).toEqual({ wsUrl: SIP.CADENZA_SIP_WS_URL, domain: 'sip.example.com', sipSecret: SIP.CADENZA_SIP_SECRET, turnUrls: ['turn:t.example.com:3478?transport=udp', 'stun:t.example.com:3478'], turnSecret: 'another-long-secret', ttlSeconds: 28_800 });
  });

  it('refuses half a configuration at start, naming what is missing', () => {
    expect(() => dialerSettingsFrom(loadConfig({ CADENZA_SIP_WS_URL: SIP.CADENZA_SIP_WS_URL }))).toThrow(/CADENZA_SIP_DOMAIN and CADENZA_SIP_SECRET/);
    expect(() => dialerSettingsFrom(loadConfig({ ...SIP, CADENZA_TURN_URLS: 'turn:t.example.com' }))).toThrow(/CADENZA_TURN_SECRET/);
    expect(() => loadConfig({ ...SIP, CADENZA_SIP_SECRET: 'short' })).toThrow(/at least 16/);
    expect(() => loadConfig({ ...SIP, CADENZA_SIP_WS_URL: 'https://sip.example.com' })).toThrow(/wss:/);
  });

  it('gives the CSP the WebSocket origin only', () => {
    expect(sipWsOrigin('wss://sip.example.com:8443/ws?x=1')).toBe('wss://sip.example.com:8443');
  });
});

describe('call transcription settings from the environment', () => {
  it('is off without a model folder; on with one, one thread by default, file names only when given', () => {
    expect(transcriptionSettingsFrom(loadConfig({}))).toBeUndefined();
    expect(transcriptionSettingsFrom(loadConfig({ CADENZA_TRANSCRIPTION_MODEL: '/srv/asr/zipformer' }))).toEqual({ dir: '/srv/asr/zipformer', numThreads: 1 });
    expect(
      transcriptionSettingsFrom(loadConfig({ CADENZA_TRANSCRIPTION_MODEL: '/srv/asr/zipformer', CADENZA_TRANSCRIPTION_ENCODER: 'encoder.int8.onnx', CADENZA_TRANSCRIPTION_JOINER: 'joiner.int8.onnx', CADENZA_TRANSCRIPTION_THREADS: '4' })),
    ).toEqual({ dir: '/srv/asr/zipformer', numThreads: 4, encoder: 'encoder.int8.onnx', joiner: 'joiner.int8.onnx' });
  });

  it('refuses file names without the folder, and a thread count out of range', () => {
    expect(() => transcriptionSettingsFrom(loadConfig({ CADENZA_TRANSCRIPTION_ENCODER: 'encoder.int8.onnx' }))).toThrow(/set the folder too/);
    expect(() => loadConfig({ CADENZA_TRANSCRIPTION_MODEL: '/m', CADENZA_TRANSCRIPTION_THREADS: '0' })).toThrow(/CADENZA_TRANSCRIPTION_THREADS/);
  });
});
