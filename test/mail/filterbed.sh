#!/bin/bash
# Cadenza's spam-filter bed: a receiving mail system judged by a real filter, beside the mail test
# bed (test/mail/mailbed.sh) and sharing nothing with it (its own Postfix and Dovecot instances,
# ports, users and folders), so it changes nothing that the bed's tests see:
#
#   Postfix 127.0.0.1:${FILTERED_PORT:-10027} (an MX: no AUTH, accepts only @filtered.test)
#     -> milter inet:127.0.0.1:${RSPAMD_MILTER_PORT:-10332} (rspamd's proxy worker in milter mode:
#        adds X-Spam-Status "Yes, score=…" / "No, score=…" and X-Spamd-Result with every rule hit)
#     -> LMTP 127.0.0.1:${FILTER_LMTP_PORT:-10028} -> Dovecot, whose Sieve (sieve_before) files a
#        message whose X-Spam-Status says Yes (score at or above rspamd's "add header" threshold)
#        into Junk, everything else into INBOX.
#   IMAP 127.0.0.1:${FILTER_IMAP_PORT:-10144}: junk1..junk20@filtered.test, password "pass".
#   If rspamd is down, Postfix defers (milter_default_action = tempfail): nothing lands unjudged.
#   rspamd's scanner on 127.0.0.1:${RSPAMD_PORT:-10333} (HTTP /checkv2: Cadenza's content check).
#
#   filterbed.sh [start]   install rspamd + dovecot-sieve (if missing), configure, start; ~50 ms
#                          when it already runs with this configuration
#   filterbed.sh status    exit 0 only if all three run (and rspamd answers)
#   filterbed.sh reset [USER…]  expunge the given filter-bed mailboxes (default: all of them)
#   filterbed.sh stop      stop rspamd, Postfix and Dovecot of the filter bed
#
# No network: rspamd listens on loopback only, its resolver is 127.0.0.1:${RSPAMD_DNS_PORT:-10053}
# (a test's DNS server there, or nothing: every lookup fails within 0.5 s), and every module that asks
# outside resolvers (RBLs, SURBL, ASN, email lists), a fuzzy server or a remote map is off. No
# Redis: Bayes, reputation, greylisting and neural are therefore inactive, which keeps the verdict
# a pure function of the message (the same content always scores the same).
set -eu

FILTERED_PORT=${FILTERED_PORT:-10027}
RSPAMD_MILTER_PORT=${RSPAMD_MILTER_PORT:-10332}
RSPAMD_PORT=${RSPAMD_PORT:-10333}
RSPAMD_DNS_PORT=${RSPAMD_DNS_PORT:-10053}
FILTERED_DOMAIN=filtered.test

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RS_DIR=/etc/rspamd-cadenza
RS_RUN=/run/rspamd-cadenza
RS_DB=/var/lib/rspamd-cadenza
RS_LOG=/var/log/rspamd-cadenza
FILTER_LMTP_PORT=${FILTER_LMTP_PORT:-10028}
FILTER_IMAP_PORT=${FILTER_IMAP_PORT:-10144}
FILTER_USERS=20
MYHOSTNAME=mx.filtered.test
DC_DIR=/etc/dovecot/cadenza-filter
DC_CONF=$DC_DIR/dovecot.conf
DC_BASE=/run/dovecot-cadenza-filter
DC_STATE=/var/lib/dovecot-cadenza-filter
DC_LOG=/var/log/dovecot-cadenza-filter.log
MAIL_ROOT=/var/mail/cadenza-filter
SIEVE_DIR=$DC_DIR/sieve
PF_DIR=/etc/postfix-cadenza-filter
PF_QUEUE=/var/spool/postfix-cadenza-filter
PF_DATA=/var/lib/postfix-cadenza-filter
PF_LOG=/var/log/postfix-cadenza-filter.log
LOCK=/run/lock/cadenza-filterbed.lock

mkdir -p /run/lock
exec 9>"$LOCK"
flock -w 120 9 || { echo "filterbed: another filterbed.sh holds $LOCK for more than 120 s" >&2; exit 1; }

