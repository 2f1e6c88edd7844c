#!/usr/bin/env bash
# A fitted β that no stream reached is flagged and not used silently (issue 26, item 4).
#
#   beta_check.sh MESHPERFD MESHPERF
#
# Two namespaces joined by a veth pair shaped by tbf at RATE_MBIT (200) both ways with a
# 1 MiB bucket. Ping-pong messages up to 256 KiB fit the bucket, which refills while the
# other side answers, so latency points read up to twice the token rate, while a stream is
# held to it: the α–β fit of the latency points gives a β well above every bandwidth point
# (0.306 against 0.191 Gbit/s in the issue, fed to plan silently: +61% error). Checks:
#   1. the sweep's streams read at most the tbf rate (within 10%: a sanity check of the setup);
#   2. `meshperf model` flags the β (its JSON has beta_check with beta above measured, and a
#      warning naming it);
#   3. `meshperf plan --from` says it uses the measured bandwidth instead, and neither the β it
#      uses nor any busbw it predicts is above the fastest stream.
# Needs root, `ip netns` and tc's tbf; exits 77 (skip) otherwise. About 15 s.
set -u

RATE_MBIT=${RATE_MBIT:-200}

NETNS_TAG=netns-beta_check
NETNS_PREFIX=mpbc
. "$(dirname "$0")/lib.sh"
BUCKET_BYTES=$((1024 * 1024))   # after lib.sh: a bucket that holds a whole ping-pong message
netns_begin "${1:-}" "${2:-}" tc python3
netns_pair 1500
netns_pair_daemons
netns_tbf "$NS_A" "$IF_A" "$RATE_MBIT"
netns_tbf "$NS_B" "$IF_B" "$RATE_MBIT"

say "tbf $RATE_MBIT Mbit/s both ways, bucket $BUCKET_BYTES B"
ip netns exec "$NS_A" timeout 120 "$MESHPERF" --token-file "$TOKEN" sweep --initiator "$ADDR_A:$PORT" "$ADDR_B:$PORT" \
    --test latency,bandwidth --sizes 16K,64K,128K,256K --max-time 1 --warmup 0.2 --format json -o "$WORK/run.json" \
    2>"$WORK/sweep.err" || fail "the sweep failed: $(cat "$WORK/sweep.err")"
"$MESHPERF" model "$WORK/run.json" --format json >"$WORK/model.json" 2>"$WORK/model.err" \
    || fail "meshperf model failed: $(cat "$WORK/model.err")"
"$MESHPERF" model "$WORK/run.json" >"$WORK/model.txt" 2>&1 || fail "meshperf model (table) failed: $(cat "$WORK/model.txt")"
"$MESHPERF" plan --from "$WORK/run.json" --nodes 8 --bytes 64M --format json >"$WORK/plan.json" 2>"$WORK/plan.err" \
    || fail "meshperf plan failed: $(cat "$WORK/plan.err")"
sed 's/^/  model: /' "$WORK/model.txt"
sed 's/^/  plan: /' "$WORK/plan.err"
python3 - "$WORK/run.json" "$WORK/model.json" "$WORK/model.txt" "$WORK/plan.json" "$WORK/plan.err" "$RATE_MBIT" <<'EOF' || fail "see above"
import json, math, sys
run_p, model_p, model_txt_p, plan_p, plan_err_p, rate_mbit = sys.argv[1:]
rate = float(rate_mbit) / 1000
run = json.load(open(run_p))
streams = [p["gbit_per_s"] for p in run["points"] if p["test"] == "bandwidth"]
best = max(streams)
print(f"beta_check: streams {', '.join(f'{s:.3f}' for s in streams)} Gbit/s (tbf {rate} Gbit/s)")
bad = False
if best > 1.1 * rate:
    print(f"beta_check: FAIL: a stream read {best:.3f} Gbit/s, above the tbf rate: the setup is not what the test assumes")
    bad = True
model = json.load(open(model_p))
text = json.dumps(model)
def find(o, key):
    if isinstance(o, dict):
        if key in o: return o[key]
        for v in o.values():
            r = find(v, key)
            if r is not None: return r
    if isinstance(o, list):
        for v in o:
            r = find(v, key)
            if r is not None: return r
    return None
bc = find(model, "beta_check")
if not isinstance(bc, dict):
    print(f"beta_check: FAIL: the model JSON has no beta_check: {text[:400]}")
    sys.exit(1)
print(f"beta_check: fitted beta {bc.get('beta_gbit_per_s')} Gbit/s, fastest stream {bc.get('measured_gbit_per_s')} Gbit/s")
# Both figures must be there, finite and positive: a missing β is a FAIL (it once read as
# infinitely fast, hence "above the streams", and passed).
beta, measured = bc.get("beta_gbit_per_s"), bc.get("measured_gbit_per_s")
def number(x): return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0
if not number(beta) or not number(measured):
    print(f"beta_check: FAIL: beta_check lacks a finite positive beta_gbit_per_s or measured_gbit_per_s: {bc}")
    sys.exit(1)
if not beta > 1.05 * measured:
    print("beta_check: FAIL: the fit's beta is not above the streams: the bucket did not speed the ping-pong points")
    bad = True
txt = open(model_txt_p).read()
if "was not measured" not in txt:
    print("beta_check: FAIL: the model table does not warn that beta was not measured")
    bad = True
plan = json.load(open(plan_p))
plan_err = open(plan_err_p).read() + json.dumps(plan)
if "instead" not in plan_err:
    print("beta_check: FAIL: plan --from does not say it uses the measured bandwidth instead of the fitted beta")
    bad = True
used = plan["link"]["model"]["beta_gbit_per_s"]
busbw = max(p["busbw_gbit_per_s"] for p in plan["predictions"])
print(f"beta_check: plan uses beta {used:.3f} Gbit/s; its fastest predicted busbw {busbw:.3f} Gbit/s")
if used > 1.01 * best or busbw > 1.01 * best:
    print(f"beta_check: FAIL: plan predicts from more than the fastest stream ({best:.3f} Gbit/s)")
    bad = True
sys.exit(1 if bad else 0)
EOF
say "PASS"
