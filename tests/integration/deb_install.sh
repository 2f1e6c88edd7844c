#!/usr/bin/env bash
# Builds the Debian package from a build directory, installs it with dpkg on this machine,
# checks what it installed, then removes and purges it.
#   - `cpack -G DEB` with the build directory's CPackConfig.cmake (build first: the package
#     takes the binaries and man pages as built);
#   - `dpkg -i`; /usr/bin/meshperf --version and /usr/sbin/meshperfd --version print the
#     package version; the unit, sysusers and tmpfiles entries, the conffile and both man
#     pages are in place; the postinst created the meshperf user and /var/lib/meshperf;
#   - `dpkg -r` removes the binaries and keeps the conffile; `dpkg --purge` removes the rest;
#     the meshperf user is deleted again if this test's install created it.
# Usage: deb_install.sh BUILD_DIR
# Exit 0 pass, 1 fail, 77 skip (not root, no dpkg/cpack, or meshperf already installed here:
# this test never replaces a real installation).
set -euo pipefail

build=${1:?usage: deb_install.sh BUILD_DIR}
build=$(cd "$build" && pwd)

if [ "$(id -u)" != 0 ]; then
  echo "SKIP: installing a package needs root"
  exit 77
fi
for tool in dpkg dpkg-deb dpkg-query cpack; do
  command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool not found"; exit 77; }
done
if dpkg-query -W -f='${Status}' meshperf 2>/dev/null | grep -q 'install ok'; then
  echo "SKIP: a meshperf package is already installed on this machine; not replacing it"
  exit 77
fi
[ -f "$build/CPackConfig.cmake" ] || {
  echo "FAIL: $build/CPackConfig.cmake not found (include(cmake/packaging.cmake) in CMakeLists.txt, then configure)"
  exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/meshperf-deb-XXXXXX")
installed=0
had_user=0
getent passwd meshperf >/dev/null 2>&1 && had_user=1
cleanup() {
  if [ $installed = 1 ]; then dpkg_locked "$work/cleanup.log" --purge meshperf || true; fi
  # Debian keeps system users after a purge; this test leaves the machine as it found it.
  if [ $had_user = 0 ] && getent passwd meshperf >/dev/null 2>&1; then
    userdel meshperf >/dev/null 2>&1 || true
    getent group meshperf >/dev/null 2>&1 && groupdel meshperf >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
fail=0
failed() { echo "FAIL: $*"; fail=1; }
# dpkg with its output in LOG; waits (up to 5 minutes) while apt or another dpkg holds the lock.
dpkg_locked() {
  local log=$1; shift
  local tries=0
  until dpkg "$@" >"$log" 2>&1; do
    grep -q 'lock' "$log" || return 1
    tries=$((tries + 1))
    [ $tries -le 150 ] || return 1
    [ $tries = 1 ] && echo "   (dpkg database locked by another process; waiting)"
    sleep 2
  done
}
check() { if eval "$1"; then echo "ok: $2"; else failed "$2"; fi; }

version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\([^"]*\)")$/\1/p' "$build/CPackConfig.cmake")
[ -n "$version" ] || { echo "FAIL: no CPACK_PACKAGE_VERSION in $build/CPackConfig.cmake"; exit 1; }

echo "== cpack -G DEB ($build, version $version)"
if ! (cd "$build" && cpack -G DEB -B "$work" >"$work/cpack.log" 2>&1); then
  cat "$work/cpack.log"
  echo "FAIL: cpack -G DEB failed"
  exit 1
fi
deb=$(ls "$work"/meshperf_*.deb 2>/dev/null | grep -v dbgsym | head -n1 || true)
[ -n "$deb" ] || { cat "$work/cpack.log"; echo "FAIL: cpack made no meshperf_*.deb"; exit 1; }
echo "ok: $(basename "$deb")"
dpkg-deb -f "$deb" Package Version Depends Recommends | sed 's/^/    /'

echo "== dpkg -i"
if ! dpkg_locked "$work/dpkg.log" -i "$deb"; then
  installed=1
  cat "$work/dpkg.log"
  echo "FAIL: dpkg -i failed (missing dependencies? the Depends line is above)"
  exit 1
fi
installed=1
echo "ok: installed"

check '[ -x /usr/bin/meshperf ] && /usr/bin/meshperf --version 2>&1 | grep -qF "$version"' \
  "/usr/bin/meshperf --version prints $version ($(/usr/bin/meshperf --version 2>&1 | head -n1 || true))"
check '[ -x /usr/sbin/meshperfd ] && /usr/sbin/meshperfd --version 2>&1 | grep -qF "$version"' \
  "/usr/sbin/meshperfd --version prints $version ($(/usr/sbin/meshperfd --version 2>&1 | head -n1 || true))"

unit=""
for d in /usr/lib/systemd/system /lib/systemd/system; do
  [ -f "$d/meshperfd.service" ] && unit="$d/meshperfd.service" && break
done
check '[ -n "$unit" ] && grep -q "^Type=notify" "$unit"' "unit file installed (${unit:-missing})"
check '[ -f /usr/lib/sysusers.d/meshperf.conf ] && [ -f /usr/lib/tmpfiles.d/meshperf.conf ]' \
  "sysusers.d and tmpfiles.d entries installed"
check 'dpkg-query -W -f="\${Conffiles}" meshperf | grep -q "/etc/meshperf/meshperfd.toml"' \
  "/etc/meshperf/meshperfd.toml is a conffile"
check '[ -f /usr/share/doc/meshperf/examples/meshperfd.toml.example ]' "example config installed"
for page in man1/meshperf.1.gz man8/meshperfd.8.gz; do
  name=$(basename "$page" .gz)
  check "[ -f /usr/share/man/$page ] && zcat /usr/share/man/$page | grep -qi '^\\.TH \"\\?${name%.*}'" \
    "man page /usr/share/man/$page (needs help2man at build time: scripts/setup installs it)"
done
check 'getent passwd meshperf >/dev/null' "postinst created the meshperf user"
check '[ "$(stat -c "%a %U" /var/lib/meshperf 2>/dev/null)" = "750 meshperf" ]' \
  "postinst created /var/lib/meshperf (0750, meshperf)"

echo "== dpkg -r"
if dpkg_locked "$work/remove.log" -r meshperf; then
  check '[ ! -e /usr/sbin/meshperfd ] && [ ! -e /usr/bin/meshperf ]' "binaries removed"
  check '[ ! -e "$unit" ]' "unit file removed"
  check '[ -f /etc/meshperf/meshperfd.toml ]' "conffile kept until purge"
else
  cat "$work/remove.log"
  failed "dpkg -r failed"
fi

echo "== dpkg --purge"
if dpkg_locked "$work/purge.log" --purge meshperf; then
  installed=0
  check '[ ! -e /etc/meshperf/meshperfd.toml ] && [ ! -e /var/lib/meshperf ]' "conffile and state removed"
else
  cat "$work/purge.log"
  failed "dpkg --purge failed"
fi

[ $fail = 0 ] && echo "PASS: the package installs, runs, and removes cleanly"
exit $fail
