#!/usr/bin/env bash
# rdma-vm: real verbs on Soft-RoCE (rxe) in a qemu guest, built on the fly from Debian
# packages (../shared/rdma-vm.md has the background).
#
#   run-guest.sh --build BUILD_DIR --selftest PATH/rdma_selftest [--sizes "8 65536"] [--rounds 3]
#
# 1. fetches the kernel package (apt-get download, cached in BUILD_DIR/rdma-vm/cache) and
#    extracts it with dpkg -x (never installs it); depmod.
# 2. packs an initramfs: busybox, iproute2's ip and rdma, ibv_devinfo, perftest,
#    rdma_selftest (and build/daemon/meshperfd, build/client/meshperf when they exist), the
#    libraries ldd names, the rxe provider, the Soft-RoCE modules in load order.
# 3. boots it under TCG (KVM only where the CPU has vmx/svm and kvm_pvm is absent), runs
#    guest-tests.sh: rdma_selftest, perftest's ib_write_bw, ib_write_lat and ib_send_lat at
#    the same sizes, and meshperf against perftest alternating (ratios printed); with the
#    daemon and CLI built, RDMA sweeps between two daemons and collectives over three.
# 4. checks every figure perftest printed is positive and finite (perftest exits 0 with
#    "inf" or 0.00), the selftest's and the guest's exit codes.
#
# Exit: 0 pass, 1 fail, 77 skip (only when a probe up front finds that qemu cannot start a
# machine here, or a tool or the guest kernel is missing; the reason is printed).
set -euo pipefail

build=""
selftest=""
sizes="8 65536"
rounds=3
qemu_timeout=${RDMA_VM_QEMU_TIMEOUT:-540}
check_only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --selftest) selftest=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --check-log) check_only=$2; shift 2 ;;
    *) echo "run-guest.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$check_only" ] && { [ -z "$build" ] || [ -z "$selftest" ]; }; then
  echo "usage: run-guest.sh --build DIR --selftest PATH | --check-log SERIAL_LOG" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
[ -z "$build" ] || build=$(cd "$build" && pwd)

skip() { echo "rdma-vm: SKIP: $*"; exit 77; }
die() { echo "rdma-vm: FAIL: $*"; exit 1; }
log() { echo "rdma-vm: $*"; }

