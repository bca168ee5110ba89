#!/usr/bin/env bash
# Interop with Linux Soft-RoCE: boots Debian's stock kernel with rdma_rxe in
# a QEMU guest, joins it to a uroce device (uroced on a veth into the
# guest's bridge, net_af_packet), and runs stock verbs programs between
# them in both directions: rxe's own tools in the guest, the same tools
# through uroce-run on the host. Every case's traffic is captured and
# checked by tshark and by roce_pcap_check (our parser and ICRC).
# With --uroce-in-guest, uroced runs in a second guest instead, on an
# emulated PCI NIC driven by one of DPDK's real PMDs (net_virtio or
# net_e1000_em over uio_pci_generic), and the programs of our side run
# there too. docs/interop-rxe.md describes the setup, the cases and the
# figures.
#
#   scripts/interop-rxe.sh [--build-dir DIR] [--keep] [--case NAME]... [--list]
#                          [--device-keys "K=V;K=V"] [--uroce-in-guest virtio|e1000e]
#                          [--mtu N] [--steer] [--skip-unless VAR]
#
#   --build-dir DIR  Meson build directory with uroced, uroce-ctl, uroce-run,
#                    the provider and roce_pcap_check (default: build in the
#                    checkout); the guest image is cached in DIR/rxe-guest/
#   --keep           keep the work dir (logs, program output, captures)
#   --case NAME      run only this case (repeatable; see --list)
#   --list           print the cases and exit
#   --device-keys K  uroced --device keys added to every daemon of the run,
#                    e.g. "homa=on": the whole suite with the Homa-like
#                    scheduler on our side (every RC case then also checks
#                    that our probe went out and rxe ignored it)
#   --uroce-in-guest NIC  uroced in a QEMU guest of its own on a virtio-net-pci
#                    or e1000e NIC (scripts/interop/uroce-guest.sh); the
#                    cases default to rc_pingpong_64, rc_pingpong_4k,
#                    write_bw, read_lat and loss_rc_pingpong (the guests
#                    run under TCG), the emb_* cases do not apply
#   --mtu N          (with --uroce-in-guest) the L2 MTU of the bridge, the
#                    taps, both guests' eth0 and uroced's device (default
#                    1500); the pingpongs ask for the largest RoCE path MTU
#                    it allows (9000: 4096). With --device-keys "rx_buf=2048"
#                    the frames of a 4096-byte path MTU arrive chained; with
#                    any rx_buf the run then checks that chains arrived
#                    and were read whole (rxe_chained_check)
#   --steer          (with --uroce-in-guest virtio, MTU 1500) the guest's NIC
#                    has two queue pairs with RSS, its uroced two engine
#                    lcores, and a second uroced on the host (a veth into
#                    the bridge, steer_src_port=on) steers its traffic into
#                    them; after the cases (none unless --case) the steering
#                    checks of scripts/interop/steer.sh run
#   --skip-unless VAR  exit 77 (skipped) unless VAR=1 in the environment:
#                    the Meson tests of --uroce-in-guest are opt-in
#                    (UROCE_INTEROP_PCI=1; 5-7 minutes each on 2 cores)
#
# Needs root (bridge, tap, network namespace, /dev/infiniband nodes); exits
# 77 (skipped) without it. Prints a table of case, direction, result and
# key figure; exit status 0 only when every case passed (or, XFAIL, failed
# the documented way a Linux peer fails too) in both directions, both
# capture checks passed and uroced stopped cleanly.
# Everything created (QEMU, uroced, captures, bridge, tap, veth, netns,
# temp dir) is removed on exit, on failure and on a signal.
set -euo pipefail
# shellcheck disable=SC2034 # RXE_* globals are read by tests/interop_rxe/cases.sh

