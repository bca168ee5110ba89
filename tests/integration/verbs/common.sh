# shellcheck shell=bash
# Shared start of the end-to-end verbs tests (sourced). Arguments of every
# test script: BUILD_DIR (the Meson build directory holding uroced,
# uroce-ctl, uroce-run and liburoce-rdmav34.so).
#
# Exit 77 (Meson: skipped) when the test cannot run here: not root (mknod,
# network namespaces), a stock program missing, or a kernel with an RDMA
# core (libibverbs would enumerate over netlink and never see our devices).
set -euo pipefail

VERBS_TEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SOURCE_ROOT=$(cd "$VERBS_TEST_DIR/../../.." && pwd)
# shellcheck source=../../../scripts/lib/uroce-env.sh
source "$SOURCE_ROOT/scripts/lib/uroce-env.sh"
# shellcheck source=../../../scripts/lib/uroce-verbs.sh
source "$SOURCE_ROOT/scripts/lib/uroce-verbs.sh"

# verbs_test_init TAG BUILD_DIR PROGRAM...
verbs_test_init() {
  local tag=$1 build=$2
  shift 2
  if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root (mknod /dev/infiniband/uverbsN, network namespaces)"
    exit 77
  fi
  if [ -d /sys/module/ib_uverbs ]; then
    echo "SKIP: kernel RDMA core loaded; libibverbs would use netlink, not SYSFS_PATH"
    exit 77
  fi
  local prog
  for prog in "$@"; do
    if ! command -v "$prog" >/dev/null; then
      echo "SKIP: $prog missing (apt-get install ibverbs-utils perftest)"
      exit 77
    fi
  done
  uroce_env_init "$tag"
  uroce_find_tools "$(realpath "$build")"
  echo "uroced:    $UROCED"
  echo "uroce-ctl: $UROCE_CTL"
  echo "uroce-run: $UROCE_RUN"
  echo "work dir:  $UROCE_TMP"
}

# verbs_uroced_nofile N: the daemons started from now on run at
# RLIMIT_NOFILE N, through a wrapper that sets it and execs uroced (same
# pid, so the bookkeeping of uroce-env.sh holds).
verbs_uroced_nofile() {
  local real=${UROCED_REAL:-$UROCED}
  UROCED_REAL=$real
  UROCED=$UROCE_TMP/uroced-nofile$1
  printf '#!/bin/sh\nulimit -n %s || exit 1\nexec %s "$@"\n' "$1" "$real" >"$UROCED"
  chmod 755 "$UROCED"
}

# Device spec for --device: NAME MAC IPV4 PORT [MTU]
verbs_device() {
  echo "name=$1;mac=$2;ipv4=$3;mtu=${5:-9000};port=$4"
}

# The --device port of a net_af_packet PMD on veth end IFACE, sized for
# jumbo frames (docs/benchmarks.md: blocksz/framesz 8192, a mbuf room to match).
verbs_af_packet_port() {
  echo "net_af_packet0,iface=$1,qdisc_bypass=1,blocksz=8192,framesz=8192,framecnt=2048"
}

# verbs_veth_port KIND IFACE [AF_XDP_OPTIONS] : the --device port of kind
# af_packet (verbs_af_packet_port) or af_xdp (port=af_xdp:IFACE, options
# appended after a comma) on veth end IFACE.
verbs_veth_port() {
  if [ "$1" = af_xdp ]; then
    echo "af_xdp:$2${3:+,$3}"
  else
    verbs_af_packet_port "$2"
  fi
}

# verbs_pingpong PROGRAM LABEL SIZE ITERS [EXTRA-ARGS...] : one rdma-core
# pingpong with -c (the server checks the data it received), server first,
# judged on both sides' exit status and result lines (uroce_check_pingpong)
# and told as one verdict. The sides, from these settings (default):
#   PP_SRV, PP_CLI        names of arrays holding each side's uroce-run
#                         prefix (R)
#   PP_DEV_SRV, PP_DEV_CLI  their devices (uroce0, uroce1)
#   PP_NS_SRV, PP_NS_CLI  their network namespaces (-: this one)
#   PP_TCP                the server's TCP address (127.0.0.1)
#   PP_GID                the GID index both use (1: the IPv4 one)
#   PP_LIMIT              seconds each side may take (60)
verbs_pingpong() {
  local prog=$1 label=$2 size=$3 iters=$4
  shift 4
  local -n srv_run=${PP_SRV:-R} cli_run=${PP_CLI:-R}
  local gid=${PP_GID:-1} port st=0
  uroce_next_port port
  uroce_pair "$label" "${PP_LIMIT:-60}" "$port" "${PP_NS_SRV:--}" "${PP_NS_CLI:--}" -- \
    "${srv_run[@]}" "$prog" -d "${PP_DEV_SRV:-uroce0}" -g "$gid" -p "$port" -s "$size" \
    -n "$iters" -c "$@" ::: \
    "${cli_run[@]}" "$prog" -d "${PP_DEV_CLI:-uroce1}" -g "$gid" -p "$port" -s "$size" \
    -n "$iters" -c "$@" "${PP_TCP:-127.0.0.1}" &&
    uroce_check_pingpong "$size" "$iters" || st=1
  [ "$st" -eq 0 ] && echo "  $UROCE_RESULT"
  uroce_verdict "$label" "$st"
}

