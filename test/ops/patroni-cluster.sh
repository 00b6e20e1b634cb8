#!/usr/bin/env bash
# A Patroni cluster for the automatic-failover drill (docs/operations.md, "Automatic failover with
# Patroni"): two or three PostgreSQL nodes, each managed by its own Patroni, with synchronous_mode
# on, and etcd. Needs root (network namespaces); the servers run as the `postgres` account.
#
# Each node (Patroni + PostgreSQL) lives in a network namespace of its own, joined by a veth pair
# to a bridge in the root namespace, where Cadenza runs. Where etcd runs (PATRONI_ETCD):
#   root       one etcd in the root namespace (the default for two nodes);
#   apart      three members in a namespace of their own, <prefix>e at PATRONI_NET.2 (the default
#              for three nodes): etcd on machines apart from the database's;
#   colocated  three nodes only: a member on each node, so a node cut off takes its member with it.
#              Debian's Patroni (3.0.2) then fails back when the cut heals: the rejoining member
#              serves its stale leader key, the old primary promotes itself again and the new one
#              demotes (Patroni issue 3314, fixed in 4.1.0; docs/operations.md). Kept to show it.
#
#     root namespace: bridge PATRONI_BRIDGE  PATRONI_NET.1   (root: etcd :PATRONI_ETCD_PORT)
#        ├─ veth ─ namespace <prefix>1: node1 PATRONI_NET.11  PostgreSQL :5581  REST :8581  (colocated: etcd1)
#        ├─ veth ─ namespace <prefix>2: node2 PATRONI_NET.12  PostgreSQL :5582  REST :8582  (colocated: etcd2)
#        ├─ veth ─ namespace <prefix>3: node3 PATRONI_NET.13  PostgreSQL :5583  REST :8583  (colocated: etcd3)
#        └─ veth ─ namespace <prefix>e: PATRONI_NET.2  (apart: etcd1–3 on :PATRONI_ETCD_PORT, +2, +4)
#
# `cut NODE` sets the root end of the node's veth down: its packets are dropped, nothing answers
# with a reset, so every connection to it hangs, as when a switch or a cable fails. That is the
# case a plain SIGKILL never shows (the kernel resets a dead process's connections at once).
#
#   patroni-cluster.sh start       network, etcd, every node's Patroni; waits for a leader and a
#                                  synchronous standby; idempotent (starts only what is not running)
#   patroni-cluster.sh status      each node: Patroni's role and state, from its REST API
#   patroni-cluster.sh leader      the name of the node that is primary now
#   patroni-cluster.sh wait        waits (120 s at most) for a leader and a synchronous standby
#   patroni-cluster.sh nodes       one line per node: name, PostgreSQL host:port, REST API URL
#   patroni-cluster.sh url         the multi-host DATABASE_URL (target_session_attrs=read-write)
#   patroni-cluster.sh url-of NODE that node's URL alone
#   patroni-cluster.sh kill NODE   SIGKILL of the node's Patroni and postmaster, and of its etcd
#                                  member (a crashed machine)
#   patroni-cluster.sh cut NODE    the node's link down (packets dropped)
#   patroni-cluster.sh isolate NODE  etcd apart or colocated: the node loses the other nodes and
#                                  etcd but not the root namespace, where Cadenza runs: a partition
#                                  that leaves the old primary reachable by its clients and not by
#                                  etcd's quorum (blackhole routes both ways)
#   patroni-cluster.sh heal NODE   link up and routes back; a killed node's Patroni (and etcd
#                                  member) is started again. It rejoins as a standby (pg_rewind, or a
#                                  fresh copy if that fails)
#   patroni-cluster.sh etcd-members  three-member etcd: one line per member: name, client URL,
#                                  leader, follower or down (etcd's own status, member by member)
#   patroni-cluster.sh etcd-leader the name of etcd's leader now (etcd1–3)
#   patroni-cluster.sh etcd-kill M SIGKILL of etcd member M (etcd1–3, or `leader`): a lost member;
#                                  the other two keep the quorum (and elect if M led)
#   patroni-cluster.sh etcd-heal M member M started again on its data folder; it rejoins
#   patroni-cluster.sh etcd-quorum-lose  SIGKILL of two members, etcd's leader first: the one left
#                                  has no quorum, so etcd answers no read or write (prints the two)
#   patroni-cluster.sh etcd-quorum-restore  every member not running started again; waits for etcd
#                                  to be healthy (a leader elected)
#   patroni-cluster.sh stop        stops every Patroni (and its PostgreSQL) and etcd
#   patroni-cluster.sh destroy     stop, remove the namespaces, the bridge and PATRONI_DIR
#
# Settings: PATRONI_DIR (default $TMPDIR/cadenza-patroni), PATRONI_NODES (2 or 3), PATRONI_ETCD
# (root, apart or colocated: above),
# PATRONI_NET (first three octets, default 10.231.58), PATRONI_PG_PORT / PATRONI_REST_PORT (node N
# uses base+N: 5581…, 8581…), PATRONI_ETCD_PORT (23790; peers on +1), PATRONI_TTL (leader key's
# lifetime in seconds, default 12: how long a dead primary holds its place), PATRONI_NS_PREFIX,
# PATRONI_FAILSAFE (1: Patroni's failsafe_mode, a primary that loses etcd keeps running while it
# reaches every other member's REST API; default 0, Patroni's default: it demotes itself).
set -euo pipefail