dovecot_running() { [ -f $DC_BASE/master.pid ] && kill -0 "$(cat $DC_BASE/master.pid)" 2>/dev/null; }
postfix_running() { [ -f $PF_DIR/main.cf ] && postfix -c $PF_DIR status >/dev/null 2>&1; }
rspamd_running() { [ -f $RS_RUN/rspamd.pid ] && kill -0 "$(cat $RS_RUN/rspamd.pid)" 2>/dev/null; }
rspamd_answers() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$RSPAMD_PORT; printf 'GET /ping HTTP/1.0\r\n\r\n' >&3; cat <&3" 2>/dev/null | grep -q pong; }

CHANGED=0
install_if_changed() {
  if [ -f "$2" ] && cmp -s "$1" "$2"; then rm -f "$1"; return 1; fi
  mv -f "$1" "$2"; CHANGED=1; return 0
}
# write_conf NAME: stdin becomes $RS_DIR/NAME when it differs
RS_CHANGED=0
write_conf() { cat > "$RS_DIR/$1.new"; if install_if_changed "$RS_DIR/$1.new" "$RS_DIR/$1"; then RS_CHANGED=1; fi; }

cmd_stop() {
  if rspamd_running; then kill "$(cat $RS_RUN/rspamd.pid)"; fi
  if postfix_running; then postfix -c $PF_DIR stop 2>/dev/null || true; fi
  if dovecot_running; then doveadm -c $DC_CONF stop 2>/dev/null || kill "$(cat $DC_BASE/master.pid)"; fi
  local i=0
  while { rspamd_running || dovecot_running || postfix_running; } && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
  echo "filter bed stopped"
}

cmd_status() {
  dovecot_running || { echo "dovecot: stopped"; return 1; }
  postfix_running || { echo "postfix: stopped"; return 1; }
  if rspamd_answers; then echo "rspamd: running (scanner 127.0.0.1:$RSPAMD_PORT, milter 127.0.0.1:$RSPAMD_MILTER_PORT)"; else echo "rspamd: stopped"; return 1; fi
}

