import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { forMainThread, runSteps, type IngestSteps, type PreparedMail } from '../pipeline.ts';

/**
 * One thread of the prepare pool (prepare-pool.ts): loads the steps module once, then runs parse
 * → new text → classify for each message it is sent, one at a time, and answers with the result
 * cut to what the main thread reads (forMainThread).
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
// This thread yields the CPU to the main one (API, scheduler, senders, lease renewals): on Linux
// a priority set with pid 0 applies to the calling thread only. Where the OS refuses (or applies
// it to the whole process elsewhere), nothing is changed.
if (process.platform === 'linux') {
  try {
    setPriority(0, 10);
  } catch {
    // not permitted here: the thread keeps the process's priority
  }
}
const mod = (await import(data.stepsModule)) as { createSteps(): IngestSteps };
const steps = mod.createSteps();

port.on('message', (task: ThreadTask) => {
  void (async () => {
    let result: PreparedMail;
    try {
      result = forMainThread(await runSteps(steps, task.raw));
    } catch (e) {
      result = { ok: false, reason: `processing failed: ${(e as Error).message}` };
    }
    const reply: ThreadReply = { id: task.id, result };
    port.postMessage(reply);
  })();
});
// Warm up before saying ready: the first message would otherwise pay for loading the intent
// model and compiling the phrase rules inside its deadline.
await runSteps(steps, new TextEncoder().encode('From: warm@up.invalid\r\nSubject: Re: warm up\r\n\r\nThanks, interested.\r\n')).catch(() => undefined);
port.postMessage({ ready: true });
