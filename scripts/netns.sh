#!/usr/bin/env bash
# Network namespaces joined by a veth pair, set up the way a DPDK af_packet
# port needs them (docs/port.md, docs/benchmarks.md): jumbo MTU, no IPv6, and the kernel's IP stack
# kept off the interface (no address, arp_ignore=8) so it never answers for
# the userspace stack.
#
#   scripts/netns.sh up   NS_A NS_B IF_A IF_B [MTU]   create (fails if any exists)
#   scripts/netns.sh down NS_A NS_B                   delete (ignores missing)
#
# Inside NS_A the interface is IF_A, inside NS_B it is IF_B. Names must be
# unique per test run (include the PID); interface names are at most 15 bytes.
set -euo pipefail

quiet_sysctl() { ip netns exec "$1" sysctl -qw "$2" >/dev/null 2>&1 || true; }

up() {
  local a=$1 b=$2 ia=$3 ib=$4 mtu=${5:-9000}
  ip netns add "$a"
  ip netns add "$b"
  ip link add "$ia" type veth peer name "$ib"
  ip link set "$ia" netns "$a"
  ip link set "$ib" netns "$b"
  for pair in "$a:$ia" "$b:$ib"; do
    local ns=${pair%%:*} ifc=${pair#*:}
    quiet_sysctl "$ns" net.ipv6.conf.all.disable_ipv6=1
    quiet_sysctl "$ns" net.ipv6.conf.default.disable_ipv6=1
    quiet_sysctl "$ns" "net.ipv6.conf.$ifc.disable_ipv6=1"
    quiet_sysctl "$ns" "net.ipv4.conf.$ifc.arp_ignore=8"
    quiet_sysctl "$ns" net.ipv4.conf.all.arp_ignore=8
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "$ifc" mtu "$mtu" up
  done
}

down() {
  local a=$1 b=$2
  for ns in "$a" "$b"; do
    # Kill anything still running in the namespace before deleting it.
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
}

case "${1:-}" in
  up) shift; [ $# -ge 4 ] || { echo "usage: $0 up NS_A NS_B IF_A IF_B [MTU]" >&2; exit 2; }; up "$@" ;;
  down) shift; [ $# -ge 2 ] || { echo "usage: $0 down NS_A NS_B" >&2; exit 2; }; down "$@" ;;
  *) echo "usage: $0 up NS_A NS_B IF_A IF_B [MTU] | down NS_A NS_B" >&2; exit 2 ;;
esac
