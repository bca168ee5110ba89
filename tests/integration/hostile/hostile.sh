#!/usr/bin/env bash
# The hostile-peer conformance suite (docs/security.md). One uroced in a
# network namespace drives one end of a veth pair with net_af_packet; in a
# second namespace, hostile_peer.py speaks raw RoCEv2 on the other end and
# attacks the memory of two hostile_victim processes (run through
# uroce-run): out-of-range, wrong-PD, stale and guessed keys, access not
# granted, misaligned atomics, PSN replays and gaps, oversized, truncated and
# malformed frames, lone MIDDLE/LAST packets, reserved opcodes, ATOMIC_WRITE
# and FLUSH, reserved NAK codes and a lone READ_RESPONSE_LAST to the victim's
# requester, SEND_WITH_INVALIDATE naming ordinary MRs; on UD and UC QPs wrong
# Q_Keys and P_Keys, foreign opcodes, bad keys, broken sequences and long
# SENDs (hostile_dgram_cases.py). One verdict per case
# (the wire response, the victim's completions, every guard byte), then the
# daemon's survival and clean exit. Each case's result goes to
# $UROCE_TMP/hostile.json (kept with UROCE_KEEP=1).
# With HOSTILE_SR=1 the device has selective repeat on (lossy=on, and
# min_ack_timeout 20: retransmission timeouts of 4.3 s, far behind any
# tail-loss probe) and the peer runs hostile_sr_cases.py instead: the
# HELLO handshake, SACKs for out-of-order and duplicate SR packets, an
# out-of-order packet that fails its checks, only the missing packet sent
# again, a lost tail probed before the timeout.
#
#   hostile.sh BUILD_DIR HOSTILE_VICTIM HOSTILE_PEER_PY [CASE-SUBSTRING]
# shellcheck source=../verbs/common.sh
source "$(dirname "$0")/../verbs/common.sh"
verbs_test_init vhostile "$1"
VICTIM=$2
PEER=$3
ONLY=${4:-}
if ! /usr/bin/python3 -c 'import zlib, socket; socket.AF_PACKET' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 without AF_PACKET sockets"
  exit 77
fi

id=$((UROCE_ID % 1000000))
NSD=uroce_hD_$id NSP=uroce_hP_$id
DEVD=uhd${id}d DEVP=uhd${id}p
uroce_netns_add "$NSD"
uroce_netns_add "$NSP"
uroce_veth_dpdk "$NSD" "$DEVD" "$NSP" "$DEVP" 9000

DEV_MAC=02:00:00:cc:00:01
device=$(verbs_device uroce0 "$DEV_MAC" 10.204.0.1 "$(verbs_af_packet_port "$DEVD")")
cases=hostile_cases what="every hostile-peer case as IBTA and rxe require"
if [ "${HOSTILE_SR:-0}" = 1 ]; then
  device="$device;lossy=on;min_ack_timeout=20"
  cases=hostile_sr_cases what="every selective-repeat case as docs/lossy.md specifies"
fi
uroce_daemon_start d --netns "$NSD" --lcore 1 --poll backoff -- --device "$device"
RUN=${UROCE_DAEMON_RUN[d]}

st=0 peer=0 rc=0
uroce_bg peer --netns "$NSP" --timeout 100 "$UROCE_TMP/peer.out" "$UROCE_TMP/peer.err" -- \
  /usr/bin/python3 -B "$PEER" --iface "$DEVP" --ip 10.204.0.2 --dev-mac "$DEV_MAC" \
  --dev-ip 10.204.0.1 --ctl "$UROCE_CTL --run-dir $RUN" --results "$UROCE_TMP/hostile.json" \
  --only "$ONLY" --cases "$cases" -- "$UROCE_RUN" --run-dir "$RUN" "$VICTIM"
uroce_wait "$peer" rc
cat "$UROCE_TMP/peer.out"
if [ "$rc" -ne 0 ]; then
  # shellcheck disable=SC2034 # read by uroce_verdict
  UROCE_WHY="hostile_peer.py exited $rc: $(tail -n 5 "$UROCE_TMP/peer.err")"; st=1
fi
uroce_verdict "$what" "$st"

verbs_daemons_stop "uroced survives the hostile peer and exits 0 on SIGTERM" d
uroce_summary "$([ "${HOSTILE_SR:-0}" = 1 ] && echo hostile_sr || echo hostile_peer)"
