import { C, UA, WebSocketInterface, debug as jssipDebug } from 'jssip';
import { playAnnouncement, type AnnouncementPlayback } from './consent-announcement.ts';
import { DROP_TAIL_MS, MAX_DROP_MS, dropDeadline } from './voicemail-drop.ts';

/** Derived from UA: the root module exports neither type, and a subpath import does not resolve under Node's resolution (the server's type check follows the tests' imports here). */
type RTCSession = ReturnType<UA['call']>;
type EndEvent = { cause?: string; originator?: string; message?: unknown };

/** UA is an EventEmitter (npm 'events'), whose types the web build does not load. */
type Emitter = { on(event: string, listener: (e: never) => void): void };

/**
 * The rep's browser phone (docs/dialer.md): JsSIP registers over a secure WebSocket with Kamailio
 * (RFC 7118) using the time-limited credential of GET /api/workspaces/:id/dialer/config, and calls
 * go out with WebRTC media (ICE, DTLS-SRTP) that rtpengine turns into plain RTP for the carrier.
 *
 * Framework-free: CallPanel.tsx drives it for the Tasks screen, the end-to-end tests drive it
 * directly. Each call reports ringing, answered and ended (with a cause) with the SIP Call-ID, so
 * the server can keep the call's record.
 */

/** The dialer/config route's answer when the dialer is on. */
export interface DialerConfig {
  wsUrl: string;
  sipUri: string;
  authorizationUser: string;
  password: string;
  expiresAt: string;
  iceServers: { urls: string[]; username?: string; credential?: string }[];
}

export type CallProgressEvent = {
  event: 'ringing' | 'answered' | 'ended';
  /** ISO 8601, the browser's clock. */
  at: string;
  sipCallId?: string;
  /**
   * Why it ended: local_hangup, remote_hangup, busy, no_answer, rejected, unavailable, not_found,
   * cancelled, media_lost (no media for mediaTimeoutMs, or ICE failed: the media relay is gone),
   * connection_error, auth_failed, failed.
   */
  cause?: string;
  /** The SIP status of a failed call (486, 480…), when there was one. */
  status?: number;
};

export interface SoftphoneOptions {
  /** 'relay': media only through the TURN servers of iceServers (a locked-down network; the tests' TURN path). */
  iceTransportPolicy?: RTCIceTransportPolicy;
  /** A call whose inbound audio stops for this long, or whose ICE fails, is hung up with cause media_lost (default 6000 ms). */
  mediaTimeoutMs?: number;
  /** Where the remote audio plays; absent: a detached <audio> element of the softphone's own. */
  audio?: HTMLAudioElement;
  /** JsSIP's own debug log in the console. */
  debug?: boolean;
  /** A call to this rep from the carrier (Kamailio found this registration); absent: incoming calls are declined (486). */
  onIncoming?: (call: IncomingCall) => void;
  /**
   * The consent announcement (a WAV's bytes, GET …/dialer/announcement) the rep hears when a call
   * is answered: give it when the credential records calls (its `recorded`), whose prospect hears
   * the same file from rtpengine at that moment (consent-announcement.ts). Absent: nothing plays.
   */
  announcement?: ArrayBuffer;
}

export interface IncomingCall {
  /** The caller's number or SIP user. */
  readonly from: string;
  readonly sipCallId: string | undefined;
  answer(onProgress?: (e: CallProgressEvent) => void): Call;
  decline(): void;
  /**
   * Resolves with the cause when the call ends before it is answered: 'cancelled' when the caller
   * gave up, 'rejected' after decline(). Never resolves once answered (the call's own events say).
   */
  readonly gone: Promise<string>;
}

/** A recorded message playing into a call in place of the microphone (Call.dropVoicemail). */
export interface VoicemailDrop {
  /** How long the clip plays (capped at MAX_DROP_MS). */
  readonly durationMs: number;
  /** Performance-clock-free start instant (Date.now()), for the panel's countdown. */
  readonly startedAt: number;
  /** Resolves once the clip ended and the softphone hung up, or the other side hung up first. */
  readonly finished: Promise<void>;
}

