#!/bin/bash
# Cadenza's mail test bed: Postfix (SMTP submission + injection) -> LMTP -> Dovecot (IMAP), reachable
# only on 127.0.0.1, never relaying off the machine. Debian 12, run as root. Adapted from the shared
# recipe (shared/recipes/mail-testbed.md, which explains every setting); what is ours is marked "Cadenza:".
#
#   mailbed.sh [start]       install (if missing), configure, start; a no-op (~50 ms) when it already
#                            runs with this very configuration, a reload when the configuration changed
#   mailbed.sh status        exit 0 only if both daemons run
#   mailbed.sh reset [USER…] expunge every mailbox of the given users (default: all test users), and
#                            with no USER also purge the Postfix queue
#   mailbed.sh stop | restart
#   mailbed.sh doveadm ARGS… doveadm on this instance (tests: mailbox update, kick; name the user)
#
# Endpoints (127.0.0.1 only):
#   SMTP submission ${SUBMISSION_PORT:-10587}  AUTH PLAIN/LOGIN required (Dovecot SASL), STARTTLS offered (self-signed)
#   SMTP injection  ${INJECT_PORT:-10025}      no AUTH, no TLS; accepts only test-domain recipients
#   IMAP            ${IMAP_PORT:-10143}        plaintext, AUTH=PLAIN/LOGIN; INBOX, Sent, Drafts, Trash, Junk (SPECIAL-USE)
#   LMTP            ${LMTP_PORT:-10024}        Dovecot delivery (Postfix virtual_transport)
# Users (user:password), MAILBED_USERS overrides:
#   alice@example.test:alicepass bob@example.test:bobpass p1..p5@prospects.test:pass
#   (and, below, sync1..100@inbox.test, load0001..2000@load.test, idle00001..10000@idle.test,
#   noimap@inbox.test: all "pass")
# Cadenza: 10,000+ IDLE connections at once (bench/imap-idle.ts): see "IDLE load" in the Dovecot
# configuration below; MAILBED_IMAP_HIBERNATE=3s turns Dovecot's hibernation of idle sessions on.
# Cadenza: Sent copies. Mail SUBMITTED (port 10587) by a user is also filed into that user's Sent
# folder by the server, as Gmail, Outlook and most hosted providers do, except for the users listed
# in MAILBED_CLIENT_SENT (default bob@example.test and sync81..sync100@inbox.test): for those, like a
# plain ISP mailbox, the client must APPEND its own copy (Cadenza's serverSavesSent = false).
# Domains: every user domain (unknown recipient -> 550 5.1.1 at RCPT) + ${LATE_BOUNCE_DOMAIN:-bounce.test}
# (any recipient accepted, then LMTP 550 5.1.1 -> DSN to the sender). Other domains: 554 5.7.1 at RCPT.
set -eu

IMAP_PORT=${IMAP_PORT:-10143}
LMTP_PORT=${LMTP_PORT:-10024}
SUBMISSION_PORT=${SUBMISSION_PORT:-10587}
INJECT_PORT=${INJECT_PORT:-10025}
LATE_BOUNCE_DOMAIN=${LATE_BOUNCE_DOMAIN:-bounce.test}
MYHOSTNAME=${MYHOSTNAME:-mx.mailbed.test}
MAILBED_USERS=${MAILBED_USERS:-"alice@example.test:alicepass bob@example.test:bobpass p1@prospects.test:pass p2@prospects.test:pass p3@prospects.test:pass p4@prospects.test:pass p5@prospects.test:pass"}
MAILBED_CLIENT_SENT=${MAILBED_CLIENT_SENT:-"bob@example.test $(for i in $(seq 81 100); do printf 'sync%s@inbox.test ' "$i"; done)"}
# Mailboxes for the sync tests: sync1..sync100@inbox.test (password "pass"; 81..100 file no Sent copy
# of their own, see above); a test file takes its own numbers so files never read each other's mail. And MAILBED_LOAD_USERS (default 2000)
# mailboxes load0001..@load.test (password "pass") for the IDLE load benchmark; they are left out of
# a reset with no argument (2,000 doveadm calls). MAILBED_IDLE_USERS (default 10000) mailboxes
# idle00001..@idle.test (password "pass") are the IDLE benchmark's own (bench/imap-idle.ts), so
# that its 10,000 watches and its mail never touch the mailboxes other benchmarks read; also left
# out of a reset with no argument. Neither set is created on disk here: Dovecot creates a maildir
# at its first login.
for i in $(seq 1 100); do MAILBED_USERS="$MAILBED_USERS sync$i@inbox.test:pass"; done
MAILBED_LOAD_USERS=${MAILBED_LOAD_USERS:-2000}
MAILBED_IDLE_USERS=${MAILBED_IDLE_USERS:-10000}
MAILBED_IMAP_HIBERNATE=${MAILBED_IMAP_HIBERNATE:-0}
NOIMAP_USER=noimap@inbox.test
NOIMAP_REASON=IMAP-access-is-disabled-for-this-account