cmd_start() {
  export DEBIAN_FRONTEND=noninteractive
  if ! dpkg -s rspamd dovecot-sieve dovecot-imapd dovecot-lmtpd postfix >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || { echo "filterbed: rspamd/dovecot-sieve are not installed and installing needs root" >&2; exit 3; }
    # shellcheck source=../../.ci/apt.sh
    source "$HERE/../../.ci/apt.sh"
    apt_get update -q
    echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
    apt_get install -yq --no-install-recommends rspamd dovecot-sieve dovecot-imapd dovecot-lmtpd postfix
  fi
  if [ -d /run/systemd/system ]; then systemctl disable --now rspamd.service dovecot.service dovecot.socket postfix.service 2>/dev/null || true; fi

  install -d -m 0755 "$RS_DIR" "$RS_DIR/local.d"
  install -d -o _rspamd -g _rspamd -m 0755 "$RS_RUN" "$RS_DB" "$RS_LOG"

  # ------------------------------------------------------------ rspamd
  # Our own top file: the packaged modules and scores ($CONFDIR = /etc/rspamd), our workers on our
  # loopback ports, our local.d; the packaged daemon's own ports (11332-11334) stay free.
  write_conf rspamd.conf <<CONFEOF
# generated by test/mail/filterbed.sh (Cadenza)
.include "\$CONFDIR/common.conf"
options {
    pidfile = "\$RUNDIR/rspamd.pid";
    .include "\$CONFDIR/options.inc"
    .include(try=true; priority=1,duplicate=merge) "\$LOCAL_CONFDIR/local.d/options.inc"
}
logging {
    type = "file";
    filename = "\$LOGDIR/rspamd.log";
    level = "warning";
}
worker "normal" {
    bind_socket = "127.0.0.1:$RSPAMD_PORT";
    .include "\$CONFDIR/worker-normal.inc"
    count = 1;
}
worker "rspamd_proxy" {
    bind_socket = "127.0.0.1:$RSPAMD_MILTER_PORT";
    # The packaged worker-proxy.inc, minus its upstream on the packaged port: this proxy scans
    # the message itself (no hop to the normal worker).
    milter = yes;
    timeout = 120s;
    count = 1;
    upstream "local" {
      default = yes;
      self_scan = yes;
    }
    discard_on_reject = false;
    quarantine_on_reject = false;
    spam_header = "X-Spam";
}
CONFEOF
  # No DNS but the test's: a resolver on loopback (refused at once when nobody listens there).
  write_conf local.d/options.inc <<CONFEOF
dns {
  nameserver = ["127.0.0.1:$RSPAMD_DNS_PORT"];
  timeout = 0.5s;
  retransmits = 1;
}
# The bed's mail comes from 127.0.0.1: judge it as if from outside (checks skip "local" senders).
local_addrs = [];
CONFEOF
  # Modules that would reach outside (DNS lists, fuzzy servers, remote maps) are off.
  local m
  for m in rbl surbl asn emails fuzzy_check multimap whitelist mid mime_types url_redirector rspamd_update dcc spamassassin external_services antivirus neural reputation greylist ratelimit replies history_redis bimi mx_check; do
    echo "enabled = false;" | write_conf "local.d/$m.conf"
  done
  # Phishing (link text naming one domain, the link going to another) is judged locally; its
  # feeds (PhishTank over DNS, OpenPhish) and remote exception maps are off.
  install -d -m 0755 "$RS_DIR/override.d"
  write_conf override.d/phishing.conf <<'CONFEOF'
symbol = "PHISHING";
openphish_enabled = false;
phishtank_enabled = false;
exceptions = {
  REDIRECTOR_FALSE = ["file://${CONFDIR}/maps.d/redirectors.inc"];
};
CONFEOF
  # A receiving MX scores mail from a client it does not know; these run for loopback too.
  for m in spf dkim dmarc arc; do
    printf 'check_local = true;\ncheck_authed = true;\n' | write_conf "local.d/$m.conf"
  done
  # Junk, never refused: the bed must deliver spam so the test can find it in Junk (reject and
  # greylist off; "add header" at 6 is what Sieve files by).
  write_conf local.d/actions.conf <<'CONFEOF'
reject = null;
greylist = null;
"rewrite subject" = null;
"add header" = 6;
CONFEOF
  # The verdict as headers: X-Spam-Status (Yes/No, score, threshold) for Sieve, X-Spamd-Result
  # (each rule and its weight) for people; headers of those names already in the message go.
  write_conf local.d/milter_headers.conf <<'CONFEOF'
use = ["x-spamd-result", "x-spam-status", "x-spam-level"];
skip_local = false;
skip_authenticated = false;
extended_spam_headers = false;
routines {
  x-spam-status { remove = 1; }
  x-spamd-result { remove = 1; }
}
CONFEOF

  # ------------------------------------------------------------ Dovecot (own instance)
  getent group vmail >/dev/null || groupadd --system vmail
  getent passwd vmail >/dev/null || useradd --system --gid vmail --home-dir "$MAIL_ROOT" \
    --no-create-home --shell /usr/sbin/nologin vmail
  local VMAIL_UID; VMAIL_UID=$(id -u vmail)
  install -d -o vmail -g vmail -m 0750 "$MAIL_ROOT"
  install -d -m 0755 "$DC_DIR" "$DC_STATE" "$SIEVE_DIR"
  touch "$DC_LOG" && chmod 0640 "$DC_LOG"
  local dc_changed=0 pf_changed=0 i
  for i in $(seq 1 "$FILTER_USERS"); do echo "junk$i@$FILTERED_DOMAIN:{PLAIN}pass"; done > "$DC_DIR/users.new"
  chown root:dovecot "$DC_DIR/users.new"; chmod 0640 "$DC_DIR/users.new"
  install_if_changed "$DC_DIR/users.new" "$DC_DIR/users" && dc_changed=1 || true

  cat > "$SIEVE_DIR/spam-to-junk.sieve.new" <<CONFEOF
# generated by test/mail/filterbed.sh (Cadenza): spam into Junk by rspamd's verdict
# (X-Spam-Status: Yes, i.e. a score at or above its "add header" threshold); the rest to INBOX.
require ["fileinto"];
if header :matches "X-Spam-Status" "Yes,*" {
  fileinto "Junk";
  stop;
}
CONFEOF
  install_if_changed "$SIEVE_DIR/spam-to-junk.sieve.new" "$SIEVE_DIR/spam-to-junk.sieve" && dc_changed=1 || true
  # Precompiled here: LMTP runs as vmail and cannot write the binary next to the script.
  if [ $dc_changed = 1 ] || [ ! -f "$SIEVE_DIR/spam-to-junk.svbin" ]; then sievec "$SIEVE_DIR/spam-to-junk.sieve"; fi

  cat > "$DC_CONF.new" <<CONFEOF
# generated by test/mail/filterbed.sh (Cadenza)
instance_name = dovecot-cadenza-filter
hostname = $MYHOSTNAME
base_dir = $DC_BASE
state_dir = $DC_STATE
protocols = imap lmtp
listen = 127.0.0.1
log_path = $DC_LOG
info_log_path = $DC_LOG
ssl = no
disable_plaintext_auth = no
shutdown_clients = no
auth_mechanisms = plain login
auth_username_format = %Lu
auth_failure_delay = 0
first_valid_uid = $VMAIL_UID
mail_uid = vmail
mail_gid = vmail
mail_location = maildir:~/Maildir
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u $DC_DIR/users
}
userdb {
  driver = static
  args = uid=vmail gid=vmail home=$MAIL_ROOT/%d/%n
}
namespace inbox {
  inbox = yes
  separator = /
  mailbox Sent {
    special_use = \\Sent
    auto = subscribe
  }
  mailbox Trash {
    special_use = \\Trash
    auto = subscribe
  }
  mailbox Junk {
    special_use = \\Junk
    auto = subscribe
  }
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $FILTER_IMAP_PORT
  }
  inet_listener imaps {
    port = 0
  }
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = $FILTER_LMTP_PORT
  }
}
service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
protocol imap {
  mail_max_userip_connections = 100
}
protocol lmtp {
  postmaster_address = postmaster@$FILTERED_DOMAIN
  mail_plugins = \$mail_plugins sieve
}
plugin {
  # No personal scripts: only the bed's own rule, before the (absent) user script.
  sieve = file:/nonexistent;active=/nonexistent/.dovecot.sieve
  sieve_before = $SIEVE_DIR/spam-to-junk.sieve
}
CONFEOF
  install_if_changed "$DC_CONF.new" "$DC_CONF" && dc_changed=1 || true
  doveconf -c "$DC_CONF" -n >/dev/null

  # ------------------------------------------------------------ Postfix (own instance)
  install -d -m 0755 "$PF_DIR"
  for i in $(seq 1 "$FILTER_USERS"); do echo "junk$i@$FILTERED_DOMAIN OK"; done > "$PF_DIR/vmailbox.new"
  install_if_changed "$PF_DIR/vmailbox.new" "$PF_DIR/vmailbox" && pf_changed=1 || true
  local ext_transport="error:5.7.1 filter bed never relays off this machine"
  cat > "$PF_DIR/main.cf.new" <<CONFEOF
