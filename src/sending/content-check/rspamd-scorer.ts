import { explainSymbol } from './explain.ts';

/**
 * A spam score for one message from a local rspamd (HTTP `POST /checkv2`, rspamd's "normal"
 * worker, on loopback), with a deadline. Three outcomes, never an exception:
 *
 *   scored         score, rspamd's threshold for "add header" (spam), its action, every rule hit
 *   not_installed  nothing listens there (connection refused): the check runs without a score
 *   unavailable    it listens but failed or outran the deadline
 *
 * The answer is a remote program's: it is size-capped and read defensively (a missing or odd
 * field becomes "no such hit", never a crash).
 */

export interface ScoreHit {
  symbol: string;
  score: number;
  /** What the rule means, in plain words. */
  explanation: string;
  /** rspamd's details (the URL, the word), at most a few. */
  options: string[];
}

export type ScoreResult =
  | { status: 'scored'; scorer: 'rspamd'; score: number; threshold: number; action: string; spam: boolean; hits: ScoreHit[] }
  | { status: 'not_installed'; scorer: 'rspamd'; reason: string }
  | { status: 'unavailable'; scorer: 'rspamd'; reason: string };

/** Declared by the content check; the rspamd client below is the one implementation. */
export interface ContentScorer {
  score(raw: Buffer, opts?: { signal?: AbortSignal }): Promise<ScoreResult>;
}

export interface RspamdOptions {
  /** e.g. http://127.0.0.1:11333 (the packaged default). */
  url: string;
  /** Whole request, connect to last byte. */
  timeoutMs?: number;
  /** Raised by rspamd's own limit; this one guards us. */
  maxAnswerBytes?: number;
}

export const RSPAMD_DEFAULT_URL = 'http://127.0.0.1:11333';

/**
 * The content check asks about the content, so rspamd's rule groups about the path a message takes
 * are turned off for it (rspamd's per-request `Settings`): `hfilter` judges the connecting host
 * (here there is none: no client address or reverse DNS, HFILTER_HOSTNAME_UNKNOWN +2.5 on every
 * message) and `policies` judges SPF, DKIM and DMARC (the rendered step is not signed or sent from
 * the provider's address, so a domain with p=reject would add 2 to every check). Those are the
 * Domains screen's business. Every content rule still weighs (measured on the filter bed: a plain
 * email 2.5 → 0, a spammy one 15.75 → 13.25, the same content rules hit).
 */
const CHECK_HEADERS = { 'content-type': 'message/rfc822', pass: 'all', settings: JSON.stringify({ groups_disabled: ['hfilter', 'policies'] }) };

export function rspamdScorer(o: RspamdOptions): ContentScorer {
  const base = o.url.replace(/\/+$/, '');
  const timeoutMs = o.timeoutMs ?? 5_000;
  const maxBytes = o.maxAnswerBytes ?? 1_000_000;
  return {
    async score(raw, opts) {
      const signal = opts?.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
      let text: string;
      try {
        const res = await fetch(`${base}/checkv2`, { method: 'POST', body: new Blob([Uint8Array.from(raw)]), signal, headers: CHECK_HEADERS });
        text = await res.text();
        if (!res.ok) return { status: 'unavailable', scorer: 'rspamd', reason: `rspamd answered HTTP ${res.status}` };
      } catch (e) {
        const code = causeCode(e);
        if (code === 'ECONNREFUSED') return { status: 'not_installed', scorer: 'rspamd', reason: `no spam scorer at ${base} (rspamd not installed or not running)` };
        if ((e as Error)?.name === 'TimeoutError' || (e as Error)?.name === 'AbortError') return { status: 'unavailable', scorer: 'rspamd', reason: `rspamd did not answer within ${timeoutMs} ms` };
        return { status: 'unavailable', scorer: 'rspamd', reason: `rspamd could not be reached: ${code ?? (e as Error)?.message}` };
      }
      if (text.length > maxBytes) return { status: 'unavailable', scorer: 'rspamd', reason: `rspamd's answer is over ${maxBytes} bytes` };
      return parseCheckV2(text);
    },
  };
}

function causeCode(e: unknown): string | undefined {
  const c = (e as { cause?: { code?: string; errors?: Array<{ code?: string }> } })?.cause;
  return c?.code ?? c?.errors?.[0]?.code;
}

/** rspamd's /checkv2 JSON to a ScoreResult. */
export function parseCheckV2(text: string): ScoreResult {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch {
    return { status: 'unavailable', scorer: 'rspamd', reason: 'rspamd answered something that is not JSON' };
  }
  const o = (j && typeof j === 'object' ? j : {}) as Record<string, unknown>;
  const score = typeof o.score === 'number' ? o.score : NaN;
  if (!Number.isFinite(score)) return { status: 'unavailable', scorer: 'rspamd', reason: 'rspamd answered without a score' };
  const threshold = typeof o.required_score === 'number' ? o.required_score : 15;
  const action = typeof o.action === 'string' ? o.action : 'unknown';
  const symbols = (o.symbols && typeof o.symbols === 'object' ? o.symbols : {}) as Record<string, unknown>;
  const hits: ScoreHit[] = [];
  for (const [name, v] of Object.entries(symbols).slice(0, 500)) {
    const s = (v && typeof v === 'object' ? v : {}) as Record<string, unknown>;
    const sc = typeof s.score === 'number' ? s.score : 0;
    if (sc === 0) continue;
    const options = Array.isArray(s.options) ? s.options.filter((x): x is string => typeof x === 'string').slice(0, 5).map((x) => x.slice(0, 200)) : [];
    hits.push({ symbol: name.slice(0, 100), score: Math.round(sc * 100) / 100, explanation: explainSymbol(name, typeof s.description === 'string' ? s.description : null), options });
  }
  hits.sort((a, b) => b.score - a.score || a.symbol.localeCompare(b.symbol));
  const spam = action === 'add header' || action === 'rewrite subject' || action === 'reject' || score >= threshold;
  return { status: 'scored', scorer: 'rspamd', score: Math.round(score * 100) / 100, threshold, action, spam, hits };
}