SOURCE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$SOURCE_ROOT/build
declare -a only_cases=()
list=0 uguest='' optin='' steer=0
RXE_MTU=1500
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit "${1:-2}"
}
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --keep) export UROCE_KEEP=1; shift ;;
    --case) only_cases+=("$2"); shift 2 ;;
    --list) list=1; shift ;;
    --device-keys) export RXE_DEVICE_KEYS=";${2#;}"; shift 2 ;;
    --uroce-in-guest) uguest=$2; shift 2 ;;
    --mtu) RXE_MTU=$2; shift 2 ;;
    --steer) steer=1; shift ;;
    --skip-unless) optin=$2; shift 2 ;;
    -h | --help) usage 0 ;;
    *) usage 2 ;;
  esac
done

# shellcheck source=lib/uroce-env.sh
source "$SOURCE_ROOT/scripts/lib/uroce-env.sh"
# shellcheck source=lib/uroce-verbs.sh
source "$SOURCE_ROOT/scripts/lib/uroce-verbs.sh"
# shellcheck source=interop/guest.sh
source "$SOURCE_ROOT/scripts/interop/guest.sh"
# shellcheck source=interop/net.sh
source "$SOURCE_ROOT/scripts/interop/net.sh"
# shellcheck source=interop/uroce-guest.sh
source "$SOURCE_ROOT/scripts/interop/uroce-guest.sh"
# shellcheck source=../tests/interop_rxe/cases.sh
source "$SOURCE_ROOT/tests/interop_rxe/cases.sh"
# shellcheck source=../tests/interop_rxe/failures.sh
source "$SOURCE_ROOT/tests/interop_rxe/failures.sh"
# shellcheck source=../tests/interop_rxe/run_case.sh
source "$SOURCE_ROOT/tests/interop_rxe/run_case.sh"
# shellcheck source=interop/steer.sh
source "$SOURCE_ROOT/scripts/interop/steer.sh"

if [ -n "$optin" ] && [ "${!optin:-}" != 1 ]; then
  echo "SKIP: opt-in test; set $optin=1 to run it"
  exit 77
fi
if [ "$list" -eq 1 ]; then
  printf '%s\n' "${RXE_CASES[@]}"
  exit 0
fi
for c in "${only_cases[@]}"; do
  if ! grep -qx -- "$c" <<<"$(printf '%s\n' "${RXE_CASES[@]}")"; then
    echo "interop-rxe: unknown case '$c' (--list shows them)" >&2
    exit 2
  fi
done
case $uguest in
  '' | virtio | e1000e) ;;
  *) echo "interop-rxe: --uroce-in-guest takes virtio or e1000e" >&2; exit 2 ;;
esac
if ! [[ $RXE_MTU =~ ^[0-9]+$ ]] || [ "$RXE_MTU" -lt 1280 ] || [ "$RXE_MTU" -gt 9000 ]; then
  echo "interop-rxe: --mtu takes 1280..9000" >&2
  exit 2
fi
if [ "$RXE_MTU" -ne 1500 ] && [ -z "$uguest" ]; then
  # The host daemon's af_packet port is sized for 1500-byte frames.
  echo "interop-rxe: --mtu needs --uroce-in-guest" >&2
  exit 2
fi
if [ "$steer" -eq 1 ] && { [ "$uguest" != virtio ] || [ "$RXE_MTU" -ne 1500 ]; }; then
  echo "interop-rxe: --steer needs --uroce-in-guest virtio at MTU 1500" >&2
  exit 2
fi
# The largest RoCE path MTU both sides take at RXE_MTU: rxe keeps 80 bytes
# of headers below the Ethernet MTU (1500: 1024; 9000: 4096).
RXE_PATH_MTU=1024
for m in 4096 2048; do
  if [ $((RXE_MTU - 80)) -ge "$m" ]; then
    RXE_PATH_MTU=$m
    break
  fi