DC_DIR=/etc/dovecot/cadenza
DC_CONF=$DC_DIR/dovecot.conf
DC_BASE=/run/dovecot-cadenza
DC_STATE=/var/lib/dovecot-cadenza
DC_LOG=/var/log/dovecot-cadenza.log
MAIL_ROOT=/var/mail/cadenza
PF_DIR=/etc/postfix-cadenza
PF_QUEUE=/var/spool/postfix-cadenza
PF_DATA=/var/lib/postfix-cadenza
PF_LOG=/var/log/postfix-cadenza.log
SASL_SOCK=$DC_BASE/auth-postfix
LOCK=/run/lock/cadenza-mailbed.lock

# Cadenza: several test runs (and several engineers) may call this at once; one at a time.
mkdir -p /run/lock
exec 9>"$LOCK"
flock -w 120 9 || { echo "mailbed: another mailbed.sh holds $LOCK for more than 120 s" >&2; exit 1; }

# Postfix will not read a table or main.cf whose mtime is < 2 s old ("cool down", 300 ms steps):
# files we write are backdated (recipe, "Gotchas").
backdate() { touch -d "@$(( $(date +%s) - 10 ))" "$@"; }

dovecot_running() { [ -f $DC_BASE/master.pid ] && kill -0 "$(cat $DC_BASE/master.pid)" 2>/dev/null; }
postfix_running() { [ -f $PF_DIR/main.cf ] && postfix -c $PF_DIR status >/dev/null 2>&1; }
packages_installed() { dpkg -s dovecot-imapd dovecot-lmtpd postfix openssl >/dev/null 2>&1; }

# wait_banner PORT REGEX: wait (max ~10 s) until a TCP server on 127.0.0.1:PORT greets with REGEX
wait_banner() {
  local i=0
  until timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1; head -n1 <&3" 2>/dev/null | grep -q "$2"; do
    i=$((i+1)); [ $i -gt 50 ] && { echo "mailbed: nothing answering on 127.0.0.1:$1 (see $DC_LOG / $PF_LOG)" >&2; return 1; }
    sleep 0.2
  done
}

# install_if_changed STAGED TARGET: moves STAGED over TARGET only when the content differs, so that
# an unchanged file keeps its old mtime; returns 0 when it changed something.
CHANGED=0
install_if_changed() {
  if [ -f "$2" ] && cmp -s "$1" "$2"; then rm -f "$1"; return 1; fi
  mv -f "$1" "$2"; CHANGED=1; return 0
}

cmd_stop() {
  if postfix_running; then postfix -c $PF_DIR stop 2>/dev/null || true; fi
  if dovecot_running; then doveadm -c $DC_CONF stop 2>/dev/null || kill "$(cat $DC_BASE/master.pid)"; fi
  local i=0
  while { dovecot_running || postfix_running; } && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
  echo "mail test bed stopped"
}

cmd_status() {
  local rc=0
  if dovecot_running; then echo "dovecot: running (pid $(cat $DC_BASE/master.pid))"; else echo "dovecot: stopped"; rc=1; fi
  if postfix_running; then echo "postfix: running"; else echo "postfix: stopped"; rc=1; fi
  return $rc
}

cmd_reset() {
  dovecot_running || { echo "mailbed: dovecot not running" >&2; return 1; }
  local users="$*" ent
  if [ -z "$users" ]; then for ent in $MAILBED_USERS; do users="$users ${ent%%:*}"; done; fi
  for u in $users; do
    doveadm -c $DC_CONF expunge -u "$u" mailbox '*' all 2>/dev/null || true
  done
  if [ -z "$*" ] && postfix_running; then postsuper -c $PF_DIR -d ALL 2>/dev/null || true; fi
  echo "mailbed: emptied$users"
}

