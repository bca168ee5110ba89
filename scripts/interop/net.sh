# shellcheck shell=bash
# The L2 segment that joins the Soft-RoCE guest and uroced (sourced):
#
#   guest eth0 == tap ==+== bridge ==+== veth (bridge port) <-> veth == netns: uroced
#                       |  host IP   |                                    (net_af_packet)
#
# The bridge carries an address of its own: the host's end of the programs'
# TCP exchange (pingpong and perftest swap QP numbers over TCP). uroced's
# veth end sits in a network namespace with no address at all, IPv6 off
# and arp_ignore=8, so no kernel ever answers or forwards for uroce's IP
# (uroced answers ARP itself); a forwarding host kernel in the root
# namespace would otherwise route RoCE frames for that IP back onto the
# bridge and hand uroced duplicates.
#
#   rxe_net_up ID CIDR [MTU] [no-veth]
#                     creates the bridge, the tap, the veth pair and the
#                     namespace; names contain ID (<= 15 bytes each);
#                     no-veth: neither veth nor namespace (uroced runs in a
#                     guest of its own, scripts/interop-rxe.sh --uroce-in-guest)
#   rxe_net_tap NAME [QUEUES]  one more tap on the bridge (another guest
#                     NIC); QUEUES > 1: a multi-queue tap, for a QEMU NIC
#                     of that many queue pairs (-netdev tap,queues=N)
#   rxe_net_tcp_up CIDR  a second veth pair, bridge port <-> the namespace,
#                     with CIDR on the namespace's end: the TCP exchange of a
#                     program that runs in the namespace itself (embedded
#                     mode, where the program opens the af_packet port);
#                     sets RXE_NS_TCP_IP
#   rxe_net_down      deletes the links (idempotent; call it from the EXIT
#                     trap before uroce-env.sh's, which deletes the netns)
#
# Sets RXE_BR, RXE_TAP, RXE_VETH_BR (bridge side), RXE_VETH (uroced's end),
# RXE_NS.

RXE_BR='' RXE_TAP='' RXE_VETH_BR='' RXE_VETH='' RXE_NS='' RXE_NS_TCP_IP=''
_RXE_NET_ID=''
_RXE_NET_MADE=()

rxe_net_up() {
  local id=$1 host_cidr=$2 mtu=${3:-1500} veth=${4:-veth}
  RXE_BR=urxb$id RXE_TAP=urxt$id RXE_VETH_BR=urxv${id}a RXE_VETH=urxv${id}b
  RXE_NS=uroce_rxe_$id
  _RXE_NET_ID=$id
  ip link add "$RXE_BR" type bridge stp_state 0 forward_delay 0 mcast_snooping 0
  _RXE_NET_MADE+=("link:$RXE_BR")
  sysctl -qw "net.ipv6.conf.$RXE_BR.disable_ipv6=1" >/dev/null 2>&1 || true
  ip addr add "$host_cidr" dev "$RXE_BR"
  ip link set "$RXE_BR" mtu "$mtu" up

  ip tuntap add dev "$RXE_TAP" mode tap
  _RXE_NET_MADE+=("link:$RXE_TAP")
  sysctl -qw "net.ipv6.conf.$RXE_TAP.disable_ipv6=1" >/dev/null 2>&1 || true
  ip link set "$RXE_TAP" mtu "$mtu" master "$RXE_BR" up
  if [ "$veth" = no-veth ]; then
    RXE_NS='' RXE_VETH_BR='' RXE_VETH=''
    return 0
  fi

  # uroce-env.sh's EXIT trap kills what runs in it and deletes it.
  uroce_netns_add "$RXE_NS"
  ip link add "$RXE_VETH_BR" type veth peer name "$RXE_VETH"
  _RXE_NET_MADE+=("link:$RXE_VETH_BR")
  ip link set "$RXE_VETH" netns "$RXE_NS"
  sysctl -qw "net.ipv6.conf.$RXE_VETH_BR.disable_ipv6=1" >/dev/null 2>&1 || true
  ip link set "$RXE_VETH_BR" mtu "$mtu" master "$RXE_BR" up
  local s
  for s in net.ipv6.conf.all.disable_ipv6=1 "net.ipv6.conf.$RXE_VETH.disable_ipv6=1" \
    "net.ipv4.conf.$RXE_VETH.arp_ignore=8" net.ipv4.ip_forward=0; do
    ip netns exec "$RXE_NS" sysctl -qw "$s" >/dev/null 2>&1 || true
  done
  ip -n "$RXE_NS" link set "$RXE_VETH" mtu "$mtu" up
  # The frames uroced builds are complete; keep the kernel from touching
  # checksums or merging anything on its end.
  ip netns exec "$RXE_NS" ethtool -K "$RXE_VETH" tx off rx off gro off >/dev/null 2>&1 || true
}

rxe_net_tap() {
  local tap=$1 queues=${2:-1} mtu
  local -a mq=()
  [ "$queues" -gt 1 ] && mq=(multi_queue)
  mtu=$(cat "/sys/class/net/$RXE_BR/mtu")
  ip tuntap add dev "$tap" mode tap "${mq[@]}"
  _RXE_NET_MADE+=("link:$tap")
  sysctl -qw "net.ipv6.conf.$tap.disable_ipv6=1" >/dev/null 2>&1 || true
  ip link set "$tap" mtu "$mtu" master "$RXE_BR" up
}

rxe_net_tcp_up() {
  local cidr=$1 br_end=urxw${_RXE_NET_ID}a ns_end=urxw${_RXE_NET_ID}b mtu
  mtu=$(cat "/sys/class/net/$RXE_BR/mtu")
  ip link add "$br_end" type veth peer name "$ns_end"
  _RXE_NET_MADE+=("link:$br_end")
  ip link set "$ns_end" netns "$RXE_NS"
  sysctl -qw "net.ipv6.conf.$br_end.disable_ipv6=1" >/dev/null 2>&1 || true
  ip link set "$br_end" mtu "$mtu" master "$RXE_BR" up
  ip -n "$RXE_NS" addr add "$cidr" dev "$ns_end"
  ip -n "$RXE_NS" link set "$ns_end" mtu "$mtu" up
  ip -n "$RXE_NS" link set lo up
  RXE_NS_TCP_IP=${cidr%/*}
}

rxe_net_down() {
  local i item
  # Reverse order: ports before the bridge.
  for ((i = ${#_RXE_NET_MADE[@]} - 1; i >= 0; i--)); do
    item=${_RXE_NET_MADE[$i]}
    ip link del "${item#link:}" 2>/dev/null || true
  done
  _RXE_NET_MADE=()
}
