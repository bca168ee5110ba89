#!/usr/bin/env bash
# PFC honouring end to end: two uroced daemons in two network namespaces on
# a veth pair driven by net_af_packet (as netns_af_packet.sh). Daemon A's
# uroce0 has PFC on priority 3 and a configured link speed of 100 Mb/s (a
# veth has no speed; 0xffff quanta then last 335 ms). Stock ibv_rc_pingpong
# -l 3 (service level 3 -> priority 3 -> DSCP 24) runs A <-> B while
# pfc_inject.py, in B's namespace, writes 802.1Qbb frames into the veth end
# that faces A's port: bad frames, a 153.6 ms pause of priority 3 (A's
# tx_frames must stand still, then move again), a long pause ended by a
# zero-quanta resume. Afterwards the pingpong must have completed (-c) and
# `uroce-ctl pfc --json` must count exactly what was injected.
#
#   netns_pfc.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vnetns_pfc "$1" ibv_rc_pingpong

verbs_netns_pair p 205

uroce_daemon_start a --netns "$NSA" --lcore 0 --poll backoff -- \
  --device "$(verbs_device uroce0 02:00:00:cd:00:01 10.205.0.1 "$(verbs_af_packet_port "$DEVA")");pfc=3;link_mbps=100"
uroce_daemon_start b --netns "$NSB" --lcore 1 --poll backoff -- \
  --device "$(verbs_device uroce0 02:00:00:cd:00:02 10.205.0.2 "$(verbs_af_packet_port "$DEVB")")"
RUN_A=${UROCE_DAEMON_RUN[a]}
RA=("$UROCE_RUN" --run-dir "$RUN_A")
RB=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[b]}")

INJ_OUT=$UROCE_TMP/inject.out
ip netns exec "$NSB" /usr/bin/python3 "$VERBS_TEST_DIR/pfc_inject.py" "$DEVB" 3 100 \
  "$UROCE_CTL" "$RUN_A" >"$INJ_OUT" 2>&1 &
INJ_PID=$!

ITERS=20000
uroce_next_port port
st=0
uroce_pair "ibv_rc_pingpong -l 3 while PFC frames are injected" 150 "$port" "$NSA" "$NSB" -- \
  "${RA[@]}" ibv_rc_pingpong -d uroce0 -g 1 -l 3 -p "$port" -s 64 -n $ITERS -c ::: \
  "${RB[@]}" ibv_rc_pingpong -d uroce0 -g 1 -l 3 -p "$port" -s 64 -n $ITERS -c "$TCP_IPA" &&
  uroce_check_pingpong 64 $ITERS || st=1
[ "$st" -eq 0 ] && echo "  $UROCE_RESULT"
uroce_verdict "ibv_rc_pingpong -l 3 -c 64 B x $ITERS completes through the pauses" "$st"

uroce_no_pair
st=0
inj_rc=0
wait "$INJ_PID" || inj_rc=$?
sed 's/^/  /' "$INJ_OUT"
if [ "$inj_rc" -ne 0 ]; then
  UROCE_WHY="pfc_inject.py exited $inj_rc: $(tr '\n' '|' <"$INJ_OUT")"; st=1
fi
uroce_verdict "a 153.6 ms pause of priority 3 stops A's transmission; a resume restarts it at once" "$st"