# --- check the figures (also: run-guest.sh --check-log SERIAL_LOG) ------------------------------
check_log() {  # SERIAL_LOG; sets status
  local serial=$1
  status=0
  guest_rc=$(sed -n 's/^RDMA-VM-EXIT=//p' "$serial" | tail -1)
  [ "$guest_rc" = 0 ] || { echo "rdma-vm: the guest's tests exited $guest_rc"; status=1; }
  grep -q '^SELFTEST-EXIT=0$' "$serial" || { echo "rdma-vm: rdma_selftest did not pass"; status=1; }

  # perftest: one data line per run; every figure finite, the rates and times positive.
  if ! awk -F' [|] ' '
    function finite(v) { return v ~ /^[0-9]+(\.[0-9]+)?$/ }
    /^PERFTEST-EXIT / { n = split($0, w, " "); runs++; next }
    /^PERFTEST / {
      tag = substr($1, 10)
      split(tag, t, " "); tool = t[1]; size = t[2]
      nf = split($2, f, /[ \t]+/); k = 0
      for (i = 1; i <= nf; i++) if (f[i] != "") g[++k] = f[i]
      if (k < 5 || g[1] !~ /^[0-9]+$/) next
      if (tool ~ /bw$/) {            # bytes iterations peak avg msgrate
        if (!(finite(g[4]) && g[4] > 0 && finite(g[5]) && g[5] > 0)) { print "rdma-vm: insane perftest figure: " $0; bad = 1 }
      } else {                        # bytes iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
        for (i = 3; i <= k; i++) if (!finite(g[i])) { print "rdma-vm: non-finite perftest figure: " $0; bad = 1 }
        for (i = 3; i <= 6; i++) if (!(g[i] > 0)) { print "rdma-vm: non-positive perftest figure: " $0; bad = 1 }
      }
      seen[tag]++
      next
    }
    END {
      for (tag in seen) if (seen[tag] != 1) { print "rdma-vm: " seen[tag] " data lines for " tag; bad = 1 }
      if (runs == 0 || length(seen) != runs) { print "rdma-vm: " runs " perftest runs, " length(seen) " with figures"; bad = 1 }
      exit bad
    }' "$serial"; then
    status=1
  fi

  # meshperfd + meshperf over rxe0: every sweep figure positive, finite and verified; every
  # collective point verified (0 wrong) with consistent figures (check_meshperf.py).
  if [ -x "$build/daemon/meshperfd" ] && [ -x "$build/client/meshperf" ]; then
    python3 "$here/check_meshperf.py" "$serial" || status=1
  fi

  # meshperf / perftest ratios, round by round (TCG figures: functional, not hardware figures).
  awk -F' [|] ' '
    /^ROUND [0-9]+ [|] BENCH test=bandwidth/ { split($1, w, " "); if (match($2, /mib_per_s=[0-9.]+/)) mb[w[2]] = substr($2, RSTART + 10, RLENGTH - 10) }
    /^ROUND [0-9]+ [|] BENCH test=latency/   { split($1, w, " "); if (match($2, /lat_us_p50=[0-9.]+/)) ml[w[2]] = substr($2, RSTART + 11, RLENGTH - 11) }
    /^PERFTEST bench-(bw|lat) [0-9]+ [|] +[0-9]/ {
      split($1, t, " "); n = split($2, f, /[ \t]+/); k = 0
      for (i = 1; i <= n; i++) if (f[i] != "") g[++k] = f[i]
      if (t[2] == "bench-bw") pb[t[3]] = g[4]; else pl[t[3]] = g[5]
    }
    END {
      nb = nl = 0
      for (r = 1; r in mb || r in ml; r++) {
        if (r in mb && pb[r] > 0) rb[++nb] = mb[r] / pb[r]
        if (r in ml && pl[r] > 0) rl[++nl] = ml[r] / pl[r]
        line = "rdma-vm: round " r ":"
        if (r in mb && pb[r] > 0) line = line sprintf(" write bw 64 KiB meshperf %.2f MiB/s, ib_write_bw %.2f MiB/s, ratio %.3f;", mb[r], pb[r], mb[r] / pb[r])
        if (r in ml && pl[r] > 0) line = line sprintf(" write lat 8 B p50 meshperf %.2f us, ib_write_lat typical %.2f us, ratio %.3f", ml[r], pl[r], ml[r] / pl[r])
        print line
      }
      if (nb) print "rdma-vm: median ratio write bw 64 KiB meshperf/ib_write_bw " sprintf("%.3f", median(rb, nb)) " (target >= 0.95; TCG figures are functional, not hardware figures)"
      if (nl) print "rdma-vm: median ratio write lat 8 B meshperf/ib_write_lat " sprintf("%.3f", median(rl, nl)) " (target <= 1.05; TCG figures are functional, not hardware figures)"
    }
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }' "$serial"
}

if [ -n "$check_only" ]; then
  check_log "$check_only"
  exit $status
fi

# --- can qemu run here? -------------------------------------------------------------------
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (scripts/setup installs qemu-system-x86)"
for tool in busybox cpio gzip dpkg depmod modprobe apt-get apt-cache ldd; do
  command -v $tool >/dev/null || skip "$tool is not installed: cannot build the guest (scripts/setup installs it)"
done
# Whether qemu can start a machine here at all, probed once, up front: the accelerator and
# the memory the guest gets, started paused and told to quit on its monitor. This is the
# only "qemu cannot run here" skip: a guest that then never reaches /init (a kernel panic
# exits 0 under -no-reboot) is a FAIL.
accel=(-accel tcg,thread=multi -cpu max)
if grep -qE '\b(vmx|svm)\b' /proc/cpuinfo && [ ! -e /sys/module/kvm_pvm ] && [ -w /dev/kvm ]; then
  accel=(-accel kvm -cpu host)
