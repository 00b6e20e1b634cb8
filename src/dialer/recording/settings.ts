/**
 * A workspace's call recording settings, kept in workspace.settings (jsonb) beside its other
 * settings: off unless an admin turns it on (recording needs the consent the announcement asks
 * for, and the law of the places called, docs/dialer.md), and kept `retentionDays` after the call.
 */
export interface RecordingSettings {
  enabled: boolean;
  retentionDays: number;
}

export const DEFAULT_RECORDING_RETENTION_DAYS = 90;
export const MIN_RECORDING_RETENTION_DAYS = 1;
export const MAX_RECORDING_RETENTION_DAYS = 3650;

export function recordingSettings(settings: Record<string, unknown>): RecordingSettings {
  const days = settings.callRecordingRetentionDays;
  return {
    enabled: settings.callRecording === true,
    retentionDays: typeof days === 'number' && Number.isInteger(days) && days >= MIN_RECORDING_RETENTION_DAYS && days <= MAX_RECORDING_RETENTION_DAYS ? days : DEFAULT_RECORDING_RETENTION_DAYS,
  };
}