# generated by test/mail/filterbed.sh (Cadenza) -- separate Postfix instance (postfix -c $PF_DIR ...)
compatibility_level = 3.6
queue_directory = $PF_QUEUE
data_directory = $PF_DATA
mail_owner = postfix
setgid_group = postdrop
maillog_file = $PF_LOG
myhostname = $MYHOSTNAME
mydomain = filtered.test
myorigin = \$myhostname
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtpd_banner = \$myhostname ESMTP filterbed
local_recipient_maps =
local_transport = error:5.1.1 local delivery disabled in the filter bed
alias_maps =
alias_database =
relayhost =
relay_domains =
default_transport = $ext_transport
relay_transport = $ext_transport
smtp_dns_support_level = disabled
lmtp_dns_support_level = disabled
smtpd_peername_lookup = no
biff = no
append_dot_mydomain = no
virtual_mailbox_domains = $FILTERED_DOMAIN
virtual_mailbox_maps = texthash:$PF_DIR/vmailbox
virtual_transport = lmtp:inet:127.0.0.1:$FILTER_LMTP_PORT
smtpd_reject_unlisted_recipient = yes
smtpd_relay_restrictions = reject_unauth_destination
smtpd_recipient_restrictions =
smtpd_tls_security_level = none
# The filter: rspamd's milter judges every message; if it cannot be reached, the client is told
# to try later (4xx) rather than the message landing unjudged.
smtpd_milters = inet:127.0.0.1:$RSPAMD_MILTER_PORT
non_smtpd_milters =
milter_protocol = 6
milter_default_action = tempfail
milter_connect_timeout = 5s
in_flow_delay = 0
smtpd_error_sleep_time = 0
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 10s
CONFEOF
  install_if_changed "$PF_DIR/main.cf.new" "$PF_DIR/main.cf" && pf_changed=1 || true
  cat > "$PF_DIR/master.cf.new" <<CONFEOF
