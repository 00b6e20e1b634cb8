#!/bin/bash
# Cadenza's telephony test bed: Kamailio (SIP over WS/WSS for browsers, UDP towards the "carrier"),
# rtpengine (userspace media relay, WebRTC <-> plain RTP) and coturn (TURN), all on loopback only,
# each run from deploy/telephony/'s production templates with the bed's values filled in.
# Each daemon writes its own pid file in the state folder. Debian 12 packages (installed by .ci/run): kamailio kamailio-websocket-modules kamailio-tls-modules
# kamailio-autheph-modules rtpengine-daemon coturn (and espeak-ng, sox for the consent announcement). Run as any user; nothing is written outside
# the state folder.
#
#   telbed.sh [start]   render, make the TLS certificate, start the three daemons; a no-op when they
#                       already run with this very configuration, a restart when it changed
#   telbed.sh status    exit 0 only if all three run (prints the bed's env file)
#   telbed.sh stop | restart
#   telbed.sh stop-rtpengine | start-rtpengine   (tests: the media relay dies mid-call)
#
# Endpoints (127.0.0.1 only), each overridable by the variable of the same name:
#   SIP UDP  ${SIP_UDP_PORT:-25060}   trunk side; the "carrier" (sipp) listens at ${TRUNK_HOST:-127.0.0.1:25070}
#   SIP WS   ${SIP_WS_PORT:-25066}    ws://127.0.0.1:25066      (RFC 7118)
#   SIP WSS  ${SIP_WSS_PORT:-25067}   wss://127.0.0.1:25067     self-signed certificate (state dir)
#   rtpengine ng ${RTP_NG_PORT:-25223}/udp, media ports 30000-30499
#   TURN     ${TURN_PORT:-25478}      turn:127.0.0.1:25478 (UDP and TCP), relay ports 30500-30999
# Credentials: ephemeral, HMAC-SHA1 over "expiry:userId" with TELBED_SIP_SECRET (SIP) and
# TELBED_TURN_SECRET (TURN); test/telephony/telbed.ts issues them with src/dialer/sip-credentials.ts.
set -eu

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TPL="$ROOT/deploy/telephony"
DIR=${TELBED_DIR:-/tmp/cadenza-telbed-$(id -u)}
SIP_ADDR=127.0.0.1
SIP_DOMAIN=${SIP_DOMAIN:-sip.telbed.test}
SIP_UDP_PORT=${SIP_UDP_PORT:-25060}
SIP_WS_PORT=${SIP_WS_PORT:-25066}
SIP_WSS_PORT=${SIP_WSS_PORT:-25067}
TRUNK_HOST=${TRUNK_HOST:-127.0.0.1:25070}
# The carrier's signalling addresses: two, as a carrier has (tests call in from each).
TRUNK_SOURCE_NETS=${TRUNK_SOURCE_NETS:-127.0.0.1/32,127.0.0.4/32}
# The carrier's credentials for a trunk that challenges INVITEs (test/telephony/sipp/uas-auth-answer.xml).
TRUNK_AUTH_USER=${TRUNK_AUTH_USER:-cadenza-trunk}
TRUNK_AUTH_PASSWORD=${TRUNK_AUTH_PASSWORD:-telbed-trunk-password}
RTP_NG_PORT=${RTP_NG_PORT:-25223}
RTP_PORT_MIN=${RTP_PORT_MIN:-30000}
RTP_PORT_MAX=${RTP_PORT_MAX:-30499}
TURN_PORT=${TURN_PORT:-25478}
TURN_PORT_MIN=${TURN_PORT_MIN:-30500}
TURN_PORT_MAX=${TURN_PORT_MAX:-30999}
TELBED_SIP_SECRET=${TELBED_SIP_SECRET:-telbed-sip-secret-for-tests-only}
TELBED_TURN_SECRET=${TELBED_TURN_SECRET:-telbed-turn-secret-for-tests-only}
TELBED_DEBUG=${TELBED_DEBUG:-0}

need() { command -v "$1" >/dev/null 2>&1 || { echo "telbed: $1 is missing (apt-get install -y --no-install-recommends $2)" >&2; exit 3; }; }

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

