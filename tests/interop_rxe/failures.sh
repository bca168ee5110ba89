# shellcheck shell=bash
# shellcheck disable=SC2034 # RXE_GGID is read by cases.sh
# What a failed interop case leaves for its reader, and how the run finds
# out that a failure broke the guest (sourced by scripts/interop-rxe.sh
# after cases.sh; run_case.sh decides). A hang shows only as a timeout,
# so both sides' state is saved while the programs still run (a snapshot
# RXE_SNAPSHOT_S seconds into a pair, uroce_pair's mechanism) and the
# guest's again right after the case. The first failure is printed once
# more at the very end: a runner that keeps only a long log's last lines
# (Meson prints 100) would otherwise show only the reports of the failures
# after it, which the first one may have caused.

# Seconds into a pair at which both sides' state is saved, and again five
# seconds later. Passing cases take 2-12 s here and in CI (a slow CI guest
# once took 30-73 s); a pair's limit is 90 s.
RXE_SNAPSHOT_S=${RXE_SNAPSHOT_S:-45}
RXE_SNAPPER=''
RXE_FIRST_FAILURE=''

# rxe_guest_state: the packet counts of eth0's tap, QEMU's view of eth0's
# queues, then the guest's load, its RDMA programs (state, kernel wait,
# and the kernel stack of one blocked in the kernel), rxe0's QPs and its
# nonzero counters, eth0's counts and the kernel's last messages (a
# report's digest keeps the first lines). Bounded: for a guest that
# answers nothing within 15 s, the last lines of its serial console (the
# kernel's errors reach it even under `quiet`).
rxe_guest_state() {
  # The far end of the guest's eth0 (its rx is what the guest sent): beside
  # the guest's own counts below, whether its frames leave QEMU.
  local t=/sys/class/net/$RXE_TAP/statistics
  echo "host: tap $RXE_TAP rx $(cat "$t/rx_packets") dropped $(cat "$t/rx_dropped"), tx $(cat "$t/tx_packets") dropped $(cat "$t/tx_dropped") (since the run began)"
  # Between the two, QEMU's virtio-net queues and the guest's ring indexes.
  timeout 15 "$SOURCE_ROOT/scripts/interop/qemu-queues.py" "$RXE_GUEST_DIR/monitor.sock" 2>&1 || true
  # shellcheck disable=SC2016 # the guest expands these
  rxe_guest_exec "$RXE_GUEST_DIR" 15 '
echo "guest: loadavg $(cat /proc/loadavg), up $(cut -d" " -f1 /proc/uptime) s"
case-procs | while read -r pid c s w; do
  echo "guest: pid $pid $c state $s wchan $w"
  [ "$s" != D ] || sed -n 1,8p "/proc/$pid/stack" | sed "s/^/    /"
done
rdma res show qp link rxe0/1 2>&1 | grep -v "type GSI" | sed -n 1,6p | sed "s/^/guest: /"
n=$(cd /sys/class/infiniband/rxe0/ports/1/hw_counters && for f in *; do
  v=$(cat "$f"); [ "$v" = 0 ] || printf "%s=%s " "$f" "$v"
done)
echo "guest: rxe0 counters not 0: ${n:-none}"
cd /sys/class/net/eth0 && echo "guest: eth0 $(cat operstate), tx $(cat statistics/tx_packets) dropped $(cat statistics/tx_dropped) errors $(cat statistics/tx_errors) timeouts $(cat queues/tx-0/tx_timeout), rx $(cat statistics/rx_packets) dropped $(cat statistics/rx_dropped)"
dmesg | grep -v "speed is unknown" | tail -n 6 | sed "s/^/guest: /"
' 2>&1 || {
    echo "guest: no answer within 15 s (exit $?); its console's last lines:"
    tail -n 6 "$RXE_GUEST_DIR/console.log" 2>&1 | sed 's/^/guest console: /'
  }
}

# rxe_guest_sweep: SIGKILL to every program a failed case left in the guest
# (a server whose client failed waits for its own time limit, and a
# pingpong polls its CQ: on the guest's one vCPU it would slow the cases
# after it). Prints what it killed.
rxe_guest_sweep() {
  # shellcheck disable=SC2016 # the guest expands these
  rxe_guest_exec "$RXE_GUEST_DIR" 15 '
case-procs | while read -r pid c s w; do
  kill -9 "$pid" && echo "guest: killed pid $pid $c"
done' 2>&1 || echo "guest: no answer to the sweep within 15 s"
}

