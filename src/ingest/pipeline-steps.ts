import { classify, type ClassifyOptions } from './classify/ladder.ts';
import { parseMailSafe } from './parse/parse-mail.ts';
import type { IngestSteps } from './pipeline.ts';
import { extractReplyText } from './reply-text/index.ts';

/**
 * The pipeline's real CPU stages: the hardened parser (quarantine reasons instead of throws), the
 * reply's new text, and the classification ladder (rules → model → optional LLM).
 */
export function defaultIngestSteps(o: { limits?: Parameters<typeof parseMailSafe>[1]; llm?: ClassifyOptions['llm'] } = {}): IngestSteps {
  return {
    async parse(raw) {
      const r = await parseMailSafe(raw, o.limits);
      return r.ok ? r : { ok: false, reason: `${r.reason}: ${r.detail}` };
    },
    newText: (mail) => extractReplyText({ text: mail.text, html: mail.html, from: mail.from?.address ?? null }).text,
    classify: (mail, newText) => classify(mail, { newText, ...(o.llm ? { llm: o.llm } : {}) }),
  };
}

/** The prepare pool's threads build their steps with this (worker/prepare-thread.ts). */
export function createSteps(): IngestSteps {
  return defaultIngestSteps();
}
