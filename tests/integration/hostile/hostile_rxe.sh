#!/usr/bin/env bash
# The hostile-peer cases against Linux's rdma_rxe, by hand (not in CI): the
# reference the suite's expectations come from. Boots the interop guest
# (docs/interop-rxe.md: Debian's kernel with rdma_rxe under QEMU), serves two
# hostile_victim processes on rxe0 over TCP (busybox nc -e), and runs
# hostile_peer.py on a veth of the guest's bridge, in a network namespace,
# with the guest's rxe0 as the responder. No uroce counters are checked.
# Prints one line per case; UROCE_KEEP=1 keeps hostile.json.
#
#   hostile_rxe.sh BUILD_DIR [CASE-SUBSTRING]
set -euo pipefail
SOURCE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
build=$(realpath "${1:-$SOURCE_ROOT/build}")
ONLY=${2:-}
# shellcheck source=../../../scripts/lib/uroce-env.sh
source "$SOURCE_ROOT/scripts/lib/uroce-env.sh"
# shellcheck source=../../../scripts/interop/guest.sh
source "$SOURCE_ROOT/scripts/interop/guest.sh"
# shellcheck source=../../../scripts/interop/net.sh
source "$SOURCE_ROOT/scripts/interop/net.sh"
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: needs root (bridge, tap, network namespace)"
  exit 77
fi

uroce_env_init hrxe
_hostile_rxe_exit() {
  local rc=$?
  set +e
  rxe_guest_stop >/dev/null 2>&1
  rxe_net_down
  (exit "$rc")
  _uroce_on_exit
}
trap _hostile_rxe_exit EXIT

# The guest has the host's rdma-core but not necessarily its libstdc++.
victim=$UROCE_TMP/hostile_victim
c++ -std=c++20 -O2 -static-libstdc++ -static-libgcc -o "$victim" \
  "$SOURCE_ROOT/tests/integration/hostile/hostile_victim.cpp" -libverbs
image=$(timeout 300 "$SOURCE_ROOT/scripts/interop/build-guest.sh" "$build/rxe-guest" | tail -n 1)

id=$((UROCE_ID % 100000))
net=10.77.$((id % 250 + 1))
peer_ip=$net.2 guest_ip=$net.11
guest_mac=$(printf '52:54:00:4d:%02x:0b' $((id % 250 + 1)))
rxe_net_up "$id" "$net.1/24" 1500
rxe_net_tcp_up "$net.3/24"
guest=$UROCE_TMP/guest
rxe_guest_start "$guest" "$image" "$guest_ip/24" "$RXE_TAP" "$guest_mac" 150
gid=$(rxe_guest_exec "$guest" 30 rxe-gid-index)
cp "$victim" "$guest/share/hostile_victim"
for port in 7000 7001; do
  rxe_guest_bg job "$guest" "HOSTILE_DEVICE=rxe0 HOSTILE_GID_INDEX=$gid" \
    "busybox nc -l -p $port -e /share/hostile_victim"
done
echo "guest $guest_ip ($guest_mac), rxe0 GID index $gid; peer $peer_ip on $RXE_VETH in $RXE_NS"

rc=0
ip netns exec "$RXE_NS" /usr/bin/python3 -B "$SOURCE_ROOT/tests/integration/hostile/hostile_peer.py" \
  --iface "$RXE_VETH" --ip "$peer_ip" --dev-mac "$guest_mac" --dev-ip "$guest_ip" \
  --results "$UROCE_TMP/hostile.json" --only "$ONLY" \
  --victim-tcp "$guest_ip:7000,$guest_ip:7001" || rc=$?
exit "$rc"
