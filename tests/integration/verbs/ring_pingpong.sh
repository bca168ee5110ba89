#!/usr/bin/env bash
# One uroced, two devices (uroce0, uroce1) joined by a crossed net_ring
# pair. Unmodified rdma-core programs through uroce-run: ibv_devices,
# ibv_devinfo -v, and the pingpong examples (RC polling, RC with completion
# events, RC 1 MiB messages, UC, UD, SRQ, RC from uroce0 to itself), each
# with -c so the server checks the data it received, and each judged on exit
# status and on both sides' "bytes in ... seconds" lines.
#
#   ring_pingpong.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vring_pp "$1" ibv_devices ibv_devinfo ibv_rc_pingpong \
  ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong

IP0=10.201.0.1
IP1=10.201.0.2
uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:c9:00:01 $IP0 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:c9:00:02 $IP1 ring:p0)"
RUN=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$RUN")

# ---- discovery --------------------------------------------------------------
out=$UROCE_TMP/ibv_devices.out
uroce_no_pair
st=0
if ! "${R[@]}" ibv_devices >"$out" 2>&1; then
  UROCE_WHY="ibv_devices exited non-zero: $(tail -n 3 "$out")"; st=1
elif ! grep -qE '^\s+uroce0\s+[0-9a-f]{16}$' "$out" || ! grep -qE '^\s+uroce1\s+[0-9a-f]{16}$' "$out"; then
  UROCE_WHY="ibv_devices does not list uroce0 and uroce1 with a GUID: $(tr '\n' '|' <"$out")"; st=1
fi
cat "$out"
uroce_verdict "ibv_devices lists uroce0 and uroce1" "$st"

devinfo_check() {  # DEV IP
  local dev=$1 ip=$2 f=$UROCE_TMP/devinfo.$1.out
  uroce_no_pair
  if ! "${R[@]}" ibv_devinfo -v -d "$dev" >"$f" 2>&1; then
    UROCE_WHY="ibv_devinfo -v -d $dev exited non-zero: $(tail -n 3 "$f")"; return 1
  fi
  local want
  for want in "hca_id:	$dev" "state:			PORT_ACTIVE (4)" "link_layer:		Ethernet" \
    "active_mtu:		4096 (5)" "max_mtu:		4096 (5)" "phys_port_cnt:			1" \
    "GID[  1]:		::ffff:$ip, RoCE v2"; do
    if ! grep -qF -- "$want" "$f"; then
      UROCE_WHY="ibv_devinfo -v -d $dev lacks '$want'"; return 1
    fi
  done
  if ! grep -qE 'GID\[  0\]:\s+fe80::[0-9a-f:]+, RoCE v2' "$f"; then
    UROCE_WHY="ibv_devinfo -v -d $dev lacks a RoCE v2 fe80:: GID at index 0"; return 1
  fi
}
st=0; devinfo_check uroce0 $IP0 || st=1
grep -E 'hca_id|fw_ver|node_guid|state:|active_mtu|GID\[' "$UROCE_TMP/devinfo.uroce0.out" || true
uroce_verdict "ibv_devinfo -v uroce0: PORT_ACTIVE, active_mtu 4096, GIDs 0 and 1" "$st"
st=0; devinfo_check uroce1 $IP1 || st=1
uroce_verdict "ibv_devinfo -v uroce1: PORT_ACTIVE, active_mtu 4096, GIDs 0 and 1" "$st"

# ---- pingpong ---------------------------------------------------------------
# pingpong PROGRAM LABEL SIZE ITERS TIMEOUT [EXTRA-ARGS...]
pingpong() { PP_LIMIT=$5 verbs_pingpong "$1" "$2" "$3" "$4" "${@:6}"; }

pingpong ibv_rc_pingpong "ibv_rc_pingpong 4096 B x 1000" 4096 1000 30
# Many small exchanges: each one arms the CQ and sleeps on the channel, so
# a lost completion event (a race between arming and producing) shows up
# as a hang here.
pingpong ibv_rc_pingpong "ibv_rc_pingpong -e (completion events) 64 B x 20000" 64 20000 30 -e
pingpong ibv_rc_pingpong "ibv_rc_pingpong -m 4096 1 MiB x 100" 1048576 100 45 -m 4096
pingpong ibv_uc_pingpong "ibv_uc_pingpong 4096 B x 1000" 4096 1000 30
pingpong ibv_ud_pingpong "ibv_ud_pingpong 2048 B x 1000" 2048 1000 30
pingpong ibv_ud_pingpong "ibv_ud_pingpong -e 2048 B x 500" 2048 500 30 -e
pingpong ibv_srq_pingpong "ibv_srq_pingpong 4 QPs 4096 B x 1000" 4096 1000 30 -q 4
pingpong ibv_srq_pingpong "ibv_srq_pingpong -e 16 QPs 1024 B x 1000" 1024 1000 30 -e

# Both ends on one device (uroce0 to itself), as rdma-core's own tests do.
PP_DEV_CLI=uroce0 PP_LIMIT=30 verbs_pingpong ibv_rc_pingpong \
  "ibv_rc_pingpong loopback on uroce0 4096 B x 1000" 4096 1000

# The daemon must still be serving, then stop cleanly.
uroce_no_pair
verbs_daemons_stop "uroced exits 0 on SIGTERM and removes its run dir and nodes" d

uroce_summary ring_pingpong
