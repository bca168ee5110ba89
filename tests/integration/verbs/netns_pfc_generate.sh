#!/usr/bin/env bash
# PFC generation daemon to daemon: two uroced daemons in two network
# namespaces on a veth pair driven by net_af_packet (as netns_pfc.sh), both
# with PFC on priority 3. Daemon B is made slow through its [device.pfc]
# configuration: one staged frame processed per engine iteration
# (rx_budget = 1) and static thresholds of 16 KiB XOFF / 8 KiB XON, with a
# headroom large enough for what A has in flight when the XOFF reaches it.
# Stock ibv_rc_pingpong -l 3 (service level 3 -> priority 3 -> DSCP 24) with
# 64 KiB messages (16 frames of 4 KiB each, back to back) from A, then
# ib_write_bw -S 3, make B fall behind: B must send XOFF and XON, A must
# receive the pauses and hold priority 3 for a measurable time, the traffic
# must complete with its data intact (-c) and B must drop nothing.
#
# --device only takes pfc=, tx_ttl= and link_mbps=; B's [device.pfc] table
# comes from a TOML fragment appended to the config uroce_daemon_start
# writes (a wrapper in place of uroced appends it before exec).
#
#   netns_pfc_generate.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vnetns_pfcgen "$1" ibv_rc_pingpong ib_write_bw

verbs_netns_pair g 206

uroce_daemon_start a --netns "$NSA" --lcore 0 --poll backoff -- \
  --device "$(verbs_device uroce0 02:00:00:ce:00:01 10.206.0.1 "$(verbs_af_packet_port "$DEVA")");pfc=3;link_mbps=1000"

# B: the device and its slow [device.pfc], appended to the generated config.
B_EXTRA=$UROCE_TMP/b-device.toml
cat >"$B_EXTRA" <<EOF

[[device]]
name = "uroce0"
port = "$(verbs_af_packet_port "$DEVB")"
mac = "02:00:00:ce:00:02"
ipv4 = "10.206.0.2"
mtu = 9000
link_mbps = 1000

[device.pfc]
priorities = [3]
mode = "static"
buffer_bytes = 8388608
headroom_bytes = 4194304
xoff_bytes = 16384
xon_bytes = 8192
rx_budget = 1
stage_slots = 2048
EOF
B_WRAP=$UROCE_TMP/uroced-b
cat >"$B_WRAP" <<EOF
#!/bin/sh
# \$1 \$2 = --config FILE (uroce_daemon_start); append B's device.
cat "$B_EXTRA" >>"\$2" && exec "$UROCED" "\$@"
EOF
chmod 755 "$B_WRAP"
REAL_UROCED=$UROCED
UROCED=$B_WRAP
uroce_daemon_start b --netns "$NSB" --lcore 1 --poll backoff
UROCED=$REAL_UROCED
RUN_A=${UROCE_DAEMON_RUN[a]} RUN_B=${UROCE_DAEMON_RUN[b]}
RA=("$UROCE_RUN" --run-dir "$RUN_A")
RB=("$UROCE_RUN" --run-dir "$RUN_B")

# A sends (client, in A's namespace), B receives (server).
SIZE=65536 ITERS=300
uroce_next_port port
st=0
uroce_pair "ibv_rc_pingpong -l 3 -c 64 KiB into slow B" 60 "$port" "$NSB" "$NSA" -- \
  "${RB[@]}" ibv_rc_pingpong -d uroce0 -g 1 -l 3 -m 4096 -p "$port" -s $SIZE -n $ITERS -c ::: \
  "${RA[@]}" ibv_rc_pingpong -d uroce0 -g 1 -l 3 -m 4096 -p "$port" -s $SIZE -n $ITERS -c "$TCP_IPB" &&
  uroce_check_pingpong $SIZE $ITERS || st=1
[ "$st" -eq 0 ] && echo "  $UROCE_RESULT"
uroce_verdict "ibv_rc_pingpong -l 3 -c 64 KiB x $ITERS completes, data intact" "$st"