DIR=${PATRONI_DIR:-${TMPDIR:-/tmp}/cadenza-patroni}
NODES=${PATRONI_NODES:-2}
NET=${PATRONI_NET:-10.231.58}
PG_BASE=${PATRONI_PG_PORT:-5580}
REST_BASE=${PATRONI_REST_PORT:-8580}
ETCD_PORT=${PATRONI_ETCD_PORT:-23790}
TTL=${PATRONI_TTL:-12}
FAILSAFE=${PATRONI_FAILSAFE:-0}
NS=${PATRONI_NS_PREFIX:-czpat}
BRIDGE=${PATRONI_BRIDGE:-${NS}-br}
BIN=${PG_BIN:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}
SCOPE=cadenza

[ "$(id -u)" = 0 ] || { echo "patroni-cluster.sh needs root: it makes network namespaces" >&2; exit 1; }
case "$NODES" in 2 | 3) ;; *) echo "PATRONI_NODES must be 2 or 3" >&2; exit 2 ;; esac
case "$FAILSAFE" in 0) FAILSAFE_MODE=false ;; 1) FAILSAFE_MODE=true ;; *) echo "PATRONI_FAILSAFE must be 0 or 1" >&2; exit 2 ;; esac

nodes() { seq 1 "$NODES" | sed 's/^/node/'; }
num_of() {
  case "$1" in node[1-3]) local n=${1#node}; [ "$n" -le "$NODES" ] && { echo "$n"; return; } ;; esac
  echo "unknown node '$1' ($(nodes | tr '\n' ' '))" >&2
  exit 2
}
ip_of() { echo "$NET.$((10 + $(num_of "$1")))"; }
pg_port_of() { echo $((PG_BASE + $(num_of "$1"))); }
rest_port_of() { echo $((REST_BASE + $(num_of "$1"))); }
ns_of() { echo "$NS$(num_of "$1")"; }
host_if_of() { echo "$NS-h$(num_of "$1")"; }
as_pg() { runuser -u postgres -- "$@"; }
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
# The Patroni process itself (python3, under runuser and setsid), by its command line.
# Empty when none runs (never a failure: under pipefail a bare pgrep that finds nothing would end
# the script, and `destroy` after a kill stopped at the killed node, leaving the rest running).
patroni_pid() { pgrep -u postgres -f "python3 [^ ]*patroni $DIR/$1/patroni.yml" | head -1 || true; }
node_alive() { [ -n "$(patroni_pid "$1")" ]; }
rest() { curl -s --max-time 2 "http://$(ip_of "$1"):$(rest_port_of "$1")/$2" 2>/dev/null || true; }
# Patroni's health checks: 200 where the node is what the path names (primary, sync standby).
rest_is() { [ "$(curl -s -o /dev/null --max-time 2 -w '%{http_code}' "http://$(ip_of "$1"):$(rest_port_of "$1")/$2" 2>/dev/null)" = 200 ]; }
ETCD=${PATRONI_ETCD:-$([ "$NODES" = 3 ] && echo apart || echo root)}
case "$ETCD" in root | apart) ;; colocated) [ "$NODES" = 3 ] || { echo "PATRONI_ETCD=colocated needs PATRONI_NODES=3" >&2; exit 2; } ;; *) echo "PATRONI_ETCD must be root, apart or colocated" >&2; exit 2 ;; esac
colocated() { [ "$ETCD" = colocated ]; }
apart() { [ "$ETCD" = apart ]; }
ETCD_NS="${NS}e"
ETCD_IP="$NET.2"
etcd_url() { echo "http://$NET.1:$ETCD_PORT"; }
# Member N (1–3): where it listens for clients and peers.
member_ip() { if colocated; then ip_of "node$1"; else echo "$ETCD_IP"; fi; }
member_port() { if colocated; then echo "$ETCD_PORT"; else echo $((ETCD_PORT + 2 * ($1 - 1))); fi; }
member_ns() { if colocated; then ns_of "node$1"; else echo "$ETCD_NS"; fi; }
etcd_hosts() {
  if [ "$ETCD" = root ]; then
    echo "$NET.1:$ETCD_PORT"
  else
    local n hosts=""
    for n in 1 2 3; do hosts="$hosts${hosts:+,}$(member_ip "$n"):$(member_port "$n")"; done
    echo "$hosts"
  fi
}
# etcd's health through any member the root namespace reaches.
etcd_healthy() {
  local h
  for h in $(etcd_hosts | tr ',' ' '); do
    curl -s --max-time 1 "http://$h/health" | grep -q '"health":"true"' && return 0
  done
  return 1
}

