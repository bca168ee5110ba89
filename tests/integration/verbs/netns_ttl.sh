#!/usr/bin/env bash
# TTL end to end: two uroced daemons in two network namespaces on a veth
# pair driven by net_af_packet (as netns_pfc.sh). Daemon A sends with
# tx_ttl=32, daemon B with the default 64. While stock ibv_rc_pingpong runs
# A <-> B:
#   - dumpcap on each veth end reads the IPv4 TTL of what each daemon sends
#     (A's frames must carry 32, B's 64);
#   - ttl_inject.py, in B's namespace, writes into the veth end facing A's
#     port: (a) a RoCEv2 frame with A's own source MAC and IP, (b) a frame
#     B sent to A's QP (captured) again with TTL 64 then 60, (c) frames from
#     B's address with TTL 50 and 100 (B's usual TTL is 64).
# `uroce-ctl pfc --json` on A must count exactly those signals (own_packets
# 1, replay_lower_ttl 1, outliers_low 2 (the TTL 60 replay and the TTL 50
# frame), outliers_high 1) and A's log must carry a line for each kind.
#
#   netns_ttl.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vnetns_ttl "$1" ibv_rc_pingpong dumpcap tshark

verbs_netns_pair t 207
MACA=02:00:00:cf:00:01 MACB=02:00:00:cf:00:02
IPA=10.207.0.1 IPB=10.207.0.2

uroce_daemon_start a --netns "$NSA" --lcore 0 --poll backoff -- \
  --device "$(verbs_device uroce0 $MACA $IPA "$(verbs_af_packet_port "$DEVA")");tx_ttl=32"
uroce_daemon_start b --netns "$NSB" --lcore 1 --poll backoff -- \
  --device "$(verbs_device uroce0 $MACB $IPB "$(verbs_af_packet_port "$DEVB")")"
RUN_A=${UROCE_DAEMON_RUN[a]}
RA=("$UROCE_RUN" --run-dir "$RUN_A")
RB=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[b]}")

# Captures: what B sends as A receives it (also the frame to replay), and
# what A sends as B receives it ("inbound": not the frames injected on B's
# side, which leave through that same interface).
CAP_A=$UROCE_TMP/from_b.pcap CAP_B=$UROCE_TMP/from_a.pcap
uroce_bg capa_pid --netns "$NSA" --timeout 30 "$UROCE_TMP/capa.out" "$UROCE_TMP/capa.out" -- \
  dumpcap -q -P -i "$DEVA" -c 5 -f "inbound and udp dst port 4791 and src host $IPB" -w "$CAP_A"
uroce_bg capb_pid --netns "$NSB" --timeout 30 "$UROCE_TMP/capb.out" "$UROCE_TMP/capb.out" -- \
  dumpcap -q -P -i "$DEVB" -c 5 -f "inbound and udp dst port 4791 and src host $IPA" -w "$CAP_B"
for f in capa capb; do
  if ! uroce_wait_for_line "$UROCE_TMP/$f.out" 'Capturing on' 10; then
    echo "FAIL: dumpcap did not start: $(cat "$UROCE_TMP/$f.out")"
    exit 1
  fi
done

INJ_OUT=$UROCE_TMP/inject.out
ip netns exec "$NSB" /usr/bin/python3 "$VERBS_TEST_DIR/ttl_inject.py" "$DEVB" "$CAP_A" \
  "$MACA" "$IPA" "$MACB" "$IPB" >"$INJ_OUT" 2>&1 &
INJ_PID=$!

# Long enough (seconds) to outlast the replay, which starts as
# soon as the first frame from B is captured.
ITERS=5000
uroce_next_port port
st=0
uroce_pair "ibv_rc_pingpong while TTL signals are injected" 60 "$port" "$NSA" "$NSB" -- \
  "${RA[@]}" ibv_rc_pingpong -d uroce0 -g 1 -p "$port" -s 64 -n $ITERS -c ::: \
  "${RB[@]}" ibv_rc_pingpong -d uroce0 -g 1 -p "$port" -s 64 -n $ITERS -c "$TCP_IPA" &&
  uroce_check_pingpong 64 $ITERS || st=1
[ "$st" -eq 0 ] && echo "  $UROCE_RESULT"
uroce_verdict "ibv_rc_pingpong -c 64 B x $ITERS completes" "$st"
A_QPN=$(sed -nE 's/^ *local address: .*QPN (0x[0-9a-f]+),.*/\1/p' "$UROCE_SRV_OUT" | sed -n 1p)

uroce_no_pair
st=0
inj_rc=0
wait "$INJ_PID" || inj_rc=$?
sed 's/^/  /' "$INJ_OUT"
if [ "$inj_rc" -ne 0 ]; then
  UROCE_WHY="ttl_inject.py exited $inj_rc: $(tr '\n' '|' <"$INJ_OUT")"; st=1
fi
uroce_verdict "ttl_inject.py wrote the own, replay and outlier frames" "$st"

# tx_ttl on the wire.
st=0
for p in capa_pid capb_pid; do
  uroce_wait "${!p}" rc
  if [ "$rc" -ne 0 ]; then UROCE_WHY="dumpcap ($p) exited $rc"; st=1; fi
