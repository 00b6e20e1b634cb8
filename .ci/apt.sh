# apt_get: apt-get that waits for the package locks instead of failing at once when another
# install runs on the machine (unattended-upgrades, a provisioning script, a second CI job).
# Sourced by .ci/run and test/mail/mailbed.sh.
#
# DPkg::Lock::Timeout makes apt-get wait for the dpkg locks (/var/lib/dpkg/lock-frontend, lock),
# but not for the others it takes: the lists lock of `update` (/var/lib/apt/lists/lock) and the
# archives lock of `install` fail at once. So a run refused for a lock is tried again every few
# seconds, up to the same deadline. APT_LOCK_TIMEOUT: seconds to wait in all (default 600).
apt_get() {
  local wait="${APT_LOCK_TIMEOUT:-600}"
  local deadline=$(( $(date +%s) + wait ))
  local out rc
  out="$(mktemp)"
  while :; do
    # The exit status through a file: the pipeline (for the live log) would report tee's, and a
    # plain failure would end a caller running under `set -e` before the lock is looked for.
    { apt-get -o DPkg::Lock::Timeout="$wait" "$@" 2>&1 && echo 0 >"$out.rc" || echo $? >"$out.rc"; } | tee "$out"
    rc="$(cat "$out.rc")"
    if [ "$rc" -ne 0 ] && grep -qE 'Could not get lock|Unable to lock|Unable to acquire the dpkg frontend lock' "$out" && [ "$(date +%s)" -lt "$deadline" ]; then
      echo "apt-get: another package install holds the lock; waiting (up to ${wait} s in all)" >&2
      sleep 3
      continue
    fi
    rm -f "$out" "$out.rc"
    return "$rc"
  done
}
