#!/usr/bin/env bash
# The main-job command (README): on a fresh Debian 12 machine, as root,
# installs what is missing, builds uroce, starts uroced with two virtual
# RDMA devices (uroce0 and uroce1, joined back to back inside the daemon),
# and runs unmodified verbs programs over them:
#   ibv_rc_pingpong  (server on uroce0, client on uroce1, -g 1, -c: the
#                     server checks the data it received)
#   ib_write_bw      (perftest, -x 1; 64 KiB and 1 MiB messages)
# then prints `uroce-ctl status` and removes everything it created.
#
#   scripts/demo.sh [--no-setup] [--build-dir DIR] [--link ring|memif] [--keep]
#
#   --no-setup       do not run scripts/setup.sh (apt-get) first
#   --build-dir DIR  build directory (default: build-demo in the checkout);
#                    configured with -Dtests=false if it does not exist
#   --link ring      the two devices are joined by a crossed in-process
#                    net_ring pair (default)
#   --link memif     ... by a DPDK memif pair (server and client in one daemon)
#   --keep           keep the work dir (daemon log, program output)
#
# Exit status 0 only when both programs succeeded and their output shows the
# traffic went through (pingpong: both sides report every byte and no
# corrupt page; perftest: a result row for every size).
set -euo pipefail

SOURCE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
setup=1
build=$SOURCE_ROOT/build-demo
link=ring
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit "${1:-2}"
}
while [ $# -gt 0 ]; do
  case $1 in
    --no-setup) setup=0; shift ;;
    --build-dir) build=$2; shift 2 ;;
    --link) link=$2; shift 2 ;;
    --keep) export UROCE_KEEP=1; shift ;;
    -h|--help) usage 0 ;;
    *) echo "demo.sh: unknown argument $1" >&2; usage ;;
  esac
done
case $link in ring|memif) ;; *) echo "demo.sh: --link ring or memif" >&2; exit 2 ;; esac

if [ "$(id -u)" -ne 0 ]; then
  echo "demo.sh: run as root: uroced creates /dev/infiniband/uverbsN nodes (mknod)" >&2
  exit 2
fi
if [ -d /sys/module/ib_uverbs ]; then
  echo "demo.sh: this kernel has an RDMA core loaded; libibverbs would list its devices" >&2
  echo "over netlink and never see uroce's (docs/provider-abi.md). Use a host without it." >&2
  exit 2
fi

echo "== 1. packages"
if [ "$setup" -eq 1 ]; then
  "$SOURCE_ROOT/scripts/setup.sh"
  # The programs the demo runs, beyond what setup.sh installs for the build.
  if ! command -v ib_write_bw >/dev/null || ! command -v ibv_rc_pingpong >/dev/null; then
    echo "demo: installing perftest ibverbs-utils"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends perftest ibverbs-utils ||
      { apt-get update -qq && apt-get install -y -qq --no-install-recommends perftest ibverbs-utils; }
  fi
else
  echo "skipped (--no-setup)"
fi
for prog in ibv_rc_pingpong ib_write_bw meson ninja; do
  if ! command -v "$prog" >/dev/null; then
    echo "demo.sh: $prog missing; run without --no-setup (or apt-get install perftest ibverbs-utils meson ninja-build)" >&2
    exit 2
  fi
done

echo "== 2. build ($build)"
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$SOURCE_ROOT" -Dtests=false
fi
# Only what the demo runs: the daemon, uroce-ctl, the provider and the
# completion-channel interposer (uroce-run is generated at configure time).
meson compile -C "$build" uroced uroce-ctl uroce-rdmav34 uroce-preload

# shellcheck source=scripts/lib/uroce-env.sh
source "$SOURCE_ROOT/scripts/lib/uroce-env.sh"
# shellcheck source=scripts/lib/uroce-verbs.sh
source "$SOURCE_ROOT/scripts/lib/uroce-verbs.sh"
uroce_env_init demo
uroce_find_tools "$(realpath "$build")"

echo "== 3. uroced with uroce0 and uroce1 over $link"
if [ "$link" = ring ]; then
  port0=ring:demo port1=ring:demo
else
  sock=$UROCE_TMP/memif.sock
  port0="net_memif0,role=server,socket=$sock,socket-abstract=no,id=0,bsize=8192"
  port1="net_memif1,role=client,socket=$sock,socket-abstract=no,id=0,bsize=8192"
fi
dev0="name=uroce0;mac=02:00:00:de:00:01;ipv4=10.220.0.1;mtu=9000;port=$port0"
dev1="name=uroce1;mac=02:00:00:de:00:02;ipv4=10.220.0.2;mtu=9000;port=$port1"
echo "  $UROCED --config <generated> --device \"$dev0\" --device \"$dev1\""
uroce_daemon_start demo --lcore 1 -- --device "$dev0" --device "$dev1"
RUN=${UROCE_DAEMON_RUN[demo]}
R=("$UROCE_RUN" --run-dir "$RUN")
echo "  ready; run dir $RUN"
"${R[@]}" ibv_devices | sed 's/^/  /'

echo "== 4. ibv_rc_pingpong (server uroce0, client uroce1, GID index 1, data checked)"
uroce_next_port port
st=0
uroce_pair rc_pingpong 60 "$port" - - -- \
  "${R[@]}" ibv_rc_pingpong -d uroce0 -g 1 -p "$port" -c ::: \
  "${R[@]}" ibv_rc_pingpong -d uroce1 -g 1 -p "$port" -c 127.0.0.1 &&
  uroce_check_pingpong 4096 1000 || st=1
if [ "$st" -eq 0 ]; then
  echo "  server: $(grep -E 'bytes in|iters in' "$UROCE_SRV_OUT" | paste -sd ';' | sed 's/;/; /g')"
  echo "  client: $(grep -E 'bytes in|iters in' "$UROCE_CLI_OUT" | paste -sd ';' | sed 's/;/; /g')"
fi
uroce_verdict "ibv_rc_pingpong" "$st"

echo "== 5. ib_write_bw (server uroce0, client uroce1, GID index 1)"
for spec in "65536 5000" "1048576 500"; do
  read -r size iters <<<"$spec"
  uroce_next_port port
  st=0
  uroce_pair "ib_write_bw-$size" 120 "$port" - - -- \
    "${R[@]}" ib_write_bw -d uroce0 -x 1 -p "$port" -s "$size" -n "$iters" -F ::: \
    "${R[@]}" ib_write_bw -d uroce1 -x 1 -p "$port" -s "$size" -n "$iters" -F 127.0.0.1 &&
    uroce_check_perftest bw "$iters" || st=1
  [ "$st" -eq 0 ] && printf '%s\n' "$UROCE_RESULT" | sed 's/^/  /'
  uroce_verdict "ib_write_bw $size B x $iters" "$st"
done

echo "== 6. uroce-ctl status"
uroce_no_pair
st=0
"$UROCE_CTL" --run-dir "$RUN" status || { UROCE_WHY="uroce-ctl status exited non-zero"; st=1; }
uroce_verdict "uroce-ctl status" "$st"

echo "== 7. stop"
uroce_no_pair
st=0
uroce_daemon_stop demo || st=1
UROCE_WHY="uroced did not exit 0 on SIGTERM or left files behind"
uroce_verdict "uroced stopped cleanly" "$st"

if [ "$UROCE_FAILED" -eq 0 ]; then
  echo "demo: PASS (verbs traffic verified over uroce0 <-> uroce1)"
  exit 0
fi
echo "demo: FAIL"
exit 1
