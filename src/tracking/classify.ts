import {
  APPLE_MPP_UA,
  BROWSER,
  GMAIL_PROXY,
  MAIL_CLIENTS,
  YAHOO_PROXY,
  bots,
  isAppleAddress,
  isMicrosoftEopAddress,
  match,
  securityScanners,
} from './agents.ts';

/**
 * Was it a person? Pure classifiers of one open or one click from the evidence the request left
 * (STYLE habit 9): each returns a verdict, a confidence in [0, 1] and a reason that names the rule
 * and the evidence, stored with the event so the UI can show why an open was not counted.
 *
 *   human    a person opened or clicked (possibly through a proxy that fetches only on open, like Gmail's)
 *   proxy    a privacy proxy fetched it on its own, whether or not anyone read the message (Apple MPP)
 *   scanner  a security gateway, link checker, bot or program followed it
 *   unknown  nothing points either way
 *
 * Rules are checked in order, most specific evidence first; the first that holds decides.
 */

export type Verdict = 'human' | 'proxy' | 'scanner' | 'unknown';

export interface Classification {
  verdict: Verdict;
  confidence: number;
  reason: string;
}

export interface RequestEvidence {
  /** The HTTP method: mail clients GET; link checkers often HEAD first. */
  method: string;
  userAgent: string | null;
  ip: string | null;
  /** Milliseconds from the send (the message's time) to this request; null when unknown. */
  delayMs: number | null;
}

export interface ClickEvidence extends RequestEvidence {
  linkIndex: number;
  /** Other links of the same message clicked just before, as this process saw them (newest first or any order). */
  recentOtherLinks: ReadonlyArray<{ linkIndex: number; agoMs: number }>;
}

/**
 * An open this soon after the send is a prefetch: Apple MPP, a provider's proxy or a gateway
 * fetching as the message is delivered. A person needs longer to see the message arrive and open it.
 */
export const PREFETCH_MS = 5_000;
/**
 * Security gateways follow every link while the message is in transit or right after delivery, so
 * a click within this long of the send is theirs; a person must notice, open, read, then click.
 */
export const FAST_CLICK_MS = 15_000;
/** Several distinct links of one message followed within this window: a scanner walking them all. */
export const BURST_WINDOW_MS = 5_000;
/** How many distinct links (this one included) within the window make a burst. */
export const BURST_LINKS = 3;
/** Two different links in under a second: no person moves that fast between links in a message. */
export const DOUBLE_CLICK_MS = 1_000;

function result(verdict: Verdict, confidence: number, reason: string): Classification {
  return { verdict, confidence, reason };
}

function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** A delay we can reason about: negative ones (clock skew, a preview send) tell us nothing. */
function delayOf(ev: RequestEvidence): number | null {
  return ev.delayMs !== null && Number.isFinite(ev.delayMs) && ev.delayMs >= 0 ? ev.delayMs : null;
}

export function classifyOpen(ev: RequestEvidence): Classification {
  const ua = (ev.userAgent ?? '').trim();
  const delay = delayOf(ev);
  const fast = delay !== null && delay < PREFETCH_MS;
  if (ev.method.toUpperCase() === 'HEAD') return result('scanner', 0.9, 'head_request');
  const scanner = match(securityScanners, ua);
  if (scanner) return result('scanner', 0.95, `scanner_ua:${scanner.name}`);
  const bareUa = APPLE_MPP_UA.test(ua);
  const apple = isAppleAddress(ev.ip);
  if (bareUa && apple) return result('proxy', 0.95, 'apple_mpp:ua+ip');
  if (GMAIL_PROXY.test(ua)) {
    return fast ? result('proxy', 0.6, `gmail_proxy:prefetch ${secs(delay)} after send`) : result('human', 0.75, 'gmail_proxy:fetched on open');
  }
  if (YAHOO_PROXY.test(ua)) {
    return fast ? result('proxy', 0.6, `yahoo_proxy:prefetch ${secs(delay)} after send`) : result('human', 0.7, 'yahoo_proxy:fetched on open');
  }
  if (bareUa) return result('proxy', 0.75, 'apple_mpp:ua');
  if (apple) return result('proxy', 0.6, 'apple_mpp:ip');
  const bot = match(bots, ua);
  if (bot) return result('scanner', 0.9, `bot_ua:${bot.name}`);
  if (ua === '') return result('scanner', 0.6, 'no_user_agent');
  if (isMicrosoftEopAddress(ev.ip)) return result('scanner', 0.8, 'microsoft_eop_ip');
  if (fast) return result('scanner', 0.55, `fast_open:${secs(delay)} after send`);
  if (MAIL_CLIENTS.test(ua)) return result('human', 0.8, 'mail_client');
  if (BROWSER.test(ua)) return result('human', 0.7, 'browser_ua');
  return result('unknown', 0.3, 'unrecognised_ua');
}

export function classifyClick(ev: ClickEvidence): Classification {
  const ua = (ev.userAgent ?? '').trim();
  const delay = delayOf(ev);
  if (ev.method.toUpperCase() === 'HEAD') return result('scanner', 0.95, 'head_request');
  const scanner = match(securityScanners, ua);
  if (scanner) return result('scanner', 0.95, `scanner_ua:${scanner.name}`);
  const bot = match(bots, ua);
  if (bot) return result('scanner', 0.9, `bot_ua:${bot.name}`);
  // Apple Mail fetches link previews through the same proxies as MPP.
  if (APPLE_MPP_UA.test(ua) && isAppleAddress(ev.ip)) return result('proxy', 0.85, 'apple_link_preview:ua+ip');
  if (isMicrosoftEopAddress(ev.ip)) return result('scanner', 0.85, 'microsoft_eop_ip');
  const others = new Set<number>();
  const close = new Set<number>();
  for (const o of ev.recentOtherLinks) {
    if (o.linkIndex === ev.linkIndex || !(o.agoMs >= 0)) continue;
    if (o.agoMs <= BURST_WINDOW_MS) others.add(o.linkIndex);
    if (o.agoMs <= DOUBLE_CLICK_MS) close.add(o.linkIndex);
  }
  if (others.size + 1 >= BURST_LINKS) return result('scanner', 0.9, `link_burst:${others.size + 1} links in ${secs(BURST_WINDOW_MS)}`);
  if (delay !== null && delay < FAST_CLICK_MS) return result('scanner', 0.8, `fast_click:${secs(delay)} after send`);
  if (close.size > 0) return result('scanner', 0.6, `link_burst:2 links in ${secs(DOUBLE_CLICK_MS)}`);
  if (ua === '') return result('scanner', 0.6, 'no_user_agent');
  if (MAIL_CLIENTS.test(ua) || BROWSER.test(ua)) {
    // A browser engine is what a person uses, and also what a sandbox detonation poses as; time helps.
    return delay !== null && delay < 60_000 ? result('human', 0.6, 'browser_ua:within a minute of send') : result('human', 0.8, 'browser_ua');
  }
  return result('unknown', 0.3, 'unrecognised_ua');
}
