#!/usr/bin/env bash
# Two DPDK processes resolve each other over ARP: two network namespaces
# joined by a veth pair, one arp_probe per namespace on net_af_packet.
# Each probe must print the other's MAC: the MAC given to the userspace
# stack with --mac (PortConfig.mac), which is what its ARP replies carry.
#
#   arp_netns.sh PATH/TO/arp_probe PATH/TO/scripts/netns.sh
#
# Exit 77 (skipped) when not root; any other failure exits non-zero.
set -euo pipefail

probe=$1
netns=$2

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: needs root (network namespaces)"
  exit 77
fi

id=$$
ns_a=uroce_arpA_$id
ns_b=uroce_arpB_$id
if_a=uarpa$id
if_b=uarpb$id
prefix_a=uroce_arp_a_$id
prefix_b=uroce_arp_b_$id
mac_a=02:00:00:77:00:01
mac_b=02:00:00:77:00:02
ip_a=10.77.0.1
ip_b=10.77.0.2
tmp=$(mktemp -d /tmp/uroce_arp_netns.XXXXXX)
pid_a=
pid_b=

cleanup() {
  local rc=$?
  for p in $pid_a $pid_b; do
    kill "$p" 2>/dev/null || true
  done
  for p in $pid_a $pid_b; do
    wait "$p" 2>/dev/null || true
  done
  "$netns" down "$ns_a" "$ns_b" || true
  rm -rf "$tmp" "/var/run/dpdk/$prefix_a" "/var/run/dpdk/$prefix_b"
  exit "$rc"
}
trap cleanup EXIT
# A signal (e.g. Meson's timeout) exits through the same cleanup.
trap 'exit 143' TERM INT

"$netns" up "$ns_a" "$ns_b" "$if_a" "$if_b" 9000

vdev() {
  echo "iface=$1,qdisc_bypass=1,blocksz=8192,framesz=8192,framecnt=512"
}

ip netns exec "$ns_a" "$probe" --lcores 0 --file-prefix "$prefix_a" \
  --vdev-args "$(vdev "$if_a")" --mac "$mac_a" --ip "$ip_a" \
  --peer-ip "$ip_b" --timeout-ms 10000 --grace-ms 2000 \
  >"$tmp/a.out" 2>"$tmp/a.err" &
pid_a=$!
ip netns exec "$ns_b" "$probe" --lcores 1 --file-prefix "$prefix_b" \
  --vdev-args "$(vdev "$if_b")" --mac "$mac_b" --ip "$ip_b" \
  --peer-ip "$ip_a" --timeout-ms 10000 --grace-ms 2000 \
  >"$tmp/b.out" 2>"$tmp/b.err" &
pid_b=$!

rc_a=0
rc_b=0
wait "$pid_a" || rc_a=$?
pid_a=
wait "$pid_b" || rc_b=$?
pid_b=

# For the log: the kernel's view of each veth end after the PMD set its MAC.
kmac_a=$(ip -n "$ns_a" -o link show "$if_a" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
kmac_b=$(ip -n "$ns_b" -o link show "$if_b" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')

status=0
for side in a b; do
  echo "--- probe $side: stdout"
  cat "$tmp/$side.out"
  echo "--- probe $side: stderr (last lines)"
  tail -n 8 "$tmp/$side.err"
done
echo "kernel MACs: $if_a=$kmac_a $if_b=$kmac_b"

check() {  # side rc expected_line
  if [ "$2" -ne 0 ]; then
    echo "FAIL: probe $1 exited $2"
    status=1
  elif ! grep -qx "$3" "$tmp/$1.out"; then
    echo "FAIL: probe $1 did not print '$3'"
    status=1
  else
    echo "ok: probe $1: $3"
  fi
}
check a "$rc_a" "resolved $ip_b $mac_b"
check b "$rc_b" "resolved $ip_a $mac_a"
exit "$status"