done
ttl_b=$(tshark -r "$CAP_A" -T fields -e ip.ttl 2>/dev/null | sort -u | tr '\n' ' ')
ttl_a=$(tshark -r "$CAP_B" -T fields -e ip.ttl 2>/dev/null | sort -u | tr '\n' ' ')
echo "  IPv4 TTLs on the wire: A (tx_ttl=32) sends: ${ttl_a}; B (default) sends: ${ttl_b}"
if [ "$st" -eq 0 ] && { [ "$ttl_a" != "32 " ] || [ "$ttl_b" != "64 " ]; }; then
  UROCE_WHY="want A's frames at TTL 32 and B's at 64; got A: '$ttl_a' B: '$ttl_b'"; st=1
fi
uroce_verdict "tx_ttl sets the IPv4 TTL on the wire (A 32, B default 64)" "$st"

# The daemon drains its event ring every 100 ms: read until every signal is
# counted and logged (or 20 s: what is missing then fails below).
PFC_JSON=$UROCE_TMP/pfc.json
LOG_A=${UROCE_DAEMON_LOG[a]}
deadline=$((SECONDS + 20))
while :; do
  "$UROCE_CTL" --run-dir "$RUN_A" pfc --json >"$PFC_JSON"
  counted=$(/usr/bin/python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["devices"][0]["pfc"]["ttl"]; print(int(t["own_packets"] >= 1 and t["replay_lower_ttl"] >= 1 and t["outliers_low"] >= 2 and t["outliers_high"] >= 1))' "$PFC_JSON")
  logged=$(grep -cE 'loop-own-packet|loop-replay-lower-ttl|ttl-outlier' "$LOG_A" || true)
  [ "$counted" = 1 ] && [ "$logged" -ge 4 ] && break
  [ $SECONDS -ge "$deadline" ] && break
  sleep 0.1
done
"$UROCE_CTL" --run-dir "$RUN_A" pfc | grep -E 'uroce0:|TTL' | sed 's/^/  /'
grep -E 'loop-own-packet|loop-replay-lower-ttl|ttl-outlier' "$LOG_A" | sed 's/^/  /' || true
st=0
why=$(/usr/bin/python3 - "$PFC_JSON" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["devices"][0]["pfc"]
t = p["ttl"]
want = [("tx_ttl", p["tx_ttl"], 32),
        ("ttl.own_packets", t["own_packets"], 1),
        ("ttl.replay_lower_ttl", t["replay_lower_ttl"], 1),
        ("ttl.outliers_low", t["outliers_low"], 2),
        ("ttl.outliers_high", t["outliers_high"], 1),
        ("events_lost", p["events_lost"], 0)]
bad = [f"{n}={got} (want {exp})" for n, got, exp in want if got != exp]
if not t["rx_checked"] > 5000:
    bad.append(f"ttl.rx_checked={t['rx_checked']} (want > 5000)")
print("; ".join(bad))
PY
)
if [ -n "$why" ]; then UROCE_WHY=$why; st=1; fi
uroce_verdict "uroce-ctl pfc counts one own packet, one lower-TTL replay, outliers 2 low 1 high" "$st"

st=0
REPLAY=$(sed -nE 's/^replay qpn=(0x[0-9a-f]+) psn=([0-9]+) .*/\1 \2/p' "$INJ_OUT")
R_QPN=${REPLAY% *} R_PSN=${REPLAY#* }
if [ -z "$A_QPN" ] || [ "$((R_QPN))" -ne "$((A_QPN))" ]; then
  UROCE_WHY="the replayed frame went to QPN '$R_QPN', A's pingpong QP is '$A_QPN'"; st=1
elif ! grep -qE "uroce0: loop-own-packet .*src=$IPA .*ttl=60 ref_ttl=32 " "$LOG_A"; then
  UROCE_WHY="no 'loop-own-packet src=$IPA ttl=60 ref_ttl=32' line in A's log"; st=1
elif ! grep -qE "uroce0: loop-replay-lower-ttl .*src=$IPB qpn=$(printf '0x%06x' "$R_QPN") psn=$R_PSN ttl=60 ref_ttl=64 " "$LOG_A"; then
  UROCE_WHY="no 'loop-replay-lower-ttl src=$IPB qpn=$R_QPN psn=$R_PSN ttl=60 ref_ttl=64' line in A's log"; st=1
elif ! grep -qE "uroce0: ttl-outlier .*src=$IPB .*ttl=60 ref_ttl=64 " "$LOG_A" ||
     ! grep -qE "uroce0: ttl-outlier .*src=$IPB .*ttl=50 ref_ttl=64 " "$LOG_A"; then
  UROCE_WHY="A's log lacks the ttl-outlier lines for TTL 60 and TTL 50 (ref 64)"; st=1
fi
uroce_verdict "A logs each loop signal (replay toward its live QP $A_QPN)" "$st"

verbs_daemons_stop "both daemons exit 0 on SIGTERM" a b

uroce_summary netns_ttl
