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

# Runs `meshperf ARGS --format json -o ...` and prints what the host checks: "PREFIX-EXIT KEY
# status stderr" and "PREFIX-JSON KEY | document". A non-zero exit fails the step.
json_run() {  # PREFIX KEY ARGS...
  prefix=$1; key=$2; shift 2
  meshperf --token-file /tmp/token "$@" --format json -q -o /tmp/doc.json 2>/tmp/doc.err
  st=$?
  echo "$prefix-EXIT $key $st $(tr '\n' ' ' </tmp/doc.err)"
  [ -f /tmp/doc.json ] && echo "$prefix-JSON $key | $(tr -d '\n' </tmp/doc.json)"
  rm -f /tmp/doc.json
  [ $st -eq 0 ] || fail "meshperf $* exited $st"
}

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

# --- meshperfd + meshperf over rxe0 -------------------------------------------------------
# Two daemons on 192.0.2.1 (ports 7470, 7471; a token because the address is not loopback);
# RDMA sweeps between them. Each result is printed as one tagged JSON line the host checks.
if [ -x /opt/bin/meshperfd ] && [ -x /opt/bin/meshperf ]; then
  step "meshperfd + meshperf sweep --transport rdma"
  baseline=$(rdma resource show | tr '\n' ' ')
  umask 077
  echo "rdma-vm-token" >/tmp/token
  mkdir -p /tmp/mp1 /tmp/mp2
  meshperfd --listen $ip:7470 --state-dir /tmp/mp1 --token-file /tmp/token --log-level warn &
  d1=$!
  meshperfd --listen $ip:7471 --state-dir /tmp/mp2 --token-file /tmp/token --log-level warn &
  d2=$!
  for i in 1 2 3 4 5 6 7 8 9 10; do
    meshperf --token-file /tmp/token info $ip:7471 >/dev/null 2>&1 && break
    sleep 1
  done
  meshperf --token-file /tmp/token info $ip:7470 | sed 's/^/INFO | /'
  ms="$(echo $sizes | tr ' ' ,)"
  for op in write read send; do
    json_run MESHPERF op=$op sweep --initiator $ip:7470 $ip:7471 --transport rdma --op $op \
      --test latency,bandwidth,bidir --sizes "$ms" --qps 2 --tx-depth 32 --verify --max-time 1 --warmup 0.1
  done
  # --verify against real corruption (issue 51): a third daemon runs with the test hook
  # MESHPERF_TEST_CORRUPT_RDMA=1 (daemon/test_hooks/sweep_hooks.hpp), so one byte of what its
  # QPs give the peer is flipped (the region its WRITEs and SENDs go out from, the region the
  # peer READs). With it on the sending end (the initiator for write and send; the peer for
  # read, whose data moves from the peer's memory to the initiator), every op and test must
  # fail its point under --verify naming the corruption and the end that saw it; without
  # --verify the same sweeps pass (the check catches it, not some other fault).
  # check_meshperf.py checks the lines.
  step "meshperf sweep --transport rdma --verify from a corrupting daemon"
  mkdir -p /tmp/mp9
  MESHPERF_TEST_CORRUPT_RDMA=1 meshperfd --listen $ip:7479 --state-dir /tmp/mp9 --token-file /tmp/token --log-level error &
  d9=$!
  for i in 1 2 3 4 5 6 7 8 9 10; do
    meshperf --token-file /tmp/token info $ip:7479 >/dev/null 2>&1 && break
    sleep 1
  done
  corrupt_run() {  # KEY EXPECTED_EXIT ARGS...
    key=$1; want=$2; shift 2
    meshperf --token-file /tmp/token sweep "$@" --transport rdma --qps 1 --tx-depth 32 --max-time 0.5 --warmup 0.1 \
      --format json -q -o /tmp/doc.json 2>/tmp/doc.err
    st=$?
    echo "MESHPERF-CORRUPT-EXIT $key $st $(tr '\n' ' ' </tmp/doc.err)"
    [ -f /tmp/doc.json ] && echo "MESHPERF-CORRUPT-JSON $key | $(tr -d '\n' </tmp/doc.json)"
    rm -f /tmp/doc.json
    [ $st -eq $want ] || fail "meshperf sweep $* from a corrupting daemon exited $st (expected $want)"
  }
  for op in write read send; do
    if [ $op = read ]; then pair="$ip:7470 $ip:7479"; else pair="$ip:7479 $ip:7471"; fi
    for test in latency bandwidth bidir; do
      if [ $test = latency ]; then size=8; else size=65536; fi
      corrupt_run "op=$op test=$test verify=1" 1 --initiator $pair --op $op --test $test --sizes $size --verify
    done
    corrupt_run "op=$op test=all verify=0" 0 --initiator $pair --op $op --test latency,bandwidth,bidir --sizes 65536
  done
  kill $d9
  wait $d9 2>/dev/null
  # Errors that can be provoked here: each must fail cleanly and leave the daemons serving.
  for bad in "--device nosuch0" "--port 9" "--gid-index 999"; do
    meshperf --token-file /tmp/token sweep --initiator $ip:7470 $ip:7471 --transport rdma $bad \
      --test latency --sizes 8 -q >/dev/null 2>/tmp/err.txt
    st=$?
    echo "MESHPERF-ERROR [$bad] exit=$st | $(cat /tmp/err.txt)"
    [ $st -eq 1 ] || fail "meshperf with $bad exited $st (expected 1)"
  done
  meshperf --token-file /tmp/token sweep --initiator $ip:7470 $ip:7471 --transport rdma --op write \
    --test latency --sizes 8 -q >/dev/null 2>&1 || fail "a sweep after the error cases failed"
  # The point harness's rules hold for RDMA as for TCP (issue: one session harness):
  # --iterations for bandwidth is refused at submission (exit 2, nothing sent) ...
  meshperf --token-file /tmp/token sweep --initiator $ip:7470 $ip:7471 --transport rdma --op write \
    --test bandwidth --sizes 65536 --iterations 100 -q >/dev/null 2>/tmp/err.txt
  st=$?
  echo "MESHPERF-HARNESS iterations exit=$st | $(cat /tmp/err.txt)"
  { [ $st -eq 2 ] && grep -q "not supported for RDMA bandwidth" /tmp/err.txt; } ||
    fail "RDMA --iterations for bandwidth: exit $st (expected 2 at submission)"
  # ... and a peer frozen mid-point is named after its silence limit (8 s), where the RDMA
  # session used to wait out point_done_timeout (30 s).
  (sleep 3; kill -STOP $d2) &
  freezer=$!
  t0=$(date +%s)
  meshperf --token-file /tmp/token sweep --initiator $ip:7470 $ip:7471 --transport rdma --op write \
    --test bandwidth --sizes 65536 --duration 6 --warmup 0.1 -q >/dev/null 2>/tmp/err.txt
  st=$?
  t1=$(date +%s)
  wait $freezer
  kill -CONT $d2
  echo "MESHPERF-HARNESS frozen-peer exit=$st seconds=$((t1 - t0)) | $(cat /tmp/err.txt)"
  { [ $st -eq 1 ] && grep -q "nothing from it for" /tmp/err.txt && [ $((t1 - t0)) -lt 26 ]; } ||
    fail "RDMA sweep against a frozen peer: exit $st after $((t1 - t0)) s (expected 1, the silence named, < 26 s)"
  ok=0
  for i in 1 2 3 4 5 6 7 8 9 10; do
    if meshperf --token-file /tmp/token sweep --initiator $ip:7470 $ip:7471 --transport rdma --op write \
      --test latency --sizes 8 -q >/dev/null 2>&1; then ok=1; break; fi
    sleep 1
  done
  [ $ok -eq 1 ] || fail "no sweep succeeded after the frozen peer resumed"
  # RNIC loopback (inspect --loopback): rxe0 writes to itself, through the daemon (which
  # holds its measurement gate) and in this process; a manifest floor far above what TCG
  # gives must make it CRITICAL (exit 2). check_meshperf.py checks the figures.
  step "meshperf inspect --loopback"
  echo 'loopback_floor_gbit = 10000' >/tmp/floor.toml
  for where in daemon here floor; do
    case $where in
      daemon) args="$ip:7470" ;;
      here) args="" ;;
      floor) args="$ip:7470 --expect /tmp/floor.toml" ;;
    esac
    meshperf --token-file /tmp/token inspect $args --loopback --format json >/tmp/insp.json 2>/tmp/insp.err
    st=$?
    echo "MESHPERF-INSPECT-JSON where=$where exit=$st $(tr '\n' ' ' </tmp/insp.err) | $(tr -d '\n' </tmp/insp.json)"
  done

  # Rails over RDMA: a second dummy netdev with its own rxe (rdma1, 192.0.3.1, rxe1) beside
  # rdma0/rxe0; two daemons whose [rails] are rdma0 and rdma1 measure both rails at once,
  # each rail's QPs on the device of its own address (each rxe loops back to itself).
  # check_meshperf.py checks the per-rail figures and each rail's own rxe counters. rxe1
  # and rdma1 are removed afterwards, so the steps after see the guest as before. A window
  # of 32 (completions counted 8 messages at a time) and 2 s points: with the default 128
  # a rail's bytes under TCG move in 8 MiB steps, a fifth of what a 1 s point moves.
  step "meshperf sweep --transport rdma --rails rdma0,rdma1 (rxe0 and rxe1)"
  /usr/sbin/ip link add rdma1 type dummy && /usr/sbin/ip link set rdma1 mtu 9000 &&
    /usr/sbin/ip addr add 192.0.3.1/24 dev rdma1 && /usr/sbin/ip link set rdma1 up &&
    /usr/sbin/rdma link add rxe1 type rxe netdev rdma1 || fail "cannot make rxe1 on rdma1"
  for i in 1 2 3 4 5 6 7 8 9 10; do
    grep -q 'ffff:c000:0301' /sys/class/infiniband/rxe1/ports/1/gids/* 2>/dev/null && break
    sleep 0.5
  done
  printf '[rails]\ninclude = ["rdma*"]\n' >/tmp/rails.toml
  mkdir -p /tmp/mp7 /tmp/mp8
  meshperfd --listen $ip:7477 --state-dir /tmp/mp7 --token-file /tmp/token --config /tmp/rails.toml --log-level warn &
  r1=$!
  meshperfd --listen $ip:7478 --state-dir /tmp/mp8 --token-file /tmp/token --config /tmp/rails.toml --log-level warn &
  r2=$!
  for i in 1 2 3 4 5 6 7 8 9 10; do
    meshperf --token-file /tmp/token info $ip:7478 >/dev/null 2>&1 && break
    sleep 1
  done
  # The rails by name: both daemons are reached at rdma0's address, and --rails all leaves the
  # rail that carries the control connection out (the management network is not a rail).
  for op in write send; do
    json_run MESHPERF-RAILS op=$op sweep --initiator $ip:7477 $ip:7478 --transport rdma --op $op --rails rdma0,rdma1 \
      --test bandwidth,bidir --sizes 65536 --qps 1 --tx-depth 32 --verify --max-time 2 --warmup 0.1
  done
  # A failed RDMA rail alone (issue 28): rdma1 set down ~2 s into a 6 s point; the run must
  # complete, point 1 keeping rdma0's figure with rdma1 failed and named, point 2 measured
  # on rdma0 alone (rdma1 not measured), and both daemons answering afterwards.
  step "meshperf sweep --transport rdma --rails rdma0,rdma1, rdma1 down mid-run"
  meshperf --token-file /tmp/token sweep --initiator $ip:7477 $ip:7478 --transport rdma --op write --rails rdma0,rdma1 \
    --test bandwidth --sizes 65536,131072 --duration 6 --warmup 0.5 --qps 1 --tx-depth 32 --verify \
    --format json -q -o /tmp/raildown.json 2>/tmp/raildown.err &
  cli=$!
  sleep 2
  cut=$(date +%s)
  /usr/sbin/ip link set rdma1 down
  wait $cli
  st=$?
  echo "MESHPERF-RAILDOWN-EXIT $st $(( $(date +%s) - cut )) s after the cut; $(tr '\n' ' ' </tmp/raildown.err)"
  [ -f /tmp/raildown.json ] && echo "MESHPERF-RAILDOWN-JSON cut=rdma1 | $(tr -d '\n' </tmp/raildown.json)"
  for port in 7477 7478; do
    meshperf --token-file /tmp/token info $ip:$port >/dev/null 2>&1 && echo "MESHPERF-RAILDOWN-ALIVE $port" ||
      echo "MESHPERF-RAILDOWN-DEAD $port"
  done
  /usr/sbin/ip link set rdma1 up
  kill $r1 $r2
  wait $r1 $r2 2>/dev/null
  /usr/sbin/rdma link delete rxe1
  /usr/sbin/ip link del rdma1

  # Collectives over verbs (issue: collectives across N daemons): three ranks, one QP per pair
  # on rxe0, every op verified; TCP over the guest's loopback alongside, as a ratio. A rank
  # killed mid-run must end the run within 10 s naming it, and the other two run again.
  step "meshperf collective --transport rdma, 3 ranks"
  mkdir -p /tmp/mp3
  meshperfd --listen $ip:7472 --state-dir /tmp/mp3 --token-file /tmp/token --log-level warn &
  d3=$!
  for i in 1 2 3 4 5 6 7 8 9 10; do
    meshperf --token-file /tmp/token info $ip:7472 >/dev/null 2>&1 && break
    sleep 1
  done
  hosts=$ip:7470,$ip:7471,$ip:7472
  for t in rdma tcp rdma; do
    json_run MESHPERF-COLLECTIVE transport=$t collective --hosts $hosts --transport $t \
      --op allreduce,allgather,reduce-scatter,alltoall,broadcast,incast --sizes 12K,1536K --iterations 5 --verify
  done
  json_run MESHPERF-COLLECTIVE transport=rdma-tree collective --hosts $hosts --transport rdma --op allreduce --algo tree \
    --sizes 64K --iterations 3 --verify
  # GPUDirect collectives (--memory cuda:0 over RDMA) on daemons whose GPU is emulated in host
  # memory (test hook MESHPERF_TEST_EMULATED_GPU=1): receive slots and buffers in the "device",
  # registered with rxe0 by the peermem path, pieces copied and summed there. 7476 also
  # corrupts what it sends (MESHPERF_TEST_CORRUPT_COLLECTIVE=1): --verify must count it.
  step "meshperf collective --memory cuda:0 --transport rdma (GPUDirect, emulated GPU), 3 ranks"
  gpids=""
  for port in 7473 7474 7475 7476; do
    mkdir -p /tmp/mp$port
    hooks="MESHPERF_TEST_EMULATED_GPU=1"
    [ $port = 7476 ] && hooks="$hooks MESHPERF_TEST_CORRUPT_COLLECTIVE=1"
    env $hooks meshperfd --listen $ip:$port --state-dir /tmp/mp$port --token-file /tmp/token --log-level warn &
    gpids="$gpids $!"
  done
  for i in 1 2 3 4 5 6 7 8 9 10; do
    meshperf --token-file /tmp/token info $ip:7476 >/dev/null 2>&1 && break
    sleep 1
  done
  ghosts=$ip:7473,$ip:7474,$ip:7475
  json_run MESHPERF-COLLECTIVE transport=rdma-gpudirect collective --hosts $ghosts --transport rdma --memory cuda:0 \
    --op allreduce,allgather,reduce-scatter,alltoall,broadcast,incast --sizes 12K,1536K --iterations 3 --verify
  json_run MESHPERF-COLLECTIVE transport=rdma-gpudirect-tree collective --hosts $ghosts --transport rdma --memory cuda:0 \
    --op allreduce --algo tree --dtype bf16 --sizes 64K --iterations 3 --verify
  json_run MESHPERF-COLLECTIVE transport=tcp-staged collective --hosts $ghosts --transport tcp --memory cuda:0 \
    --op allreduce,alltoall --sizes 12K,1536K --iterations 3 --verify
  meshperf --token-file /tmp/token collective --hosts $ip:7473,$ip:7474,$ip:7476 --transport rdma --memory cuda:0 \
    --op allreduce,allgather --sizes 12K --iterations 2 --verify --format json -q -o /tmp/doc.json 2>/tmp/doc.err
  echo "MESHPERF-GPUDIRECT-CORRUPT-EXIT $? $(tr '\n' ' ' </tmp/doc.err)"
  [ -f /tmp/doc.json ] && echo "MESHPERF-GPUDIRECT-CORRUPT-JSON corrupt=1 | $(tr -d '\n' </tmp/doc.json)"
  rm -f /tmp/doc.json
  sleep 1
  live=$(rdma resource show | tr '\n' ' ')
  echo "MESHPERF-COLLECTIVE-RESOURCES gpudirect: baseline [$baseline] with every daemon up after the runs [$live]"
  [ "$live" = "$baseline" ] || fail "RDMA resources held by the daemons after the GPUDirect collectives: $live (baseline $baseline)"
  kill $gpids
  wait $gpids 2>/dev/null
  # The RDMA options reach every rank: a device or GID index that does not exist ends the run
  # at the start with the verbs reason (exit 3), and the ranks run again at once.
  for bad in "--rdma-device nosuch0" "--gid-index 999"; do
    meshperf --token-file /tmp/token collective --hosts $hosts --transport rdma $bad --op allreduce \
      --sizes 12K --iterations 2 -q >/dev/null 2>/tmp/coll.err
    st=$?
    echo "MESHPERF-COLLECTIVE-ERROR [$bad] exit=$st | $(tr '\n' ' ' </tmp/coll.err)"
    [ $st -eq 3 ] || fail "meshperf collective with $bad exited $st (expected 3)"
  done
  meshperf --token-file /tmp/token collective --hosts $hosts --transport rdma --rdma-device rxe0 --gid-index $gid \
    --op allreduce --sizes 12K --iterations 2 --verify -q >/dev/null 2>/tmp/coll.err ||
    fail "meshperf collective --rdma-device rxe0 --gid-index $gid failed: $(cat /tmp/coll.err)"
  (sleep 4; kill -KILL $d3) &
  killer=$!
  t0=$(date +%s)
  meshperf --token-file /tmp/token collective --hosts $hosts --transport rdma --op allreduce \
    --sizes 64K --duration 30 -q >/dev/null 2>/tmp/coll.err
  st=$?
  t1=$(date +%s)
  wait $killer
  echo "MESHPERF-COLLECTIVE-KILLED exit=$st seconds=$((t1 - t0)) | $(tr '\n' ' ' </tmp/coll.err)"
  { [ $st -eq 1 ] && grep -q "rank 2" /tmp/coll.err && [ $((t1 - t0)) -lt 16 ]; } ||
    fail "RDMA collective with rank 2 killed: exit $st after $((t1 - t0)) s (expected 1, rank 2 named, < 16 s)"
  meshperf --token-file /tmp/token collective --hosts $ip:7470,$ip:7471 --transport rdma --op allreduce \
    --sizes 64K --iterations 3 --verify -q >/dev/null 2>/tmp/coll.err ||
    fail "the two ranks left did not run again over RDMA: $(cat /tmp/coll.err)"
  wait $d3 2>/dev/null
  # The surviving daemons hold no QP, CQ, MR or PD of the runs once they ended (the fault's too).
  sleep 1
  live=$(rdma resource show | tr '\n' ' ')
  echo "MESHPERF-COLLECTIVE-RESOURCES baseline [$baseline] with the daemons up after the runs [$live]"
  [ "$live" = "$baseline" ] || fail "RDMA resources held by the daemons after the collectives: $live (baseline $baseline)"

  kill $d1 $d2
  wait $d1 $d2 2>/dev/null
  after=$(rdma resource show | tr '\n' ' ')
  echo "MESHPERF-RESOURCES baseline [$baseline] after the daemons [$after]"
  [ "$after" = "$baseline" ] || fail "RDMA resources left after the daemons exited: $after (baseline $baseline)"
fi

step "resources at the end"
rdma resource show
exit $rc
