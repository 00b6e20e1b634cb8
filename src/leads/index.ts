/** Lead import: the API `cadenza import` and the HTTP API call. */
export { importLeads, type ImportBatch, type ImportHeader, type ImportOptions, type ImportProgress, type ImportResult, type SettledCounts } from './import.ts';
export { cancelImportJob, createImportJob, failStaleJobs, rejectsReport, runImportJob, type ImportJobSpec } from './import-job.ts';
export type { EncodingChoice } from './csv-source.ts';
export { rejectReasons, warningReasons, type ImportIssue, type RejectReason, type WarningReason } from './reasons.ts';
export { LEAD_FIELDS, matchHeader, resolveColumns, type ColumnTarget, type LeadField, type ResolvedColumn } from './headers.ts';
export { checkEmail, normalizeEmail, type EmailCheck } from './email.ts';
export { normalizeCountry } from './country.ts';
export { normalizeTimeZone } from './time-zone.ts';
export { normalizePhone, phoneFlagCodes, type PhoneFlagCode, type PhoneType, type PhoneVerdict } from './phone.ts';
export { matchLeadByPhone, MAX_PHONE_MATCHES, type PhoneMatch } from './match-phone.ts';
export { DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE } from './limits.ts';