fi
probe_out=$(echo quit | timeout 30 qemu-system-x86_64 "${accel[@]}" -m 1024 -smp 2 -nodefaults -nic none -display none \
  -S -monitor stdio 2>&1) || skip "qemu cannot start a machine here (${accel[*]}): $(head -c 600 <<<"$probe_out")"
busybox=$(command -v busybox)
# The test needs these in the guest; missing ones are a setup error, not a skip.
need=(ip rdma ibv_devinfo ib_write_bw ib_write_lat ib_send_lat)
for tool in "${need[@]}"; do
  command -v $tool >/dev/null || die "$tool is not installed (run scripts/setup)"
done
[ -x "$selftest" ] || die "$selftest is not built"

cache="$build/rdma-vm/cache"
work="$build/rdma-vm/work"
mkdir -p "$cache"
rm -rf "$work"
mkdir -p "$work"

# --- guest kernel ---------------------------------------------------------------------------
kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$kpkg" ]; then
  apt-get update -qq >/dev/null 2>&1 || true
  kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
fi
deb=""
if [ -n "$kpkg" ]; then
  deb=$(ls -1 "$cache/${kpkg}"_*.deb 2>/dev/null | tail -1 || true)
  if [ -z "$deb" ]; then
    log "downloading $kpkg (cached in $cache)"
    (cd "$cache" && apt-get download "$kpkg" >/dev/null 2>&1) || true
    deb=$(ls -1 "$cache/${kpkg}"_*.deb 2>/dev/null | tail -1 || true)
  fi
fi
[ -n "$deb" ] || deb=$(ls -1 "$cache"/linux-image-*.deb 2>/dev/null | tail -1 || true)
[ -n "$deb" ] || skip "cannot fetch the guest kernel (apt-cache depends linux-image-amd64 / apt-get download failed; no cached .deb in $cache)"
kroot="$cache/$(basename "$deb" .deb)"
if [ ! -e "$kroot/.extracted" ]; then
  rm -rf "$kroot"
  dpkg -x "$deb" "$kroot"
  touch "$kroot/.extracted"
fi
kver=$(ls -1 "$kroot/lib/modules" | head -1)
vmlinuz="$kroot/boot/vmlinuz-$kver"
[ -f "$vmlinuz" ] || die "no vmlinuz in $deb"
[ -f "$kroot/lib/modules/$kver/modules.dep" ] || depmod -b "$kroot" "$kver"
log "kernel $kver from $(basename "$deb")"

# --- initramfs ------------------------------------------------------------------------------
root="$work/root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,opt/bin,lib/modules,lib64,etc/libibverbs.d,proc,sys,dev,tmp,run,root}
cp "$busybox" "$root/bin/busybox"

copy_with_libs() {  # SRC DEST
  install -m 0755 "$1" "$2"
  ldd "$1" 2>/dev/null | awk '/=> \// {print $3} /^\s*\/.*ld-linux/ {print $1}' | while read -r lib; do
    [ -e "$root$lib" ] || { mkdir -p "$root$(dirname "$lib")"; cp -L "$lib" "$root$lib"; }
  done
}
copy_with_libs "$(command -v ip)" "$root/usr/sbin/ip"
copy_with_libs "$(command -v rdma)" "$root/usr/sbin/rdma"
for tool in ibv_devinfo ibv_devices ib_write_bw ib_write_lat ib_send_lat; do
  copy_with_libs "$(command -v $tool)" "$root/opt/bin/$tool"
done
copy_with_libs "$selftest" "$root/opt/bin/rdma_selftest"
# Hook for the daemon and CLI: packed when built (guest-tests.sh uses them when present).
for bin in "$build/daemon/meshperfd" "$build/client/meshperf"; do
  [ -x "$bin" ] && copy_with_libs "$bin" "$root/opt/bin/$(basename "$bin")"
