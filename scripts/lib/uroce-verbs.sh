# shellcheck shell=bash
# shellcheck disable=SC2034 # globals are read by the scripts that source this
# Running stock verbs programs (rdma-core's pingpong examples, perftest) as
# server/client pairs and judging their output. Source after uroce-env.sh.
#
#   uroce_pair LABEL TIMEOUT PORT SERVER_NS CLIENT_NS -- SERVER-CMD... ::: CLIENT-CMD...
#   uroce_check_pingpong SIZE ITERS        (on the last pair's output)
#   uroce_check_perftest bw|lat ITERS      (on the last pair's client output)
#   uroce_verdict LABEL STATUS             prints PASS/FAIL, counts (returns 0:
#                                          scripts under set -e go on)
#   uroce_summary                          "N passed, N failed"; false if any failed
#
# Why a check failed goes to UROCE_WHY; uroce_verdict prints it with the
# commands, their exit status, the tail of their output and of every running
# daemon's log.

# shellcheck source=scripts/lib/rping.sh
source "$(dirname "${BASH_SOURCE[0]}")/rping.sh"

UROCE_PASSED=0
UROCE_FAILED=0
UROCE_FAILED_NAMES=()
UROCE_WHY=
UROCE_RESULT=
_UROCE_PAIR_SEQ=0
UROCE_SRV_OUT='' UROCE_SRV_ERR='' UROCE_CLI_OUT='' UROCE_CLI_ERR=''
UROCE_SRV_RC='' UROCE_CLI_RC=''
UROCE_SRV_CMD='' UROCE_CLI_CMD=''
UROCE_PAIR_BASE=''