cmd_start() {
  export DEBIAN_FRONTEND=noninteractive
  if ! packages_installed; then
    [ "$(id -u)" = 0 ] || { echo "mailbed: postfix/dovecot are not installed and installing needs root" >&2; exit 3; }
    # "No configuration": the package must not create /etc/postfix/main.cf (we run our own instance)
    echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
    # shellcheck source=../../.ci/apt.sh
    source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/apt.sh"
    apt_get update -q
    apt_get install -yq --no-install-recommends dovecot-imapd dovecot-lmtpd postfix openssl
  fi
  if [ -d /run/systemd/system ]; then
    systemctl disable --now dovecot.service dovecot.socket postfix.service 2>/dev/null || true
  fi

  # ---------------------------------------------------------------- Dovecot
  # Cadenza: each IDLE session watches its mailbox with an inotify instance owned by the vmail
  # user, and a hibernated session keeps it; past the kernel's default of 128 instances per user,
  # Dovecot disables inotify for the next sessions and they poll every mailbox_idle_check_interval
  # (30 s): the IDLE benchmark's 10,000 sessions (and the tests' beside them) need more.
  local inotify=/proc/sys/fs/inotify/max_user_instances
  if [ -r $inotify ] && [ "$(cat $inotify)" -lt 16384 ]; then
    { echo 16384 > $inotify; } 2>/dev/null || echo "mailbed: cannot raise $inotify (IDLE sessions past $(cat $inotify) will poll every 30 s)" >&2
  fi
  getent group vmail >/dev/null || groupadd --system vmail
  getent passwd vmail >/dev/null || useradd --system --gid vmail --home-dir "$MAIL_ROOT" \
    --no-create-home --shell /usr/sbin/nologin vmail
  local VMAIL_UID; VMAIL_UID=$(id -u vmail)
  install -d -o vmail -g vmail -m 0750 "$MAIL_ROOT"
  install -d -m 0755 "$DC_DIR" "$DC_STATE"
  touch "$DC_LOG" && chmod 0640 "$DC_LOG"

  local ent u p d domains="" dc_changed=0 pf_changed=0
  : > "$DC_DIR/users.new"
  for ent in $MAILBED_USERS; do
    u=${ent%%:*}; p=${ent#*:}; d=${u#*@}
    echo "$u:{PLAIN}$p" >> "$DC_DIR/users.new"
    case " $domains " in *" $d "*) ;; *) domains="$domains $d";; esac
  done
  if [ "$MAILBED_LOAD_USERS" -gt 0 ]; then
    for i in $(seq -f '%04g' 1 "$MAILBED_LOAD_USERS"); do echo "load$i@load.test:{PLAIN}pass"; done >> "$DC_DIR/users.new"
    domains="$domains load.test"
  fi
  if [ "$MAILBED_IDLE_USERS" -gt 0 ]; then
    for i in $(seq -f '%05g' 1 "$MAILBED_IDLE_USERS"); do echo "idle$i@idle.test:{PLAIN}pass"; done >> "$DC_DIR/users.new"
    domains="$domains idle.test"
  fi
  # Cadenza: $NOIMAP_USER (password "pass") signs in with the right password and is then refused,
  # like a Gmail account whose IMAP access is switched off (the connection test's "IMAP
  # disabled"): Dovecot's nologin passdb field answers NO [CONTACTADMIN] <reason> (one word:
  # passwd-file splits extra fields at spaces). Not in Postfix's table: no mail goes to it.
  echo "$NOIMAP_USER:{PLAIN}pass::::::nologin=y reason=$NOIMAP_REASON" >> "$DC_DIR/users.new"
  chown root:dovecot "$DC_DIR/users.new"; chmod 0640 "$DC_DIR/users.new"
  install_if_changed "$DC_DIR/users.new" "$DC_DIR/users" && dc_changed=1 || true
  domains=${domains# }

  cat > "$DC_CONF.new" <<CONFEOF
# generated by test/mail/mailbed.sh (Cadenza)
instance_name = dovecot-cadenza
hostname = $MYHOSTNAME
base_dir = $DC_BASE
state_dir = $DC_STATE
protocols = imap lmtp
listen = 127.0.0.1
log_path = $DC_LOG
info_log_path = $DC_LOG

ssl = no
disable_plaintext_auth = no
# Cadenza: a reload (any checkout's "mailbed.sh start" with a different configuration) keeps the
# IMAP sessions it finds: with the default (yes) the master kills the old configuration's
# processes a minute after a reload, every IDLE connection of a running benchmark or test with them.
shutdown_clients = no
auth_mechanisms = plain login
auth_username_format = %Lu
# Cadenza: no 2 s penalty after a wrong password (the wrong-password test would wait for it)
auth_failure_delay = 0
recipient_delimiter = +
# Cadenza: user+Sent@domain is filed into the user's Sent folder (Postfix sender_bcc_maps sends that
# copy for submitted mail). Any other +detail without a folder of that name still goes to INBOX.
lmtp_save_to_detail_mailbox = yes

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
  mailbox Drafts {
    special_use = \Drafts
    auto = subscribe
  }
  mailbox Sent {
    special_use = \Sent
    auto = subscribe
  }
  mailbox Trash {
    special_use = \Trash
    auto = subscribe
  }
  mailbox Junk {
    special_use = \Junk
    auto = subscribe
  }
}

