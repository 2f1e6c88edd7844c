#!/usr/bin/env bash
# Checks the systemd files in systemd/ the way systemd itself reads them:
#   1. `systemd-analyze verify` of meshperfd.service (syntax, known settings, dependencies,
#      ExecStart executable). It runs against a scratch root holding the host's own unit
#      directories, the unit, and a stub /usr/sbin/meshperfd, so the check needs neither an
#      installed meshperfd nor a running systemd. Where meshperfd is installed for real, the
#      unit is verified against the host too.
#   2. `systemd-analyze security --offline`: the exposure score must stay at or below
#      MESHPERF_MAX_EXPOSURE (default 2.5 of 10; 1.6 when written), so hardening that is
#      removed by accident fails here.
#   3. systemd-sysusers and systemd-tmpfiles apply meshperf.sysusers and meshperf.tmpfiles
#      in the scratch root: the user, the group and the directories come out as intended.
# Usage: systemd_verify.sh [SOURCE_DIR]   (default: the repository this script is in)
# Exit 0 pass, 1 fail, 77 skip (no systemd-analyze, systemd-sysusers or systemd-tmpfiles:
# probed up front, so a PASS always means all three parts ran).
set -euo pipefail

src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
unit=$src/systemd/meshperfd.service
max_exposure=${MESHPERF_MAX_EXPOSURE:-2.5}

for tool in systemd-analyze systemd-sysusers systemd-tmpfiles; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "SKIP: $tool not found (apt-get install systemd): part of this check cannot run"
    exit 77
  fi
done
[ -f "$unit" ] || { echo "FAIL: $unit not found"; exit 1; }

root=$(mktemp -d "${TMPDIR:-/tmp}/meshperf-systemd-XXXXXX")
trap 'rm -rf "$root"' EXIT
fail=0
failed() { echo "FAIL: $*"; fail=1; }

# The host's units (sysinit.target, network-online.target, ...) for dependency checks.
mkdir -p "$root/usr/lib/systemd/system" "$root/etc/systemd/system" "$root/usr/sbin" "$root/etc"
for d in /lib/systemd/system /usr/lib/systemd/system; do
  [ -d "$d" ] && cp -a "$d/." "$root/usr/lib/systemd/system/"
done
cp "$unit" "$root/etc/systemd/system/meshperfd.service"
# verify only checks that ExecStart names an executable file; a stub is enough.
printf '#!/bin/sh\nexit 0\n' >"$root/usr/sbin/meshperfd"
chmod 755 "$root/usr/sbin/meshperfd"

echo "== systemd-analyze verify (scratch root, stub meshperfd)"
if out=$(systemd-analyze verify --man=no --root="$root" meshperfd.service 2>&1) && [ -z "$out" ]; then
  echo "ok"
else
  printf '%s\n' "$out"
  failed "systemd-analyze verify reported problems in meshperfd.service"
fi

if [ -x /usr/sbin/meshperfd ]; then
  echo "== systemd-analyze verify (host, installed meshperfd)"
  man_check=no
  man -w meshperfd >/dev/null 2>&1 && man_check=yes
  if out=$(systemd-analyze verify --man=$man_check "$unit" 2>&1) && [ -z "$out" ]; then
    echo "ok"
  else
    printf '%s\n' "$out"
    failed "systemd-analyze verify on the host reported problems"
  fi
fi

echo "== systemd-analyze security (exposure must be <= $max_exposure)"
sec=$(systemd-analyze security --offline=yes --root="$root" meshperfd.service 2>&1 || true)
score=$(printf '%s\n' "$sec" | sed -n 's/.*Overall exposure level for meshperfd.service: \([0-9.]*\).*/\1/p' | tail -n1)
if [ -z "$score" ]; then
  printf '%s\n' "$sec" | tail -n 20
  failed "no exposure level in the output of systemd-analyze security"
elif awk -v s="$score" -v m="$max_exposure" 'BEGIN { exit !(s <= m) }'; then
  echo "ok: exposure $score"
else
  printf '%s\n' "$sec" | grep '✗' || true
  failed "exposure level $score is above $max_exposure: hardening was removed from meshperfd.service"
fi

echo "== systemd-sysusers and systemd-tmpfiles (scratch root)"
{   # both probed at the top: this part always runs
  mkdir -p "$root/usr/lib/sysusers.d" "$root/usr/lib/tmpfiles.d"
  cp "$src/systemd/meshperf.sysusers" "$root/usr/lib/sysusers.d/meshperf.conf"
  cp "$src/systemd/meshperf.tmpfiles" "$root/usr/lib/tmpfiles.d/meshperf.conf"
  if systemd-sysusers --root="$root" meshperf.conf >/dev/null 2>&1; then
    pw=$(grep '^meshperf:' "$root/etc/passwd" || true)
    case $pw in
      meshperf:x:*:*:*:/var/lib/meshperf:/usr/sbin/nologin) echo "ok: $pw" ;;
      *) failed "systemd-sysusers did not create the meshperf user as expected: '$pw'" ;;
    esac
    grep -q '^meshperf:' "$root/etc/group" || failed "systemd-sysusers did not create the meshperf group"
  else
    failed "systemd-sysusers refused meshperf.sysusers"
  fi
  if systemd-tmpfiles --root="$root" --create meshperf.conf 2>&1; then
    uid=$(sed -n 's/^meshperf:x:\([0-9]*\):.*/\1/p' "$root/etc/passwd")
    got=$(stat -c '%a %u' "$root/var/lib/meshperf" 2>/dev/null || echo missing)
    [ "$got" = "750 $uid" ] || failed "/var/lib/meshperf is '$got', expected '750 $uid'"
    got=$(stat -c '%a %u' "$root/etc/meshperf" 2>/dev/null || echo missing)
    [ "$got" = "755 0" ] || failed "/etc/meshperf is '$got', expected '755 0'"
    [ $fail = 0 ] && echo "ok: /etc/meshperf and /var/lib/meshperf"
  else
    failed "systemd-tmpfiles refused meshperf.tmpfiles"
  fi
}

[ $fail = 0 ] && echo "PASS: systemd files verified"
exit $fail