net_up() {
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$NET.1/24" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
  local node ns hif
  for node in $(nodes); do
    ns=$(ns_of "$node") hif=$(host_if_of "$node")
    ip netns list | grep -qx "$ns\( .*\)\?" || ip netns add "$ns"
    if ! ip link show "$hif" >/dev/null 2>&1; then
      ip link add "$hif" type veth peer name "$NS-n$(num_of "$node")"
      ip link set "$NS-n$(num_of "$node")" netns "$ns"
      ip -n "$ns" link set "$NS-n$(num_of "$node")" name eth0
      ip -n "$ns" addr add "$(ip_of "$node")/24" dev eth0
      ip link set "$hif" master "$BRIDGE"
    fi
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    ip link set "$hif" up
  done
  if apart; then
    ip netns list | grep -qx "$ETCD_NS\( .*\)\?" || ip netns add "$ETCD_NS"
    if ! ip link show "$NS-he" >/dev/null 2>&1; then
      ip link add "$NS-he" type veth peer name "$NS-ne"
      ip link set "$NS-ne" netns "$ETCD_NS"
      ip -n "$ETCD_NS" link set "$NS-ne" name eth0
      ip -n "$ETCD_NS" addr add "$ETCD_IP/24" dev eth0
      ip link set "$NS-he" master "$BRIDGE"
    fi
    ip -n "$ETCD_NS" link set lo up
    ip -n "$ETCD_NS" link set eth0 up
    ip link set "$NS-he" up
  fi
}

# One member of the three-member etcd, in its node's namespace. Its data folder survives a kill, so
# a member started again rejoins with it (the initial-cluster flags only apply to an empty folder).
# Pre-vote: a member coming back from a partition with a higher term would otherwise depose the
# leader (a second of no etcd leader, seen here on heal), which Patroni can take for a failure.
start_etcd_member() {
  local n=$1 ip port cluster="" m
  ip=$(member_ip "$n") port=$(member_port "$n")
  alive "$DIR/etcd$n.pid" && return 0
  for m in 1 2 3; do cluster="$cluster${cluster:+,}etcd$m=http://$(member_ip "$m"):$(($(member_port "$m") + 1))"; done
  mkdir -p "$DIR/etcd$n"
  chmod 0700 "$DIR/etcd$n"
  ip netns exec "$(member_ns "$n")" setsid etcd --name "etcd$n" --data-dir "$DIR/etcd$n" \
    --listen-client-urls "http://$ip:$port" --advertise-client-urls "http://$ip:$port" \
    --listen-peer-urls "http://$ip:$((port + 1))" --initial-advertise-peer-urls "http://$ip:$((port + 1))" \
    --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token "$SCOPE-etcd" --enable-v2=false --pre-vote \
    --heartbeat-interval 100 --election-timeout 1000 >>"$DIR/etcd$n.log" 2>&1 </dev/null &
  echo $! >"$DIR/etcd$n.pid"
}

