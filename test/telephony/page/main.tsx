import { createRoot } from 'react-dom/client';
import { CallPanel } from '../../../web/src/dialer/CallPanel.tsx';
import { Softphone, dialString, type CallProgressEvent, type DialerConfig } from '../../../web/src/dialer/softphone.ts';

/**
 * The end-to-end tests' page (test/telephony/softphone.test.ts): the web app's own softphone module
 * and CallPanel, bundled by Vite like the app, plus a listener that tells which tone the remote
 * audio carries (WebAudio AnalyserNode: the FFT's level at a frequency against the spectrum's median).
 */
declare global {
  interface Window {
    __config?: DialerConfig;
    __number?: string;
    /** The consent announcement (base64 WAV) CallPanel's loader gives, for a recorded config. */
    __announcement?: string;
    __events: CallProgressEvent[];
    cadenza: {
      Softphone: typeof Softphone;
      dialString: typeof dialString;
      toneLevels(stream: MediaStream, hz: number[], ms: number): Promise<number[]>;
      waitForTone(stream: MediaStream, hz: number, timeoutMs: number, minDb?: number, holdMs?: number): Promise<number>;
    };
  }
}

window.__events = [];

let ctx: AudioContext | undefined;
function analyser(stream: MediaStream): { node: AnalyserNode; binOf(hz: number): number; ctx: AudioContext } {
  ctx ??= new AudioContext();
  // Chromium plays a remote WebRTC stream into WebAudio only while a media element also plays it.
  const el = new Audio();
  el.muted = true;
  el.srcObject = stream;
  void el.play().catch(() => {});
  const src = ctx.createMediaStreamSource(stream);
  const node = ctx.createAnalyser();
  node.fftSize = 4096;
  node.smoothingTimeConstant = 0;
  src.connect(node);
  const c = ctx;
  return { node, ctx: c, binOf: (hz) => Math.round((hz / c.sampleRate) * node.fftSize) };
}

/** The level in dB of each frequency above the spectrum's median, averaged over `ms`. */
async function toneLevels(stream: MediaStream, hz: number[], ms: number): Promise<number[]> {
  const a = analyser(stream);
  const buf = new Float32Array(a.node.frequencyBinCount);
  const sums = hz.map(() => 0);
  let n = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    a.node.getFloatFrequencyData(buf);
    const sorted = Array.from(buf).filter(Number.isFinite).sort((x, y) => x - y);
    const median = sorted[Math.floor(sorted.length / 2)] ?? -200;
    hz.forEach((f, i) => {
      const b = a.binOf(f);
      sums[i]! += Math.max(buf[b - 1] ?? -200, buf[b]!, buf[b + 1] ?? -200) - median;
    });
    n++;
  }
  return sums.map((s) => s / Math.max(1, n));
}

/**
 * Milliseconds until a pure tone at `hz` is heard: `minDb` above the spectrum's median and 20 dB above
 * the spectrum at 0.8 hz and 1.2 hz (speech, with its dense harmonics, fails that), held for `holdMs`
 * (polled every 5 ms); -1 when it never is.
 */
async function waitForTone(stream: MediaStream, hz: number, timeoutMs: number, minDb = 30, holdMs = 0): Promise<number> {
  const a = analyser(stream);
  const buf = new Float32Array(a.node.frequencyBinCount);
  const at = (f: number) => {
    const b = a.binOf(f);
    return Math.max(buf[b - 1] ?? -200, buf[b]!, buf[b + 1] ?? -200);
  };
  const t0 = performance.now();
  let since: number | undefined;
  while (performance.now() - t0 < timeoutMs) {
    a.node.getFloatFrequencyData(buf);
    const sorted = Array.from(buf).filter(Number.isFinite).sort((x, y) => x - y);
    const median = sorted[Math.floor(sorted.length / 2)] ?? -200;
    const level = at(hz);
    const pure = level - median >= minDb && level - at(hz * 0.8) >= 20 && level - at(hz * 1.2) >= 20;
    if (pure) {
      since ??= performance.now();
      if (performance.now() - since >= holdMs) return since - t0;
    } else since = undefined;
    await new Promise((r) => setTimeout(r, 5));
  }
  return -1;
}

window.cadenza = { Softphone, dialString, toneLevels, waitForTone };

// With a configuration given by the test, the panel the Tasks screen will show, on the same module.
if (window.__config && window.__number) {
  const config = window.__config;
  createRoot(document.getElementById('root')!).render(
    <CallPanel
      workspaceId="test"
      number={window.__number}
      loadConfig={async () => config}
      loadAnnouncement={async () => (window.__announcement ? Uint8Array.from(atob(window.__announcement), (ch) => ch.charCodeAt(0)).buffer : null)}
      onProgress={(e) => window.__events.push(e)}
    />,
  );
}