# generated by test/mail/filterbed.sh (Cadenza); no chroot anywhere
127.0.0.1:$FILTERED_PORT  inet  n       -       n       -       -       smtpd
  -o syslog_name=postfix-cadenza-filter/mx
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
CONFEOF
  install_if_changed "$PF_DIR/master.cf.new" "$PF_DIR/master.cf" && pf_changed=1 || true

  if dovecot_running; then
    [ $dc_changed = 1 ] && doveadm -c "$DC_CONF" reload 9>&-
  else
    dovecot -c "$DC_CONF" </dev/null >/dev/null 2>&1 9>&-
  fi
  touch -d "@$(( $(date +%s) - 10 ))" "$PF_DIR/main.cf" "$PF_DIR/master.cf" "$PF_DIR/vmailbox"
  touch "$PF_LOG"
  install -d -m 0755 "$PF_QUEUE"
  if postfix_running; then
    [ $pf_changed = 1 ] && postfix -c "$PF_DIR" reload 2>/dev/null 9>&-
  else
    [ -d "$PF_QUEUE/active" ] && [ -d "$PF_DATA" ] && touch "$PF_QUEUE/quick-start"
    postfix -c "$PF_DIR" start </dev/null >/dev/null 2>&1 9>&- || { tail -n 20 "$PF_LOG" >&2; exit 1; }
  fi
  for i in $(seq 1 "$FILTER_USERS"); do
    doveadm -c "$DC_CONF" mailbox create -u "junk$i@$FILTERED_DOMAIN" -s INBOX 2>/dev/null || true
  done

  if rspamd_running && [ $RS_CHANGED = 0 ] && rspamd_answers; then
    echo "filter bed already up (unchanged)"
    return 0
  fi
  rspamadm --var=LOCAL_CONFDIR="$RS_DIR" --var=RUNDIR="$RS_RUN" --var=DBDIR="$RS_DB" --var=LOGDIR="$RS_LOG" configtest -q -c "$RS_DIR/rspamd.conf"
  if rspamd_running; then
    kill "$(cat $RS_RUN/rspamd.pid)"
    i=0; while rspamd_running && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
  fi
  rspamd -u _rspamd -g _rspamd -c "$RS_DIR/rspamd.conf" --var=LOCAL_CONFDIR="$RS_DIR" --var=RUNDIR="$RS_RUN" \
    --var=DBDIR="$RS_DB" --var=LOGDIR="$RS_LOG" </dev/null >/dev/null 2>&1 9>&-
  local i=0
  until rspamd_answers; do
    i=$((i+1)); [ $i -gt 100 ] && { echo "filterbed: rspamd does not answer on 127.0.0.1:$RSPAMD_PORT (see $RS_LOG/rspamd.log)" >&2; tail -n 20 "$RS_LOG/rspamd.log" >&2; exit 1; }
    sleep 0.2
  done
  echo "filter bed up: filtered SMTP 127.0.0.1:$FILTERED_PORT, rspamd 127.0.0.1:$RSPAMD_PORT (milter $RSPAMD_MILTER_PORT); log $RS_LOG/rspamd.log"
}

case "${1:-start}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  reset)
    shift
    users="$*"; [ -n "$users" ] || users=$(for i in $(seq 1 "$FILTER_USERS"); do printf 'junk%s@%s ' "$i" "$FILTERED_DOMAIN"; done)
    for u in $users; do doveadm -c "$DC_CONF" expunge -u "$u" mailbox '*' all 2>/dev/null || true; done
    echo "filterbed: emptied $users" ;;
  restart) cmd_stop; cmd_start ;;
  *) echo "usage: $0 [start|stop|status|restart|reset [USER...]]" >&2; exit 2 ;;
esac