start_etcd() {
  if [ "$ETCD" != root ]; then
    local n
    for n in 1 2 3; do start_etcd_member "$n"; done
    for _ in $(seq 1 200); do
      etcd_healthy && return 0
      sleep 0.1
    done
    echo "etcd's three members did not form a cluster: see $DIR/etcd*.log" >&2
    return 1
  fi
  alive "$DIR/etcd.pid" && return 0
  mkdir -p "$DIR/etcd"
  chmod 0700 "$DIR/etcd"
  # v3 API only (Patroni's etcd3 DCS); heartbeat and election as on a LAN.
  setsid etcd --name cadenza-etcd --data-dir "$DIR/etcd" \
    --listen-client-urls "$(etcd_url),http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "$(etcd_url)" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-cluster "cadenza-etcd=http://127.0.0.1:$((ETCD_PORT + 1))" --enable-v2=false \
    --heartbeat-interval 100 --election-timeout 1000 >"$DIR/etcd.log" 2>&1 </dev/null &
  echo $! >"$DIR/etcd.pid"
  for _ in $(seq 1 100); do
    curl -s --max-time 1 "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"' && return 0
    sleep 0.1
  done
  echo "etcd did not start: see $DIR/etcd.log" >&2
  return 1
}

# Patroni's YAML for one node. synchronous_mode: a COMMIT returns once the synchronous standby has
# it, and Patroni promotes only that standby, so a committed "sent" survives the failover. Not
# strict: alone, the new primary takes writes without a standby (availability first, as pg-pair.sh's
# promote does); synchronous_mode_strict would stop writes until a standby joins.
write_config() {
  local node=$1 data ip pgp rp
  data="$DIR/$node/data" ip=$(ip_of "$node") pgp=$(pg_port_of "$node") rp=$(rest_port_of "$node")
  cat >"$DIR/$node/patroni.yml" <<EOF
scope: $SCOPE
name: $node
log:
  level: INFO
restapi:
  listen: $ip:$rp
  connect_address: $ip:$rp
etcd3:
  hosts: $(etcd_hosts)
bootstrap:
  dcs:
    ttl: $TTL
    loop_wait: 2
    retry_timeout: $(((TTL - 2) / 2))
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: false
    # Without etcd, a primary that reaches every member's REST API (POST /failsafe) keeps running
    # instead of demoting itself (Patroni 3.0.0 and later; dynamic configuration, so it applies
    # from the cluster's bootstrap).
    failsafe_mode: $FAILSAFE_MODE
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_level: replica
        hot_standby: 'on'
        wal_log_hints: 'on'
        # The drills time Cadenza's first commit on the new primary by pg_xact_commit_timestamp.
        track_commit_timestamp: 'on'
        max_wal_senders: 8
        max_replication_slots: 8
        wal_keep_size: 256MB
        max_connections: 200
        wal_sender_timeout: 5s
        wal_receiver_timeout: 5s
        wal_receiver_status_interval: 1s
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - data-checksums
postgresql:
  listen: $ip,127.0.0.1:$pgp
  connect_address: $ip:$pgp
  data_dir: $data
  bin_dir: $BIN
  pgpass: $DIR/$node/pgpass
  remove_data_directory_on_rewind_failure: true
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
    rewind:
      username: postgres
  parameters:
    unix_socket_directories: $DIR/$node
  # Trust on the cluster's own network only (a drill; a real cluster sets passwords or certificates).
  pg_hba:
    - local all all trust
    - host all all $NET.0/24 trust
    - host all all 127.0.0.1/32 trust
    - host replication all $NET.0/24 trust
    - host replication all 127.0.0.1/32 trust
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
EOF
  chown postgres: "$DIR/$node/patroni.yml"
}