# Cadenza: login "performance mode" (the IDLE load benchmark): a few long-lived imap-login
# processes each take many connections, instead of one process per connection (service_count 1)
# capped by default_process_limit (100).
service imap-login {
  service_count = 0
  client_limit = 4096
  process_min_avail = 2
  inet_listener imap {
    address = 127.0.0.1
    port = $IMAP_PORT
  }
  inet_listener imaps {
    port = 0
  }
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = $LMTP_PORT
  }
}
service auth {
  unix_listener auth-userdb {
    mode = 0666
  }
  unix_listener ${SASL_SOCK#$DC_BASE/} {
    mode = 0660
    user = postfix
    group = postfix
  }
}
# Cadenza: no auth penalty. Dovecot delays every login from an IP after a failed one (2, 4, 8,
# 15 s; anvil), and every test connects from 127.0.0.1: one wrong-password test would slow the
# SMTP AUTH and IMAP logins of all the tests after it past their timeouts.
service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
protocol imap {
  imap_idle_notify_interval = 2 mins
  # Cadenza: tests open several connections per user at once (sender, sync, test reader)
  mail_max_userip_connections = 100
}

# Cadenza: IDLE load. The benchmark (bench/imap-idle.ts) holds up to 10,000 connections from
# 127.0.0.1, one imap process each (client_limit 1, Dovecot's advice for mail processes): 1.0 GiB
# of memory (PSS) for 2,000, measured, about 5 GiB for 10,000. process_limit leaves room for the
# pulls and the tests beside them.
# Hibernation (MAILBED_IMAP_HIBERNATE=3s) hands a connection that has sat in IDLE that long to
# imap-hibernate, which keeps only its socket and state (18 MiB for all 2,000) and wakes an imap
# process when mail arrives. It is off by default because Dovecot 2.3.19 then lost 4 of 600 IDLE
# notifications in the benchmark (a message saved while its session was being hibernated again,
# about 3 s after the previous wake-up, never caused an EXISTS; only the client's next NOOP or poll
# finds it), and the reply tests measure latency. Set it per run only while nobody else uses the
# bed: any "mailbed.sh start" without it turns it off again. The handover sockets are set up
# either way: imap (running as vmail, with the internal group) writes to imap-hibernate
# (group-writable for that group), and imap-hibernate (running as the internal user) writes back
# to imap-master, which must therefore belong to it.
imap_hibernate_timeout = $MAILBED_IMAP_HIBERNATE
service imap {
  process_limit = 12288
  unix_listener imap-master {
    user = \$default_internal_user
  }
  extra_groups = \$default_internal_group
}
service imap-hibernate {
  client_limit = 16384
  unix_listener imap-hibernate {
    mode = 0660
    group = \$default_internal_group
  }
}
# Every imap process is a client of anvil (the per-user connection count) and stats; their
# default cap (1,000) would refuse the 1,001st connection. Each such connection is a descriptor
# in anvil and stats: the master's ulimit -n (raised below when the hard limit allows) must be
# above this.
default_client_limit = 16384
protocol lmtp {
  postmaster_address = postmaster@example.test
}
CONFEOF
  install_if_changed "$DC_CONF.new" "$DC_CONF" && dc_changed=1 || true
  doveconf -c "$DC_CONF" -n >/dev/null   # syntax check

  # ---------------------------------------------------------------- Postfix
  install -d -m 0755 "$PF_DIR" "$PF_DIR/tls"
  if [ ! -s "$PF_DIR/tls/key.pem" ] || [ ! -s "$PF_DIR/tls/cert.pem" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
      -subj "/CN=$MYHOSTNAME" -addext "subjectAltName=DNS:$MYHOSTNAME,IP:127.0.0.1" \
      -keyout "$PF_DIR/tls/key.pem" -out "$PF_DIR/tls/cert.pem" 2>/dev/null
    chmod 0600 "$PF_DIR/tls/key.pem"
    pf_changed=1
  fi

  {
    for ent in $MAILBED_USERS; do echo "${ent%%:*} OK"; done
    [ "$MAILBED_LOAD_USERS" -gt 0 ] && for i in $(seq -f '%04g' 1 "$MAILBED_LOAD_USERS"); do echo "load$i@load.test OK"; done
    [ "$MAILBED_IDLE_USERS" -gt 0 ] && for i in $(seq -f '%05g' 1 "$MAILBED_IDLE_USERS"); do echo "idle$i@idle.test OK"; done
    echo "@$LATE_BOUNCE_DOMAIN OK"
  } > "$PF_DIR/vmailbox.new"
  install_if_changed "$PF_DIR/vmailbox.new" "$PF_DIR/vmailbox" && pf_changed=1 || true

  # Cadenza: the server-side Sent copy. cleanup(8) adds user+Sent@domain as a BCC recipient of mail
  # whose envelope sender is the user; only the submission service uses this cleanup, so DSNs and
  # injected mail get no copy.
  {
    echo "# generated by mailbed.sh: envelope sender -> the address whose LMTP delivery lands in Sent"
    for ent in $MAILBED_USERS; do
      u=${ent%%:*}
      case " $MAILBED_CLIENT_SENT " in *" $u "*) continue;; esac
      echo "$u ${u%%@*}+Sent@${u#*@}"
    done
  } > "$PF_DIR/sender_sent_copy.new"
  install_if_changed "$PF_DIR/sender_sent_copy.new" "$PF_DIR/sender_sent_copy" && pf_changed=1 || true

  local vdomains="$domains $LATE_BOUNCE_DOMAIN"
  local ext_transport="error:5.7.1 mail test bed never relays off this machine"

  cat > "$PF_DIR/main.cf.new" <<CONFEOF
