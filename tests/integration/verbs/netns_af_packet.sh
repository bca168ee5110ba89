#!/usr/bin/env bash
# Two uroced daemons in two network namespaces, joined by a veth pair that
# each drives with net_af_packet (no kernel address on it, arp_ignore=8,
# MTU 9000). Each daemon has one device named uroce0 in its own run dir, its
# own EAL lcore (0 and 1) and backoff polling. The programs run in the
# daemons' namespaces and do their TCP exchange over a second veth pair that
# carries kernel addresses. Stock pingpong (with -c) and perftest, judged
# as in the ring tests.
#
# With --embedded there are no daemons: each program runs its own engine
# (uroce-run --embedded, docs/embedded.md) on the same veth end, lcore and
# device, and the last verdict is that the runs left no launcher directory,
# /dev/infiniband node or EAL runtime directory behind.
#
# With --af-xdp the ports are AF_XDP sockets on the veth ends instead
# (port=af_xdp:IFACE, DPDK's net_af_xdp); XDP on a veth carries frames up
# to its MTU of 3504 (a page less the headroom), so the path MTU is 2048.
#
#   netns_af_packet.sh BUILD_DIR [--embedded] [--af-xdp]
source "$(dirname "$0")/common.sh"
mode=daemon kind=af_packet
for arg in "${@:2}"; do
  case $arg in
    --embedded) mode=embedded ;;
    --af-xdp) kind=af_xdp ;;
    *) echo "netns_af_packet.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
letter=v octet=203 mtu=9000 pmtu=4096
[ "$kind" = af_xdp ] && letter=q octet=217 mtu=3504 pmtu=2048
verbs_test_init "${letter}netns${mode:0:1}" "$1" ibv_rc_pingpong ibv_ud_pingpong \
  ibv_srq_pingpong ib_write_bw ib_write_lat ib_send_lat ib_read_bw ib_read_lat ib_send_bw \
  ib_atomic_bw ib_atomic_lat

verbs_netns_pair "$letter" "$octet" "$mtu"

dev_a=$(verbs_device uroce0 02:00:00:cb:00:01 "10.$octet.0.1" "$(verbs_veth_port "$kind" "$DEVA")" "$mtu")
dev_b=$(verbs_device uroce0 02:00:00:cb:00:02 "10.$octet.0.2" "$(verbs_veth_port "$kind" "$DEVB")" "$mtu")
if [ "$mode" = embedded ]; then
  # The launchers' run directories go here, to be checked at the end.
  export TMPDIR=$UROCE_TMP/embedded
  mkdir -p "$TMPDIR"
  nodes_before=$(ls /dev/infiniband 2>/dev/null | sort)
  eal_before=$(ls /var/run/dpdk 2>/dev/null | sort)
  RA=("$UROCE_RUN" --embedded --lcore 0 --device "$dev_a" --)
  RB=("$UROCE_RUN" --embedded --lcore 1 --device "$dev_b" --)
else
  uroce_daemon_start a --netns "$NSA" --lcore 0 --poll backoff -- --device "$dev_a"
  uroce_daemon_start b --netns "$NSB" --lcore 1 --poll backoff -- --device "$dev_b"
  RA=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[a]}")
  RB=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[b]}")
fi

# pingpong PROGRAM LABEL SIZE ITERS [EXTRA-ARGS...]: uroce0 of the daemon
# (or embedded engine) in NSA serves, that of NSB connects over TCP.
pingpong() {
  PP_SRV=RA PP_CLI=RB PP_DEV_CLI=uroce0 PP_NS_SRV=$NSA PP_NS_CLI=$NSB PP_TCP=$TCP_IPA \
    verbs_pingpong "$@"
}

ITERS=1000
# perf PROGRAM bw|lat LABEL [EXTRA-ARGS...]: sides as pingpong's.
perf() {
  PP_SRV=RA PP_CLI=RB PP_DEV_CLI=uroce0 PP_NS_SRV=$NSA PP_NS_CLI=$NSB PP_TCP=$TCP_IPA \
    PP_ITERS=$ITERS verbs_perf "$@"
}