start_node() {
  local node=$1
  node_alive "$node" && return 0
  mkdir -p "$DIR/$node"
  chown postgres: "$DIR/$node"
  chmod 0700 "$DIR/$node"
  write_config "$node"
  # A postmaster left from a SIGKILLed Patroni would be adopted, but one whose Patroni is gone is
  # a primary nobody manages: stop it before Patroni starts again.
  if [ -f "$DIR/$node/data/postmaster.pid" ]; then
    ip netns exec "$(ns_of "$node")" runuser -u postgres -- "$BIN/pg_ctl" -D "$DIR/$node/data" -m immediate stop >/dev/null 2>&1 || true
  fi
  ip netns exec "$(ns_of "$node")" runuser -u postgres -- setsid patroni "$DIR/$node/patroni.yml" >>"$DIR/$node/patroni.log" 2>&1 </dev/null &
}


leader() {
  local node
  for node in $(nodes); do rest_is "$node" primary && { echo "$node"; return 0; }; done
  return 1
}
sync_standby() {
  local node
  for node in $(nodes); do rest_is "$node" synchronous && { echo "$node"; return 0; }; done
  return 1
}

wait_ready() {
  local i
  for i in $(seq 1 600); do
    if leader >/dev/null && sync_standby >/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  echo "no leader with a synchronous standby after 120 s: see $DIR/node*/patroni.log" >&2
  return 1
}

cmd_start() {
  mkdir -p "$DIR"
  chmod 0755 "$DIR"
  net_up
  start_etcd
  local node
  for node in $(nodes); do start_node "$node"; done
  wait_ready
  cmd_status
}

cmd_status() {
  local node role
  for node in $(nodes); do
    role=$(rest "$node" patroni | grep -o '"role": *"[a-z_]*"' | head -1 | sed 's/.*"\([a-z_]*\)"$/\1/' || true)
    echo "$node $(ip_of "$node"):$(pg_port_of "$node") ${role:-unreachable}$([ "$(ip -br link show "$(host_if_of "$node")" 2>/dev/null | awk '{print $2}')" = DOWN ] && echo ' (cut)')"
  done
  etcd_healthy && echo "etcd $(etcd_hosts) healthy" || echo "etcd down"
}

# One node's URL alone (the drill reads commit times on the node Patroni promoted).
cmd_url_of() { echo "postgres://postgres@$(ip_of "$1"):$(pg_port_of "$1")/postgres"; }

cmd_url() {
  local hosts="" node
  for node in $(nodes); do hosts="$hosts${hosts:+,}$(ip_of "$node"):$(pg_port_of "$node")"; done
  echo "postgres://postgres@$hosts/postgres?target_session_attrs=read-write"
}

cmd_kill() {
  local node=$1 ppid pmpid
  num_of "$node" >/dev/null
  ppid=$(patroni_pid "$node" || true)
  pmpid=$(head -1 "$DIR/$node/data/postmaster.pid" 2>/dev/null || true)
  # Patroni first: alive, it would restart the postmaster and keep its leader key.
  [ -n "$ppid" ] && kill -KILL "$ppid" 2>/dev/null || true
  [ -n "$pmpid" ] && kill -KILL "$pmpid" 2>/dev/null || true
  # The machine's etcd member goes down with it.
  if colocated && alive "$DIR/etcd$(num_of "$node").pid"; then kill -KILL "$(cat "$DIR/etcd$(num_of "$node").pid")" 2>/dev/null || true; fi
  for _ in $(seq 1 100); do
    ip netns exec "$(ns_of "$node")" "$BIN/pg_isready" -q -h "$(ip_of "$node")" -p "$(pg_port_of "$node")" || break
    sleep 0.05
  done
  echo "$node killed (patroni ${ppid:-none}, postmaster ${pmpid:-none})"
}

cmd_cut() { ip link set "$(host_if_of "$1")" down; echo "$1 cut off"; }

