#!/usr/bin/env bash
# One uroced whose engine runs on two lcores (--lcores 0,1): each of its two
# devices (uroce0, uroce1, a crossed net_ring pair with a queue per lcore)
# is two shards, and each client lives on the shard serving the fewest
# clients (docs/engine.md "Several lcores"). Unmodified rdma-core pingpongs
# (with -c: the server checks the data) and perftest through uroce-run, in
# three placements made on purpose by holding idle clients open:
#   straight  both ends on shard 0;
#   crossed   uroce0's end on shard 1, uroce1's on shard 0, so every frame
#             lands on the other shard's queue and is handed over;
#   shard 1   both ends on shard 1;
# and uroce0 to itself across its two shards (the loopback hand-off); then
# two such daemons over a memif pair of two queues (perftest with 4 QPs,
# and a pingpong whose end on one daemon is on shard 1). Both
# devices steer their RC and UC source ports (steer_src_port; a net_ring
# pair has no RSS, so this shows only that connections work with them).
# After each placement the status JSON must show the traffic on the shards
# it was placed on, the hand-offs where frames crossed, and no hand-off
# refused.
#
#   ring_lcores.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vring_lc "$1" ibv_rc_pingpong ibv_ud_pingpong ibv_srq_pingpong \
  ib_write_bw ib_send_bw ib_read_lat ib_send_lat

IP0=10.217.0.1
IP1=10.217.0.2
uroce_daemon_start d -- --lcores 0,1 \
  --device "$(verbs_device uroce0 02:00:00:e2:00:01 $IP0 ring:p0);steer_src_port=on" \
  --device "$(verbs_device uroce1 02:00:00:e2:00:02 $IP1 ring:p0);steer_src_port=on"
RUN=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$RUN")
STATUS=$UROCE_TMP/status.json

# status_check LABEL PYTHON-EXPRESSION: the expression, over `j` (the status
# JSON) and `sh(dev, shard)` (that shard's line), must be true.
status_check() {
  local label=$1 expr=$2 st=0
  uroce_no_pair
  if ! "$UROCE_CTL" --run-dir "$RUN" status --json >"$STATUS" 2>&1; then
    UROCE_WHY="uroce-ctl status --json failed: $(tail -n 3 "$STATUS")"; st=1
  elif ! /usr/bin/python3 - "$STATUS" "$expr" <<'PY'; then
import json, sys
j = json.load(open(sys.argv[1]))
devs = {d["name"]: d for d in j["devices"]}
def sh(dev, i):
    return devs[dev]["shards"][i]
if not eval(sys.argv[2]):
    for d in j["devices"]:
        print(d["name"], "shards", d.get("shards"), "port_rx", d["counters"].get("port_rx"))
    sys.exit(1)
PY
    UROCE_WHY="status does not satisfy: $expr"; st=1
  fi
  uroce_verdict "$label" "$st"
}

status_check "status: lcores [0, 1]; every device two shards on a port of two queues" \
  'j["daemon"]["lcores"] == [0, 1] and all(len(d["shards"]) == 2 and d["port_info"]["queues"] == 2 for d in j["devices"])'

st=0
out=$UROCE_TMP/status.txt
if ! "$UROCE_CTL" --run-dir "$RUN" status >"$out" 2>&1; then
  UROCE_WHY="uroce-ctl status failed: $(tail -n 3 "$out")"; st=1
elif ! grep -q '  lcores 0,1  ' "$out" || ! grep -qE '^uroce1 +1 +1 +0 +0 ' "$out"; then
  UROCE_WHY="uroce-ctl status shows no lcores 0,1 or no line for uroce1's shard 1: $(tr '\n' '|' <"$out")"; st=1
fi
uroce_verdict "uroce-ctl status: the daemon's lcores and a line per shard" "$st"

# pingpong PROGRAM LABEL SIZE ITERS [EXTRA-ARGS...]: server on uroce0.
pingpong() { verbs_pingpong "$@"; }

ITERS=1000
# perf PROGRAM bw|lat LABEL [EXTRA-ARGS...]: server on uroce0; with -q N set
# QPS=N (perftest reports ITERS * N iterations).
# perf PROGRAM bw|lat LABEL [EXTRA-ARGS...]; with N QPs (-q N) perftest
# reports ITERS * N iterations: set QPS=N for that run.
perf() { PP_ITERS=$ITERS PP_QPS=${QPS:-1} verbs_perf "$@"; }

# hold DEV VAR [RUN]: an idle client on DEV (an ibv_rc_pingpong server
# that no client will reach) through the uroce-run prefix in the array named
# RUN (R), its pid in VAR; placed like any client.
hold() {
  local port
  local -n hold_run=${3:-R}
  uroce_next_port port
  uroce_bg "$2" --timeout 600 "$UROCE_TMP/hold.$1.$port.out" "$UROCE_TMP/hold.$1.$port.out" -- \
    "${hold_run[@]}" ibv_rc_pingpong -d "$1" -g 1 -p "$port"
  # It opens the device before it listens.
  if ! uroce_wait_listen - "$port" 20 "${!2}"; then
    uroce_verdict "an idle client on $1 listens on TCP port $port" 1
  fi
}