export interface CallStats {
  packetsSent: number;
  packetsReceived: number;
  bytesSent: number;
  bytesReceived: number;
  packetsLost: number;
  jitterMs?: number;
  /** Round trip of the media path as RTCP measures it (remote-inbound-rtp), else ICE's (candidate pair). */
  roundTripMs?: number;
  /** The selected local candidate's type: host, srflx, prflx or relay (relay: through TURN). */
  localCandidateType?: string;
  codec?: string;
}

export interface Call {
  readonly number: string;
  /** The SIP Call-ID of the call (known once the INVITE is built). */
  readonly sipCallId: string | undefined;
  /** The remote party's audio, once media flows. */
  readonly remoteStream: MediaStream | undefined;
  readonly peerConnection: RTCPeerConnection | undefined;
  /**
   * The consent announcement played to the rep on answer (SoftphoneOptions.announcement): resolves
   * when it finished, with how long and how loud; null when none played (an unrecorded call, or
   * the browser could not decode it).
   */
  readonly announced: Promise<AnnouncementPlayback | null>;
  /** Resolves with the 'ended' event. */
  readonly ended: Promise<CallProgressEvent>;
  hangup(): void;
  /** RFC 4733 telephone events in the RTP stream (not SIP INFO: carriers take these). */
  sendDtmf(tones: string): void;
  setMuted(muted: boolean): void;
  readonly muted: boolean;
  stats(): Promise<CallStats>;
  /**
   * Voicemail drop: decodes the clip and sends it into the call in place of the microphone
   * (RTCRtpSender.replaceTrack with an AudioContext MediaStreamDestination), stops the microphone
   * and the call's playback on this side, and hangs up by itself when the clip has played. The
   * softphone can place another call meanwhile: each call is its own JsSIP session.
   */
  dropVoicemail(clip: ArrayBuffer): Promise<VoicemailDrop>;
}

