# Runs inside the rdma-vm guest (sourced by its /init as `sh /opt/guest-tests.sh`).
# Every figure a tool prints is copied to the console with a tag; the host checks them
# (run-guest.sh). Exit status: 0 when every step here exited 0.
set -u
rc=0
dev=rxe0
gid=1            # ::ffff:192.0.2.1, RoCE v2
ip=192.0.2.1
sizes="${RDMA_VM_SIZES:-8 65536}"
rounds="${RDMA_VM_ROUNDS:-3}"

step() { echo "=== $*"; }
fail() { echo "rdma-vm: step failed: $*"; rc=1; }

step "devices"
ibv_devinfo -d $dev -v | grep -E 'hca_id|state|active_mtu|link_layer|GID\[' | head -20
rdma resource show

step "rdma_selftest"
rdma_selftest --device $dev --ip $ip --netdev rdma0 --sizes "$(echo $sizes | tr ' ' ,)" \
  --seconds 0.3 --iterations 300
st=$?
echo "SELFTEST-EXIT=$st"
[ $st -eq 0 ] || fail "rdma_selftest exited $st"

# Prints perftest's figure line and succeeds when a figure on it is not positive and finite,
# or there is none (perftest exits 0 while printing 0.00, inf or -nan).
insane() {  # FILE bw|lat
  awk -v kind="$2" '
    function finite(v) { return v ~ /^[0-9]+(\.[0-9]+)?$/ }
    $1 ~ /^[0-9]+$/ && NF >= 5 {
      found = 1
      if (kind == "bw") { if (!(finite($4) && $4 > 0 && finite($5) && $5 > 0)) bad = 1 }
      else { for (i = 3; i <= NF; i++) if (!finite($i)) bad = 1; for (i = 3; i <= 6; i++) if (!($i > 0)) bad = 1 }
      if (bad) print
    }
    END { exit !(bad || !found) }' "$1"
}

# perftest: server in the background, client against the same device (rxe loops back). On a
# loaded host perftest sometimes prints insane figures; such a run is retried once, and the
# host checks the figures of the last attempt.
perftest() {  # TAG TOOL ARGS...
  tag=$1; tool=$2; shift 2
  case $tool in *_bw) kind=bw ;; *) kind=lat ;; esac
  attempt=1
  while :; do
    $tool -d $dev -x $gid -F "$@" >/tmp/server.log 2>&1 &
    srv=$!
    sleep 2
    $tool -d $dev -x $gid -F "$@" $ip >/tmp/client.log 2>&1
    cst=$?
    wait $srv
    sst=$?
    if [ $attempt -eq 1 ] && bad=$(insane /tmp/client.log $kind); then
      echo "PERFTEST-RETRY $tag: insane figures: $bad"
      attempt=2
      continue
    fi
    break
  done
  sed "s/^/PERFTEST $tag | /" /tmp/client.log
  echo "PERFTEST-EXIT $tag client=$cst server=$sst"
  if [ $cst -ne 0 ] || [ $sst -ne 0 ]; then
    fail "$tool $* (client $cst, server $sst)"
    sed "s/^/SERVER $tag | /" /tmp/server.log
  fi
}

step "perftest at the selftest's sizes"
for s in $sizes; do
  perftest "ib_write_bw $s" ib_write_bw -s $s -D 2
  perftest "ib_write_lat $s" ib_write_lat -s $s -n 300
  perftest "ib_send_lat $s" ib_send_lat -s $s -n 300
done

bench() {  # ROUND ARGS...
  round=$1; shift
  rdma_selftest bench --device $dev --ip $ip "$@" >/tmp/bench.log 2>&1
  bst=$?
  sed "s/^/ROUND $round | /" /tmp/bench.log
  [ $bst -eq 0 ] || fail "rdma_selftest bench $* exited $bst"
}

step "meshperf against perftest, alternating, $rounds rounds"
r=1
while [ $r -le $rounds ]; do
  bench $r --op write --test bandwidth --size 65536 --seconds 2
  perftest "bench-bw $r" ib_write_bw -s 65536 -D 2
  bench $r --op write --test latency --size 8 --iterations 1000
  perftest "bench-lat $r" ib_write_lat -s 8 -n 1000
  r=$((r + 1))
done

# --- hook: daemon and CLI -------------------------------------------------------------------
# run-guest.sh packs build/daemon/meshperfd and build/client/meshperf into /opt/bin when they
# exist. To be filled in by the integration: start two daemons on 192.0.2.1 (two ports, or a
# second address on rdma0), then e.g.
#   meshperf sweep 192.0.2.1:7470 192.0.2.1:7471 --transport rdma --op write --qps 2 --verify
# and print its JSON with a tag the host checks like the others.
if [ -x /opt/bin/meshperfd ] && [ -x /opt/bin/meshperf ]; then
  step "meshperfd + meshperf sweep --transport rdma"
  echo "rdma-vm: daemon binaries present; the sweep step is not written yet"
fi

step "resources at the end"
rdma resource show
exit $rc
