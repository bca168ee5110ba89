#!/usr/bin/env bash
# An af_xdp port's pool lies inside the UMEM DPDK's net_af_xdp registers
# (docs/nic.md "AF_XDP pool"): xsk_pool_probe, on one end of a veth pair in
# a namespace, sends a frame from every mbuf its pool hands out; the
# kernel must refuse none of their descriptors, and the other end must
# receive every frame.
#
#   xsk_pool_netns.sh PATH/TO/xsk_pool_probe PATH/TO/scripts/netns.sh
#
# Exit 77 (skipped) when not root or without AF_XDP; any other failure
# exits non-zero.
set -euo pipefail

probe=$1
netns=$2

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: needs root (network namespaces, AF_XDP)"
  exit 77
fi

id=$$
ns_a=uroce_xskA_$id
ns_b=uroce_xskB_$id
if_a=uxska$id
if_b=uxskb$id
prefix=uroce_xsk_$id
tmp=$(mktemp -d /tmp/uroce_xsk_pool.XXXXXX)
pid=

cleanup() {
  local rc=$?
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  "$netns" down "$ns_a" "$ns_b" || true
  rm -rf "$tmp" "/var/run/dpdk/$prefix"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

"$netns" up "$ns_a" "$ns_b" "$if_a" "$if_b" 3504
rx_packets() { ip netns exec "$ns_b" cat "/sys/class/net/$if_b/statistics/rx_packets"; }
before=$(rx_packets)

ip netns exec "$ns_a" "$probe" --lcores 0 --file-prefix "$prefix" --iface "$if_a" \
  >"$tmp/out" 2>"$tmp/err" &
pid=$!
rc=0
wait "$pid" || rc=$?
pid=
crossed=$(( $(rx_packets) - before ))

echo "--- probe: stdout"
cat "$tmp/out"
echo "--- probe: stderr (last lines)"
grep -v "^libxdp\|^libbpf" "$tmp/err" | tail -n 8 || true
echo "frames the peer received: $crossed"

if [ "$rc" -ne 0 ]; then
  echo "FAIL: the probe exited $rc"
  exit 1
fi
read -r _ sent _ tx_invalid _ rx_invalid _ mbufs < "$tmp/out"
status=0
if [ "$mbufs" -lt 6000 ]; then
  echo "FAIL: the pool handed out only $mbufs mbufs"; status=1
fi
if [ "$tx_invalid" -ne 0 ] || [ "$rx_invalid" -ne 0 ]; then
  echo "FAIL: the kernel refused $tx_invalid TX and $rx_invalid fill descriptors"; status=1
fi
if [ "$sent" -ne "$mbufs" ] || [ "$crossed" -lt "$sent" ]; then
  echo "FAIL: $mbufs frames made, $sent sent, $crossed received by the peer"; status=1
fi
[ "$status" -eq 0 ] && echo "ok: $sent frames from every mbuf handed out, none refused, all received"
exit "$status"