# Blackhole routes between NODE and every other node (and etcd's namespace when apart), both ways
# (add or del): packets dropped, no reset, as across a failed link between two racks; the root
# namespace still reaches every node.
partition() {
  local op=$1 node=$2 other
  for other in $(nodes); do
    [ "$other" = "$node" ] && continue
    ip -n "$(ns_of "$node")" route "$op" blackhole "$(ip_of "$other")/32" 2>/dev/null || [ "$op" = del ]
    ip -n "$(ns_of "$other")" route "$op" blackhole "$(ip_of "$node")/32" 2>/dev/null || [ "$op" = del ]
  done
  if apart; then
    ip -n "$(ns_of "$node")" route "$op" blackhole "$ETCD_IP/32" 2>/dev/null || [ "$op" = del ]
    ip -n "$ETCD_NS" route "$op" blackhole "$(ip_of "$node")/32" 2>/dev/null || [ "$op" = del ]
  fi
}

cmd_isolate() {
  [ "$ETCD" != root ] || { echo "isolate needs etcd apart from the root namespace (PATRONI_NODES=3, PATRONI_ETCD apart or colocated): from the root namespace, where Cadenza runs, etcd stays reachable" >&2; exit 2; }
  partition add "$1"
  echo "$1 isolated from the other nodes and etcd (reachable from the root namespace)"
}

cmd_heal() {
  local node=$1
  ip link set "$(host_if_of "$node")" up
  partition del "$node"
  if colocated; then start_etcd_member "$(num_of "$node")"; fi
  [ -f "$DIR/$node/patroni.yml" ] && start_node "$node"
  echo "$node healed"
}

# The three-member etcd's own faults (not with one etcd in the root namespace: it has no quorum to
# lose but itself). A member is named etcd1–3; `leader` names etcd's leader of the moment.
need_members() { [ "$ETCD" != root ] || { echo "etcd commands need the three-member etcd (PATRONI_NODES=3, PATRONI_ETCD apart or colocated)" >&2; exit 2; }; }
member_num() {
  local m=$1
  [ "$m" = leader ] && m=$(etcd_leader)
  case "$m" in etcd[1-3]) echo "${m#etcd}" ;; *) echo "unknown etcd member '$1' (etcd1 etcd2 etcd3 leader)" >&2; exit 2 ;; esac
}
# One member's status through etcd's gRPC gateway (v3 API; no etcdctl needed): its own id and the
# leader's id as it sees them. Empty when it does not answer.
member_status() { curl -s --max-time 1 -X POST -d '{}' "http://$(member_ip "$1"):$(member_port "$1")/v3/maintenance/status" 2>/dev/null || true; }
json_field() { { grep -o "\"$1\":\"[0-9]*\"" || true; } | head -1 | sed 's/.*:"\([0-9]*\)"/\1/'; }
member_role() {
  local st id lead
  st=$(member_status "$1")
  [ -n "$st" ] || { echo down; return; }
  id=$(echo "$st" | grep -o '"header":{[^}]*}' | json_field member_id)
  lead=$(echo "$st" | json_field leader)
  if [ -z "$lead" ] || [ "$lead" = 0 ]; then echo "no-leader"; elif [ "$id" = "$lead" ]; then echo leader; else echo follower; fi
}
etcd_leader() {
  local n
  for n in 1 2 3; do [ "$(member_role "$n")" = leader ] && { echo "etcd$n"; return 0; }; done
  echo "etcd has no leader" >&2
  return 1
}
cmd_etcd_members() {
  local n
  for n in 1 2 3; do echo "etcd$n http://$(member_ip "$n"):$(member_port "$n") $(member_role "$n")"; done
}
kill_member() {
  local n=$1
  if alive "$DIR/etcd$n.pid"; then kill -KILL "$(cat "$DIR/etcd$n.pid")" 2>/dev/null || true; fi
  for _ in $(seq 1 50); do alive "$DIR/etcd$n.pid" || return 0; sleep 0.1; done
}
cmd_etcd_kill() {
  local n
  n=$(member_num "$1")
  kill_member "$n"
  echo "etcd$n killed"
}
cmd_etcd_heal() {
  local n
  n=$(member_num "$1")
  start_etcd_member "$n"
  echo "etcd$n started"
}
# etcd's leader and one follower: the one left alive cannot reach a quorum (2 of 3).
cmd_etcd_quorum_lose() {
  local lead other n
  lead=$(member_num leader)
  for n in 1 2 3; do [ "$n" != "$lead" ] && { other=$n; break; }; done
  kill_member "$lead"
  kill_member "$other"
  echo "etcd$lead etcd$other killed (quorum lost)"
}
cmd_etcd_quorum_restore() {
  local n
  for n in 1 2 3; do start_etcd_member "$n"; done
  for _ in $(seq 1 300); do
    etcd_healthy && { echo "etcd quorum restored"; return 0; }
    sleep 0.1
  done
  echo "etcd not healthy 30 s after its members started: see $DIR/etcd*.log" >&2
  return 1
}

