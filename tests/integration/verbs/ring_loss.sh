#!/usr/bin/env bash
# Loss injection end to end: one uroced, two devices on a crossed net_ring
# pair, uroce0 dropping every 7th RoCEv2 frame it sends and uroce1 a seeded
# 2% of those it receives. Stock ibv_rc_pingpong -c must still complete
# (RC retransmits), and `uroce-ctl counters --json` must show the drops on
# the right device and direction only.
#
#   ring_loss.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vring_loss "$1" ibv_rc_pingpong

IP0=10.204.0.1
IP1=10.204.0.2
uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:cc:00:01 $IP0 ring:p0);drop_tx_every=7" \
  --device "$(verbs_device uroce1 02:00:00:cc:00:02 $IP1 ring:p0);drop_rx_rate=0.02;drop_seed=5"
RUN=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$RUN")

# counter DEVICE NAME: one counter of `uroce-ctl counters --json`.
counter() {
  "$UROCE_CTL" --run-dir "$RUN" counters --json |
    python3 -c 'import json,sys; d=[x for x in json.load(sys.stdin)["devices"] if x["name"]==sys.argv[1]][0]; print(d["counters"][sys.argv[2]])' "$1" "$2"
}

uroce_next_port port
st=0
uroce_pair "ibv_rc_pingpong over a lossy ring" 60 "$port" - - -- \
  "${R[@]}" ibv_rc_pingpong -d uroce0 -g 1 -p "$port" -s 4096 -n 200 -c ::: \
  "${R[@]}" ibv_rc_pingpong -d uroce1 -g 1 -p "$port" -s 4096 -n 200 -c 127.0.0.1 &&
  uroce_check_pingpong 4096 200 || st=1
[ "$st" -eq 0 ] && echo "  $UROCE_RESULT"
uroce_verdict "ibv_rc_pingpong -c 4096 B x 200 with uroce0 drop_tx_every=7, uroce1 drop_rx_rate=0.02" "$st"

uroce_no_pair
st=0
tx0=$(counter uroce0 tx_impair_drop) rx0=$(counter uroce0 rx_impair_drop)
tx1=$(counter uroce1 tx_impair_drop) rx1=$(counter uroce1 rx_impair_drop)
echo "  uroce0 tx_impair_drop=$tx0 rx_impair_drop=$rx0; uroce1 tx_impair_drop=$tx1 rx_impair_drop=$rx1"
if [ "$tx0" -le 0 ] || [ "$rx1" -le 0 ] || [ "$rx0" -ne 0 ] || [ "$tx1" -ne 0 ]; then
  UROCE_WHY="expected uroce0 tx_impair_drop > 0, uroce1 rx_impair_drop > 0 and the other two 0"
  st=1
fi
"$UROCE_CTL" --run-dir "$RUN" counters | grep -E 'impair' || true
uroce_verdict "uroce-ctl counters: drops on uroce0 TX and uroce1 RX only" "$st"

verbs_daemons_stop "uroced exits 0 on SIGTERM" d

uroce_summary ring_loss
