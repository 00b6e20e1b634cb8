#!/usr/bin/env bash
# A PostgreSQL primary with a synchronous standby on loopback, for the failover drills
# (docs/operations.md, "Replication and failover"). Two clusters, node_a and node_b, each in a
# folder of its own under PG_PAIR_DIR, on ports of their own (never the machine's 5432).
#
#   pg-pair.sh start       creates what is missing (initdb, pg_basebackup) and starts both; idempotent
#   pg-pair.sh status      each node: running or not, primary or standby; the sync standby seen
#   pg-pair.sh url         the multi-host DATABASE_URL (target_session_attrs=read-write)
#   pg-pair.sh kill NODE   SIGKILL of the node's postmaster (a crash: no shutdown checkpoint)
#   pg-pair.sh promote NODE  pg_ctl promote, then synchronous_standby_names='' on it (see below)
#   pg-pair.sh rejoin NODE   makes a dead node a fresh synchronous standby of the running primary
#   pg-pair.sh stop        fast shutdown of both
#   pg-pair.sh destroy     stop, then remove PG_PAIR_DIR
#
# Settings: PG_PAIR_DIR (default /tmp/cadenza-pg-pair), PG_PAIR_PORT_A / PG_PAIR_PORT_B (5546 / 5547).
# PostgreSQL refuses to run as root: as root, every server command runs as the `postgres` account.
#
# Synchronous replication: synchronous_standby_names = 'ANY 1 (node_a, node_b)' and
# synchronous_commit = on, so a COMMIT returns only once the standby has the commit record on disk:
# a "sent" recorded on the primary is on both. The same setting on both nodes means either can be
# the primary. A promoted node has no standby until another joins; with the setting kept, every
# commit would wait forever, so `promote` clears it (availability first, one copy) and `rejoin`
# restores it once the old primary is back as a standby.
set -euo pipefail

DIR=${PG_PAIR_DIR:-/tmp/cadenza-pg-pair}
PORT_A=${PG_PAIR_PORT_A:-5546}
PORT_B=${PG_PAIR_PORT_B:-5547}
BIN=${PG_BIN:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}
SYNC_NAMES="ANY 1 (node_a, node_b)"

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
port_of() { case "$1" in node_a) echo "$PORT_A" ;; node_b) echo "$PORT_B" ;; *) echo "unknown node '$1' (node_a or node_b)" >&2; exit 2 ;; esac; }
other_of() { case "$1" in node_a) echo node_b ;; node_b) echo node_a ;; esac; }
data_of() { port_of "$1" >/dev/null; echo "$DIR/$1"; }
running() { as_pg "$BIN/pg_ctl" -D "$(data_of "$1")" status >/dev/null 2>&1; }
psql_on() { local node=$1; shift; as_pg "$BIN/psql" -X -q -A -t -h 127.0.0.1 -p "$(port_of "$node")" -U postgres -d postgres "$@"; }
in_recovery() { [ "$(psql_on "$1" -c 'select pg_is_in_recovery()' 2>/dev/null)" = t ]; }

start_node() {
  local node=$1 other
  running "$node" && return 0
  other=$(other_of "$node")
  # Two primaries (split brain): a node that was a primary must not start beside the one promoted
  # in its place; it comes back only as a standby (rejoin).
  if [ ! -f "$(data_of "$node")/standby.signal" ] && running "$other" && ! in_recovery "$other"; then
    echo "$other is the primary now: $node must rejoin as its standby (pg-pair.sh rejoin $node)" >&2
    return 1
  fi
  # -k: the node's own socket folder, so two clusters (and the machine's own) never share one.
  as_pg "$BIN/pg_ctl" -D "$(data_of "$node")" -l "$DIR/$node.log" -w -t 60 \
    -o "-p $(port_of "$node") -k $DIR -c listen_addresses=127.0.0.1" start >/dev/null
}

init_primary() {
  local node=$1 data
  data=$(data_of "$node")
  as_pg "$BIN/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  cat >>"$data/postgresql.conf" <<EOF
# pg-pair.sh: a primary with a synchronous standby
wal_level = replica
max_wal_senders = 8
wal_keep_size = 256MB
hot_standby = on
synchronous_commit = on
synchronous_standby_names = '$SYNC_NAMES'
wal_sender_timeout = 5s
wal_receiver_status_interval = 1s
wal_receiver_timeout = 5s
max_connections = 200
# The drills time Cadenza's first commit on the promoted node by pg_xact_commit_timestamp.
track_commit_timestamp = on
EOF
  cat >"$data/pg_hba.conf" <<EOF
local all all trust
host all all 127.0.0.1/32 trust
host replication all 127.0.0.1/32 trust
EOF
}

