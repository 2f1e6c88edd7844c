#!/usr/bin/env bash
# deploy/kubernetes/ checked offline: no cluster runs here.
#
#   kubernetes_manifests.sh MESHPERFD MESHPERF
#
# 1. `kubectl kustomize deploy/kubernetes` renders the kustomization (kubectl's built-in
#    kustomize: needs no cluster);
# 2. every rendered object, and every YAML file of the folder, is validated against the
#    Kubernetes API schema with kubernetes-models (npm; the OpenAPI schema as ajv validators)
#    plus a check for fields no Kubernetes type declares (k8s_validate.js). kubectl cannot do
#    this offline: `kubectl create --dry-run=client --validate=true` downloads the schema from
#    an API server and fails without one;
# 3. the references between the objects and files hold (k8s_consistency.js);
# 4. controls: copies of the rendered output with a string port, a misspelt field, a
#    non-number grace period, an unknown apiVersion, and a plugin path with no file must each
#    fail;
# 5. the scripts the manifests run, against real meshperfd on loopback: npd-check.sh maps OK,
#    CRITICAL and an unreachable peer to NPD's 0, 1, 2; prestop.sh returns at once on an idle
#    daemon and waits for a running measurement to finish.
# kubernetes-models 4.5.1 and js-yaml 4.1.0 are installed with npm into a cache folder
# (MESHPERF_NPM_CACHE, default ~/.cache/meshperf/k8s-schema) the first time.
# Exit 0 pass, 1 fail, 77 skip (no kubectl, node or npm; or the npm registry unreachable
# with nothing cached).
set -u
MESHPERFD=${1:?usage: kubernetes_manifests.sh MESHPERFD MESHPERF}
MESHPERF=${2:?usage: kubernetes_manifests.sh MESHPERFD MESHPERF}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
k8s=${MESHPERF_K8S_DIR:-$root/deploy/kubernetes}
cache=${MESHPERF_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/meshperf/k8s-schema}
MODELS_VERSION=4.5.1 YAML_VERSION=4.1.0

say() { echo "kubernetes-manifests: $*"; }
fail() { say "FAIL: $*"; exit 1; }
skip() { say "SKIP: $*"; exit 77; }
for t in kubectl node; do command -v $t >/dev/null || skip "$t not installed (scripts/setup installs kubernetes-client and npm)"; done

work=$(mktemp -d /tmp/meshperf-k8s.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

# --- the schema, cached ---
have=$(node -e "try{console.log(require('$cache/node_modules/kubernetes-models/package.json').version)}catch(e){}" 2>/dev/null)
if [ "$have" != "$MODELS_VERSION" ] || [ ! -d "$cache/node_modules/js-yaml" ]; then
    command -v npm >/dev/null || skip "npm not installed and no kubernetes-models in $cache"
    mkdir -p "$cache"
    say "installing kubernetes-models@$MODELS_VERSION js-yaml@$YAML_VERSION into $cache"
    timeout 300 npm install --prefix "$cache" --no-audit --no-fund --ignore-scripts --no-save \
        "kubernetes-models@$MODELS_VERSION" "js-yaml@$YAML_VERSION" >"$work/npm.log" 2>&1 \
        || skip "npm install failed (registry unreachable?): $(tail -n 3 "$work/npm.log")"
fi
modules="$cache/node_modules"

# --- 1. render ---
kubectl kustomize "$k8s" >"$work/rendered.yaml" 2>"$work/kustomize.err" || fail "kubectl kustomize: $(cat "$work/kustomize.err")"
say "kubectl kustomize $k8s: $(grep -c '^kind:' "$work/rendered.yaml") objects ($(kubectl version --client 2>/dev/null | head -n 1))"

# --- 2. schema ---
node "$here/k8s_validate.js" "$modules" "$work/rendered.yaml" >"$work/validate.txt" 2>&1 || fail "rendered output:"$'\n'"$(cat "$work/validate.txt")"
sed 's/^/    /' "$work/validate.txt"
files=()
for f in "$k8s"/*.yaml; do [ "$(basename "$f")" = kustomization.yaml ] || files+=("$f"); done
node "$here/k8s_validate.js" "$modules" "${files[@]}" >"$work/validate-files.txt" 2>&1 || fail "files:"$'\n'"$(cat "$work/validate-files.txt")"
say "schema: the rendered objects and ${#files[@]} files pass"

# --- 3. references ---
node "$here/k8s_consistency.js" "$modules" "$work/rendered.yaml" || fail "references"

# --- 4. controls: each broken copy must fail ---
control() {  # WHAT CHECKER SED-EXPRESSION
    sed "$3" "$work/rendered.yaml" >"$work/broken.yaml"
    cmp -s "$work/rendered.yaml" "$work/broken.yaml" && fail "control '$1': the edit changed nothing"
    if node "$here/$2" "$modules" "$work/broken.yaml" >"$work/control.txt" 2>&1; then
        fail "control '$1' passed: $(cat "$work/control.txt")"
    fi
    say "control: $1 -> $({ grep -m1 '^  ' "$work/control.txt" || grep -m1 FAIL "$work/control.txt"; } | sed 's/^ *//' | cut -c1-160)"
}
control "containerPort as a string" k8s_validate.js 's/containerPort: 7470/containerPort: "7470"/'
control "hostNetwork misspelt" k8s_validate.js 's/hostNetwork: true/hostNetwrk: true/'
control "grace period not a number" k8s_validate.js 's/terminationGracePeriodSeconds: 180/terminationGracePeriodSeconds: soon/'
control "apiVersion apps/v2" k8s_validate.js 's|^apiVersion: apps/v1|apiVersion: apps/v2|'
control "a probe's httpGet field misspelt" k8s_validate.js '0,/path: \/healthz/s//pth: \/healthz/'
control "plugin path with no file" k8s_consistency.js 's|/etc/meshperf/npd/npd-check.sh|/etc/meshperf/npd/check.sh|'