done
# The provider libibverbs loads by name from rxe.driver: ldd cannot see it.
provider=$(ls -1 /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so 2>/dev/null | head -1)
[ -n "$provider" ] || die "the rxe provider (librxe-rdmav*.so, package ibverbs-providers) is missing"
mkdir -p "$root$(dirname "$provider")"
copy_with_libs "$provider" "$root$provider"
cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
[ -e "$root/lib64/ld-linux-x86-64.so.2" ] || cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"

# Modules in load order. crc32_generic is not in modules.dep: rxe asks for it at run time.
: >"$root/lib/modules/load-order"
add_module() {
  local path=$1 name
  name=$(basename "$path")
  grep -qx "$name" "$root/lib/modules/load-order" && return 0
  cp "$path" "$root/lib/modules/$name"
  echo "$name" >>"$root/lib/modules/load-order"
}
crc=$(find "$kroot/lib/modules/$kver" -name 'crc32_generic.ko*' | head -1)
[ -n "$crc" ] && add_module "$crc"
for m in rdma_rxe dummy; do
  modprobe -d "$kroot" -S "$kver" --show-depends $m | awk '$1 == "insmod" {print $2}' | while read -r path; do
    add_module "$path"
  done
done
if grep -q '\.ko\.xz$' "$root/lib/modules/load-order"; then
  (cd "$root/lib/modules" && xz -d ./*.ko.xz && sed -i 's/\.ko\.xz$/.ko/' load-order)
fi
grep -q rdma_rxe "$root/lib/modules/load-order" || die "rdma_rxe.ko not found in $kver"

install -m 0755 "$here/guest-init.sh" "$root/init"
cp "$here/guest-tests.sh" "$root/opt/guest-tests.sh"
cat >"$root/opt/guest-env.sh" <<EOF
export RDMA_VM_SIZES="$sizes"
export RDMA_VM_ROUNDS="$rounds"
EOF
sed -i 's|^sh /opt/guest-tests.sh|. /opt/guest-env.sh; sh /opt/guest-tests.sh|' "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initramfs.cpio.gz"
log "initramfs $(du -h "$work/initramfs.cpio.gz" | cut -f1)"

# --- boot -------------------------------------------------------------------------------------
log "booting with ${accel[*]} (timeout ${qemu_timeout}s)"
serial="$work/serial.log"
start=$(date +%s)
set +e
timeout "$qemu_timeout" qemu-system-x86_64 "${accel[@]}" -m 1024 -smp 2 -nodefaults -nic none \
  -display none -monitor none -serial stdio -no-reboot \
  -kernel "$vmlinuz" -initrd "$work/initramfs.cpio.gz" \
  -append "console=ttyS0 panic=-1 loglevel=4 tsc=reliable clocksource=tsc" \
  </dev/null 2>"$work/qemu.err" | tr -d '\r' | tee "$serial"
qrc=${PIPESTATUS[0]}
set -e
log "qemu exited $qrc after $(( $(date +%s) - start ))s"
if ! grep -q '^rdma-vm: init started' "$serial"; then
  # qemu was probed above: a guest that never reaches /init is this test's failure (a kernel
  # panic, a broken initramfs), whatever qemu's exit status.
  [ "$qrc" -eq 124 ] && die "the guest did not reach /init within ${qemu_timeout}s"
  die "the guest never reached /init (qemu exit $qrc): $(grep -m3 -iE 'panic|not syncing|unable|error' "$serial" | tr '\n' ' ') $(head -c 600 "$work/qemu.err")"
fi
grep -q '^RDMA-VM-EXIT=' "$serial" || die "no exit marker from the guest (timed out after ${qemu_timeout}s, or it crashed)"

check_log "$serial"
if [ $status -eq 0 ]; then
  log "PASS (guest exit 0, selftest passed, every perftest figure positive and finite)"
else
  log "FAIL (serial log: $serial)"
fi
exit $status
