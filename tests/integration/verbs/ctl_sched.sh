#!/usr/bin/env bash
# Issue 14 (configuration and visibility of the TX policy): a daemon whose
# uroce0 is configured with --device isolation=classes, strict_classes and
# class_weights; root holds two RC QPs, the first limited to 10 Mb/s by
# ibv_modify_qp(IBV_QP_RATE_LIMIT), and nobody one. `uroce-ctl sched --json`
# as root must show uroce0's policy as configured and all three QPs with
# their class and pacing fields, one paced at 10,000,000 b/s; as nobody only
# nobody's QP, unpaced (status privacy); the table form must name the
# isolation mode of each device. Then a class rate limit end to end:
# uroce0's class 0 is limited to 500 Mb/s (class_rates_mbps), and an
# unmodified ib_write_bw from uroce0 (its QP in class 0: SL 0) to uroce1
# must report within 0.85..1.03 of 500 Mb/s of frames less their headers
# (4 KiB payload in 4,170-byte frames), while `uroce-ctl sched` shows the
# limit. The class keeps 2 ms of credit (kClassCreditNs), so the lower
# bound is lowered by the share of the 3 s run that the engine's loop spent
# away beyond 2 ms at a time (engine_away.py, from its loop histograms): a
# busy machine that takes the engine's CPU is not the limiter's fault.
#
#   ctl_sched.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vsched "$1" /usr/bin/python3 setpriv ib_write_bw

ABUSE=$VERBS_TEST_DIR/verbs_abuse.py
CHECK=$VERBS_TEST_DIR/ctl_sched.py
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d4:00:01 10.214.0.1 ring:p0);isolation=classes;strict_classes=6,7;class_weights=1,2,4;class_rates_mbps=500" \
  --device "$(verbs_device uroce1 02:00:00:d4:00:02 10.214.0.2 ring:p0)"
run=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$run")
hold=$UROCE_TMP/release

uroce_bg RPG --timeout 60 "$UROCE_TMP/root.out" "$UROCE_TMP/root.out" -- \
  "${R[@]}" /usr/bin/python3 "$ABUSE" objects uroce0 2 1 1 --hold "$hold" --rate 10000
uroce_bg NPG --timeout 60 "$UROCE_TMP/nobody.out" "$UROCE_TMP/nobody.out" -- \
  "${NOBODY[@]}" "${R[@]}" /usr/bin/python3 "$ABUSE" objects uroce0 1 1 1 --hold "$hold"
st=0
uroce_wait_for_line "$UROCE_TMP/root.out" '^qps 2 ' 30 "$RPG" &&
  uroce_wait_for_line "$UROCE_TMP/nobody.out" '^qps 1 ' 30 "$NPG" || {
  UROCE_WHY="the clients did not make their QPs: $(tail -n 2 "$UROCE_TMP/root.out" "$UROCE_TMP/nobody.out" | tr '\n' '|')"
  st=1
}
as_root=$UROCE_TMP/sched.root.json
as_nobody=$UROCE_TMP/sched.nobody.json
table=$UROCE_TMP/sched.table
"$UROCE_CTL" --run-dir "$run" sched --json >"$as_root" 2>&1 || st=1
"${NOBODY[@]}" "$UROCE_CTL" --run-dir "$run" sched --json >"$as_nobody" 2>&1 || st=1
"$UROCE_CTL" --run-dir "$run" sched >"$table" 2>&1 || st=1
cat "$table"
if [ "$st" -eq 0 ]; then
  if ! why=$(/usr/bin/python3 "$CHECK" uroce0 3 6,7 1,2,4 10000000 <"$as_root"); then
    UROCE_WHY="as root: $why"; st=1
  elif ! why=$(/usr/bin/python3 "$CHECK" uroce0 1 6,7 1,2,4 0 <"$as_nobody"); then
    UROCE_WHY="as nobody: $why"; st=1
  elif ! grep -q '^uroce0: isolation classes  pace granularity 1000 ns$' "$table" ||
    ! grep -q '^uroce1: isolation off' "$table"; then
    UROCE_WHY="the table does not name each device's isolation: $(head -c 300 "$table")"; st=1
  fi
  echo "  $(/usr/bin/python3 "$CHECK" uroce0 3 6,7 1,2,4 <"$as_root" | sed -n 1p)"
fi
uroce_verdict "uroce-ctl sched: uroce0 isolation classes, strict 6,7, weights 1,2,4; root sees 3 QPs (one paced at 10 Mb/s), nobody its 1" "$st"
touch "$hold"
uroce_wait "$RPG" ignored
uroce_wait "$NPG" ignored

st=0
uroce_next_port port
label="ib_write_bw from uroce0, whose class 0 is limited to 500 Mb/s"
"$UROCE_CTL" --run-dir "$run" status --json >"$UROCE_TMP/loops.before.json" 2>&1 || st=1
uroce_pair "$label" 60 "$port" - - -- \
  "${R[@]}" ib_write_bw -d uroce1 -x 1 -p "$port" -F -s 65536 -D 3 --report_gbits ::: \
  "${R[@]}" ib_write_bw -d uroce0 -x 1 -p "$port" -F -s 65536 -D 3 --report_gbits 127.0.0.1 ||
  st=1
if [ "$st" -eq 0 ]; then
  "$UROCE_CTL" --run-dir "$run" status --json >"$UROCE_TMP/loops.after.json" 2>&1 || st=1
  verbs_class_rate_check 0.5 3 "$UROCE_TMP/loops.before.json" "$UROCE_TMP/loops.after.json" || st=1
fi
"$UROCE_CTL" --run-dir "$run" sched >"$table" 2>&1 || st=1
if ! grep -qE '^ +0  weighted +1 +500 ' "$table"; then
  UROCE_WHY="uroce-ctl sched does not show class 0's 500 Mb/s: $(head -n 4 "$table" | tr '\n' '|')"
  st=1
fi
uroce_verdict "$label: at most 1.03 of the limit, and at least 0.85 of it less the time the engine was off the CPU" "$st"

verbs_daemons_stop "uroced exits 0 on SIGTERM" d
uroce_summary ctl_sched