# generated by test/mail/mailbed.sh (Cadenza) -- separate Postfix instance (postfix -c $PF_DIR ...)
compatibility_level = 3.6
queue_directory = $PF_QUEUE
data_directory = $PF_DATA
mail_owner = postfix
setgid_group = postdrop
maillog_file = $PF_LOG

myhostname = $MYHOSTNAME
mydomain = mailbed.test
myorigin = \$myhostname
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtpd_banner = \$myhostname ESMTP mailbed

local_recipient_maps =
local_transport = error:5.1.1 local delivery disabled in the mail test bed
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

virtual_mailbox_domains = $vdomains
virtual_mailbox_maps = texthash:$PF_DIR/vmailbox
virtual_transport = lmtp:inet:127.0.0.1:$LMTP_PORT
recipient_delimiter = +
smtpd_reject_unlisted_recipient = yes

smtpd_relay_restrictions = reject_unauth_destination
smtpd_recipient_restrictions =

smtpd_sasl_type = dovecot
smtpd_sasl_path = $SASL_SOCK
smtpd_sasl_auth_enable = no
smtpd_sasl_security_options = noanonymous
smtpd_sasl_authenticated_header = yes

smtpd_tls_cert_file = $PF_DIR/tls/cert.pem
smtpd_tls_key_file = $PF_DIR/tls/key.pem
smtpd_tls_security_level = none
smtpd_tls_auth_only = no
smtp_tls_security_level = none

