#!/usr/bin/env bash
# A throwaway PostgreSQL cluster with WAL archiving to a pgBackRest repository, for the
# point-in-time recovery drill (docs/operations.md, "Point-in-time recovery"). The cluster, its
# repository and pgBackRest's configuration live in one folder, PG_PITR_DIR, on a port of its own.
#
#   pg-pitr.sh start     creates what is missing (initdb, pgbackrest.conf, stanza) and starts it; idempotent
#   pg-pitr.sh url       the DATABASE_URL
#   pg-pitr.sh config    the pgBackRest configuration file (for cadenza backup/restore --config)
#   pg-pitr.sh flush     switches to a new WAL segment and waits until it is archived (pgbackrest check)
#   pg-pitr.sh stop      flush, then a fast shutdown (a restore needs the server stopped)
#   pg-pitr.sh destroy   stop, then remove PG_PITR_DIR
#
# Settings: PG_PITR_DIR (required), PG_PITR_PORT (default 5560).
# PostgreSQL refuses to run as root, and pgBackRest must run as the cluster's owner: as root, every
# server and pgBackRest command runs as the `postgres` account (cadenza backup/restore --as-user postgres).
#
# archive_timeout = 60 s: a quiet server still hands a WAL segment to the archive at least every
# minute, so a lost server loses at most the last minute (the recovery point objective). A restore
# of a server that is still alive loses nothing: `stop` archives the current segment first.
set -euo pipefail

DIR=${PG_PITR_DIR:?set PG_PITR_DIR to the folder for the cluster and its backups}
PORT=${PG_PITR_PORT:-5560}
BIN=${PG_BIN:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}
STANZA=cadenza
CONF="$DIR/pgbackrest.conf"
DATA="$DIR/data"

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
running() { as_pg "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }
backrest() { as_pg pgbackrest --config="$CONF" --stanza="$STANZA" --log-level-console=warn "$@"; }

write_config() {
  as_pg mkdir -p "$DIR/repo" "$DIR/log" "$DIR/lock" "$DIR/spool"
  as_pg sh -c "cat > '$CONF'" <<EOF2
[global]
repo1-path=$DIR/repo
repo1-retention-full=2
log-path=$DIR/log
lock-path=$DIR/lock
spool-path=$DIR/spool
start-fast=y
compress-type=lz4

[$STANZA]
pg1-path=$DATA
pg1-port=$PORT
pg1-socket-path=$DIR
EOF2
}

init_cluster() {
  as_pg "$BIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  as_pg sh -c "cat >> '$DATA/postgresql.conf'" <<EOF2
# pg-pitr.sh: WAL archived to pgBackRest
wal_level = replica
archive_mode = on
archive_command = 'pgbackrest --config=$CONF --stanza=$STANZA archive-push %p'
archive_timeout = 60
max_wal_senders = 4
max_connections = 200
EOF2
  as_pg sh -c "cat > '$DATA/pg_hba.conf'" <<EOF2
local all all trust
host all all 127.0.0.1/32 trust
EOF2
}

start_server() {
  running && return 0
  # -k: the cluster's own socket folder, so it never shares the machine's.
  as_pg "$BIN/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w -t 600 -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1" start >/dev/null
  # After a restore the server replays WAL up to the target, then promotes: wait for read-write.
  for _ in $(seq 1 600); do
    [ "$(as_pg "$BIN/psql" -X -A -t -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -c 'select pg_is_in_recovery()' 2>/dev/null)" = f ] && return 0
    sleep 0.1
  done
  echo "the server did not leave recovery within 60 s (see $DIR/server.log)" >&2
  return 1
}

cmd_start() {
  # The folder belongs to the account the server runs as, and to no one else.
  [ -d "$DIR" ] || as_pg install -d -m 0700 "$DIR"
  [ -f "$CONF" ] || write_config
  [ -f "$DATA/PG_VERSION" ] || init_cluster
  start_server
  [ -d "$DIR/repo/backup/$STANZA" ] || backrest stanza-create
}

cmd_flush() {
  running || return 0
  # pgbackrest check forces a WAL switch and waits until that segment is in the archive.
  backrest check
}

cmd_stop() {
  running || return 0
  cmd_flush
  as_pg "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
}

case "${1:-}" in
  start) cmd_start ;;
  url) echo "postgres://postgres@127.0.0.1:$PORT/postgres" ;;
  config) echo "$CONF" ;;
  flush) cmd_flush ;;
  stop) cmd_stop ;;
  destroy) if [ -d "$DIR" ]; then running && as_pg "$BIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null; rm -rf "$DIR"; fi ;;
  *) echo "usage: $0 start|url|config|flush|stop|destroy" >&2; exit 2 ;;
esac
