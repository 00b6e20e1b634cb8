import { parentPort, workerData } from 'node:worker_threads';
import { runSteps, type IngestSteps, type PreparedMail } from '../pipeline.ts';

/**
 * One thread of the prepare pool (prepare-pool.ts): loads the steps module once, then runs parse
 * → new text → classify for each message it is sent, one at a time, and answers with the result.
 * It holds no state between messages, so the pool may terminate it at any moment.
 */
export interface ThreadData {
  /** URL of a module exporting `createSteps(): IngestSteps`. */
  stepsModule: string;
}

export interface ThreadTask {
  id: number;
  raw: Uint8Array;
}

export interface ThreadReply {
  id: number;
  result: PreparedMail;
}

const port = parentPort;
if (!port) throw new Error('prepare-thread.ts runs as a worker thread of the prepare pool');
const data = workerData as ThreadData;
const mod = (await import(data.stepsModule)) as { createSteps(): IngestSteps };
const steps = mod.createSteps();

port.on('message', (task: ThreadTask) => {
  void (async () => {
    let result: PreparedMail;
    try {
      result = await runSteps(steps, task.raw);
    } catch (e) {
      result = { ok: false, reason: `processing failed: ${(e as Error).message}` };
    }
    const reply: ThreadReply = { id: task.id, result };
    port.postMessage(reply);
  })();
});
port.postMessage({ ready: true });