render() {
  mkdir -p "$DIR/run"
  chmod 700 "$DIR"
  if [ ! -f "$DIR/tls/cert.pem" ]; then
    mkdir -p "$DIR/tls"
    openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj "/CN=$SIP_DOMAIN" \
      -addext "subjectAltName=DNS:$SIP_DOMAIN,IP:127.0.0.1" \
      -keyout "$DIR/tls/key.pem" -out "$DIR/tls/cert.pem" 2>/dev/null
  fi
  cp "$TPL/kamailio.cfg" "$DIR/kamailio.cfg"
  {
    echo "# written by test/telephony/telbed.sh"
    [ "$TELBED_DEBUG" = 1 ] && echo "#!define WITH_DEBUG"
    echo "#!substdef \"!SIP_ADDR!$SIP_ADDR!g\""
    echo "#!substdef \"!SIP_PUBLIC_ADDR!$SIP_ADDR!g\""
    echo "#!substdef \"!SIP_UDP_PORT!$SIP_UDP_PORT!g\""
    echo "#!substdef \"!SIP_WS_PORT!$SIP_WS_PORT!g\""
    echo "#!substdef \"!SIP_WSS_PORT!$SIP_WSS_PORT!g\""
    echo "#!substdef \"!SIP_DOMAIN!$SIP_DOMAIN!g\""
    echo "#!substdef \"!TRUNK_HOST!$TRUNK_HOST!g\""
    echo "#!substdef \"!TRUNK_SOURCE_NETS!$TRUNK_SOURCE_NETS!g\""
    # The carrier's credentials, for the scenarios that challenge (uas-auth-answer.xml).
    echo "#!substdef \"!TRUNK_AUTH_USER!$TRUNK_AUTH_USER!g\""
    echo "#!substdef \"!TRUNK_AUTH_REALM!carrier.telbed.test!g\""
    echo "#!substdef \"!TRUNK_AUTH_PASSWORD!$TRUNK_AUTH_PASSWORD!g\""
    echo "#!define RTPENGINE_SOCK \"udp:127.0.0.1:$RTP_NG_PORT\""
    echo "#!define TLS_CERT_FILE \"$DIR/tls/cert.pem\""
    echo "#!define TLS_KEY_FILE \"$DIR/tls/key.pem\""
    echo "#!define SIP_SECRET \"$TELBED_SIP_SECRET\""
    echo "#!substdef \"!RECORDING_ANNOUNCEMENT!$DIR/consent.wav!g\""
  } >"$DIR/kamailio-local.cfg"
  chmod 600 "$DIR/kamailio-local.cfg"
  # Recorded calls' pcaps and metadata (rtpengine's recording-dir), and the consent announcement
  # rtpengine plays, spoken by espeak-ng at 8 kHz (what a carrier leg carries).
  mkdir -p "$DIR/recordings"
  if [ ! -f "$DIR/consent.wav" ]; then
    espeak-ng -w "$DIR/consent-raw.wav" "This call is recorded for quality and training." \
      && sox "$DIR/consent-raw.wav" -r 8000 -c 1 -b 16 "$DIR/consent.wav" && rm -f "$DIR/consent-raw.wav"
  fi
  RTP_RECORDING_DIR="$DIR/recordings" RTP_INTERFACE=127.0.0.1 RTP_NG_LISTEN="127.0.0.1:$RTP_NG_PORT" RTP_PORT_MIN=$RTP_PORT_MIN RTP_PORT_MAX=$RTP_PORT_MAX \
    RTP_LOG_LEVEL=$([ "$TELBED_DEBUG" = 1 ] && echo 7 || echo 5) \
    envsubst <"$TPL/rtpengine.conf" >"$DIR/rtpengine.conf"
  TURN_LISTEN_IP=127.0.0.1 TURN_PORT=$TURN_PORT TURN_RELAY_IP=127.0.0.1 TURN_EXTERNAL_IP_LINE="# (no external-ip: loopback bed)" \
    TURN_PORT_MIN=$TURN_PORT_MIN TURN_PORT_MAX=$TURN_PORT_MAX TURN_REALM=$SIP_DOMAIN TURN_SECRET=$TELBED_TURN_SECRET \
    TURN_PEER_POLICY="allow-loopback-peers" TURN_LOG="$DIR/turnserver.log" TURN_PID="$DIR/turnserver.pid" \
    envsubst <"$TPL/turnserver.conf" >"$DIR/turnserver.conf"
  chmod 600 "$DIR/turnserver.conf"
  cat >"$DIR/telbed.env" <<EOF
TELBED_DIR=$DIR
SIP_DOMAIN=$SIP_DOMAIN
SIP_UDP_PORT=$SIP_UDP_PORT
SIP_WS_URL=ws://127.0.0.1:$SIP_WS_PORT
SIP_WSS_URL=wss://127.0.0.1:$SIP_WSS_PORT
TRUNK_HOST=$TRUNK_HOST
RTP_NG_PORT=$RTP_NG_PORT
TURN_URL=turn:127.0.0.1:$TURN_PORT?transport=udp
RECORDING_DIR=$DIR/recordings
RECORDING_ANNOUNCEMENT=$DIR/consent.wav
EOF
}

