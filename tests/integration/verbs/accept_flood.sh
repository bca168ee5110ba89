#!/usr/bin/env bash
# Issue 12, item 2: uroced at its descriptor limit. The daemon runs with a
# small RLIMIT_NOFILE (128); a client running as nobody holds 200
# connections (more than the daemon has descriptors for), then floods the
# socket with connect/close for 6 s. Throughout, root's `uroce-ctl status`
# must answer within 1 s (the accept thread's reserve descriptor); the
# daemon's log may grow by a bounded number of lines (one per second at
# most about the limit, not one per pass); and once the flood ends, a new
# client (as nobody) opens a device and allocates a PD. Before the fix the
# accept loop spun on EMFILE logging a line per pass (about 1 million lines
# in 6 s) and every new connection, status included, hung.
# Then a flood within the limit (20 held, 3 s of connect/close, each one
# served): the connections' threads come from a pool (worker_pool.h), so
# the threads started stay near the most connections served at once, not
# the number made (a thread per connection before).
#
#   accept_flood.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vaccfl "$1" /usr/bin/python3 setpriv

ABUSE=$VERBS_TEST_DIR/verbs_abuse.py
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
FLOOD_SECS=6

verbs_uroced_nofile 128

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:cf:00:01 10.207.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:cf:00:02 10.207.0.2 ring:p0)"
run=${UROCE_DAEMON_RUN[d]}
log=${UROCE_DAEMON_LOG[d]}
lines_before=$(wc -l <"$log")

flood_out=$UROCE_TMP/flood.out
uroce_bg FLOOD_PG --timeout 60 "$flood_out" "$flood_out" -- \
  "${NOBODY[@]}" /usr/bin/python3 "$ABUSE" flood "$run/uroced.sock" 200 "$FLOOD_SECS"

# Root's status, timed, every 0.2 s while the flood runs.
st=0 worst=0 asked=0 slow=0
while uroce_running "$FLOOD_PG"; do
  t0=$(date +%s%N)
  if ! timeout 5 "$UROCE_CTL" --run-dir "$run" status >"$UROCE_TMP/status.out" 2>&1; then
    UROCE_WHY="uroce-ctl status failed during the flood: $(head -n 2 "$UROCE_TMP/status.out" | tr '\n' '|')"
    st=1
  fi
  ms=$((($(date +%s%N) - t0) / 1000000))
  asked=$((asked + 1))
  [ "$ms" -gt "$worst" ] && worst=$ms
  [ "$ms" -ge 1000 ] && slow=$((slow + 1))
  sleep 0.2
done
uroce_wait "$FLOOD_PG" flood_rc
cat "$flood_out"
echo "  status asked $asked times during the flood, slowest answer ${worst} ms"
if [ "$slow" -gt 0 ]; then
  UROCE_WHY="$slow of $asked status requests took 1 s or more (slowest ${worst} ms)"
  st=1
fi
if [ "$asked" -lt 10 ]; then
  UROCE_WHY="status was asked only $asked times during a ${FLOOD_SECS} s flood"
  st=1
fi
uroce_verdict "root's uroce-ctl status answers within 1 s while nobody floods a daemon out of fds" "$st"

st=0
hits=$(grep -c 'out of descriptors' "$log" || true)
grown=$(($(wc -l <"$log") - lines_before))
echo "  log: $grown new lines, $hits about the descriptor limit"
if [ "$hits" -lt 1 ]; then
  UROCE_WHY="the daemon never reached its descriptor limit (nothing tested)"
  st=1
elif [ "$hits" -gt $((FLOOD_SECS + 3)) ] || [ "$grown" -gt 200 ]; then
  UROCE_WHY="log grew by $grown lines ($hits about the limit) in a ${FLOOD_SECS} s flood"
  st=1
fi
uroce_verdict "the log grows by a bounded number of lines (at most one a second about the limit)" "$st"

st=0
out=$UROCE_TMP/open.out
if ! timeout 20 "${NOBODY[@]}" "$UROCE_RUN" --run-dir "$run" /usr/bin/python3 "$ABUSE" open uroce0 \
  >"$out" 2>&1; then
  UROCE_WHY="a fresh client failed after the flood: $(tail -n 3 "$out" | tr '\n' '|')"
  st=1
fi
uroce_verdict "a fresh client (nobody) opens a device once descriptors are free again" "$st"

st=0
started_before=$("$UROCE_CTL" --run-dir "$run" status --json |
  /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["workers"]["started"])')
out=$UROCE_TMP/flood2.out
timeout 30 "${NOBODY[@]}" /usr/bin/python3 "$ABUSE" flood "$run/uroced.sock" 20 3 >"$out" 2>&1 || st=1
cat "$out"
made=$(sed -n 's/.*made \([0-9]*\) more.*/\1/p' "$out")
workers=$("$UROCE_CTL" --run-dir "$run" status --json |
  /usr/bin/python3 -c 'import json,sys; w=json.load(sys.stdin)["daemon"]["workers"]; print(w["started"], w["workers"], w["tasks"])')
read -r started alive tasks <<<"$workers"
echo "  workers: $started started ($started_before before this flood), $alive alive, $tasks connections served"
if [ "$st" -ne 0 ] || [ -z "$made" ]; then
  UROCE_WHY="the flood within the limit failed: $(tail -n 2 "$out" | tr '\n' '|')"
  st=1
elif [ "$made" -lt 500 ]; then
  UROCE_WHY="only $made connections made in 3 s (nothing tested)"
  st=1
elif [ $((started - started_before)) -gt 40 ]; then
  UROCE_WHY="$((started - started_before)) threads started for $made connections (20 held at most at once)"
  st=1
fi
uroce_verdict "a flood of $made connections starts threads for the ones served at once, not one each" "$st"

verbs_daemons_stop "uroced exits 0 on SIGTERM" d
uroce_summary accept_flood
