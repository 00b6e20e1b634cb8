/**
 * The consent announcement of a recorded call, played to the rep by their own browser
 * (docs/dialer.md "Call recording"). The prospect hears it from rtpengine, which plays the same
 * WAV into the carrier's leg at the ACK; rtpengine 10.5 cannot play towards a WebRTC leg without
 * cutting the browser's audio, so the rep's copy is played here, at the same instant (the call's
 * answer), through the speakers and never into the call.
 */
export interface AnnouncementPlayback {
  /** How long the clip played, in ms (cut short when the call ended first). */
  readonly durationMs: number;
  /** The loudest 50 ms the rep's speakers got, in dBFS (RMS): proof it was audible, not silent. */
  readonly levelDb: number;
}

/** RMS of a block in dBFS; -Infinity for digital silence. */
export function rmsDb(block: Float32Array): number {
  let sum = 0;
  for (const x of block) sum += x * x;
  return 10 * Math.log10(sum / Math.max(1, block.length));
}

/**
 * Plays the clip (a WAV's bytes) to the speakers; resolves when it ended or `stop` resolved first.
 * The clip is copied: decodeAudioData detaches its buffer, and the next call needs it again.
 */
export async function playAnnouncement(clip: ArrayBuffer, stop: Promise<unknown>): Promise<AnnouncementPlayback> {
  const ctx = new AudioContext();
  try {
    const buffer = await ctx.decodeAudioData(clip.slice(0));
    const src = ctx.createBufferSource();
    src.buffer = buffer;
    const meter = ctx.createAnalyser();
    meter.fftSize = 2048;
    src.connect(meter);
    meter.connect(ctx.destination);
    await ctx.resume();
    const block = new Float32Array(meter.fftSize);
    let levelDb = -Infinity;
    const t0 = performance.now();
    const poll = setInterval(() => {
      meter.getFloatTimeDomainData(block);
      levelDb = Math.max(levelDb, rmsDb(block));
    }, 50);
    const done = new Promise<void>((resolve) => {
      src.onended = () => resolve();
      void stop.then(() => resolve());
    });
    src.start();
    await done;
    clearInterval(poll);
    try {
      src.stop();
    } catch {
      // already ended
    }
    return { durationMs: Math.min(buffer.duration * 1000, performance.now() - t0), levelDb };
  } finally {
    void ctx.close().catch(() => {});
  }
}