config_hash() { cat "$DIR/kamailio.cfg" "$DIR/kamailio-local.cfg" "$DIR/rtpengine.conf" "$DIR/turnserver.conf" | sha256sum | cut -c1-16; }

wait_port() { # proto port seconds
  local i
  for i in $(seq 1 $(( $3 * 10 ))); do
    if ss -Hln"$( [ "$1" = udp ] && echo u || echo t )" "sport = :$2" 2>/dev/null | grep -q .; then return 0; fi
    sleep 0.1
  done
  echo "telbed: nothing listens on $1 port $2 after $3 s" >&2
  return 1
}

start_rtpengine() {
  alive "$DIR/rtpengine.pid" && return 0
  setsid rtpengine --config-file="$DIR/rtpengine.conf" --foreground --log-stderr --pidfile="$DIR/rtpengine.pid" \
    >>"$DIR/rtpengine.log" 2>&1 </dev/null &
  wait_port udp "$RTP_NG_PORT" 10
}

stop_one() { # name
  local pidf="$DIR/$1.pid" pid i
  [ -f "$pidf" ] || return 0
  pid="$(cat "$pidf")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidf"
}

status() {
  local ok=0 n
  for n in kamailio rtpengine turnserver; do
    if alive "$DIR/$n.pid"; then echo "$n: running (pid $(cat "$DIR/$n.pid"))"; else echo "$n: stopped"; ok=1; fi
  done
  [ -f "$DIR/telbed.env" ] && cat "$DIR/telbed.env"
  return $ok
}

start() {
  need kamailio kamailio; need rtpengine rtpengine-daemon; need turnserver coturn; need openssl openssl; need envsubst gettext-base; need espeak-ng espeak-ng; need sox sox
  [ -f /usr/lib/x86_64-linux-gnu/kamailio/modules/auth_ephemeral.so ] || [ -n "$(find /usr/lib -name auth_ephemeral.so -print -quit 2>/dev/null)" ] \
    || { echo "telbed: Kamailio's auth_ephemeral module is missing (apt-get install -y --no-install-recommends kamailio-autheph-modules)" >&2; exit 3; }
  render
  local h; h="$(config_hash)"
  if status >/dev/null 2>&1 && [ "$(cat "$DIR/config.hash" 2>/dev/null)" = "$h" ]; then return 0; fi
  stop
  kamailio -c -f "$DIR/kamailio.cfg" >"$DIR/kamailio-check.log" 2>&1 || { cat "$DIR/kamailio-check.log" >&2; exit 1; }
  start_rtpengine
  setsid kamailio -f "$DIR/kamailio.cfg" -DD -E -Y "$DIR/run" -P "$DIR/kamailio.pid" -m 64 -M 8 \
    >>"$DIR/kamailio.log" 2>&1 </dev/null &
  setsid turnserver -c "$DIR/turnserver.conf" >>"$DIR/turnserver.out" 2>&1 </dev/null &
  wait_port udp "$SIP_UDP_PORT" 10
  wait_port tcp "$SIP_WS_PORT" 10
  wait_port tcp "$SIP_WSS_PORT" 10
  wait_port udp "$TURN_PORT" 10
  echo "$h" >"$DIR/config.hash"
}

stop() {
  stop_one kamailio
  stop_one rtpengine
  stop_one turnserver
  rm -f "$DIR/config.hash"
}

case "${1:-start}" in
  start) start; status ;;
  stop) stop ;;
  restart) stop; start; status ;;
  status) status ;;
  stop-rtpengine) stop_one rtpengine ;;
  start-rtpengine) start_rtpengine ;;
  *) echo "usage: $0 start|stop|restart|status|stop-rtpengine|start-rtpengine" >&2; exit 2 ;;
esac
