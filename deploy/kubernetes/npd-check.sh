#!/bin/sh
# node-problem-detector custom plugin (deploy/kubernetes/): meshperf check from this node's
# daemon to its peers. NPD reads the exit status as 0 OK, 1 problem, 2 unknown:
#   meshperf OK, WARNING -> 0 (the condition stays False; a WARNING is in the message)
#   CRITICAL             -> 1 (condition FabricDegraded=True, reason FabricSlow)
#   UNKNOWN              -> 2 (peer or daemon down, no baseline, no verdict in time)
# The peers come from PEERS_FILE (the meshperf-peers ConfigMap): lines "NODE PEER[:PORT]...",
# the node's own name (NODE_NAME, from the downward API) first; # starts a comment.
# Prints one line: the worst peer's Nagios status line, perfdata removed.
MESHPERF=${MESHPERF:-/usr/bin/meshperf}
TOKEN_FILE=${TOKEN_FILE:-/etc/meshperf/token/token}
INITIATOR=${INITIATOR:-localhost:7470}
PEERS_FILE=${PEERS_FILE:-/etc/meshperf/peers/peers}
CHECK_ARGS=${CHECK_ARGS:---baseline stored}
CHECK_TIMEOUT=${CHECK_TIMEOUT:-50}
node=${NODE_NAME:-$(hostname)}

peers=$(sed 's/#.*//' "$PEERS_FILE" 2>/dev/null | awk -v n="$node" '$1 == n { for (i = 2; i <= NF; i++) print $i }')
if [ -z "$peers" ]; then
    echo "MESHPERF UNKNOWN - no peers for node $node in $PEERS_FILE"
    exit 2
fi
worst=-1 line=""
for peer in $peers; do
    # shellcheck disable=SC2086
    out=$(timeout -k 1 "$CHECK_TIMEOUT" "$MESHPERF" --token-file "$TOKEN_FILE" check "$peer" --initiator "$INITIATOR" \
          --timeout $((CHECK_TIMEOUT - 1)) $CHECK_ARGS 2>&1)
    rc=$?
    first=$(printf '%s\n' "$out" | head -n 1)
    first=${first%%|*}
    case $rc in
        2) rank=3 ;; 1) rank=2 ;; 0) rank=0 ;;
        *) rank=1; [ "$rc" -gt 3 ] && first="MESHPERF UNKNOWN - meshperf check $peer ended with status $rc" ;;
    esac
    if [ "$rank" -gt "$worst" ]; then worst=$rank line=$first; fi
done
echo "$line"
case $worst in 3) exit 1 ;; 1) exit 2 ;; *) exit 0 ;; esac