# verbs_perf PROGRAM KIND LABEL [EXTRA-ARGS...] : one perftest run (-F),
# server first, over the GID PP_GID (-x), judged by uroce_check_perftest
# KIND (bw or lat) on PP_ITERS (1000) iterations times PP_QPS (1: perftest
# counts every QP's) and told as one verdict; the sides as verbs_pingpong's.
verbs_perf() {
  local prog=$1 kind=$2 label=$3
  shift 3
  local -n srv_run=${PP_SRV:-R} cli_run=${PP_CLI:-R}
  local iters=${PP_ITERS:-1000} port st=0
  uroce_next_port port
  uroce_pair "$label" "${PP_LIMIT:-60}" "$port" "${PP_NS_SRV:--}" "${PP_NS_CLI:--}" -- \
    "${srv_run[@]}" "$prog" -d "${PP_DEV_SRV:-uroce0}" -x "${PP_GID:-1}" -p "$port" \
    -n "$iters" -F "$@" ::: \
    "${cli_run[@]}" "$prog" -d "${PP_DEV_CLI:-uroce1}" -x "${PP_GID:-1}" -p "$port" \
    -n "$iters" -F "$@" "${PP_TCP:-127.0.0.1}" &&
    uroce_check_perftest "$kind" $((iters * ${PP_QPS:-1})) || st=1
  [ "$st" -eq 0 ] && echo "$UROCE_RESULT" | sed 's/^/  /'
  uroce_verdict "$label" "$st"
}

# verbs_daemons_stop TEXT NAME... : one verdict that every named daemon is
# still alive and exits 0 on SIGTERM (uroce_daemon_stop also checks that
# its run dir and nodes are gone).
# verbs_class_rate_check LIMIT_GBPS SECONDS BEFORE_JSON AFTER_JSON : the
# ib_write_bw of the last uroce_pair ($UROCE_CLI_OUT, 4 KiB payload in
# 4,170-byte frames) against a class limit of LIMIT_GBPS of frames: at most
# 1.03x of the payload it allows, and at least 0.85x of it less the share
# of the SECONDS-long run that the engine spent away beyond the class's
# 2 ms credit (kClassCreditNs; engine_away.py between the two
# `uroce-ctl status --json`): a machine that takes the engine's CPU is not
# the limiter's fault. Prints the figures; false with UROCE_WHY otherwise.
verbs_class_rate_check() {
  local limit=$1 secs=$2 before=$3 after=$4 gbps want away low
  gbps=$(/usr/bin/python3 "$SOURCE_ROOT/bench/perftest_json.py" --transport ring --point class_rate \
    --status 0 "$UROCE_CLI_OUT" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin).get("gbps", ""))')
  away=$(/usr/bin/python3 "$VERBS_TEST_DIR/engine_away.py" "$before" "$after" 2000000) || away=""
  want=$(awk -v l="$limit" 'BEGIN { printf "%.4f", l * 4096 / 4170 }')
  low=$(awk -v a="${away:-inf}" -v s="$secs" 'BEGIN { f = a == "inf" ? 0 : 1 - a / (s * 1e9); if (f < 0) f = 0; printf "%.3f", 0.85 * f }')
  echo "  ib_write_bw reported ${gbps:-nothing} Gb/s; the limit allows $want Gb/s of payload;" \
    "the engine was away ${away:-?} ns beyond its credit, so the floor is $low x"
  if [ -z "$away" ]; then
    UROCE_WHY="engine_away.py could not read the engine's loop histograms"
    return 1
  fi
  if [ -z "$gbps" ] || ! awk -v g="$gbps" -v w="$want" -v l="$low" 'BEGIN { exit !(g >= l * w && g <= 1.03 * w) }'; then
    UROCE_WHY="ib_write_bw reported ${gbps:-no figure} Gb/s, want $low..1.03 x $want"
    return 1
  fi
}

verbs_daemons_stop() {
  local text=$1 d st=0
  shift
  for d in "$@"; do
    if ! uroce_daemon_alive "$d"; then
      UROCE_WHY="uroced $d died during the run"; st=1; break
    elif ! uroce_daemon_stop "$d"; then
      UROCE_WHY="uroced $d did not stop cleanly on SIGTERM"; st=1; break
    fi
  done
  uroce_verdict "$text" "$st"
}

# verbs_netns_pair LETTER OCTET [MTU] : two namespaces NSA and NSB, joined by a
# veth pair for the daemons' ports (DEVA, DEVB; MTU 9000 unless given, no
# kernel IP) and one for the programs' TCP exchange (TCPA, TCPB with
# TCP_IPA=10.OCTET.1.1 and TCP_IPB=10.OCTET.1.2). Names carry LETTER (one
# per test) and the run's id, and stay within 15 bytes; uroce-env.sh
# removes them at exit.
verbs_netns_pair() {
  local t=$1 o=$2 mtu=${3:-9000} id=$((UROCE_ID % 1000000))
  NSA=uroce_${t}A_$id NSB=uroce_${t}B_$id
  DEVA=u${t}d${id}a DEVB=u${t}d${id}b
  TCPA=u${t}t${id}a TCPB=u${t}t${id}b
  TCP_IPA=10.$o.1.1 TCP_IPB=10.$o.1.2
  uroce_netns_add "$NSA"
  uroce_netns_add "$NSB"
  uroce_veth_dpdk "$NSA" "$DEVA" "$NSB" "$DEVB" "$mtu"
  uroce_veth_ip "$NSA" "$TCPA" "$TCP_IPA/24" "$NSB" "$TCPB" "$TCP_IPB/24"
}
