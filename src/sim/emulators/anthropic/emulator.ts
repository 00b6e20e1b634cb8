import { z } from 'zod';
import { FaultInjector } from '../faults.ts';
import { runRoute, startEmulatorServer, type EmulatorReply, type RequestRecord } from '../server.ts';
import { anthropicErrors, requestId } from './errors.ts';

/**
 * Anthropic's Messages API (POST /v1/messages, non-streaming) on loopback: the documented request
 * checks (x-api-key, anthropic-version, model / max_tokens / messages), the documented answer
 * {"id","type":"message","role":"assistant","model","content":[{"type":"text","text"}],
 * "stop_reason","stop_sequence","usage"} and the documented errors, injectable per request through
 * `faults` on route 'messages.create'. What the assistant says comes from the test's `answer`.
 */

const requestSchema = z.object({
  model: z.string().min(1),
  max_tokens: z.number().int().min(1),
  system: z.union([z.string(), z.array(z.unknown())]).optional(),
  messages: z
    .array(z.object({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(z.unknown())]) }))
    .min(1),
  temperature: z.number().min(0).max(1).optional(),
});
export type MessagesRequest = z.infer<typeof requestSchema>;

export interface AnthropicEmulator {
  baseUrl: string;
  faults: FaultInjector;
  /** Every request, in order (the route log, and the parsed body when it was valid). */
  log: RequestRecord[];
  bodies: MessagesRequest[];
  /** The x-api-key and anthropic-version each request carried. */
  headers: Array<{ apiKey: string | undefined; version: string | undefined }>;
  /** What the assistant answers; also how a test makes it answer with a cut (max_tokens) reply. */
  answer: (req: MessagesRequest) => string | { text: string; stopReason: 'end_turn' | 'max_tokens' };
  close(): Promise<void>;
}

export async function startAnthropicEmulator(options: { apiKey: string }): Promise<AnthropicEmulator> {
  const faults = new FaultInjector();
  const log: RequestRecord[] = [];
  const emu = { faults, log, bodies: [] as MessagesRequest[], headers: [] as AnthropicEmulator['headers'], answer: (() => '{}') as AnthropicEmulator['answer'] };
  const server = await startEmulatorServer((app) => {
    app.post('/v1/messages', (req, reply) => {
      const apiKey = req.headers['x-api-key'] as string | undefined;
      const version = req.headers['anthropic-version'] as string | undefined;
      emu.headers.push({ apiKey, version });
      const guard = (): EmulatorReply | null => {
        if (apiKey !== options.apiKey) return anthropicErrors.authentication();
        if (!version) return anthropicErrors.invalidRequest('anthropic-version: header is required');
        return null;
      };
      return runRoute({ faults, log }, 'messages.create', req, reply, guard, () => {
        const body = typeof req.body === 'object' && !Buffer.isBuffer(req.body) ? req.body : null;
        const parsed = requestSchema.safeParse(body);
        if (!parsed.success) return anthropicErrors.invalidRequest(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
        emu.bodies.push(parsed.data);
        const a = emu.answer(parsed.data);
        const { text, stopReason } = typeof a === 'string' ? { text: a, stopReason: 'end_turn' as const } : a;
        const id = requestId();
        const inputChars = JSON.stringify(parsed.data.messages).length + JSON.stringify(parsed.data.system ?? '').length;
        return {
          status: 200,
          headers: { 'request-id': id },
          body: {
            id: `msg_${id.slice(4)}`,
            type: 'message',
            role: 'assistant',
            model: parsed.data.model,
            content: [{ type: 'text', text }],
            stop_reason: stopReason,
            stop_sequence: null,
            usage: { input_tokens: Math.ceil(inputChars / 4), output_tokens: Math.ceil(text.length / 4) },
          },
        };
      });
    });
  });
  return Object.assign(emu, { baseUrl: server.origin, close: server.close });
}