pingpong ibv_rc_pingpong "netns ibv_rc_pingpong 4096 B x 1000" 4096 1000
pingpong ibv_rc_pingpong "netns ibv_rc_pingpong -e -m $pmtu 64 KiB x 200" 65536 200 -e -m "$pmtu"
pingpong ibv_ud_pingpong "netns ibv_ud_pingpong 2048 B x 1000" 2048 1000
perf ib_write_bw bw "netns ib_write_bw RC 64 KiB x $ITERS"
perf ib_send_bw bw "netns ib_send_bw RC 64 KiB x $ITERS"
perf ib_send_lat lat "netns ib_send_lat RC x $ITERS"
perf ib_read_bw bw "netns ib_read_bw RC 64 KiB x $ITERS"
pingpong ibv_rc_pingpong "netns ibv_rc_pingpong -m $pmtu 1 MiB x 50" 1048576 50 -m "$pmtu"
pingpong ibv_srq_pingpong "netns ibv_srq_pingpong 4 QPs 4096 B x 500" 4096 500 -q 4
perf ib_write_lat lat "netns ib_write_lat RC x $ITERS"
perf ib_send_lat lat "netns ib_send_lat UD x $ITERS" -c UD
perf ib_read_lat lat "netns ib_read_lat RC x $ITERS"
perf ib_atomic_bw bw "netns ib_atomic_bw RC x $ITERS"
perf ib_atomic_lat lat "netns ib_atomic_lat RC x $ITERS"

uroce_no_pair
# What mode the kernel gave the AF_XDP sockets, as uroce-ctl shows it: a veth
# has no zero-copy AF_XDP, so copy.
if [ "$kind" = af_xdp ] && [ "$mode" = daemon ]; then
  st=0
  status=$("$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[a]}" status 2>&1) || st=1
  if [[ $status != *"af_xdp:$DEVA (copy)"* ]]; then
    UROCE_WHY="uroce-ctl status does not say af_xdp:$DEVA (copy): $status"; st=1
  fi
  uroce_verdict "uroce-ctl status shows the AF_XDP port's mode (copy on a veth)" "$st"
  # After every case: no descriptor the kernel refused on either socket (a
  # TX one is a frame lost without a completion: docs/nic.md "AF_XDP pool").
  for d in a b; do
    st=0
    if ! out=$("$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[$d]}" status --json 2>&1) ||
      ! why=$(/usr/bin/python3 -c '
import json, sys
dev = json.loads(sys.stdin.read())["devices"][0]
x, p = dev.get("port_xdp"), dev.get("port_stats")
if x is None or p is None:
    sys.exit("no port_xdp or port_stats in the status")
bad = {k: x[k] for k in ("tx_invalid_descs", "rx_invalid_descs") if x[k] != 0}
if bad:
    sys.exit(f"the kernel refused descriptors: {bad}")
if p["opackets"] < dev["counters"]["port_tx"]["sent"] or p["mbufs"] == 0:
    sys.exit(f"port_stats do not add up: {p}")
' <<<"$out" 2>&1); then
      UROCE_WHY="uroced $d: ${why:-$out}"; st=1
    fi
    uroce_verdict "uroced $d: its AF_XDP sockets refused no descriptor (status port_xdp)" "$st"
  done
fi
if [ "$mode" = embedded ]; then
  st=0
  left=$(ls "$TMPDIR")
  nodes_after=$(ls /dev/infiniband 2>/dev/null | sort)
  # EAL runtime directories that appeared meanwhile and whose process
  # (uroced-PID) is gone: what an embedded run left. Other tests' daemons
  # come and go in /var/run/dpdk beside this one (and a starting uroced
  # removes stale ones), so the listing as a whole may change.
  eal_left=""
  for e in $(comm -13 <(echo "$eal_before") <(ls /var/run/dpdk 2>/dev/null | sort)); do
    pid=${e##*-}
    if [[ $pid =~ ^[0-9]+$ ]] && [ -d "/proc/$pid" ]; then continue; fi
    eal_left+="$e "
  done
  if [ -n "$left" ]; then
    UROCE_WHY="launcher directories left: $left"; st=1
  elif nodes_new=$(comm -13 <(echo "$nodes_before") <(echo "$nodes_after")) && [ -n "$nodes_new" ]; then
    # Only a node that appeared is a leftover: another run's daemon may
    # remove its own meanwhile.
    UROCE_WHY="/dev/infiniband gained: $nodes_new (was: $nodes_before)"; st=1
  elif [ -n "$eal_left" ]; then
    UROCE_WHY="EAL runtime directories left in /var/run/dpdk: $eal_left"; st=1
  fi
  uroce_verdict "embedded runs leave no directory, node or EAL runtime behind" "$st"
else
  for d in a b; do
    st=0
    if ! uroce_daemon_alive "$d"; then
      UROCE_WHY="uroced $d died during the run"; st=1
    elif ! uroce_daemon_stop "$d"; then
      UROCE_WHY="uroced $d did not stop cleanly on SIGTERM"; st=1
    fi
    uroce_verdict "uroced $d exits 0 on SIGTERM and removes its run dir and nodes" "$st"
  done
fi

uroce_summary "netns_af_packet ($kind, $mode)"
