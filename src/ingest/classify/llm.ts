import type { MailLabel, ReplyIntent } from '../types.ts';

export interface LlmClassifier {
  classify(input: { subject: string; newText: string; from: string }): Promise<{ label: MailLabel; intent?: ReplyIntent; confidence: number; reason: string } | null>;
}

/** First version: the Messages API client follows; until then it declines every mail so the ladder falls back. */
export function anthropicClassifier(_options: { apiKey: string; baseUrl?: string; model?: string; timeoutMs?: number; fetch?: typeof fetch }): LlmClassifier {
  return { classify: async () => null };
}