# A standby of the running primary `from`: a base backup, standby.signal, and a primary_conninfo
# naming this node (application_name), which synchronous_standby_names lists.
init_standby() {
  local node=$1 from=$2 data
  data=$(data_of "$node")
  rm -rf "$data"
  as_pg "$BIN/pg_basebackup" -h 127.0.0.1 -p "$(port_of "$from")" -U postgres -D "$data" -X stream -c fast >/dev/null
  as_pg touch "$data/standby.signal"
  as_pg sh -c "echo \"primary_conninfo = 'host=127.0.0.1 port=$(port_of "$from") user=postgres application_name=$node'\" >> '$data/postgresql.auto.conf'"
}

wait_sync() {
  local primary=$1 standby=$2 i
  for i in $(seq 1 100); do
    [ "$(psql_on "$primary" -c "select count(*) from pg_stat_replication where application_name = '$standby' and sync_state in ('sync','quorum')" 2>/dev/null)" = 1 ] && return 0
    sleep 0.1
  done
  echo "the standby $standby did not become synchronous" >&2
  return 1
}

cmd_start() {
  if [ ! -d "$DIR" ]; then
    mkdir -p "$DIR"
    [ "$(id -u)" = 0 ] && chown postgres: "$DIR"
    chmod 0700 "$DIR"
  fi
  [ -f "$DIR/node_a/PG_VERSION" ] || init_primary node_a
  start_node node_a
  if [ ! -f "$DIR/node_b/PG_VERSION" ]; then
    init_standby node_b node_a
  fi
  start_node node_b
  if ! in_recovery node_a && in_recovery node_b; then wait_sync node_a node_b; fi
  if ! in_recovery node_b && in_recovery node_a; then wait_sync node_b node_a; fi
  cmd_status
}

cmd_status() {
  local node role
  for node in node_a node_b; do
    if ! running "$node"; then role=down
    elif in_recovery "$node"; then role=standby
    else role=primary; fi
    echo "$node port=$(port_of "$node") $role"
    if [ "$role" = primary ]; then
      psql_on "$node" -c "select '  replica ' || application_name || ' ' || state || ' ' || sync_state from pg_stat_replication" || true
    fi
  done
}

cmd_url() {
  echo "postgres://postgres@127.0.0.1:$PORT_A,127.0.0.1:$PORT_B/postgres?target_session_attrs=read-write"
}

cmd_kill() {
  local node=$1 pid
  pid=$(head -1 "$(data_of "$node")/postmaster.pid" 2>/dev/null || true)
  [ -n "$pid" ] || { echo "$node is not running"; return 0; }
  kill -KILL "$pid" 2>/dev/null || true
  # The postmaster's children (backends, walwriter…) notice its death and exit on their own;
  # wait for the port to close so that the caller's next step sees the crash.
  for _ in $(seq 1 100); do
    "$BIN/pg_isready" -q -h 127.0.0.1 -p "$(port_of "$node")" || break
    sleep 0.05
  done
  # A SIGKILLed postmaster leaves postmaster.pid behind; pg_ctl start removes a stale one.
  echo "$node killed (pid $pid)"
}

cmd_promote() {
  local node=$1
  as_pg "$BIN/pg_ctl" -D "$(data_of "$node")" -w -t 60 promote >/dev/null
  # Alone now: commits must not wait for a standby that is not there (see the file comment).
  psql_on "$node" -c "alter system set synchronous_standby_names = ''" -c 'select pg_reload_conf()' >/dev/null
  echo "$node promoted"
}

cmd_rejoin() {
  local node=$1 primary
  primary=$(other_of "$node")
  running "$node" && { echo "$node is running: stop it first" >&2; exit 1; }
  running "$primary" && ! in_recovery "$primary" || { echo "$primary is not a running primary" >&2; exit 1; }
  # A fresh base backup, not pg_rewind: the old primary may hold commits the new one never had.
  init_standby "$node" "$primary"
  start_node "$node"
  psql_on "$primary" -c "alter system set synchronous_standby_names = '$SYNC_NAMES'" -c 'select pg_reload_conf()' >/dev/null
  wait_sync "$primary" "$node"
  cmd_status
}

cmd_stop() {
  local node
  for node in node_a node_b; do
    if running "$node"; then as_pg "$BIN/pg_ctl" -D "$(data_of "$node")" -m fast -w stop >/dev/null; fi
  done
  return 0
}

case "${1:-}" in
  start) cmd_start ;;
  status) cmd_status ;;
  url) cmd_url ;;
  kill) cmd_kill "${2:?kill NODE}" ;;
  promote) cmd_promote "${2:?promote NODE}" ;;
  rejoin) cmd_rejoin "${2:?rejoin NODE}" ;;
  stop) cmd_stop ;;
  destroy) if [ -d "$DIR" ]; then cmd_stop; rm -rf "$DIR"; fi ;;
  *) echo "usage: $0 start|status|url|kill NODE|promote NODE|rejoin NODE|stop|destroy" >&2; exit 2 ;;
esac