done
if [ -n "$uguest" ]; then
  for c in "${only_cases[@]}"; do
    if [[ $c == emb_* ]]; then
      echo "interop-rxe: $c runs uroce embedded on the host, not with --uroce-in-guest" >&2
      exit 2
    fi
  done
  [ ${#only_cases[@]} -gt 0 ] || [ "$steer" -eq 1 ] ||
    only_cases=(rc_pingpong_64 rc_pingpong_4k write_bw read_lat loss_rc_pingpong)
fi
[ ${#only_cases[@]} -gt 0 ] || [ "$steer" -eq 1 ] || only_cases=("${RXE_CASES[@]}")
# The emb_* cases stop the daemon (tests/interop_rxe/cases.sh): last.
emb=() rest=()
for c in "${only_cases[@]}"; do
  if [[ $c == emb_* ]]; then emb+=("$c"); else rest+=("$c"); fi
done
only_cases=("${rest[@]}" "${emb[@]}")

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: needs root (bridge, tap, network namespace, mknod /dev/infiniband/uverbsN)"
  exit 77
fi
if [ -d /sys/module/ib_uverbs ]; then
  echo "SKIP: kernel RDMA core loaded here; libibverbs would use netlink and not see uroce devices"
  exit 77
fi
# Missing tools are a failure, not a skip: scripts/setup.sh installs them.
for p in qemu-system-x86_64 busybox cpio depmod dumpcap tshark ibv_rc_pingpong ib_write_bw; do
  if ! command -v "$p" >/dev/null; then
    echo "FAIL: $p missing (run scripts/setup.sh)" >&2
    exit 1
  fi
done

T_START=$SECONDS
uroce_env_init rxe
build=$(realpath "$build")

# The order matters on the way out: QEMU holds the tap, uroced the veth;
# then the links; then uroce-env.sh's trap (programs, daemons, the netns,
# the temp dir) with the exit status of the script.
_rxe_on_exit() {
  local rc=$?
  set +e
  # Stopped by Meson's timeout: what ran, and how long each part took, is
  # what the tail of the log must show.
  if [ "${_UROCE_SIGNALED:-0}" = 1 ]; then
    echo "interop-rxe: stopped by a signal after $((SECONDS - T_START)) s" \
      "(guest image ${RXE_T_IMAGE:-?} s, guest boot ${RXE_T_BOOT:-?} s); cases so far:"
    rxe_print_table
  fi
  rxe_guest_stop >/dev/null 2>&1
  rxe_net_down
  (exit "$rc")
  _uroce_on_exit
}
trap _rxe_on_exit EXIT

uroce_find_tools "$build"
RXE_CHECKER=$build/tests/interop_rxe/roce_pcap_check
if [ ! -x "$RXE_CHECKER" ]; then
  ninja -C "$build" tests/interop_rxe/roce_pcap_check >/dev/null
fi
echo "uroced:     $UROCED"
echo "uroce-run:  $UROCE_RUN"
echo "checker:    $RXE_CHECKER"
echo "work dir:   $UROCE_TMP"
[ -z "${RXE_DEVICE_KEYS:-}" ] || echo "device keys: ${RXE_DEVICE_KEYS#;} (every uroced)"

t0=$SECONDS
RXE_IMAGE=$(timeout 300 "$SOURCE_ROOT/scripts/interop/build-guest.sh" "$build/rxe-guest" | tail -n 1)
RXE_T_IMAGE=$((SECONDS - t0))
echo "guest image: $RXE_IMAGE ($RXE_T_IMAGE s)"

# Addresses: a /24 of its own per run; .1 the host (bridge), .2 uroce, .3
# the TCP end of programs in embedded mode (in uroce's namespace), .11 rxe.
id=$((UROCE_ID % 100000))
net=10.77.$((id % 250 + 1))
RXE_HOST_IP=$net.1 RXE_UROCE_IP=$net.2 RXE_GUEST_IP=$net.11
RXE_UROCE_MAC=$(printf '02:00:00:4d:%02x:02' $((id % 250 + 1)))
RXE_GUEST_MAC=$(printf '52:54:00:4d:%02x:0b' $((id % 250 + 1)))
if [ -z "$uguest" ]; then
  rxe_net_up "$id" "$RXE_HOST_IP/24" "$RXE_MTU"
  rxe_net_tcp_up "$net.3/24"
  echo "network: bridge $RXE_BR ($RXE_HOST_IP), tap $RXE_TAP, veth $RXE_VETH_BR <-> $RXE_NS:$RXE_VETH"
elif [ "$steer" -eq 1 ]; then
  # The veth and its namespace: the host's steering uroced (steer.sh).
  rxe_net_up "$id" "$RXE_HOST_IP/24" "$RXE_MTU"
  echo "network: bridge $RXE_BR ($RXE_HOST_IP), tap $RXE_TAP (rxe), urxk$id, urxd$id (uroce guest), veth $RXE_VETH_BR <-> $RXE_NS:$RXE_VETH (steering peer)"
else
  rxe_net_up "$id" "$RXE_HOST_IP/24" "$RXE_MTU" no-veth
  echo "network: bridge $RXE_BR ($RXE_HOST_IP, MTU $RXE_MTU), tap $RXE_TAP (rxe), urxk$id, urxd$id (uroce guest)"
fi

RXE_GUEST_DIR=$UROCE_TMP/guest
# Also a guest that broke during a case is booted anew this way
# (tests/interop_rxe/run_case.sh).
rxe_guest_boot() {
  rxe_guest_start "$RXE_GUEST_DIR" "$RXE_IMAGE" "$RXE_GUEST_IP/24" "$RXE_TAP" "$RXE_GUEST_MAC" \
    150 --mtu "$RXE_MTU"
}
t0=$SECONDS
rxe_guest_boot
RXE_T_BOOT=$((SECONDS - t0))
echo "guest boot: $RXE_T_BOOT s"
if [ -n "$uguest" ]; then
  rxe_uguest_up "$uguest" "$id" "$net" "$RXE_IMAGE" "$build" $((steer + 1))
  echo "uroce guest: $uguest NIC at $RXE_UROCE_PCI, eth0 $RXE_UROCE_TCP_IP, capture on $RXE_CAP_IF"
  sed 's/^/  /' "$RXE_UGUEST_DIR/share/ready"
fi
rxe_start_daemon main ""
if [ -n "$uguest" ] && ! rxe_uguest_pmd main; then
  echo "FAIL: uroced's NIC was not probed by $RXE_UGUEST_PMD" >&2
  exit 1
fi

# GID indexes of the IPv4-mapped RoCE v2 GIDs, each side from its own table.
RXE_GGID=$(rxe_guest_exec "$RXE_GUEST_DIR" 30 rxe-gid-index) || {
  echo "FAIL: rxe0 has no IPv4-mapped RoCE v2 GID" >&2
  exit 1
}
RXE_UGID=$(rxe_uroce_gid "$UROCE_RUN" "${UROCE_DAEMON_RUN[main]}" "$RXE_UROCE_IP")
if [ -z "$RXE_UGID" ]; then
  echo "FAIL: uroce0 has no RoCE v2 GID ::ffff:$RXE_UROCE_IP" >&2
  exit 1
fi
echo "GID index: rxe0 $RXE_GGID, uroce0 $RXE_UGID"
rxe_guest_exec "$RXE_GUEST_DIR" 30 'ibv_devinfo -d rxe0 | grep -E "state|active_mtu"' |
  sed 's/^/  rxe0: /'

for c in "${only_cases[@]}"; do
  rxe_run_case "$c"
done
[ "$steer" -eq 0 ] || rxe_steer_run "$net"
[[ ${RXE_DEVICE_KEYS:-} != *";rx_buf="* ]] || rxe_chained_check

uroce_no_pair
for d in "${UROCE_DAEMONS[@]}"; do
  uroce_daemon_alive "$d" || continue
  st=0
  uroce_daemon_stop "$d" "$RXE_STOP_SECS" || st=1
  [ "$st" -eq 0 ] || UROCE_WHY="uroced $d did not stop cleanly on SIGTERM"
  rxe_row "uroced-$d" - "$st" "clean SIGTERM exit"
  uroce_verdict "uroced $d exits 0 on SIGTERM" "$st" >/dev/null
done

echo
rxe_print_table
echo "interop-rxe: wall clock $((SECONDS - T_START)) s"
rxe_first_failure_print
uroce_summary interop-rxe
