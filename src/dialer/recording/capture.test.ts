import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CadenzaError } from '../../common/errors.ts';
import { callAudio, parseRtp, withAnnouncement } from './call-audio.ts';
import { leg, metadataText, pcapFile, rtpPacket } from './capture-fixture.ts';
import { metadataFileName, parseMetadata } from './metadata.ts';
import { parsePcap } from './pcap.ts';

const META = 'rtpengine-meta-abc%40host-0123456789abcdef.txt';
const meta = parseMetadata(META, metadataText('/spool/pcaps/abc%40host-0123456789abcdef.pcap', 30000, 30020, 'rep-1'));
const reason = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e instanceof CadenzaError ? `${e.code}:${String(e.details.reason)}` : e;
  }
  return 'no error';
};
const energy = (x: Float32Array, from: number, to: number) => {
  let s = 0;
  for (let i = from; i < to; i++) s += x[i]! * x[i]!;
  return s / (to - from);
};

describe('rtpengine metadata', () => {
  it('names the Call-ID (percent-decoded), the pcap, the ports each side sends to and the authenticated rep', () => {
    expect(meta).toEqual({ callId: 'abc@host', pcapName: 'abc%40host-0123456789abcdef.pcap', fromCaller: [30020], fromCallee: [30000], rep: 'rep-1' });
    expect(metadataFileName('notes.txt')).toBeNull();
    expect(metadataFileName('rtpengine-meta-%E0%A4%A-0123456789abcdef.txt')).toBeNull();
  });
  it('refuses a metadata file with one side missing', () => {
    expect(reason(() => parseMetadata(META, 'SDP mode: offer\nm=audio 30000 RTP/AVP 0\n'))).toBe('CAPTURE_INVALID:metadata');
    expect(parseMetadata(META, metadataText('x', 1, 2, null)).rep).toBeNull();
  });
});

