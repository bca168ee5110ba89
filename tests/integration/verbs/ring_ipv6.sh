#!/usr/bin/env bash
# RoCEv2 over IPv6 between uroce0 and uroce1 of one uroced (a crossed
# net_ring pair): GID index 0 (fe80:: link-local, from the MAC) and a
# configured global address (device key ipv6, GID index 2) as ibv_devinfo
# shows them; stock ibv_rc_pingpong, ibv_uc_pingpong and ibv_ud_pingpong
# with -g 0 (and RC with -g 2), ib_send_lat -x 0 over RC and UD, and
# ucx_perftest with UCX_IB_GID_INDEX=0 (RC and UD). Each run is judged on
# exit status and output as in ring_pingpong.sh and ucx.sh, and the
# devices' counters must show neighbour discovery and IPv6 RoCE frames.
#
#   ring_ipv6.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vring_v6 "$1" ibv_devinfo ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong \
  ib_send_lat ucx_perftest

G0=2001:db8:c13::1
G1=2001:db8:c13::2
uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d6:00:01 10.213.0.1 ring:p0);ipv6=$G0" \
  --device "$(verbs_device uroce1 02:00:00:d6:00:02 10.213.0.2 ring:p0);ipv6=$G1"
RUN=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$RUN")

# counter DEVICE NAME: one counter of `uroce-ctl counters --json`.
counter() {
  "$UROCE_CTL" --run-dir "$RUN" counters --json |
    python3 -c 'import json,sys; d=[x for x in json.load(sys.stdin)["devices"] if x["name"]==sys.argv[1]][0]; print(d["counters"][sys.argv[2]])' "$1" "$2"
}

# ---- the GID table ------------------------------------------------------------
gids_check() {  # DEV GLOBAL
  local dev=$1 g=$2 f=$UROCE_TMP/devinfo.$1.out
  uroce_no_pair
  if ! "${R[@]}" ibv_devinfo -v -d "$dev" >"$f" 2>&1; then
    UROCE_WHY="ibv_devinfo -v -d $dev exited non-zero: $(tail -n 3 "$f")"; return 1
  fi
  if ! grep -qE 'GID\[  0\]:\s+fe80::[0-9a-f:]+, RoCE v2' "$f"; then
    UROCE_WHY="ibv_devinfo -v -d $dev lacks a RoCE v2 fe80:: GID at index 0"; return 1
  fi
  if ! grep -qF "GID[  2]:		$g, RoCE v2" "$f"; then
    UROCE_WHY="ibv_devinfo -v -d $dev lacks GID[2] $g, RoCE v2: $(grep GID "$f" | tr '\n' '|')"
    return 1
  fi
}
st=0; gids_check uroce0 $G0 || st=1
grep -E 'GID\[' "$UROCE_TMP/devinfo.uroce0.out" || true
uroce_verdict "ibv_devinfo -v uroce0: GID 0 fe80::, GID 2 $G0, RoCE v2" "$st"

# ---- pingpong over IPv6 ---------------------------------------------------------
# pingpong PROGRAM GID LABEL SIZE ITERS [EXTRA-ARGS...]
pingpong() { PP_GID=$2 PP_LIMIT=30 verbs_pingpong "$1" "${@:3}"; }
v6_before=$(counter uroce1 rx_roce_ipv6)
pingpong ibv_rc_pingpong 0 "ibv_rc_pingpong -g 0 4096 B x 1000" 4096 1000
pingpong ibv_rc_pingpong 0 "ibv_rc_pingpong -g 0 -m 4096 1 MiB x 50" 1048576 50 -m 4096
pingpong ibv_uc_pingpong 0 "ibv_uc_pingpong -g 0 4096 B x 1000" 4096 1000
pingpong ibv_ud_pingpong 0 "ibv_ud_pingpong -g 0 2048 B x 1000" 2048 1000
pingpong ibv_rc_pingpong 2 "ibv_rc_pingpong -g 2 (global) 4096 B x 1000" 4096 1000

uroce_no_pair
st=0
nd0=$(counter uroce0 rx_nd) nd1=$(counter uroce1 rx_nd) v6=$(counter uroce1 rx_roce_ipv6)
echo "  uroce0 rx_nd=$nd0, uroce1 rx_nd=$nd1, uroce1 rx_roce_ipv6=$((v6 - v6_before))"
# Each pingpong is at least 2 x iterations frames each way.
if [ "$nd0" -le 0 ] || [ "$nd1" -le 0 ]; then
  UROCE_WHY="no neighbour discovery frame was received (rx_nd $nd0 / $nd1)"; st=1
elif [ $((v6 - v6_before)) -lt 4000 ]; then
  UROCE_WHY="uroce1 received only $((v6 - v6_before)) RoCEv2 frames over IPv6"; st=1
fi
uroce_verdict "counters: neighbour discovery on both devices, the pingpongs over IPv6" "$st"

# ---- perftest ---------------------------------------------------------------------
# perf LABEL [EXTRA-ARGS...]: ib_send_lat over GID 0 (fe80::), 1000 iterations.
perf() { PP_GID=0 verbs_perf ib_send_lat lat "$@"; }
perf "ib_send_lat -x 0 RC x 1000"
perf "ib_send_lat -x 0 UD x 1000" -c UD

# ---- UCX on GID index 0 -------------------------------------------------------------
ucx() {  # TLS TEST SIZE
  local tls=$1 t=$2 size=$3 port st=0 row
  uroce_next_port port
  uroce_pair "UCX_TLS=$tls UCX_IB_GID_INDEX=0 ucx_perftest -t $t" 90 "$port" - - -- \
    env UCX_TLS="$tls" UCX_NET_DEVICES=uroce0:1 UCX_IB_GID_INDEX=0 "${R[@]}" \
      ucx_perftest -t "$t" -s "$size" -n 1000 -p "$port" ::: \
    env UCX_TLS="$tls" UCX_NET_DEVICES=uroce1:1 UCX_IB_GID_INDEX=0 "${R[@]}" \
      ucx_perftest 127.0.0.1 -t "$t" -s "$size" -n 1000 -p "$port" || st=1
  if [ "$st" -eq 0 ]; then
    row=$(grep -E '^Final:' "$UROCE_CLI_OUT" | tail -n 1)
    read -r -a f <<<"$row"
    if [ -z "$row" ] || [ "${f[1]}" != 1000 ]; then
      UROCE_WHY="no Final: row of 1000 iterations: $row"; st=1
    else
      echo "  $row"
    fi
  fi
  uroce_verdict "UCX_TLS=$tls UCX_IB_GID_INDEX=0 ucx_perftest -t $t -s $size" "$st"
}
v6_before=$(counter uroce1 rx_roce_ipv6)
for tls in rc ud; do
  ucx "$tls" tag_lat 8
  ucx "$tls" ucp_put_bw 65536
  ucx "$tls" ucp_get 65536
done
uroce_no_pair
st=0
v6=$(counter uroce1 rx_roce_ipv6)
echo "  uroce1 rx_roce_ipv6 during UCX: $((v6 - v6_before))"
if [ $((v6 - v6_before)) -lt 2000 ]; then
  UROCE_WHY="UCX with GID index 0 did not run over IPv6 ($((v6 - v6_before)) frames)"; st=1
fi
uroce_verdict "UCX traffic over IPv6" "$st"

verbs_daemons_stop "uroced exits 0 on SIGTERM and removes its run dir and nodes" d

uroce_summary ring_ipv6
