export { checkStepContent, type ContentCheckRequest, type ContentCheckResult } from './check.ts';
export { explainSymbol } from './explain.ts';
export { CONTENT_LIMIT, contentFindings, SPAM_PHRASES, worstLevel, type ContentCheckInput, type Finding, type FindingCode, type FindingLevel } from './findings.ts';
export { parseCheckV2, RSPAMD_DEFAULT_URL, rspamdScorer, type ContentScorer, type RspamdOptions, type ScoreHit, type ScoreResult } from './rspamd-scorer.ts';