# Runs the server, waits until it listens on TCP PORT (the programs'
# out-of-band exchange) or, with PORT "cm:RUN_DIR", until the uroced of
# RUN_DIR has an rdma_cm listener, or with "mcast:RUN_DIR" until a QP of
# it is in a multicast group, then runs the client. Each has TIMEOUT seconds; a
# server still running a few seconds after its client ended is stopped.
# SERVER_NS/CLIENT_NS: network namespace or "-". True when both exit 0.
uroce_pair() {
  local label=$1 limit=$2 port=$3 sns=$4 cns=$5
  shift 5
  [ "$1" = "--" ] && shift
  local -a srv=() cli=()
  while [ $# -gt 0 ] && [ "$1" != ":::" ]; do
    srv+=("$1")
    shift
  done
  shift
  cli=("$@")
  _UROCE_PAIR_SEQ=$((_UROCE_PAIR_SEQ + 1))
  local base
  base=$UROCE_TMP/$(printf '%02d' "$_UROCE_PAIR_SEQ")-${label//[^A-Za-z0-9_.-]/_}
  UROCE_SRV_OUT=$base.server.out UROCE_SRV_ERR=$base.server.err
  UROCE_CLI_OUT=$base.client.out UROCE_CLI_ERR=$base.client.err
  UROCE_SRV_CMD="${srv[*]}"
  UROCE_CLI_CMD="${cli[*]}"
  [ "$sns" != "-" ] && UROCE_SRV_CMD="ip netns exec $sns $UROCE_SRV_CMD"
  [ "$cns" != "-" ] && UROCE_CLI_CMD="ip netns exec $cns $UROCE_CLI_CMD"
  UROCE_SRV_RC=- UROCE_CLI_RC=-
  UROCE_PAIR_BASE=$base
  : >"$UROCE_CLI_OUT"
  : >"$UROCE_CLI_ERR"
  UROCE_WHY=

  local spid cpid
  uroce_bg spid --netns "$sns" --timeout "$limit" "$UROCE_SRV_OUT" "$UROCE_SRV_ERR" -- "${srv[@]}"
  local listening=0 what="TCP port $port"
  if [[ $port == cm:* ]]; then
    what="rdma_cm (uroced ${port#cm:})"
    uroce_wait_cm_listen "${port#cm:}" 20 "$spid" && listening=1
  elif [[ $port == mcast:* ]]; then
    what="a multicast group (uroced ${port#mcast:})"
    uroce_wait_mcast_join "${port#mcast:}" 20 "$spid" && listening=1
  else
    uroce_wait_listen "$sns" "$port" 20 "$spid" && listening=1
  fi
  if [ "$listening" -eq 0 ]; then
    uroce_stop_group "$spid"
    uroce_wait "$spid" UROCE_SRV_RC
    UROCE_WHY="server never listened on $what (exit status $UROCE_SRV_RC)"
    return 1
  fi
  uroce_bg cpid --netns "$cns" --timeout "$limit" "$UROCE_CLI_OUT" "$UROCE_CLI_ERR" -- "${cli[@]}"
  local snapper=
  if [ -n "${UROCE_PAIR_SNAPSHOT_S:-}" ]; then
    _uroce_pair_snapshots "$base" "$UROCE_PAIR_SNAPSHOT_S" &
    snapper=$!
  fi
  uroce_wait "$cpid" UROCE_CLI_RC
  if [ -n "$snapper" ]; then
    kill "$snapper" 2>/dev/null || true
    wait "$snapper" 2>/dev/null || true
  fi
  # The server ends with the client; past a grace period it hangs.
  local grace=10
  [ "$UROCE_CLI_RC" -ne 0 ] && grace=3
  local deadline=$((SECONDS + grace))
  while uroce_running "$spid" && [ $SECONDS -lt "$deadline" ]; do
    sleep 0.1
  done
  local server_hung=0
  if uroce_running "$spid"; then
    server_hung=1
    uroce_stop_group "$spid"
  fi
  uroce_wait "$spid" UROCE_SRV_RC
  if [ "$UROCE_CLI_RC" -eq 124 ] || [ "$UROCE_CLI_RC" -eq 137 ]; then
    UROCE_WHY="client hung: killed after ${limit}s"
    return 1
  fi
  if [ "$server_hung" -eq 1 ]; then
    UROCE_WHY="server still running ${grace}s after the client exited $UROCE_CLI_RC"
    return 1
  fi
  if [ "$UROCE_CLI_RC" -ne 0 ] || [ "$UROCE_SRV_RC" -ne 0 ]; then
    UROCE_WHY="exit status: server $UROCE_SRV_RC, client $UROCE_CLI_RC (expected 0)"
    return 1
  fi
  return 0
}

# With UROCE_PAIR_SNAPSHOT_S=S set, a pair whose client still runs after S
# seconds has every running daemon's QP table (uroce-ctl qps) saved then and
# five seconds later, to BASE.qps-S.txt and BASE.qps-S+5.txt; uroce_verdict
# prints them. For a program that gives up on its own after a timeout (UCX's
# UD endpoint: 30 s without an acknowledgement), the two tables show whether
# the engine still held work of that QP (send or receive queue depth) and
# whether its packet counts moved, while the QPs still exist. With
# UROCE_PAIR_SNAPSHOT_HOOK set to a command, its output follows the tables
# (the rxe interop's: the guest's side, tests/interop_rxe/failures.sh).
_uroce_pair_snapshots() {  # BASE SECONDS
  local base=$1 t=$2 round name
  # Stopped when the client ends: its sleep goes with it (no orphan left).
  trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM
  sleep "$t" &
  wait $!
  for round in "$t" "$((t + 5))"; do
    for name in "${UROCE_DAEMONS[@]}"; do
      uroce_daemon_alive "$name" || continue
      {
        echo "uroced $name at ${round}s:"
        timeout 10 "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[$name]}" qps 2>&1 | sed -n 1,40p
      } >>"$base.qps-$round.txt"
    done
    if [ -n "${UROCE_PAIR_SNAPSHOT_HOOK:-}" ]; then
      {
        echo "$UROCE_PAIR_SNAPSHOT_HOOK at ${round}s:"
        "$UROCE_PAIR_SNAPSHOT_HOOK"
      } >>"$base.qps-$round.txt" 2>&1
    fi
    if [ "$round" = "$t" ]; then
      sleep 5 &
      wait $!
    fi
  done
}

# rdma-core's pingpong examples: each side prints
#   "<size*iters*2> bytes in <t> seconds = <r> Mbit/sec"
#   "<iters> iters in <t> seconds = <u> usec/iter"
# and with -c the server checks a byte per page of the last message it
# received (it starts as 0x7b, the client sends 0), printing "invalid data
# in page N" on a mismatch. Sets UROCE_RESULT to the client's figures.
uroce_check_pingpong() {
  local size=$1 iters=$2
  local bytes=$((size * iters * 2)) side f
  for side in server client; do
    if [ "$side" = server ]; then f=$UROCE_SRV_OUT; else f=$UROCE_CLI_OUT; fi
    if ! grep -qE "^$bytes bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$" "$f"; then
      UROCE_WHY="$side did not print '$bytes bytes in ... seconds'"
      return 1
    fi
    if ! grep -qE "^$iters iters in [0-9.]+ seconds = [0-9.]+ usec/iter$" "$f"; then
      UROCE_WHY="$side did not print '$iters iters in ... seconds'"
      return 1
    fi
    if grep -q "invalid data in page" "$f"; then
      UROCE_WHY="$side received corrupt data: $(grep -m1 'invalid data' "$f")"
      return 1
    fi
  done
  UROCE_RESULT="$(grep -E 'bytes in' "$UROCE_CLI_OUT"); $(grep -E 'iters in' "$UROCE_CLI_OUT")"
  return 0
}

# perftest 4.5 prints a table: a header line containing "#bytes", then one
# row per size: bytes, iterations, and either (bw) BW peak, BW average,
# message rate, or (lat) t_min, t_max, t_typical, t_avg, ... The client's
# row must report ITERS iterations and a positive BW average / t_min.
# One exception: perftest turns cycles into time with the CPU's MHz, which
# it measures at start (TSC against gettimeofday, a linear fit); when the
# fit is poor (a starved guest or host: "Correlation coefficient r^2: X <
# 0.9" on its stderr) it uses 0 MHz and every figure it prints is 0. The
# run itself is whole, so a zero figure is accepted then, and said in
# UROCE_RESULT; the iteration count is still checked.
# Sets UROCE_RESULT to the header and the rows.
uroce_check_perftest() {
  local kind=$1 iters=$2 f=$UROCE_CLI_OUT
  local rows
  rows=$(awk '/#bytes/ { hdr = 1; next }
              hdr && NF >= 4 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { print }' "$f")
  if [ -z "$rows" ]; then
    UROCE_WHY="client printed no result row under a '#bytes' header"
    return 1
  fi
  local no_clock='' col=4
  [ "$kind" = bw ] || col=3
  if grep -qs 'Correlation coefficient r^2: .* < 0.9' "$f" "${UROCE_CLI_ERR:-/dev/null}"; then
    no_clock=1
  fi
  local bad
  bad=$(echo "$rows" | awk -v n="$iters" -v c="$col" -v z="$no_clock" \
    '$2 != n || (!($c > 0) && z == "") { print }')
  if [ -n "$bad" ]; then
    UROCE_WHY="result row without $iters iterations or with a zero figure: $bad"
    return 1
  fi
  UROCE_RESULT="$(grep -m1 '#bytes' "$f" | sed 's/^ *//')
$(echo "$rows" | sed 's/^ *//')"
  if [ -n "$no_clock" ]; then
    UROCE_RESULT="$UROCE_RESULT
(no figure: the client's perftest could not measure its CPU clock, r^2 < 0.9)"
  fi
  return 0
}

# Prints PASS or FAIL for LABEL given STATUS (0 = pass). On failure: why,
# the last pair's commands, status and output, and every daemon's log tail.
uroce_verdict() {
  local label=$1 status=$2
  if [ "$status" -eq 0 ]; then
    UROCE_PASSED=$((UROCE_PASSED + 1))
    echo "PASS: $label"
    return 0
  fi
  UROCE_FAILED=$((UROCE_FAILED + 1))
  UROCE_FAILED_NAMES+=("$label")
  echo "FAIL: $label: ${UROCE_WHY:-no reason recorded}"
  uroce_failure_details
}

# What uroce_verdict prints under a FAIL line: the last pair's commands,
# status and output, its QP snapshots, and every daemon's log tail and
# counters. Also for a failure that counts as none (the rxe interop's
# first try on a guest that broke, tests/interop_rxe/run_case.sh).
uroce_failure_details() {
  if [ -n "$UROCE_SRV_CMD" ]; then
    echo "  server: $UROCE_SRV_CMD   (exit $UROCE_SRV_RC)"
    echo "  client: $UROCE_CLI_CMD   (exit $UROCE_CLI_RC)"
    local f
    for f in "$UROCE_SRV_OUT" "$UROCE_SRV_ERR" "$UROCE_CLI_OUT" "$UROCE_CLI_ERR"; do
      [ -s "$f" ] || continue
      # A crash's first lines say what failed; its backtrace fills the tail.
      if [ "$(wc -l <"$f")" -gt 12 ]; then
        echo "  --- ${f##*/} (first 6 lines)"
        head -n 6 "$f" | sed 's/^/    /'
      fi
      echo "  --- ${f##*/} (last 12 lines)"
      tail -n 12 "$f" | sed 's/^/    /'
    done
  fi
  local snap
  for snap in "${UROCE_PAIR_BASE:-/nonexistent}".qps-*.txt; do
    [ -s "$snap" ] || continue
    echo "  --- QP tables while the client ran: ${snap##*/}"
    sed 's/^/    /' "$snap"
  done
  local name
  for name in "${UROCE_DAEMONS[@]}"; do
    uroce_daemon_log_tail "$name" 15
    # The device counters outlive the programs' objects: what the engine
    # saw (completions, events, drops) up to the failure.
    if uroce_daemon_alive "$name"; then
      echo "--- uroce-ctl counters of $name"
      # Bounded: a daemon that stopped accepting must not hang the report.
      timeout 10 "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[$name]}" counters 2>&1 |
        sed -n 1,200p | sed 's/^/    /'
    fi
  done
  return 0
}

# After uroce_pair (or the rxe interop's rxe_pair) failed on the exit
# statuses alone: true when both sides are done by uroce_rping_done's rule
# (scripts/lib/rping.sh: 0, or Debian rping's exit race). The caller then
# judges the pings themselves (rping -v's lines).
uroce_rping_exit_race() {
  [[ $UROCE_WHY == "exit status: "* ]] || return 1
  local side rc err out
  for side in SRV CLI; do
    rc=UROCE_${side}_RC err=UROCE_${side}_ERR out=UROCE_${side}_OUT
    uroce_rping_done "${!rc}" "${!err}" "${!out}" || return 1
  done
  echo "  (rping's exit race after its pings: rdma_get_cm_event on its destroyed channel)"
}

# Clears the last pair, so a verdict on a check that ran no pair prints no
# stale commands or QP tables.
uroce_no_pair() {
  UROCE_SRV_CMD='' UROCE_CLI_CMD='' UROCE_WHY='' UROCE_RESULT='' UROCE_PAIR_BASE=''
}

uroce_summary() {
  local label=${1:-verbs}
  if [ "$UROCE_FAILED" -gt 0 ]; then
    local n
    echo "failed:"
    for n in "${UROCE_FAILED_NAMES[@]}"; do
      echo "  $n"
    done
  fi
  echo "$label: $UROCE_PASSED passed, $UROCE_FAILED failed"
  [ "$UROCE_FAILED" -eq 0 ]
}