# rxe_guest_sick: why the guest cannot carry more cases, or nothing: its
# agent answers nothing within 20 s; a program of the cases is still there
# (rxe_guest_sweep killed it: one that survives SIGKILL is stuck in the
# kernel); or its eth0 reaches nothing (three pings of the host's bridge
# address, none answered).
rxe_guest_sick() {
  local out
  out=$(rxe_guest_exec "$RXE_GUEST_DIR" 20 "
sleep 1
case-procs | while read -r pid c s w; do echo \"pid \$pid \$c (state \$s) survived SIGKILL\"; done
ping -c 3 -W 2 $RXE_HOST_IP >/dev/null 2>&1 || echo 'its ping of $RXE_HOST_IP got no answer'
echo agent-ok" 2>&1) || true
  if [[ $out != *agent-ok* ]]; then
    echo "answered nothing for 20 s"
  else
    echo "$out" | { grep -v '^agent-ok$' || true; } | tr '\n' ';' | sed 's/;$//; s/;/; /g'
  fi
}

# rxe_guest_restart: a new guest in RXE_GUEST_DIR; the old one's directory
# (its console log) stays beside it as RXE_GUEST_DIR.N.
rxe_guest_restart() {
  RXE_GUEST_RESTARTS=$((RXE_GUEST_RESTARTS + 1))
  rxe_guest_stop "$RXE_GUEST_DIR"
  mv "$RXE_GUEST_DIR" "$RXE_GUEST_DIR.$RXE_GUEST_RESTARTS"
  echo "guest restart $RXE_GUEST_RESTARTS (the old one's console: $RXE_GUEST_DIR.$RXE_GUEST_RESTARTS/console.log)"
  rxe_guest_boot || return 1
  RXE_GGID=$(rxe_guest_exec "$RXE_GUEST_DIR" 30 rxe-gid-index)
}

# rxe_snapshots_start BASE / rxe_snapshots_stop: around a pair's client.
# uroce_verdict prints BASE.qps-*.txt: every daemon's QP table and, through
# the hook, the guest's state.
rxe_snapshots_start() {
  UROCE_PAIR_BASE=$1
  UROCE_PAIR_SNAPSHOT_HOOK=rxe_guest_state _uroce_pair_snapshots "$1" "$RXE_SNAPSHOT_S" &
  RXE_SNAPPER=$!
}
rxe_snapshots_stop() {
  [ -n "$RXE_SNAPPER" ] || return 0
  kill "$RXE_SNAPPER" 2>/dev/null || true
  wait "$RXE_SNAPPER" 2>/dev/null || true
  RXE_SNAPPER=''
}

# rxe_failure_report LABEL GUEST-STATE-FILE: after uroce_verdict printed a
# failure's full report: the guest's state after the case, and, for the
# run's first failure, a digest of at most 45 lines that
# rxe_first_failure_print repeats at the end.
rxe_failure_report() {
  local label=$1 after=$2 f
  if [ -s "$after" ]; then
    echo "  --- the guest after $label"
    sed 's/^/    /' "$after"
  fi
  [ -z "$RXE_FIRST_FAILURE" ] || return 0
  RXE_FIRST_FAILURE=$UROCE_TMP/first-failure.txt
  {
    echo "FAIL: $label: ${UROCE_WHY:-no reason recorded}"
    if [ -n "$UROCE_SRV_CMD" ]; then
      echo "  server: $UROCE_SRV_CMD   (exit $UROCE_SRV_RC)"
      echo "  client: $UROCE_CLI_CMD   (exit $UROCE_CLI_RC)"
      for f in "$UROCE_SRV_OUT" "$UROCE_SRV_ERR" "$UROCE_CLI_OUT" "$UROCE_CLI_ERR"; do
        [ -s "$f" ] || continue
        echo "  --- ${f##*/} (last 4 lines)"
        tail -n 4 "$f" | sed 's/^/    /'
      done
    fi
    for f in "${UROCE_PAIR_BASE:-/nonexistent}".qps-*.txt; do
      [ -s "$f" ] || continue
      echo "  --- while the client ran: ${f##*/}"
      sed -n 1,12p "$f" | sed 's/^/    /'
      break
    done
    if [ -s "$after" ]; then
      echo "  --- the guest after the case"
      sed -n 1,14p "$after" | sed 's/^/    /'
    fi
  } | head -n 45 >"$RXE_FIRST_FAILURE"
}

rxe_first_failure_print() {
  [ -n "$RXE_FIRST_FAILURE" ] && [ -s "$RXE_FIRST_FAILURE" ] || return 0
  echo
  echo "=== the run's first failed try again (its whole report is further up) ==="
  cat "$RXE_FIRST_FAILURE"
}
