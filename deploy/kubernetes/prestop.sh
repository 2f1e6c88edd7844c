#!/bin/sh
# meshperfd's preStop hook (deploy/kubernetes/): waits until the daemon measures nothing
# and has nothing queued, so a rolling update or a drain does not cut a measurement short
# (SIGTERM stops meshperfd at once; a run cut short is stored as failed). Gives up after
# PRESTOP_MAX_S seconds (default 150; keep it under terminationGracePeriodSeconds, 180).
# Asks GET /v1/info through the CLI: queue.measuring is empty when idle.
MESHPERF=${MESHPERF:-/usr/bin/meshperf}
TOKEN_FILE=${TOKEN_FILE:-/etc/meshperf/token/token}
DAEMON=${DAEMON:-localhost:7470}
PRESTOP_MAX_S=${PRESTOP_MAX_S:-150}
deadline=$(( $(date +%s) + PRESTOP_MAX_S ))
while [ "$(date +%s)" -lt "$deadline" ]; do
    info=$(timeout 5 "$MESHPERF" --token-file "$TOKEN_FILE" info "$DAEMON" --format json 2>/dev/null) || {
        echo "prestop: $DAEMON does not answer: nothing to wait for"
        exit 0
    }
    measuring=$(printf '%s' "$info" | tr -d '\n' | sed -n 's/.*"measuring"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
    queued=$(printf '%s' "$info" | tr -d '\n' | sed -n 's/.*"queued"[[:space:]]*:[[:space:]]*\([0-9]*\).*/\1/p')
    if [ -z "$measuring" ] && [ "${queued:-0}" = 0 ]; then
        echo "prestop: $DAEMON idle"
        exit 0
    fi
    echo "prestop: waiting: measuring '${measuring}', ${queued:-0} queued"
    sleep 1
done
echo "prestop: still busy after ${PRESTOP_MAX_S} s: stopping anyway"
exit 0
