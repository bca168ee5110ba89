#!/usr/bin/env bash
# Writes and removes what stock libibverbs discovers a uroce device through
# when the kernel has no RDMA core (docs/provider-abi.md): a sysfs
# tree under a directory of our choosing, which libibverbs reads when
# SYSFS_PATH points at it, and a character device /dev/infiniband/uverbsN,
# whose path is hard-coded in libibverbs.
#
#   uroce-sysfs.sh claim-cdev [FIRST]
#       Creates /dev/infiniband/uverbsN for the first free N >= FIRST
#       (default 0) and prints N. mknod fails on an existing name, so two
#       callers never get the same N.
#   uroce-sysfs.sh release-cdev N
#       Removes /dev/infiniband/uverbsN if it is such a node (1:7).
#   uroce-sysfs.sh add-device ROOT IBDEV N --mac MAC [--ipv4 A.B.C.D]
#                  [--node-guid XXXX:XXXX:XXXX:XXXX] [--gid-table-len L]
#                  [--board-id TEXT] [--modalias TEXT]
#       Adds device IBDEV (e.g. uroce0) with uverbs node N to the tree at
#       ROOT. GID 0 is the RoCEv2 link-local GID of MAC, GID 1 (with --ipv4)
#       the RoCEv2 IPv4-mapped GID; the table has L entries (default 16), the
#       unused ones all-zero. The node GUID defaults to the EUI-64 of MAC.
#       Several devices may share one ROOT.
#   uroce-sysfs.sh remove-device ROOT IBDEV N
#
# The node is /dev/full's numbers (c 1 7): libibverbs' ioctls on it fail
# with ENOTTY, so it falls back to sysfs, and its write() commands fail
# cleanly with ENOSPC. /dev/null would "accept" commands and return garbage.
set -euo pipefail

readonly CDEV_DIR=/dev/infiniband
readonly CDEV_NUMBERS="1:7"
# Kernel uverbs ABI (class/infiniband_verbs/abi_version) libibverbs 44
# accepts: 3..6.
readonly UVERBS_CLASS_ABI=6
# Per-device ABI (uverbsN/abi_version): our own, matched by the provider's
# match_min/max_abi_version (kUverbsAbi in the provider).
readonly UROCE_DEVICE_ABI=1
readonly UROCE_MODALIAS="uroce:vnic"

die() {
  echo "uroce-sysfs.sh: $*" >&2
  exit 2
}

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }

