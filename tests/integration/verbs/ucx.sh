#!/usr/bin/env bash
# UCX (Debian's ucx-utils) over uroce devices, as a user runs it: stock
# ucx_perftest through uroce-run, with no UCX setting beyond the transport
# (UCX_TLS=rc: rc_verbs with ud_verbs for wire-up; UCX_TLS=ud: ud_verbs) and
# the device (UCX_NET_DEVICES). Two topologies: one uroced with uroce0 and
# uroce1 joined by a net_ring pair, and two daemons in two network
# namespaces joined by a veth pair each drives with net_af_packet. Each test
# is judged on both sides' exit status and on the client's "Final:" row
# (the iterations asked for, a positive rate).
#
#   ucx.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vucx "$1" ucx_perftest

ITERS=1000
# UCX's UD endpoint gives up after 30 s without an acknowledgement: the QP
# tables at 20 s and 25 s (uroce_pair) show where a stalled run stood.
UROCE_PAIR_SNAPSHOT_S=20
# ucx_check: the client's "Final:" row reports ITERS iterations and a
# positive overall message rate (its last column).
ucx_check() {
  local row
  row=$(grep -E '^Final:' "$UROCE_CLI_OUT" | tail -n 1)
  if [ -z "$row" ]; then
    UROCE_WHY="no Final: row in the client's output"; return 1
  fi
  read -r -a f <<<"$row"
  if [ "${f[1]}" != "$ITERS" ] || ! awk -v r="${f[${#f[@]} - 1]}" 'BEGIN { exit !(r > 0) }'; then
    UROCE_WHY="Final: row is not $ITERS iterations at a positive rate: $row"; return 1
  fi
  UROCE_RESULT=$row
}

# ucx TLS TEST SERVER_NS CLIENT_NS SERVER_DEV CLIENT_DEV SERVER_ADDR SIZE
#   (R_SRV / R_CLI: the uroce-run command of each side)
ucx() {
  local tls=$1 t=$2 sns=$3 cns=$4 sdev=$5 cdev=$6 addr=$7 size=$8 port st=0
  uroce_next_port port
  uroce_pair "$LABEL_PREFIX UCX_TLS=$tls ucx_perftest -t $t -s $size" 90 "$port" "$sns" "$cns" -- \
    env UCX_TLS="$tls" UCX_NET_DEVICES="$sdev" "${R_SRV[@]}" \
      ucx_perftest -t "$t" -s "$size" -n "$ITERS" -p "$port" ::: \
    env UCX_TLS="$tls" UCX_NET_DEVICES="$cdev" "${R_CLI[@]}" \
      ucx_perftest "$addr" -t "$t" -s "$size" -n "$ITERS" -p "$port" &&
    ucx_check || st=1
  [ "$st" -eq 0 ] && echo "  $UROCE_RESULT"
  uroce_verdict "$LABEL_PREFIX UCX_TLS=$tls ucx_perftest -t $t -s $size" "$st"
}

# Every test of the issue: tag matching latency and bandwidth, RMA put and
# get, and an atomic (fetch-and-add), over RC and over UD.
ucx_suite() {  # SERVER_NS CLIENT_NS SERVER_DEV CLIENT_DEV SERVER_ADDR
  local tls
  for tls in rc ud; do
    ucx "$tls" tag_lat "$@" 8
    ucx "$tls" tag_bw "$@" 65536
    ucx "$tls" ucp_put_bw "$@" 65536
    ucx "$tls" ucp_get "$@" 65536
    ucx "$tls" ucp_add "$@" 8
  done
}

# ---- one daemon, uroce0 and uroce1 on a ring --------------------------------
uroce_daemon_start r --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d2:00:01 10.210.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d2:00:02 10.210.0.2 ring:p0)"
R_SRV=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[r]}")
R_CLI=("${R_SRV[@]}")
LABEL_PREFIX=ring
ucx_suite - - uroce0:1 uroce1:1 127.0.0.1
verbs_daemons_stop "ring uroced" r

# ---- two daemons in two namespaces, af_packet over a veth pair -------------
verbs_netns_pair x 211
uroce_daemon_start a --netns "$NSA" --lcore 0 --poll backoff -- \
  --device "$(verbs_device uroce0 02:00:00:d3:00:01 10.211.0.1 "$(verbs_af_packet_port "$DEVA")")"
uroce_daemon_start b --netns "$NSB" --lcore 1 --poll backoff -- \
  --device "$(verbs_device uroce0 02:00:00:d3:00:02 10.211.0.2 "$(verbs_af_packet_port "$DEVB")")"
R_SRV=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[a]}")
R_CLI=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[b]}")
LABEL_PREFIX=netns
ucx_suite "$NSA" "$NSB" uroce0:1 uroce0:1 "$TCP_IPA"
verbs_daemons_stop "netns uroced" a b

uroce_summary ucx