in_flow_delay = 0
smtpd_error_sleep_time = 0
smtpd_soft_error_limit = 1000
smtpd_hard_error_limit = 1000
smtpd_junk_command_limit = 1000
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 10s
delay_warning_time = 0
CONFEOF
  install_if_changed "$PF_DIR/main.cf.new" "$PF_DIR/main.cf" && pf_changed=1 || true

  cat > "$PF_DIR/master.cf.new" <<CONFEOF
# generated by test/mail/mailbed.sh (Cadenza); no chroot anywhere
# service            type  private unpriv  chroot  wakeup  maxproc command + args
127.0.0.1:$INJECT_PORT  inet  n       -       n       -       -       smtpd
  -o syslog_name=postfix-cadenza/inject
127.0.0.1:$SUBMISSION_PORT  inet  n       -       n       -       -       smtpd
  -o syslog_name=postfix-cadenza/submission
  -o smtpd_sasl_auth_enable=yes
  -o smtpd_tls_security_level=may
  -o smtpd_recipient_restrictions=permit_sasl_authenticated,reject
  -o cleanup_service_name=cleanup-sent
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
cleanup-sent unix n     -       n       -       0       cleanup
  -o sender_bcc_maps=texthash:$PF_DIR/sender_sent_copy
qmgr      unix  n       -       n       300     1       qmgr
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
proxywrite unix -       -       n       -       1       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
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

  # Fast path: already running with exactly this configuration.
  if [ $dc_changed = 0 ] && [ $pf_changed = 0 ] && dovecot_running && postfix_running; then
    echo "mail test bed already up (unchanged)"
    return 0
  fi

  if dovecot_running; then
    [ $dc_changed = 1 ] && doveadm -c "$DC_CONF" reload 9>&-
  else
    # Cadenza: one descriptor per IDLE connection in imap-hibernate and imap-login, plus the
    # master's own (the IDLE load benchmark); a reload keeps the limit the master started with.
    ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    # 9>&-: the daemons must not inherit the lock's descriptor, or they would hold the lock forever
    dovecot -c "$DC_CONF" 9>&-
  fi

  backdate "$PF_DIR/main.cf" "$PF_DIR/master.cf" "$PF_DIR/vmailbox" "$PF_DIR/sender_sent_copy"
  touch "$PF_LOG"
  install -d -m 0755 "$PF_QUEUE"
  local warn; warn=$( { postconf -c "$PF_DIR" -n >/dev/null; postconf -c "$PF_DIR" -M >/dev/null; } 2>&1 )
  [ -z "$warn" ] || { echo "$warn" >&2; exit 1; }
  if postfix_running; then
    [ $pf_changed = 1 ] && postfix -c "$PF_DIR" reload 2>/dev/null 9>&-
  else
    [ -d "$PF_QUEUE/active" ] && [ -d "$PF_DATA" ] && touch "$PF_QUEUE/quick-start"
    postfix -c "$PF_DIR" start 2>/dev/null 9>&- || { tail -n 20 "$PF_LOG" >&2; exit 1; }
  fi

  wait_banner "$IMAP_PORT" '^\* OK'
  wait_banner "$LMTP_PORT" '^220'
  wait_banner "$SUBMISSION_PORT" '^220'
  wait_banner "$INJECT_PORT" '^220'

  # create the mailboxes (and the SPECIAL-USE folders) so every user exists on disk
  for ent in $MAILBED_USERS; do
    doveadm -c "$DC_CONF" mailbox create -u "${ent%%:*}" -s INBOX 2>/dev/null || true
  done

  echo "mail test bed up: submission 127.0.0.1:$SUBMISSION_PORT, injection 127.0.0.1:$INJECT_PORT, IMAP 127.0.0.1:$IMAP_PORT, LMTP 127.0.0.1:$LMTP_PORT; logs $PF_LOG $DC_LOG"
}

case "${1:-start}" in
  start) cmd_start ;;
  restart) cmd_stop; cmd_start ;;
  stop)   cmd_stop ;;
  status) cmd_status ;;
  reset)  shift; cmd_reset "$@" ;;
  # Cadenza: doveadm on the bed's instance, for tests that change a mailbox behind the client's
  # back (doveadm mailbox update --uid-validity, kick). Name the user (-u): the bed is shared.
  doveadm) shift; exec doveadm -c "$DC_CONF" "$@" ;;
  *) echo "usage: $0 [start|stop|status|reset [USER...]|restart|doveadm ARGS...]" >&2; exit 2 ;;
esac