# --- 5. the scripts against real daemons ---
pick_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
umask 077
echo "k8s-test-token-$$" >"$work/token"
start_daemon() {  # NAME VAR: sets VAR to the daemon's address. Not in $(...): a subshell's
    local port      # pids+= would be lost, and cleanup would leave the daemon running.
    port=$(pick_port)
    "$MESHPERFD" --listen "127.0.0.1:$port" --state-dir "$work/state-$1" --token-file "$work/token" >"$work/$1.log" 2>&1 &
    pids+=("$!")
    for _ in $(seq 100); do
        if timeout 5 "$MESHPERF" --token-file "$work/token" info "127.0.0.1:$port" >/dev/null 2>&1; then
            printf -v "$2" '%s' "127.0.0.1:$port"
            return
        fi
        sleep 0.1
    done
    fail "meshperfd $1 did not start: $(cat "$work/$1.log")"
}
start_daemon a A
start_daemon b B
export MESHPERF TOKEN_FILE="$work/token" INITIATOR="$A" NODE_NAME=node-a PEERS_FILE="$work/peers" CHECK_TIMEOUT=20
printf '# test\nnode-a %s\nnode-b %s\n' "$B" "$A" >"$work/peers"
npd() {  # expected-exit what [ENV=VALUE...]
    local want=$1 what=$2 out rc
    shift 2
    out=$(env "$@" sh "$k8s/npd-check.sh" 2>&1)
    rc=$?
    [ "$rc" = "$want" ] || fail "npd-check.sh, $what: exit $rc, not $want: $out"
    say "npd-check.sh, $what: exit $rc: $out"
}
npd 0 "healthy (--min-gbit 0.001)" CHECK_ARGS="--min-gbit 0.001"
npd 1 "below --min-gbit 100000" CHECK_ARGS="--min-gbit 100000"
npd 2 "peer port closed" CHECK_ARGS="--min-gbit 0.001" PEERS_FILE=<(echo "node-a 127.0.0.1:1")
npd 2 "node not in the peers file" CHECK_ARGS="--min-gbit 0.001" NODE_NAME=node-z

pre() { DAEMON=$A PRESTOP_MAX_S=60 sh "$k8s/prestop.sh"; }
s=$(date +%s); out=$(pre); [ $(( $(date +%s) - s )) -le 2 ] || fail "prestop.sh on an idle daemon took $(( $(date +%s) - s )) s: $out"
say "prestop.sh, idle daemon: $out"
# A measurement of about 4 s (2 points of 2 s): prestop.sh must return only after it ended.
"$MESHPERF" --token-file "$work/token" sweep "$B" --initiator "$A" --test bandwidth --sizes 64K,1M --duration 2 \
    --format json -o "$work/sweep.json" >"$work/sweep.log" 2>&1 &
sweep=$!
pids+=("$sweep")
for _ in $(seq 100); do
    timeout 5 "$MESHPERF" --token-file "$work/token" info "$A" --format json 2>/dev/null | grep -q '"measuring": *"run ' && break
    sleep 0.05
done
out=$(pre)
# Asked the moment prestop.sh returns, before anything waits for the sweep: a hook that
# returns while the run goes on must be caught here (after the sweep ends it reads idle anyway).
info=$(timeout 5 "$MESHPERF" --token-file "$work/token" info "$A" --format json)
echo "$info" | grep -q '"measuring": *""' || fail "prestop.sh returned while the daemon still measured: $info (its output: $out)"
grep -q 'waiting: measuring' <<<"$out" || fail "prestop.sh did not wait: $out"
tail -n 1 <<<"$out" | grep -q 'idle$' || fail "prestop.sh did not end on an idle daemon: $out"
wait "$sweep" || fail "the sweep during prestop.sh failed: $(cat "$work/sweep.log")"
say "prestop.sh during a sweep: waited $(grep -c waiting <<<"$out") s, returned when it ended ($(tail -n 1 <<<"$out"))"
say "PASS"
exit 0
