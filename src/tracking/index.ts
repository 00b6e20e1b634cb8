/** The tracking module: open pixel, click redirect, one-click unsubscribe, custom tracking domains. */
export { registerTracking, type TrackingDeps } from './plugin.ts';
export { honourUnsubscribe, type UnsubscribeDeps, type UnsubscribeRequest, type UnsubscribeResult } from './unsubscribe.ts';
export { classifyClick, classifyOpen, type Classification, type ClickEvidence, type RequestEvidence, type Verdict } from './classify.ts';
export { checkTrackingDomain, trackingBaseUrl } from './links.ts';
export { openToken, type ClickToken, type OpenToken, type TrackingToken, type UnsubscribeToken } from './tokens.ts';
export { TrackingRecorder, type RecorderOptions, type RequestFacts } from './recorder.ts';
export { BatchWriter, type BatchWriterOptions, type BatchWriterStats } from './batch-writer.ts';
export { PIXEL_GIF } from './routes/pixel.ts';
