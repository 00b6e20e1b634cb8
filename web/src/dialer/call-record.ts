import { call, ws } from '../api.ts';
import type { ApiBody, ApiResponse } from '../types.ts';
import type { CallProgressEvent } from './softphone.ts';

type ProgressRoute = 'POST /api/workspaces/:workspaceId/calls/:callId/progress';
export type EndCause = NonNullable<ApiBody<ProgressRoute>['cause']>;
export type CallView = ApiResponse<ProgressRoute>['call'];

/**
 * The softphone's end causes (softphone.ts causeOf) in the call record's words (the API's
 * `cause`): what matters to the record is who ended it and whether it was lost, not the SIP text.
 */
export function endCauseFor(cause: string | undefined, status?: number): EndCause {
  switch (cause) {
    case 'local_hangup':
    case 'remote_hangup':
      return 'hangup';
    case 'busy':
      return 'busy';
    case 'no_answer':
      return 'no_answer';
    // Carriers answer an unanswered call with 480 (or 408) rather than 486/603.
    case 'unavailable':
    case 'not_found':
      return status === 480 || status === 408 ? 'no_answer' : 'unavailable';
    case 'rejected':
      return 'rejected';
    case 'cancelled':
      return 'canceled';
    case 'media_lost':
      return 'media_lost';
    case 'connection_error':
      return 'connection_lost';
    default:
      return 'failed';
  }
}

/** While a call is up the record hears from the softphone this often; silent for 90 s it is dropped. */
export const HEARTBEAT_MS = 20_000;

/**
 * One call's record as the browser keeps it up to date: each softphone event is reported
 * (POST …/calls/{id}/progress), and a heartbeat runs from the first event until the end. Reports
 * are sent in order, one at a time; a failed one is not retried (the next, or the heartbeat, says
 * where the call stands, and the server's sweep closes a call nobody reports on).
 */
export class CallRecord {
  private chain: Promise<unknown> = Promise.resolve();
  private beat: ReturnType<typeof setInterval> | undefined;
  last: CallView | undefined;

  constructor(
    private readonly workspaceId: string,
    readonly id: string,
    private readonly onChange: (c: CallView) => void = () => undefined,
  ) {}

  report(e: CallProgressEvent): Promise<void> {
    if (e.event !== 'ended' && this.beat === undefined) this.beat = setInterval(() => void this.send({ event: 'alive' }), HEARTBEAT_MS);
    if (e.event === 'ended') this.stop();
    const body: ApiBody<ProgressRoute> = e.event === 'ended' ? { event: 'ended', cause: endCauseFor(e.cause, e.status) } : { event: e.event };
    return this.send({ ...body, ...(e.sipCallId ? { sipCallId: e.sipCallId } : {}) });
  }

  stop(): void {
    if (this.beat !== undefined) clearInterval(this.beat);
    this.beat = undefined;
  }

  private send(body: ApiBody<ProgressRoute>): Promise<void> {
    const next = this.chain.then(async () => {
      try {
        const r = await call(`POST /api/workspaces/:workspaceId/calls/:callId/progress`, ws(this.workspaceId, `calls/${this.id}/progress`), body);
        this.last = r.call;
        this.onChange(r.call);
      } catch {
        // The next report or the heartbeat carries the state; the server's sweep ends a silent call.
      }
    });
    this.chain = next;
    return next;
  }
}