check_root_dir() {
  local root=$1
  [ -n "$root" ] || die "empty ROOT"
  case "$(realpath -m "$root")" in
    / | /sys | /sys/*) die "refusing to write to $root: give a directory of our own" ;;
  esac
}

check_ibdev() {
  [[ $1 =~ ^[A-Za-z][A-Za-z0-9_]{0,62}$ ]] || die "bad device name '$1'"
}

claim_cdev() {
  local first=${1:-0}
  is_uint "$first" || die "bad FIRST '$first'"
  mkdir -p "$CDEV_DIR"
  local n
  for ((n = first; n < first + 1000; n++)); do
    if mknod -m 0666 "$CDEV_DIR/uverbs$n" c 1 7 2>/dev/null; then
      echo "$n"
      return 0
    fi
  done
  die "no free $CDEV_DIR/uverbsN for N in $first..$((first + 999))"
}

release_cdev() {
  local n=$1
  is_uint "$n" || die "bad N '$n'"
  local node=$CDEV_DIR/uverbs$n
  [ -e "$node" ] || return 0
  # stat prints major:minor in hex; 1:7 is the same in both bases.
  if [ -c "$node" ] && [ "$(stat -c '%t:%T' "$node")" = "$CDEV_NUMBERS" ]; then
    rm -f "$node"
  else
    die "$node is not a uroce node ($CDEV_NUMBERS); left alone"
  fi
}

# Writes one sysfs attribute: the value and a newline, as the kernel does.
put() {
  mkdir -p "$(dirname "$1")"
  printf '%s\n' "$2" >"$1"
}

add_device() {
  [ $# -ge 3 ] || die "add-device ROOT IBDEV N --mac MAC [...]"
  local root=$1 ibdev=$2 n=$3
  shift 3
  check_root_dir "$root"
  check_ibdev "$ibdev"
  is_uint "$n" || die "bad N '$n'"
  local mac="" ipv4="" node_guid="" gid_len=16 board_id="uroce" modalias=$UROCE_MODALIAS
  while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || die "option $1 needs a value"
    case "$1" in
      --mac) mac=$2 ;;
      --ipv4) ipv4=$2 ;;
      --node-guid) node_guid=$2 ;;
      --gid-table-len) gid_len=$2 ;;
      --board-id) board_id=$2 ;;
      --modalias) modalias=$2 ;;
      *) die "unknown option $1" ;;
    esac
    shift 2
  done
  [[ $mac =~ ^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$ ]] || die "--mac XX:XX:XX:XX:XX:XX required"
  if ! is_uint "$gid_len" || [ "$gid_len" -lt 2 ] || [ "$gid_len" -gt 256 ]; then
    die "--gid-table-len must be 2..256"
  fi

  local m0 m1 m2 m3 m4 m5
  IFS=: read -r m0 m1 m2 m3 m4 m5 <<<"${mac,,}"
  # EUI-64 interface identifier: flip the universal/local bit, insert ff:fe.
  local eui
  eui=$(printf '%02x%s:%sff:fe%s:%s%s' $((0x$m0 ^ 0x02)) "$m1" "$m2" "$m3" "$m4" "$m5")
  [ -n "$node_guid" ] || node_guid=$eui
  [[ $node_guid =~ ^([0-9a-f]{4}:){3}[0-9a-f]{4}$ ]] || die "bad --node-guid '$node_guid'"

  local -a gids=("fe80:0000:0000:0000:$eui")
  if [ -n "$ipv4" ]; then
    local a b c d x
    IFS=. read -r a b c d <<<"$ipv4"
    for x in "$a" "$b" "$c" "$d"; do
      if ! is_uint "$x" || [ "$x" -gt 255 ]; then die "bad --ipv4 '$ipv4'"; fi
    done
    gids+=("$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")")
  fi

  local verbs=$root/class/infiniband_verbs
  local uv=$verbs/uverbs$n
  local ib=$root/class/infiniband/$ibdev
  [ ! -e "$uv" ] || die "$uv exists"
  [ ! -e "$ib" ] || die "$ib exists"

  [ -f "$verbs/abi_version" ] || put "$verbs/abi_version" "$UVERBS_CLASS_ABI"
  put "$uv/ibdev" "$ibdev"
  put "$uv/abi_version" "$UROCE_DEVICE_ABI"
  put "$uv/dev" "$CDEV_NUMBERS"

  put "$ib/node_type" "1: CA"
  put "$ib/node_guid" "$node_guid"
  put "$ib/board_id" "$board_id"
  put "$ib/device/modalias" "$modalias"
  local port=$ib/ports/1 i gid
  for ((i = 0; i < gid_len; i++)); do
    gid=${gids[i]:-0000:0000:0000:0000:0000:0000:0000:0000}
    put "$port/gids/$i" "$gid"
    put "$port/gid_attrs/types/$i" "RoCE v2"
    # Empty: no kernel netdev carries a uroce GID (ndev_ifindex 0). A name
    # here would have to resolve with if_nametoindex or GID queries fail.
    mkdir -p "$port/gid_attrs/ndevs"
    : >"$port/gid_attrs/ndevs/$i"
  done
  put "$port/pkeys/0" "0xffff"
}

remove_device() {
  [ $# -eq 3 ] || die "remove-device ROOT IBDEV N"
  local root=$1 ibdev=$2 n=$3
  check_root_dir "$root"
  check_ibdev "$ibdev"
  is_uint "$n" || die "bad N '$n'"
  rm -rf "$root/class/infiniband/$ibdev" "$root/class/infiniband_verbs/uverbs$n"
}

[ $# -ge 1 ] || die "usage: claim-cdev | release-cdev | add-device | remove-device (see the header)"
cmd=$1
shift
case "$cmd" in
  claim-cdev) claim_cdev "$@" ;;
  release-cdev) [ $# -eq 1 ] || die "release-cdev N"; release_cdev "$1" ;;
  add-device) add_device "$@" ;;
  remove-device) remove_device "$@" ;;
  *) die "unknown command '$cmd'" ;;
esac