# What A counted, from uroce-ctl pfc --json.
PFC_JSON=$UROCE_TMP/pfc.json
"$UROCE_CTL" --run-dir "$RUN_A" pfc --json >"$PFC_JSON"
"$UROCE_CTL" --run-dir "$RUN_A" pfc | sed 's/^/  /'
st=0
why=$(/usr/bin/python3 - "$PFC_JSON" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["devices"][0]["pfc"]
q3, q5, q0 = p["priorities"][3], p["priorities"][5], p["priorities"][0]
want = [
    ("enabled_priorities", p["enabled_priorities"], [3]),
    ("link_mbps", p["link_mbps"], 100),
    ("rx_bad.Truncated", p["rx_bad"]["Truncated"], 1),
    ("rx_bad.NotPfcOpcode", p["rx_bad"]["NotPfcOpcode"], 1),
    ("priority 5 disabled_rx", q5["disabled_rx"], 1),
    ("priority 3 pause_rx", q3["pause_rx"], 2),
    ("priority 3 resume_rx", q3["resume_rx"], 1),
    ("priority 3 storms_detected", q3["storms_detected"], 0),
    ("priority 0 pause_rx", q0["pause_rx"], 0),
]
bad = [f"{n}={got} (want {exp})" for n, got, exp in want if got != exp]
# 153.6 ms, then about 50 ms until the resume (a few ms of scheduling).
if not 190e6 <= q3["paused_ns"] <= 300e6:
    bad.append(f"priority 3 paused_ns={q3['paused_ns']} (want 203.6 ms + scheduling)")
if q3["pump_skips"] + q3["tx_held"] == 0:
    bad.append("priority 3: no pump skip and no held frame during the pauses")
print("; ".join(bad))
PY
)
if [ -n "$why" ]; then UROCE_WHY=$why; st=1; fi
uroce_verdict "uroce-ctl pfc: pauses, resume, bad frames by reason, time paused" "$st"

# Storm watchdog (defaults: detection 200 ms, restoration 200 ms, action
# drop): one 0xffff-quanta pause (335 ms at 100 Mb/s) with no traffic, then
# nothing: detected after 200 ms, restored 200 ms after the pause ended;
# both transitions counted and logged.
st=0
ip netns exec "$NSB" /usr/bin/python3 - "$DEVB" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
f = b"\x01\x80\xc2\x00\x00\x01" + b"\x02\x00\x00\xee\x00\x01" + \
    struct.pack("!HHH", 0x8808, 0x0101, 1 << 3) + \
    b"".join(struct.pack("!H", 0xffff if p == 3 else 0) for p in range(8))
s.send(f + b"\x00" * (60 - len(f)))
PY
# Restored about 535 ms after the pause was sent; read until the storm is
# over (or 20 s: a daemon that never restores fails below).
deadline=$((SECONDS + 20))
while :; do
  "$UROCE_CTL" --run-dir "$RUN_A" pfc --json >"$PFC_JSON"
  storms=$(/usr/bin/python3 -c 'import json,sys; q=json.load(open(sys.argv[1]))["devices"][0]["pfc"]["priorities"][3]; print(q["storms_detected"], q["storms_restored"], q["stormed"])' "$PFC_JSON")
  [ "${storms#* }" != "0 True" ] && [ "${storms%% *}" != 0 ] && break
  [ $SECONDS -ge "$deadline" ] && break
  sleep 0.1
done
echo "  priority 3 storms_detected, storms_restored, stormed: $storms"
LOG_A=${UROCE_DAEMON_LOG[a]}
storm_logged() {
  grep -q 'uroce0: pfc-storm-detected .*prio=3' "$LOG_A" &&
    grep -q 'uroce0: pfc-storm-restored .*prio=3' "$LOG_A"
}
# The daemon drains its event ring every 100 ms: once the
# counters show the storm over, wait for the lines (up to 10 s) rather than
# read the log at once.
if [ "$storms" = "1 1 False" ]; then
  deadline=$((SECONDS + 10))
  until storm_logged || [ $SECONDS -ge "$deadline" ]; do sleep 0.1; done
fi
grep -E 'pfc-storm-(detected|restored)' "$LOG_A" | sed 's/^/  /' || true
if [ "$storms" != "1 1 False" ]; then
  UROCE_WHY="expected one storm detected and restored, got: $storms"; st=1
elif ! storm_logged; then
  UROCE_WHY="the daemon log lacks the pfc-storm-detected / pfc-storm-restored lines"; st=1
fi
uroce_verdict "a 335 ms pause is a storm after 200 ms: detected, restored, logged" "$st"

verbs_daemons_stop "both daemons exit 0 on SIGTERM" a b

uroce_summary netns_pfc