describe('pcap and RTP', () => {
  const rep = leg({ seconds: 1, startUs: 1_000_000, sport: 40000, dport: 30020, ssrc: 1, byte: 0x20 });
  const prospect = leg({ seconds: 2, startUs: 1_500_000, sport: 40002, dport: 30000, ssrc: 2, byte: 0xa0 });

  it('demultiplexes the two legs by port onto one timeline: rep on channel 0, prospect on channel 1', () => {
    const cap = parsePcap(pcapFile([...rep, ...prospect]));
    expect([cap.datagrams.length, cap.skipped, cap.truncated]).toEqual([150, 0, false]);
    const a = callAudio(meta, cap.datagrams);
    expect(a.packets).toEqual([50, 100]);
    expect(a.durationMs).toBe(2500);
    // The rep speaks the first second, the prospect from 0.5 s to 2.5 s.
    expect(energy(a.channels[0], 0, 8000)).toBeGreaterThan(0.01);
    expect(energy(a.channels[0], 8000, 20000)).toBe(0);
    expect(energy(a.channels[1], 0, 4000)).toBe(0);
    expect(energy(a.channels[1], 4000, 20000)).toBeGreaterThan(0.01);
  });

  it('keeps the packets before a cut in the last record and says it was cut', () => {
    const whole = pcapFile([...rep, ...prospect]);
    const cap = parsePcap(whole.subarray(0, whole.length - 50));
    expect([cap.datagrams.length, cap.truncated]).toEqual([149, true]);
  });

  it('places a packet by its RTP timestamp, not its arrival: jitter does not smear, a loss leaves silence', () => {
    const p = leg({ seconds: 1, startUs: 0, sport: 1, dport: 30000, ssrc: 9, byte: 0xa0 }).filter((_, i) => i !== 10);
    p[20] = { ...p[20]!, tsUs: p[20]!.tsUs + 15_000 };
    const a = callAudio(meta, parsePcap(pcapFile(p)).datagrams);
    expect(energy(a.channels[1], 1600, 1760)).toBe(0);
    expect(energy(a.channels[1], 3200, 3360)).toBeGreaterThan(0.01);
  });

  it('writes a packet received twice once, and mixes two sources heard on one leg at the same time', () => {
    const one = leg({ seconds: 1, startUs: 0, sport: 1, dport: 30000, ssrc: 4, byte: 0xe0 });
    const alone = callAudio(meta, parsePcap(pcapFile(one)).datagrams);
    const twice = callAudio(meta, parsePcap(pcapFile([...one, ...one.map((p) => ({ ...p, tsUs: p.tsUs + 5_000 }))])).datagrams);
    expect(twice.channels[1]).toEqual(alone.channels[1]);
    // A second stream (another SSRC) over the same second: both are in the channel, summed.
    const other = leg({ seconds: 1, startUs: 0, sport: 1, dport: 30000, ssrc: 5, byte: 0xe0 });
    const mixed = callAudio(meta, parsePcap(pcapFile([...one, ...other])).datagrams);
    expect(mixed.channels[1][100]).toBeCloseTo(2 * alone.channels[1][100]!, 6);
    expect(Math.max(...mixed.channels[1].map(Math.abs))).toBeLessThanOrEqual(1);
  });

  it('skips RTCP and DTMF, refuses a call with no G.711 audio, and one in another codec with that reason', () => {
    expect(parseRtp(new Uint8Array([0x80, 200, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]))).toBeNull();
    const opus = [{ tsUs: 0, sport: 1, dport: 30000, payload: rtpPacket(111, 0, 0, 1, new Uint8Array(40)) }, { tsUs: 0, sport: 1, dport: 30000, payload: rtpPacket(18, 0, 0, 1, new Uint8Array(20)) }];
    expect(reason(() => callAudio(meta, parsePcap(pcapFile(opus)).datagrams))).toBe('CAPTURE_INVALID:unsupported_codec');
    expect(reason(() => callAudio(meta, parsePcap(pcapFile([])).datagrams))).toBe('CAPTURE_INVALID:no_audio');
  });

  it('refuses what is not a pcap, another link type, and audio past the length limit', () => {
    expect(reason(() => parsePcap(new Uint8Array(10)))).toBe('CAPTURE_INVALID:not_pcap');
    expect(reason(() => parsePcap(new Uint8Array(24).fill(7)))).toBe('CAPTURE_INVALID:not_pcap');
    const other = pcapFile([]);
    other[20] = 105;
    expect(reason(() => parsePcap(other))).toBe('CAPTURE_INVALID:unsupported_link');
    const far = [{ tsUs: 0, sport: 1, dport: 30000, payload: rtpPacket(0, 0, 0, 1, new Uint8Array(160)) }, { tsUs: 0, sport: 1, dport: 30000, payload: rtpPacket(0, 1, 0x7fff0000, 1, new Uint8Array(160)) }];
    expect(reason(() => callAudio(meta, parsePcap(pcapFile(far)).datagrams, { maxDurationMs: 60_000 }))).toBe('CAPTURE_INVALID:too_long');
  });

  it("mixes the consent announcement into the start of the prospect's channel, which is where it was played", () => {
    // The prospect's line silent (0xff is mu-law's zero): what is left is the announcement.
    const a = callAudio(meta, parsePcap(pcapFile(leg({ seconds: 1, startUs: 0, sport: 1, dport: 30000, ssrc: 3, byte: 0xff }))).datagrams);
    const m = withAnnouncement(a, new Float32Array(800).fill(0.25));
    expect(energy(m.channels[0], 0, 800)).toBe(0);
    expect(energy(m.channels[1], 0, 800)).toBeCloseTo(0.0625, 3);
    expect(m.channels[0].length).toBe(a.channels[0].length);
  });

  it('fuzz: any bytes, and any cut or corruption of a real capture, give datagrams or CAPTURE_INVALID, never another error', () => {
    const base = pcapFile([...rep.slice(0, 20), ...prospect.slice(0, 20)]);
    const check = (bytes: Uint8Array) => {
      try {
        callAudio(meta, parsePcap(bytes, 1000).datagrams, { maxDurationMs: 600_000 });
      } catch (e) {
        expect(e).toBeInstanceOf(CadenzaError);
        expect((e as CadenzaError).code).toBe('CAPTURE_INVALID');
      }
    };
    fc.assert(fc.property(fc.uint8Array({ maxLength: 400 }), (b) => check(b)), { numRuns: 300 });
    fc.assert(
      fc.property(fc.nat(base.length), fc.array(fc.tuple(fc.nat(base.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 20 }), (cut, flips) => {
        const b = base.slice(0, Math.max(cut, 24));
        for (const [at, v] of flips) if (at < b.length) b[at] = v;
        check(b);
      }),
      { numRuns: 500 },
    );
  });
});