cmd_stop() {
  local node pid
  for node in $(nodes); do
    pid=$(patroni_pid "$node")
    if [ -n "$pid" ]; then
      # SIGTERM: Patroni stops PostgreSQL (fast) and releases its leader key.
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    if [ -f "$DIR/$node/data/postmaster.pid" ]; then
      as_pg "$BIN/pg_ctl" -D "$DIR/$node/data" -m immediate stop >/dev/null 2>&1 || true
    fi
  done
  local f
  for f in "$DIR"/etcd*.pid; do
    [ -f "$f" ] || continue
    if alive "$f"; then
      kill -TERM "$(cat "$f")"
      for _ in $(seq 1 50); do alive "$f" || break; sleep 0.1; done
    fi
    rm -f "$f"
  done
}

cmd_destroy() {
  # Nothing is kept, so nothing needs a clean shutdown: SIGKILL (a node that is cut off would spend
  # its retry_timeout trying to release its leader key in etcd).
  local node pid
  if [ -d "$DIR" ]; then
    for node in $(nodes); do
      pid=$(patroni_pid "$node")
      [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
      pid=$(head -1 "$DIR/$node/data/postmaster.pid" 2>/dev/null || true)
      [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
    done
    local f
    for f in "$DIR"/etcd*.pid; do alive "$f" && kill -KILL "$(cat "$f")" 2>/dev/null || true; done
    # A killed postmaster's backends leave when they notice; the data folder goes anyway.
    sleep 0.2
  fi
  local n
  for n in 1 2 3 e; do
    ip link del "$NS-h$n" 2>/dev/null || true
    ip netns del "$NS$n" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  rm -rf "$DIR"
}

case "${1:-}" in
  start) cmd_start ;;
  status) cmd_status ;;
  leader) leader || { echo "no leader" >&2; exit 1; } ;;
  url) cmd_url ;;
  url-of) num_of "${2:?url-of NODE}" >/dev/null && cmd_url_of "$2" ;;
  wait) wait_ready ;;
  nodes) for n in $(nodes); do echo "$n $(ip_of "$n"):$(pg_port_of "$n") http://$(ip_of "$n"):$(rest_port_of "$n")"; done ;;
  kill) cmd_kill "${2:?kill NODE}" ;;
  cut) num_of "${2:?cut NODE}" >/dev/null && cmd_cut "$2" ;;
  isolate) num_of "${2:?isolate NODE}" >/dev/null && cmd_isolate "$2" ;;
  heal) num_of "${2:?heal NODE}" >/dev/null && cmd_heal "$2" ;;
  etcd-members) need_members && cmd_etcd_members ;;
  etcd-leader) need_members && etcd_leader ;;
  etcd-kill) need_members && cmd_etcd_kill "${2:?etcd-kill MEMBER}" ;;
  etcd-heal) need_members && cmd_etcd_heal "${2:?etcd-heal MEMBER}" ;;
  etcd-quorum-lose) need_members && cmd_etcd_quorum_lose ;;
  etcd-quorum-restore) need_members && cmd_etcd_quorum_restore ;;
  stop) cmd_stop ;;
  destroy) cmd_destroy ;;
  *) echo "usage: $0 start|status|leader|wait|nodes|url|url-of NODE|kill NODE|cut NODE|isolate NODE|heal NODE|etcd-members|etcd-leader|etcd-kill M|etcd-heal M|etcd-quorum-lose|etcd-quorum-restore|stop|destroy" >&2; exit 2 ;;
esac
