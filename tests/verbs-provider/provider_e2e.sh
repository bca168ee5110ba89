#!/usr/bin/env bash
# The provider under stock libibverbs against a real uroced: two devices of
# one daemon joined by a net_ring pair, everything run through uroce-run.
#
#   provider_e2e.sh BUILD_DIR VERBS_PROBE
#
# 1. ibv_devices / ibv_devinfo -v see both devices with the daemon's values;
# 2. verbs_probe loopback: RC WRITE/READ/atomics/SEND-with-imm into an SRQ,
#    completion channel, cq_ex, UD + AH + create_ah_from_wc, resize, rereg;
# 3. ibv_rc_pingpong -e (events through the interposer's channel);
# 4. verbs_probe death: SIGKILL the daemon under a live context and expect
#    DEVICE_FATAL, EIO and no hang.
# Root only (mknod); exit 77 = skipped.
set -euo pipefail
build=$(realpath "$1")
probe=$(realpath "$2")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../../scripts/lib/uroce-env.sh"

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: needs root (mknod /dev/infiniband/uverbsN)"
  exit 77
fi
if [ -d /sys/module/ib_uverbs ]; then
  echo "SKIP: kernel RDMA core loaded; libibverbs would use netlink, not SYSFS_PATH"
  exit 77
fi
for prog in ibv_devices ibv_devinfo ibv_rc_pingpong; do
  command -v "$prog" >/dev/null || { echo "SKIP: $prog missing (ibverbs-utils)"; exit 77; }
done
uroce_env_init prov_e2e
uroce_find_tools "$build"

fails=0
step() { echo "== $*"; }
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

dev() { echo "name=$1;mac=$2;ipv4=$3;mtu=9000;port=ring:r$UROCE_ID"; }
uroce_daemon_start d1 --lcore 1 -- \
  --device "$(dev uroce0 02:00:00:00:e2:01 10.77.0.1)" \
  --device "$(dev uroce1 02:00:00:00:e2:02 10.77.0.2)"
run=${UROCE_DAEMON_RUN[d1]}
urun() { "$UROCE_RUN" --run-dir "$run" "$@"; }

step "ibv_devices, ibv_devinfo -v"
out=$UROCE_TMP/devinfo.out
urun ibv_devices >"$out" 2>&1 || bad "ibv_devices exited $?"
grep -q uroce0 "$out" && grep -q uroce1 "$out" || bad "ibv_devices does not list both devices"
urun ibv_devinfo -v -d uroce1 >"$out" 2>&1 || bad "ibv_devinfo exited $?"
for want in "fw_ver:				uroce" "state:			PORT_ACTIVE (4)" "active_mtu:		4096 (5)" \
  "GID[  1]:		::ffff:10.77.0.2, RoCE v2" "link_layer:		Ethernet"; do
  grep -qF -- "$want" "$out" || bad "ibv_devinfo: '$want' missing"
done

step "verbs_probe loopback"
out=$UROCE_TMP/loopback.out
pid=
uroce_bg pid --timeout 60 "$out" "$out" -- "$UROCE_RUN" --run-dir "$run" "$probe" loopback uroce0 uroce1
rc=0
uroce_wait "$pid" rc
cat "$out"
[ "$rc" -eq 0 ] || bad "verbs_probe loopback exited $rc"

step "ibv_rc_pingpong -e (completion channel through the interposer)"
port=$((20000 + UROCE_ID % 20000))
srv=$UROCE_TMP/pp_srv.out
cli=$UROCE_TMP/pp_cli.out
uroce_bg spid --timeout 60 "$srv" "$srv" -- "$UROCE_RUN" --run-dir "$run" \
  ibv_rc_pingpong -e -d uroce0 -g 1 -p "$port" -n 200
uroce_wait_listen - "$port" 10 "$spid" || bad "pingpong server did not listen"
uroce_bg cpid --timeout 60 "$cli" "$cli" -- "$UROCE_RUN" --run-dir "$run" \
  ibv_rc_pingpong -e -d uroce1 -g 1 -p "$port" -n 200 127.0.0.1
crc=0 src=0
uroce_wait "$cpid" crc
uroce_wait "$spid" src
tail -2 "$cli"
[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] || bad "ibv_rc_pingpong -e: client $crc, server $src"

step "verbs_probe death (SIGKILL the daemon under a live context)"
out=$UROCE_TMP/death.out
uroce_bg dpid --timeout 60 "$out" "$out" -- "$UROCE_RUN" --run-dir "$run" "$probe" death uroce0
if uroce_wait_for_line "$out" '^probe: waiting' 20 "$dpid"; then
  uroce_daemon_kill d1
else
  bad "verbs_probe death never got ready"
fi
drc=0
uroce_wait "$dpid" drc
cat "$out"
[ "$drc" -eq 0 ] || bad "verbs_probe death exited $drc (124/137: it hung)"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "PASS"
