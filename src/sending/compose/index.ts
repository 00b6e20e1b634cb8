/** Composing sequence emails: templates, MIME, threading, unsubscribe, tracking links and DKIM. */
export { composeEmail, leadDisplayName, type Address, type ComposeInput, type ComposedEmail } from './compose.ts';
export { checkDkimKey, dkimRecordName, dkimSign, dkimSigningOptions, dkimTxtValue, generateDkimKey, SIGNED_HEADER_FIELDS, type DkimKey } from './dkim.ts';
export { prepareEmail, type PrepareInput, type PrepareResult } from './prepare.ts';
export { renderEmail, type EmailTemplate, type RenderContext, type RenderErrorCode, type RenderResult, type RenderSeed } from '../../sequence/template/render.ts';
export { templateProblems, validateTemplate, type TemplateProblem, type TemplateValidation, type ValidateOptions } from '../../sequence/template/validate.ts';
export { LEAD_FIELDS as TEMPLATE_LEAD_FIELDS, SENDER_FIELDS as TEMPLATE_SENDER_FIELDS, type LeadValues, type SenderValues } from '../../sequence/template/variables.ts';
export { filterSpecs } from '../../sequence/template/filters.ts';
export { isMessageId, MAX_REFERENCES, replySubject, threadHeaders, type ThreadContext, type ThreadHeaders } from './threading.ts';
export { insertPixel, openTrackingToken, rewriteLinks, TRACKING_KEY_PURPOSE, trackingKey, trackingLinks, type TrackedLink, type TrackingLinks, type TrackingPayload } from './tracking.ts';
export { LIST_UNSUBSCRIBE_POST, listUnsubscribe, parseUnsubscribeMailto, recogniseUnsubscribeRequest, unsubscribeMailto, type ListUnsubscribe, type UnsubscribeRequest } from './unsubscribe.ts';