BW_ITERS=500
uroce_next_port port
st=0
uroce_pair "ib_write_bw -S 3 into slow B" 60 "$port" "$NSB" "$NSA" -- \
  "${RB[@]}" ib_write_bw -d uroce0 -x 1 -S 3 -p "$port" -n $BW_ITERS -F ::: \
  "${RA[@]}" ib_write_bw -d uroce0 -x 1 -S 3 -p "$port" -n $BW_ITERS -F "$TCP_IPB" &&
  uroce_check_perftest bw $BW_ITERS || st=1
[ "$st" -eq 0 ] && echo "$UROCE_RESULT" | sed 's/^/  /'
uroce_verdict "ib_write_bw -S 3 RC 64 KiB x $BW_ITERS completes" "$st"

uroce_no_pair
JA=$UROCE_TMP/pfc_a.json JB=$UROCE_TMP/pfc_b.json
"$UROCE_CTL" --run-dir "$RUN_A" pfc --json >"$JA"
"$UROCE_CTL" --run-dir "$RUN_B" pfc --json >"$JB"
echo "  A:"; "$UROCE_CTL" --run-dir "$RUN_A" pfc | sed 's/^/    /'
echo "  B:"; "$UROCE_CTL" --run-dir "$RUN_B" pfc | sed 's/^/    /'
st=0
why=$(/usr/bin/python3 - "$JA" "$JB" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["devices"][0]["pfc"]
b = json.load(open(sys.argv[2]))["devices"][0]["pfc"]
a3, b3 = a["priorities"][3], b["priorities"][3]
bad = []
if b["enabled_priorities"] != [3] or a["enabled_priorities"] != [3]:
    bad.append(f"enabled_priorities A={a['enabled_priorities']} B={b['enabled_priorities']}")
if not b3["xoff_sent"] > 0:
    bad.append(f"B xoff_sent={b3['xoff_sent']} (want > 0)")
if not b3["xon_sent"] > 0:
    bad.append(f"B xon_sent={b3['xon_sent']} (want > 0)")
if not b3["peak_bytes"] > 16384:
    bad.append(f"B peak_bytes={b3['peak_bytes']} (want > xoff_bytes 16384)")
if not a3["pause_rx"] > 0:
    bad.append(f"A pause_rx={a3['pause_rx']} (want > 0)")
if not a3["paused_ns"] > 0:
    bad.append(f"A paused_ns={a3['paused_ns']} (want > 0)")
# XOFF and XON frames B sent are what A received, pause for pause (one
# veth, nothing in between drops).
sent = b3["xoff_sent"] + b3["refresh_sent"]
if a3["pause_rx"] != sent or a3["resume_rx"] != b3["xon_sent"]:
    bad.append(f"A pause_rx/resume_rx={a3['pause_rx']}/{a3['resume_rx']} but B sent "
               f"xoff+refresh={sent} xon={b3['xon_sent']}")
for k in ("drop_stage_full", "drop_headroom_full", "drop_lossy_full"):
    if b3[k] != 0:
        bad.append(f"B {k}={b3[k]} (want 0)")
if b3["staged"] != b3["processed"] or b3["occupied_bytes"] != 0 or b3["asserted"]:
    bad.append(f"B staged={b3['staged']} processed={b3['processed']} "
               f"occupied={b3['occupied_bytes']} asserted={b3['asserted']} (want all processed)")
for k in ("drop_hold_full", "storm_drops", "storms_detected"):
    if a3[k] != 0:
        bad.append(f"A {k}={a3[k]} (want 0)")
print("; ".join(bad))
print(f"B xoff_sent={b3['xoff_sent']} refresh_sent={b3['refresh_sent']} xon_sent={b3['xon_sent']} "
      f"peak_bytes={b3['peak_bytes']} staged={b3['staged']} asserted_ms={b3['asserted_ns']/1e6:.3f}; "
      f"A pause_rx={a3['pause_rx']} resume_rx={a3['resume_rx']} paused_ms={a3['paused_ns']/1e6:.3f} "
      f"pump_skips={a3['pump_skips']} tx_held={a3['tx_held']}", file=sys.stderr)
PY
)
if [ -n "$why" ]; then UROCE_WHY=$why; st=1; fi
uroce_verdict "B paused A: XOFF and XON sent, pauses received and obeyed, no drop at B" "$st"

verbs_daemons_stop "both daemons exit 0 on SIGTERM" a b

uroce_summary netns_pfc_generate
