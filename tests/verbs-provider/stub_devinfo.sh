#!/usr/bin/env bash
# Stock libibverbs 44 loads our ABI stub provider and unmodified ibv_devices
# and ibv_devinfo -v describe the device it matches. The device exists only
# as a fake sysfs tree (SYSFS_PATH) plus a /dev/infiniband/uverbsN node; a
# second device with a foreign modalias must stay unmatched.
#
#   stub_devinfo.sh PATH/TO/liburoce-rdmav34.so PATH/TO/uroce-sysfs.sh PATH/TO/stub_probe
#
# Exit 77 (skipped) when not root (mknod in /dev), when ibverbs-utils is
# missing, or when the kernel has an RDMA core (then libibverbs enumerates
# devices over netlink and ignores SYSFS_PATH).
set -euo pipefail

# Meson passes build outputs relative to the build directory; libibverbs
# needs an absolute provider path.
provider=$(realpath "$1")
sysfs=$(realpath "$2")
probe=$(realpath "$3")

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: needs root (mknod /dev/infiniband/uverbsN)"
  exit 77
fi
for tool in ibv_devices ibv_devinfo; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool missing (apt-get install ibverbs-utils)"
    exit 77
  fi
done
if [ -d /sys/module/ib_core ] || [ -d /sys/module/ib_uverbs ]; then
  echo "SKIP: kernel RDMA core loaded; libibverbs would use netlink, not SYSFS_PATH"
  exit 77
fi

tmp=$(mktemp -d /tmp/uroce_stub_devinfo.XXXXXX)
node_ours=
node_other=

cleanup() {
  local rc=$?
  [ -z "$node_ours" ] || "$sysfs" release-cdev "$node_ours" || rc=1
  [ -z "$node_other" ] || "$sysfs" release-cdev "$node_other" || rc=1
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# Node numbers derived from the PID keep parallel runs apart; claim-cdev
# moves on to the next free one if taken.
node_ours=$("$sysfs" claim-cdev $((1000 + $$ % 50000)))
node_other=$("$sysfs" claim-cdev $((node_ours + 1)))
root=$tmp/sys
"$sysfs" add-device "$root" uroce0 "$node_ours" \
  --mac 02:00:00:ab:00:01 --ipv4 10.88.0.1 --gid-table-len 8 --board-id UROCE_STUB
"$sysfs" add-device "$root" other0 "$node_other" \
  --mac 02:00:00:ab:00:02 --modalias "platform:not-uroce"

# An absolute RDMAV_DRIVERS entry is dlopen'ed with "-rdmav34.so" appended.
export SYSFS_PATH=$root
export RDMAV_DRIVERS=${provider%-rdmav34.so}

fails=0
expect() {  # expect FILE LABEL FIXED-STRING
  if grep -qF -- "$3" "$1"; then
    echo "ok: $2"
  else
    echo "FAIL: $2: '$3' not in $(basename "$1")"
    fails=$((fails + 1))
  fi
}
reject() {  # reject FILE LABEL FIXED-STRING
  if grep -qF -- "$3" "$1"; then
    echo "FAIL: $2: '$3' in $(basename "$1")"
    fails=$((fails + 1))
  else
    echo "ok: $2"
  fi
}

rc=0
IBV_SHOW_WARNINGS=1 ibv_devices >"$tmp/devices.out" 2>"$tmp/devices.err" || rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: ibv_devices exited $rc"; fails=$((fails + 1)); }
cat "$tmp/devices.out"
expect "$tmp/devices.out" "ibv_devices lists uroce0 with its EUI-64 GUID" "uroce0"
expect "$tmp/devices.out" "node GUID from sysfs" "000000fffeab0001"
reject "$tmp/devices.out" "foreign modalias not matched" "other0"
expect "$tmp/devices.err" "libibverbs saw the foreign device unmatched" \
  "no userspace device-specific driver found for other0"

rc=0
ibv_devinfo -v -d uroce0 >"$tmp/devinfo.out" 2>"$tmp/devinfo.err" || rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: ibv_devinfo exited $rc"; fails=$((fails + 1)); }
cat "$tmp/devinfo.out"
f=$tmp/devinfo.out
expect "$f" "hca_id" "hca_id:	uroce0"
expect "$f" "transport (node_type 1: CA)" "transport:			InfiniBand (0)"
expect "$f" "fw_ver from query_device_ex" "fw_ver:				0.0.0-abi-stub"
expect "$f" "node_guid" "node_guid:			0000:00ff:feab:0001"
expect "$f" "board_id from sysfs" "board_id:			UROCE_STUB"
expect "$f" "phys_port_cnt" "phys_port_cnt:			1"
expect "$f" "num_comp_vectors from the context" "num_comp_vectors:		1"
expect "$f" "port state from query_port" "state:			PORT_ACTIVE (4)"
expect "$f" "link layer" "link_layer:		Ethernet"
expect "$f" "gid_tbl_len counted from sysfs" "gid_tbl_len:		8"
expect "$f" "link-local GID" "GID[  0]:		fe80::ff:feab:1, RoCE v2"
expect "$f" "IPv4-mapped GID" "GID[  1]:		::ffff:10.88.0.1, RoCE v2"
reject "$f" "no empty GID printed" "GID[  2]"
if [ -s "$tmp/devinfo.err" ]; then
  echo "FAIL: ibv_devinfo wrote to stderr:"
  cat "$tmp/devinfo.err"
  fails=$((fails + 1))
fi

if "$probe" uroce0; then
  echo "ok: stub_probe"
else
  echo "FAIL: stub_probe"
  fails=$((fails + 1))
fi

# The claimed nodes must go away with release-cdev (cleanup runs it again,
# harmlessly, on the way out).
"$sysfs" release-cdev "$node_other"
if [ -e "/dev/infiniband/uverbs$node_other" ]; then
  echo "FAIL: release-cdev left /dev/infiniband/uverbs$node_other"
  fails=$((fails + 1))
fi
node_other=

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "PASS"