# ---- straight: both ends on shard 0 -----------------------------------------
pingpong ibv_rc_pingpong "straight: ibv_rc_pingpong 4096 B x 1000" 4096 1000
pingpong ibv_ud_pingpong "straight: ibv_ud_pingpong 2048 B x 1000" 2048 1000
pingpong ibv_srq_pingpong "straight: ibv_srq_pingpong 4 QPs 4096 B x 1000" 4096 1000 -q 4
QPS=4 perf ib_send_bw bw "straight: ib_send_bw RC 4 QPs 64 KiB x $ITERS" -q 4
status_check "straight: the traffic on shard 0 of both devices, nothing handed over" \
  'sh("uroce0", 0)["tx_frames"] > 0 and sh("uroce1", 0)["tx_frames"] > 0 and sh("uroce0", 1)["tx_frames"] == 0 and sh("uroce1", 1)["tx_frames"] == 0 and all(d["counters"]["port_rx"]["handed_off"] == 0 for d in j["devices"])'

# ---- crossed: uroce0's end on shard 1, uroce1's on shard 0 ------------------
hold uroce0 H0
status_check "crossed: the idle client holds uroce0's shard 0" \
  'sh("uroce0", 0)["clients"] == 1 and sh("uroce0", 1)["clients"] == 0'
pingpong ibv_rc_pingpong "crossed: ibv_rc_pingpong 8192 B x 1000" 8192 1000
pingpong ibv_ud_pingpong "crossed: ibv_ud_pingpong 2048 B x 1000" 2048 1000
perf ib_write_bw bw "crossed: ib_write_bw RC 64 KiB x $ITERS"
perf ib_read_lat lat "crossed: ib_read_lat RC x $ITERS"
status_check "crossed: uroce0's shard 1 sent, both devices handed frames over, none refused" \
  'sh("uroce0", 1)["tx_frames"] > 0 and sh("uroce0", 0)["rx_handoff"] > 0 and sh("uroce0", 1)["handed_in"] > 0 and sh("uroce1", 1)["rx_handoff"] > 0 and sh("uroce1", 0)["handed_in"] > 0 and all(d["counters"]["port_rx"]["handoff_full"] == 0 and d["counters"]["rx_handoff_drop"] == 0 for d in j["devices"])'

# ---- uroce0 to itself, across its shards ------------------------------------
PP_DEV_CLI=uroce0 verbs_pingpong ibv_rc_pingpong \
  "loopback: ibv_rc_pingpong uroce0 shard 1 to shard 0, 4096 B x 1000" 4096 1000

# ---- shard 1: both ends there -----------------------------------------------
hold uroce1 H1
before=$("$UROCE_CTL" --run-dir "$RUN" status --json |
  /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["devices"][1]["shards"][1]["tx_frames"])')
perf ib_send_bw bw "shard 1: ib_send_bw RC 64 KiB x $ITERS"
perf ib_send_lat lat "shard 1: ib_send_lat UD x $ITERS" -c UD
status_check "shard 1: uroce1's shard 1 carried the runs" \
  "sh('uroce1', 1)['tx_frames'] > $before and sh('uroce1', 1)['clients'] == 0"

for h in "$H0" "$H1"; do
  uroce_kill_group KILL "$h"
  uroce_wait "$h" _
done
uroce_no_pair
verbs_daemons_stop "uroced exits 0 on SIGTERM and removes its run dir and nodes" d

# ---- two daemons of two lcores over a memif pair of two queues --------------
sock=$UROCE_TMP/memif.sock
uroce_daemon_start e -- --lcores 0,1 \
  --device "$(verbs_device uroce0 02:00:00:e2:00:03 10.217.0.3 "net_memif0,role=server,socket=$sock");steer_src_port=on"
uroce_daemon_start f -- --lcores 0,1 \
  --device "$(verbs_device uroce0 02:00:00:e2:00:04 10.217.0.4 "net_memif0,role=client,socket=$sock");steer_src_port=on"
RE=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[e]}")
RF=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[f]}")
RUN=${UROCE_DAEMON_RUN[f]}
status_check "memif: daemon f's port has two queues, its device two shards" \
  'j["daemon"]["lcores"] == [0, 1] and devs["uroce0"]["port_info"]["queues"] == 2 and len(devs["uroce0"]["shards"]) == 2'
# Daemon e serves, daemon f connects (both uroce0).
PP_SRV=RE PP_CLI=RF PP_DEV_CLI=uroce0 PP_ITERS=$ITERS PP_QPS=4 \
  verbs_perf ib_send_bw bw "memif: ib_send_bw RC 4 QPs 64 KiB x $ITERS between two daemons" -q 4
# Daemon f's end on shard 1 (an idle client holds shard 0), e's on shard 0.
hold uroce0 HF RF
PP_SRV=RE PP_CLI=RF PP_DEV_CLI=uroce0 verbs_pingpong ibv_rc_pingpong \
  "memif: ibv_rc_pingpong 4096 B x 1000, daemon f's end on shard 1" 4096 1000
status_check "memif: daemon f's shard 1 sent, and took over what arrived on shard 0" \
  'sh("uroce0", 1)["tx_frames"] > 0 and sh("uroce0", 0)["rx_handoff"] > 0 and devs["uroce0"]["counters"]["port_rx"]["handoff_full"] == 0'
uroce_kill_group KILL "$HF"
uroce_wait "$HF" _
uroce_no_pair
verbs_daemons_stop "both memif daemons exit 0 on SIGTERM" e f

uroce_summary ring_lcores