/** A dialled number as a SIP user part: digits, an optional leading +, nothing else (spaces, dashes and dots dropped). */
export function dialString(number: string): string {
  const s = number.replace(/[\s().-]/g, '');
  if (!/^\+?[0-9*#]{2,32}$/.test(s)) throw new Error(`not a phone number: ${JSON.stringify(number)}`);
  return s;
}

const now = () => new Date().toISOString();

/** JsSIP's cause strings (JsSIP.C.causes) as the stable tokens CallProgressEvent names. */
function causeOf(cause: string | undefined, originator: string | undefined): string {
  switch (cause) {
    case 'Terminated':
    case 'BYE':
      return originator === 'local' ? 'local_hangup' : 'remote_hangup';
    case 'Busy':
      return 'busy';
    case 'No Answer':
    case 'Request Timeout':
      return 'no_answer';
    case 'Rejected':
      return 'rejected';
    case 'Unavailable':
      return 'unavailable';
    case 'Not Found':
      return 'not_found';
    case 'Canceled':
      return 'cancelled';
    case 'RTP Timeout':
      return 'media_lost';
    case 'Connection Error':
      return 'connection_error';
    case 'User Denied Media Access':
      return 'no_microphone';
    case 'Authentication Error':
      return 'auth_failed';
    default:
      return 'failed';
  }
}

export class Softphone {
  private readonly ua: UA;
  private readonly domain: string;
  private registeredOnce: Promise<void>;
  private readonly audio: HTMLAudioElement;

  constructor(
    readonly config: DialerConfig,
    private readonly options: SoftphoneOptions = {},
  ) {
    if (options.debug) jssipDebug.enable('JsSIP:*');
    const uri = config.sipUri;
    this.domain = uri.slice(uri.indexOf('@') + 1);
    this.audio = options.audio ?? new Audio();
    this.audio.autoplay = true;
    this.ua = new UA({
      sockets: [new WebSocketInterface(config.wsUrl)],
      uri,
      authorization_user: config.authorizationUser,
      password: config.password,
      register: true,
      // The credential expires at expiresAt; a registration lasts 10 min and is refreshed before.
      register_expires: 600,
      session_timers: false,
      user_agent: 'Cadenza softphone',
    });
    (this.ua as unknown as Emitter).on('newRTCSession', ((e: { originator: string; session: RTCSession; request: { call_id?: string; from?: { uri?: { user?: string } } } }) => {
      if (e.originator !== 'remote') return;
      const session = e.session;
      const onIncoming = this.options.onIncoming;
      if (!onIncoming) return session.terminate({ status_code: 486, reason_phrase: 'Busy Here' });
      let answered = false;
      const gone = new Promise<string>((resolve) =>
        (session as unknown as Emitter).on('failed', ((f: EndEvent) => {
          if (!answered) resolve(causeOf(f.cause, f.originator));
        }) as (e: never) => void),
      );
      onIncoming({
        gone,
        from: e.request.from?.uri?.user ?? 'unknown',
        sipCallId: e.request.call_id,
        answer: (onProgress = () => {}) => {
          answered = true;
          return this.wire(e.request.from?.uri?.user ?? 'unknown', onProgress, session);
        },
        decline: () => session.terminate({ status_code: 486, reason_phrase: 'Busy Here' }),
      });
    }) as (e: never) => void);
    this.registeredOnce = new Promise((resolve, reject) => {
      const ua = this.ua as unknown as Emitter;
      ua.on('registered', () => resolve());
      ua.on('registrationFailed', (e: { cause?: string; response?: { status_code?: number } }) =>
        reject(Object.assign(new Error(`SIP registration failed: ${e.cause ?? 'unknown'}`), { code: e.cause === 'Authentication Error' ? 'auth_failed' : 'registration_failed', status: e.response?.status_code })),
      );
    });
  }

  /** Connects and registers; resolves once Kamailio accepted the REGISTER. */
  async register(): Promise<void> {
    this.ua.start();
    await this.registeredOnce;
  }

  get registered(): boolean {
    return this.ua.isRegistered();
  }

  /** Calls a number through the carrier; onProgress hears ringing, answered and ended. */
  call(number: string, onProgress: (e: CallProgressEvent) => void = () => {}): Call {
    return this.wire(number, onProgress);
  }

  /** An outgoing call (no `incoming`), or an incoming one being answered: media, events, watchdog. */
  private wire(number: string, onProgress: (e: CallProgressEvent) => void, incoming?: RTCSession): Call {
    const target = incoming ? '' : `sip:${dialString(number)}@${this.domain}`;
    const pcConfig: RTCConfiguration = {
      iceServers: this.config.iceServers.map((s) => ({ urls: s.urls, ...(s.username ? { username: s.username } : {}), ...(s.credential ? { credential: s.credential } : {}) })),
      iceTransportPolicy: this.options.iceTransportPolicy ?? 'all',
      // One audio m= line; 'balanced' lets a carrier's answer (through rtpengine) omit the BUNDLE group.
      bundlePolicy: 'balanced',
      rtcpMuxPolicy: 'require',
    };
    let session: RTCSession | undefined;
    let remoteStream: MediaStream | undefined;
    let muted = false;
    let ended = false;
    let answered = false;
    let dropping = false;
    let localCause: string | undefined;
    let announced: Promise<AnnouncementPlayback | null> = Promise.resolve(null);
    let watchdog: ReturnType<typeof setInterval> | undefined;
    let resolveEnded!: (e: CallProgressEvent) => void;
    const endedP = new Promise<CallProgressEvent>((r) => (resolveEnded = r));
    const emit = (e: CallProgressEvent) => {
      if (ended) return;
      if (e.event === 'ended') {
        ended = true;
        if (watchdog) clearInterval(watchdog);
        resolveEnded(e);
      }
      onProgress(e);
    };
    const callId = () => (session as unknown as { _request?: { call_id?: string } } | undefined)?._request?.call_id;
    const pc = () => session?.connection as RTCPeerConnection | undefined;

    const stats = async (): Promise<CallStats> => {
      const conn = pc();
      const out: CallStats = { packetsSent: 0, packetsReceived: 0, bytesSent: 0, bytesReceived: 0, packetsLost: 0 };
      if (!conn) return out;
      const report = await conn.getStats();
      const byId = new Map<string, Record<string, unknown>>();
      report.forEach((s: Record<string, unknown>) => byId.set(String(s.id), s));
      for (const s of byId.values()) {
        if (s.kind !== 'audio' && s.type !== 'candidate-pair') continue;
        if (s.type === 'outbound-rtp') {
          out.packetsSent += Number(s.packetsSent ?? 0);
          out.bytesSent += Number(s.bytesSent ?? 0);
        } else if (s.type === 'inbound-rtp') {
          out.packetsReceived += Number(s.packetsReceived ?? 0);
          out.bytesReceived += Number(s.bytesReceived ?? 0);
          out.packetsLost += Number(s.packetsLost ?? 0);
          if (typeof s.jitter === 'number') out.jitterMs = s.jitter * 1000;
          const codec = s.codecId ? byId.get(String(s.codecId)) : undefined;
          if (codec) out.codec = String(codec.mimeType);
        } else if (s.type === 'remote-inbound-rtp' && typeof s.roundTripTime === 'number') {
          out.roundTripMs = s.roundTripTime * 1000;
        }
      }
      for (const s of byId.values()) {
        if (s.type === 'candidate-pair' && (s.nominated || s.selected) && s.state === 'succeeded') {
          if (out.roundTripMs === undefined && typeof s.currentRoundTripTime === 'number') out.roundTripMs = s.currentRoundTripTime * 1000;
          const local = byId.get(String(s.localCandidateId));
          if (local) out.localCandidateType = String(local.candidateType);
        }
      }
      return out;
    };

    /**
     * Without media a call is dead even if no BYE came (the media relay died, the network went): the
     * rep would talk into silence. ICE consent freshness (RFC 7675) fails within seconds, and the
     * inbound packet count stops; either hangs up with cause media_lost.
     */
    const startWatchdog = () => {
      const limit = this.options.mediaTimeoutMs ?? 6000;
      let lastPackets = -1;
      let lastChange = Date.now();
      watchdog = setInterval(() => {
        void stats().then((s) => {
          // While a voicemail drop plays, the voicemail box may send nothing at all (it records): no
          // inbound audio is expected, and the drop's own deadline ends the call.
          if (ended || dropping) return;
          const t = Date.now();
          if (s.packetsReceived !== lastPackets) {
            lastPackets = s.packetsReceived;
            lastChange = t;
          }
          const ice = pc()?.iceConnectionState;
          if (ice === 'failed' || t - lastChange >= limit) {
            localCause = 'media_lost';
            try {
              session?.terminate({ cause: 'RTP Timeout' });
            } catch {
              emit({ event: 'ended', at: now(), sipCallId: callId(), cause: 'media_lost' });
            }
          }
        });
      }, 1000);
    };

    const attach = (conn: RTCPeerConnection) => {
      conn.addEventListener('track', (ev) => {
        remoteStream = ev.streams[0] ?? new MediaStream([ev.track]);
        this.audio.srcObject = remoteStream;
        void this.audio.play().catch(() => {});
      });
    };

    const handlers = {
      peerconnection: (e: { peerconnection: RTCPeerConnection }) => attach(e.peerconnection),
      progress: () => emit({ event: 'ringing', at: now(), sipCallId: callId() }),
      confirmed: () => {
        answered = true;
        const clip = this.options.announcement;
        if (clip) announced = playAnnouncement(clip, endedP).catch(() => null);
        emit({ event: 'answered', at: now(), sipCallId: callId() });
        startWatchdog();
      },
      ended: (e: { cause?: string; originator?: string }) =>
        emit({ event: 'ended', at: now(), sipCallId: callId(), cause: localCause ?? causeOf(e.cause, e.originator) }),
      failed: (e: EndEvent) => {
        const status = (e.message as { status_code?: number } | undefined)?.status_code;
        emit({
          event: 'ended',
          at: now(),
          sipCallId: callId(),
          cause: localCause ?? (answered ? 'media_lost' : causeOf(e.cause, e.originator)),
          ...(status ? { status } : {}),
        });
      },
    };
    if (incoming) {
      session = incoming;
      for (const [name, fn] of Object.entries(handlers)) (incoming as unknown as Emitter).on(name, fn as (e: never) => void);
      incoming.answer({ mediaConstraints: { audio: true, video: false }, pcConfig });
    } else {
      session = this.ua.call(target, {
        mediaConstraints: { audio: true, video: false },
        pcConfig,
        rtcOfferConstraints: { offerToReceiveAudio: true, offerToReceiveVideo: false },
        eventHandlers: handlers,
      });
    }
    // The peer connection exists once call() returns (outgoing calls make it at once).
    if (session.connection) attach(session.connection as RTCPeerConnection);

    const dropVoicemail = async (clip: ArrayBuffer): Promise<VoicemailDrop> => {
      const conn = pc();
      if (ended || !conn || !session?.isEstablished()) throw new Error('a voicemail can be dropped only into an answered call');
      if (dropping) throw new Error('a voicemail is already playing into this call');
      dropping = true;
      const ctx = new AudioContext();
      const buffer = await ctx.decodeAudioData(clip.slice(0));
      const dest = ctx.createMediaStreamDestination();
      const src = ctx.createBufferSource();
      src.buffer = buffer;
      src.connect(dest);
      const sender = conn.getSenders().find((x) => x.track?.kind === 'audio') ?? conn.getSenders()[0];
      if (!sender) throw new Error('the call has no audio sender');
      const mic = sender.track;
      await sender.replaceTrack(dest.stream.getAudioTracks()[0]!);
      // The rep's voice is cut from the call, and the rep stops hearing it: they are on the next call.
      mic?.stop();
      if (this.audio.srcObject === remoteStream) this.audio.srcObject = null;
      const durationMs = Math.min(buffer.duration * 1000, MAX_DROP_MS);
      const startedAt = Date.now();
      let finish!: () => void;
      const finished = new Promise<void>((r) => (finish = r));
      let over = false;
      const close = () => {
        if (over) return;
        over = true;
        clearTimeout(deadline);
        try {
          src.stop();
        } catch {
          // already stopped
        }
        void ctx.close().catch(() => {});
        finish();
      };
      let playedOnce = false;
      const played = () => {
        if (playedOnce) return;
        playedOnce = true;
        // The tail lets the far end's jitter buffer play the last word before the BYE.
        setTimeout(() => {
          if (!ended && session) {
            localCause = 'local_hangup';
            session.terminate();
          }
          close();
        }, DROP_TAIL_MS);
      };
      src.onended = played;
      const deadline = setTimeout(played, dropDeadline(0, durationMs) - DROP_TAIL_MS);
      void endedP.then(close);
      await ctx.resume();
      src.start(0, 0, durationMs / 1000);
      return { durationMs, startedAt, finished };
    };

    return {
      number,
      dropVoicemail,
      get sipCallId() {
        return callId();
      },
      get remoteStream() {
        return remoteStream;
      },
      get peerConnection() {
        return pc();
      },
      get announced() {
        return announced;
      },
      ended: endedP,
      hangup: () => {
        if (ended || !session) return;
        localCause = session.isEstablished() ? 'local_hangup' : 'cancelled';
        session.terminate();
      },
      sendDtmf: (tones: string) => {
        if (!/^[0-9*#A-D]+$/i.test(tones)) throw new Error(`not DTMF tones: ${JSON.stringify(tones)}`);
        session?.sendDTMF(tones, { transportType: C.DTMF_TRANSPORT.RFC2833, duration: 100, interToneGap: 70 });
      },
      setMuted: (m: boolean) => {
        muted = m;
        if (m) session?.mute({ audio: true });
        else session?.unmute({ audio: true });
      },
      get muted() {
        return muted;
      },
      stats,
    };
  }

  /** Unregisters and closes the WebSocket. */
  stop(): void {
    this.ua.stop();
    this.audio.srcObject = null;
  }
}
