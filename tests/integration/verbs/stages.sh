#!/usr/bin/env bash
# Issue 31 (the tail profile): the stage stamps of a device whose key
# stage_stamps is on. One daemon, uroce0 (stamps on) and uroce1 (off) over a
# net_ring pair; unmodified ib_send_lat with its server on uroce0, then
# ib_read_lat with its client on uroce0. After each, uroce0's status must
# hold a tracked message for nearly every iteration (each SEND and READ is
# signalled and posted on an empty send queue), a completion after an RX
# burst for every iteration, and stages of the slowest messages that add up
# to their total (stages_check.py); uroce1's none. `uroce-ctl stages` must
# print uroce0's table.
#
#   stages.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vstages "$1" /usr/bin/python3 ib_send_lat ib_read_lat

CHECK=$VERBS_TEST_DIR/stages_check.py
uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d7:00:01 10.217.0.1 ring:p0);stage_stamps=on" \
  --device "$(verbs_device uroce1 02:00:00:d7:00:02 10.217.0.2 ring:p0)"
run=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$run")
ITERS=2000

# stages_after LABEL MIN_TRACKED MIN_RX_CQE : the verdict on uroce0's stages.
stages_after() {
  local label=$1 st=0 why
  "$UROCE_CTL" --run-dir "$run" status --json >"$UROCE_TMP/status.json" 2>&1 || st=1
  if [ "$st" -ne 0 ]; then
    UROCE_WHY="uroce-ctl status failed: $(head -c 300 "$UROCE_TMP/status.json")"
  elif ! why=$(/usr/bin/python3 "$CHECK" "$UROCE_TMP/status.json" uroce0 "$2" "$3" uroce1); then
    UROCE_WHY=$why
    st=1
  else
    echo "$why" | sed 's/^/  /'
  fi
  uroce_verdict "$label" "$st"
}

PP_ITERS=$ITERS verbs_perf ib_send_lat lat "ib_send_lat RC x $ITERS, server on uroce0 (stamps on)"
stages_after "uroce0 tracked its SENDs and their completions" $((ITERS - 10)) "$ITERS"

PP_ITERS=$ITERS PP_DEV_SRV=uroce1 PP_DEV_CLI=uroce0 \
  verbs_perf ib_read_lat lat "ib_read_lat RC x $ITERS, client on uroce0"
stages_after "uroce0 tracked its READs too" $((2 * ITERS - 20)) $((2 * ITERS))

st=0
"$UROCE_CTL" --run-dir "$run" stages >"$UROCE_TMP/stages.txt" 2>&1 || st=1
cat "$UROCE_TMP/stages.txt"
if ! grep -q '^uroce0 shard 0: ' "$UROCE_TMP/stages.txt" ||
  ! grep -qE '^total_ns +[0-9]+ ' "$UROCE_TMP/stages.txt" ||
  grep -q '^uroce1 ' "$UROCE_TMP/stages.txt"; then
  UROCE_WHY="uroce-ctl stages: $(head -c 300 "$UROCE_TMP/stages.txt")"
  st=1
fi
uroce_verdict "uroce-ctl stages shows uroce0's stages and not uroce1's" "$st"

verbs_daemons_stop "uroced exits 0 on SIGTERM" d
uroce_summary stages
