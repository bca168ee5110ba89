#!/usr/bin/env bash
# uroce through unmodified perftest between two uroced daemons, one per side
# of a link, or with each perftest running its own engine (--mode embedded),
# for scripts/bench.sh (docs/performance.md). Writes one JSON line per point
# (bench/perftest_json.py) into OUT_DIR.
#
#   bench/stack_bench.sh --build-dir DIR --transport memif|af_packet|af_xdp|ring --out OUT_DIR
#                        [--mode daemon|embedded]
#                        [--duration S] [--lat-iters N] [--send-iters N]
#                        [--poll auto|busy|backoff|yield] [--events auto|on|off]
#                        [--pin auto|on|off] [--points "write_bw send_bw ..."]
#                        [--memif-zero-copy auto|on|off] [--af-xdp-hugepages auto|on|off]
#                        [--ucx-iters U] [--stages] [--device-keys "K=V;..."]
#
# --device-keys: more device keys for both sides' devices (docs/config-keys.md),
# e.g. "ack_hold=0" to measure a default against its alternative.
# --stages: both devices keep stage stamps (the device key stage_stamps,
# docs/tails.md), and each point's JSON line gets "stages": per side (a, b)
# and stage, the count, p50/p99/p99.9 over the point and the mean over the
# slowest 1 % of the last tracked messages (daemon mode: the daemons'
# status before and after the point; embedded mode: each engine's
# "stages at exit" log line).
#
# Points (perftest flags in brackets; -F, -x 1, -d uroce0 everywhere):
#   write_bw      ib_write_bw -s 65536 -D S --report_gbits
#   send_bw       ib_send_bw  -s 64    -n M --report_gbits   (-D S without -e)
#   send_lat      ib_send_lat -s 2 -n N
#   read_lat      ib_read_lat -s 2 -n N
#   write_bw_q16  ib_write_bw -s 65536 -D S --report_gbits -q 16
#   ucx_tag_lat   UCX: ucx_perftest -t tag_lat -s 8 -w 5000, as a batch of tests
#                 on one connection (-b): for each of -R 50, 99 and 99.9,
#                 U/2048 tests (rounded up) of 2,048 round trips, the most one
#                 of its percentiles covers, the figure the median over them; with
#                 UCX_TLS=rc (rc_verbs, ud_verbs for wire-up) and
#                 UCX_NET_DEVICES=uroce0:1, as a UCX user runs it
#                 (tests/integration/verbs/ucx.sh); median, p99, p99.9 and overall
#                 average (bench/perftest_json.py --ucx-ranks). Skipped, said
#                 on stderr, when ucx_perftest is not installed (ucx-utils).
#
# Side A (perftest server) and side B (client) each have their own daemon:
# memif: both in this namespace, A the memif server (lcore 0), B the client
# (lcore 1); af_packet: A and B in two network namespaces joined by a veth
# pair (as tests/integration/verbs/netns_af_packet.sh). ring (daemon mode
# only): ONE daemon on lcore 0 with both devices (uroce0 for A, uroce1 for
# B) joined by a net_ring pair, and both perftest processes pinned to core
# 1: the daemon keeps its core to itself (issue 31, must-show 2).
#
# Placement on 2 cores (docs/performance.md has the measurements behind
# it): one daemon per core, and each perftest process pinned with taskset
# to its daemon's core (A and its daemon on core 0, B and its daemon on
# core 1). A process that polls its CQ next to a busy-polling daemon gets
# the core only in scheduler slices (milliseconds). By default (auto) every
# point runs against daemons in yield polling (docs/engine.md, "Sharing a
# core"): an idle daemon yields its core to a thread that wants it, and
# the provider yields it back when the CQ is empty.
#   - the latency points (send_lat, read_lat) run perftest with -e (sleep
#     on CQ events): woken by the daemon's completion-event record, perftest
#     gets the core at the daemon's next idle iteration. Against busy
#     daemons their medians were 0.4-0.8 us lower but a woken perftest now
#     and then waited for the daemon's slice: p99.9 0.85-1.6 ms, max 2-6 ms
#     (docs/tails.md, "The daemons' p99.9 in the -e points");
#   - the throughput points and ucx_tag_lat poll (perftest refuses -e for
#     WRITE and with -D; ucx_perftest has no -e).
# --poll, --events and --pin busy|backoff|yield / on|off force one choice
# for every point.
# The daemons' CPU use is the change of utime+stime in /proc/PID/stat over
# each point's client run (set-up included), as % of one core.
#
# Embedded mode (docs/embedded.md): no daemons. Each side's perftest runs as
# uroce-run --embedded --lcore 0 (A) / 1 (B) --device SPEC -- PERFTEST,
# pinned with taskset to that core, without -e (the application's own polls
# drive the engine; --poll, --events and --pin do not apply). Every point
# starts two fresh engines (a fresh memif socket, A its server). Over memif
# A's port comes up only when B's engine connects, and perftest's server
# checks its port before it listens, while its client connects once and
# gives up: the client connects through scripts/lib/tcp_relay.py, which
# listens once A's memif socket does (B's engine would wait for A's memif
# server anyway; this keeps B from starting first) and waits for A's
# perftest. Over af_packet the link
# is up from the start and the client connects directly. ucx_tag_lat needs
# no relay: ucx_perftest's server listens before it opens its device, and
# the memif client's engine, which may now start before the memif server's,
# waits for it (docs/embedded.md, "Links"). The CPU figure is
# the perftest processes' own (engine included), utime+stime over their
# lifetime (set-up and link wait included), as % of one core.
# Needs root. Sources scripts/lib/uroce-env.sh, whose EXIT trap removes
# everything started here.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SOURCE_ROOT=$(cd "$BENCH_DIR/.." && pwd)

build=
transport=
out=
mode=daemon
duration=3
lat_iters=20000
send_iters=200000
poll=auto
events=auto
pin=auto
points="write_bw send_bw send_lat read_lat write_bw_q16 ucx_tag_lat"
memif_zc=auto
xdp_huge=auto
ucx_iters=10000
# More than one lap of UCX's receive queue (rc_verbs: 4,095 buffers of 8
# KiB by default): every test opens a new worker whose buffers are all
# touched for the first time in that lap, which on this VM costs 4-15 us a
# message (docs/first-lap.md, "The first lap of a receive queue"). A test's
# round trips then all land on buffers touched before, as a long-running
# application's do.
ucx_warmup=5000
ucx_window=2048  # the round trips one ucx_perftest percentile covers
stages=0
device_keys=''
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --transport) transport=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --lat-iters) lat_iters=$2; shift 2 ;;
    --poll) poll=$2; shift 2 ;;
    --send-iters) send_iters=$2; shift 2 ;;
    --events) events=$2; shift 2 ;;
    --pin) pin=$2; shift 2 ;;
    --points) points=$2; shift 2 ;;
    --memif-zero-copy) memif_zc=$2; shift 2 ;;
    --af-xdp-hugepages) xdp_huge=$2; shift 2 ;;
    --ucx-iters) ucx_iters=$2; shift 2 ;;
    --stages) stages=1; shift ;;
    --device-keys) device_keys=$2; shift 2 ;;
    *) echo "stack_bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$build" ] || [ -z "$transport" ] || [ -z "$out" ]; then
  echo "stack_bench.sh: --build-dir, --transport and --out are required" >&2
  exit 2
fi
case $mode in
  daemon|embedded) ;;
  *) echo "stack_bench.sh: unknown mode $mode (daemon or embedded)" >&2; exit 2 ;;
esac
# perftest's -D takes whole seconds.
duration=$(awk -v d="$duration" 'BEGIN { d = int(d + 0.5); print (d < 1 ? 1 : d) }')

# shellcheck source=../scripts/lib/uroce-env.sh
source "$SOURCE_ROOT/scripts/lib/uroce-env.sh"
# shellcheck source=../scripts/lib/uroce-verbs.sh
source "$SOURCE_ROOT/scripts/lib/uroce-verbs.sh"
uroce_env_init bench
uroce_find_tools "$(realpath "$build")"
mkdir -p "$out"

id=$((UROCE_ID % 1000000))
ns_a=- ns_b=- server_ip=127.0.0.1
# memif zero-copy on B, the memif client (the PMD offers it to clients
# only): B's engine then hands its own mbufs, in hugepages of one file
# segment, to the ring instead of copying each frame; auto: when 512 free
# 2 MiB hugepages wait (echo 1024 > /proc/sys/vm/nr_hugepages).
# af_xdp with hugepages: both sides keep their EAL memory, the mbuf pool
# that net_af_xdp registers as the socket's UMEM among it, in 2 MiB pages
# (-m 512 each), as raw DPDK does in scripts/bench.sh: the kernel's copy
# into and out of the UMEM and the engine's reads of it then miss the TLB
# less than over 4 KiB pages; auto: when 512 free 2 MiB hugepages wait.
eal_a='' eal_b=''
free_huge=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
if [ "$memif_zc" = auto ]; then
  memif_zc=off
  [ "${free_huge:-0}" -ge 512 ] && memif_zc=on
fi
if [ "$xdp_huge" = auto ]; then
  xdp_huge=off
  [ "${free_huge:-0}" -ge 512 ] && xdp_huge=on
fi
mtu=9000
case $transport in
  memif)
    # One socket per daemon pair (the set's tag is appended below).
    sock=$UROCE_TMP/memif
    port_a="net_memif0,role=server,socket=$sock-@.sock,socket-abstract=no,id=0,bsize=8192"
    port_b="net_memif0,role=client,socket=$sock-@.sock,socket-abstract=no,id=0,bsize=8192"
    if [ "$memif_zc" = on ]; then
      port_b+=",zero-copy=yes"
      eal_b='["--no-pci", "--no-telemetry", "-m", "512", "--single-file-segments", "--in-memory"]'
    fi
    ;;
  af_packet | af_xdp)
    ns_a=ubs_A_$id ns_b=ubs_B_$id
    dev_a=ubs${id}a dev_b=ubs${id}b
    uroce_netns_add "$ns_a"
    uroce_netns_add "$ns_b"
    # XDP on a veth carries frames up to an MTU of 3504 (docs/nic.md).
    [ "$transport" = af_xdp ] && mtu=3504
    uroce_veth_dpdk "$ns_a" "$dev_a" "$ns_b" "$dev_b" "$mtu"
    uroce_veth_ip "$ns_a" ubt${id}a 10.204.1.1/24 "$ns_b" ubt${id}b 10.204.1.2/24
    server_ip=10.204.1.1
    if [ "$transport" = af_xdp ]; then
      port_a="af_xdp:$dev_a" port_b="af_xdp:$dev_b"
      if [ "$xdp_huge" = on ]; then
        eal_a='["--no-pci", "--no-telemetry", "-m", "512", "--in-memory"]'
        eal_b=$eal_a
      fi
    else
      pa="qdisc_bypass=1,blocksz=8192,framesz=8192,framecnt=2048"
      port_a="net_af_packet0,iface=$dev_a,$pa"
      port_b="net_af_packet0,iface=$dev_b,$pa"
    fi
    ;;
  ring)
    if [ "$mode" != daemon ]; then
      echo "stack_bench.sh: --transport ring runs in daemon mode only (one daemon, two devices)" >&2
      exit 2
    fi
    port_a=ring:p0 port_b=ring:p0
    ;;
  *) echo "stack_bench.sh: unknown transport $transport" >&2; exit 2 ;;
esac
# Side B's device: its own daemon's uroce0, or the one daemon's uroce1.
dev_b=uroce0
[ "$transport" = ring ] && dev_b=uroce1

stage_key=''
[ "$stages" = 0 ] || stage_key=';stage_stamps=on'
dev() { echo "name=${5:-uroce0};mac=$1;ipv4=$2;mtu=$mtu;port=${3//@/$4}$stage_key${device_keys:+;$device_keys}"; }
set_tag='' pid_a='' pid_b=''
ra=() rb=()
rc=0
# start_set POLL: a daemon pair polling POLL (daemons POLL-a, POLL-b).
start_set() {
  set_tag=$1
  if [ "$transport" = ring ]; then
    uroce_daemon_start "$set_tag-a" --lcore 0 --poll "$set_tag" -- \
      --device "$(dev 02:00:00:bb:00:01 10.204.0.1 "$port_a" "$set_tag")" \
      --device "$(dev 02:00:00:bb:00:02 10.204.0.2 "$port_b" "$set_tag" uroce1)"
    pid_a=${UROCE_DAEMON_PID[$set_tag-a]} pid_b=$pid_a
    ra=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[$set_tag-a]}")
    rb=("${ra[@]}")
    return
  fi
  # A first: a memif client does not retry a refused connection.
  local ea=()
  [ -n "$eal_a" ] && ea=(--eal-args "$eal_a")
  uroce_daemon_start "$set_tag-a" --netns "$ns_a" --lcore 0 --poll "$set_tag" "${ea[@]}" -- \
    --device "$(dev 02:00:00:bb:00:01 10.204.0.1 "$port_a" "$set_tag")"
  local eb=()
  [ -n "$eal_b" ] && eb=(--eal-args "$eal_b")
  uroce_daemon_start "$set_tag-b" --netns "$ns_b" --lcore 1 --poll "$set_tag" "${eb[@]}" -- \
    --device "$(dev 02:00:00:bb:00:02 10.204.0.2 "$port_b" "$set_tag")"
  pid_a=${UROCE_DAEMON_PID[$set_tag-a]} pid_b=${UROCE_DAEMON_PID[$set_tag-b]}
  ra=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[$set_tag-a]}")
  rb=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[$set_tag-b]}")
}
# stop_set: both must still run and stop cleanly.
stop_set() {
  local d sides=("$set_tag-a" "$set_tag-b")
  [ "$transport" = ring ] && sides=("$set_tag-a")
  for d in "${sides[@]}"; do
    if ! uroce_daemon_alive "$d"; then
      echo "stack_bench.sh: uroced $d died during the run" >&2
      uroce_daemon_log_tail "$d" 20 >&2
      rc=1
    fi
    uroce_daemon_stop "$d" || rc=1
  done
}
# poll_for POINT: the daemons' polling for a point (placement above).
poll_for() {
  case $poll in
    busy|backoff|yield) echo "$poll" ;;
    *) echo yield ;;
  esac
}
# use_events POINT / use_pin POINT: the placement policy above.
use_events() {
  # Embedded: the application's polls drive the engine; -e would sleep them.
  [ "$mode" = daemon ] || return 1
  # ucx_perftest has no completion-event mode.
  [ "$1" != ucx_tag_lat ] || return 1
  case $events in
    on) [ "$1" != write_bw ] && [ "$1" != write_bw_q16 ] ;;
    off) false ;;
    *) [ "$1" = send_lat ] || [ "$1" = read_lat ] ;;
  esac
}
use_pin() {
  case $pin in
    off) false ;;
    *) true ;;
  esac
}

# side_daemon a|b: the daemon (suffix of the set's tag) that serves a side.
side_daemon() { if [ "$transport" = ring ]; then echo a; else echo "$1"; fi; }

# CPU ticks (utime + stime) of a process so far.
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

# The cache-line round trip between CPUs 0 and 1 in ns (bench/line_rtt.cpp),
# taken before and after each embedded-mode point: which speed state the
# machine was in (docs/performance.md, "Two speed states"); "-" without the
# tool. Not in daemon mode: the daemons poll on both CPUs between points,
# and the probe would time their preemption.
line_rtt() {
  "$build/bench/uroce-line-rtt" --round-trips 50000 2>/dev/null |
    /usr/bin/python3 -c 'import json, sys; print(round(json.load(sys.stdin)["ns_per_round_trip"]))' \
      2>/dev/null || echo -
}
hz=$(getconf CLK_TCK)

# point NAME PROGRAM ARGS...: one perftest pair; appends its JSON line.
point() {
  if [ "$mode" = embedded ]; then
    point_embedded "$@"
    return
  fi
  local name=$1 prog=$2
  shift 2
  local port ev=()
  use_events "$name" && ev=(-e)
  uroce_next_port port
  local pa=("$prog" -d uroce0 -x 1 -F -p "$port" "${ev[@]}" "$@")
  local pb=("$prog" -d "$dev_b" -x 1 -F -p "$port" "${ev[@]}" "$@" "$server_ip")
  daemon_pair "$name" "$port" $((duration * 4 + 30)) pa pb "$prog ${ev[*]} $*" \
    --meta "events=$(( ${#ev[@]} > 0 ))"
}

# daemon_pair NAME PORT LIMIT CMD_A CMD_B TEXT [JSON OPTIONS...]: runs the
# two sides' commands (name arrays, each run through its daemon's
# uroce-run; A listens on PORT) and appends the client's JSON line
# (perftest_json.py, with the daemons' CPU use) with TEXT as its command.
daemon_pair() {
  local name=$1 port=$2 limit=$3 text=$6 st=0 ta=() tb=()
  local -n cmd_a=$4 cmd_b=$5
  shift 6
  if use_pin "$name"; then
    # One daemon (ring) keeps core 0: both programs share core 1.
    ta=(taskset -c 0) tb=(taskset -c 1)
    [ "$transport" = ring ] && ta=(taskset -c 1)
  fi
  echo "  $transport $name: ${ta[*]} $text" >&2
  local a0 b0 t0 a1 b1 t1 sj=() s
  if [ "$stages" = 1 ]; then
    for s in a b; do
      "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[$set_tag-$(side_daemon $s)]}" status --json \
        >"$UROCE_TMP/stages-$name-$s.before" 2>&1 || true
    done
  fi
  a0=$(ticks "$pid_a") b0=$(ticks "$pid_b") t0=$(date +%s.%N)
  uroce_pair "$name" "$limit" "$port" "$ns_a" "$ns_b" -- \
    "${ta[@]}" "${ra[@]}" "${cmd_a[@]}" ::: "${tb[@]}" "${rb[@]}" "${cmd_b[@]}" || st=1
  a1=$(ticks "$pid_a") b1=$(ticks "$pid_b") t1=$(date +%s.%N)
  if [ "$stages" = 1 ]; then
    for s in a b; do
      "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[$set_tag-$(side_daemon $s)]}" status --json \
        >"$UROCE_TMP/stages-$name-$s.after" 2>&1 || true
    done
    sj=(--stages "a=$UROCE_TMP/stages-$name-a.before:$UROCE_TMP/stages-$name-a.after"
      --stages "b/$dev_b=$UROCE_TMP/stages-$name-b.before:$UROCE_TMP/stages-$name-b.after")
  fi
  [ "$st" = 0 ] || echo "stack_bench.sh: $transport $name failed: $UROCE_WHY" >&2
  /usr/bin/python3 "$BENCH_DIR/perftest_json.py" --transport "$transport" --point "$name" \
    --status "$st" --why "${UROCE_WHY:-}" --cmd "$text" \
    --cpu "a=$(awk -v d=$((a1 - a0)) -v h="$hz" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.1f", 100 * d / h / (e - s) }')" \
    --cpu "b=$(awk -v d=$((b1 - b0)) -v h="$hz" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.1f", 100 * d / h / (e - s) }')" \
    --meta "poll=$set_tag" --meta "pinned=$(( ${#ta[@]} > 0 ))" "${sj[@]}" "$@" \
    "$UROCE_CLI_OUT" >>"$out/stack-$transport.json" || true
}

# UCX's tag-matching latency, both ranks on one connection: ucx_perftest
# runs the tests of a batch file (-b) one after the other, and both sides
# read it (the server too, or it has no test to run).
ucx_ranks=50,99,99.9
ucx_point() {
  if ! command -v ucx_perftest >/dev/null; then
    echo "stack_bench.sh: ucx_tag_lat skipped: ucx_perftest not installed (apt-get install ucx-utils)" >&2
    return 0
  fi
  # ucx_perftest polls without sleeping (it has no event mode): on ring both
  # ranks spin on core 1, and take turns at their empty polls as the
  # provider yields a contended CPU (verbs-provider/poll_yield.h).
  local name=ucx_tag_lat port r k batch=$UROCE_TMP/ucx_tag_lat.batch
  # UCX 1.13.1 takes -R's percentile over a ring of at most 2,048 round
  # trips: a longer test's figure would cover only its end. So each rank
  # runs as windows tests of ucx_window round trips, and perftest_json.py
  # takes the median over them.
  local windows=$(((ucx_iters + ucx_window - 1) / ucx_window)) ranks_listed=()
  : >"$batch"
  for r in ${ucx_ranks//,/ }; do
    for k in $(seq "$windows"); do
      echo "tag_lat_p${r}_$k -t tag_lat -s 8 -n $ucx_window -w $ucx_warmup -R $r" >>"$batch"
      ranks_listed+=("$r")
    done
  done
  local rank_list
  rank_list=$(IFS=,; echo "${ranks_listed[*]}")
  uroce_next_port port
  local pa=(env UCX_TLS=rc UCX_NET_DEVICES=uroce0:1 ucx_perftest -p "$port" -b "$batch")
  local pb=(env UCX_TLS=rc "UCX_NET_DEVICES=$dev_b:1" ucx_perftest "$server_ip" -p "$port"
    -b "$batch")
  local text="UCX_TLS=rc ucx_perftest -t tag_lat -s 8 -n $ucx_window -w $ucx_warmup -R ${ucx_ranks//,/|} (x$windows each)"
  # Every test's round trips, warm-up included, at up to about 1 ms each
  # (daemon mode on a busy machine), plus start-up.
  local limit=$((${#ranks_listed[@]} * (ucx_window + ucx_warmup) / 1000 + 60))
  if [ "$mode" = embedded ]; then
    embedded_pair "$name" "$port" "$port" "$limit" pa pb "$text" --ucx-ranks "$rank_list"
  else
    daemon_pair "$name" "$port" "$limit" pa pb "$text" --meta "events=0" \
      --ucx-ranks "$rank_list"
  fi
}

# Embedded mode: the engines' EAL file prefixes (one per side, every point
# reuses them once the last has gone) and the launchers' run directories.
emb_seq=0
emb_prefix_a=uroce_${UROCE_TAG}_ea_$UROCE_ID
emb_prefix_b=uroce_${UROCE_TAG}_eb_$UROCE_ID
emb_cfg_a=$UROCE_TMP/engine-a.toml
emb_cfg_b=$UROCE_TMP/engine-b.toml

# What a killed launcher (uroce-embedded) or engine could not remove: the
# /dev/infiniband nodes its sysfs tree names and the EAL runtime
# directories. Prints what it removed.
embedded_leftovers() {
  local n node
  for n in "$UROCE_TMP"/embedded/uroce-embedded.*/sysfs/class/infiniband_verbs/uverbs*; do
    [ -e "$n" ] || continue
    node=/dev/infiniband/${n##*/}
    # Only our kind of node (c 1:7), as uroce-env.sh's cleanup.
    if [ -c "$node" ] && [ "$(stat -c '%t:%T' "$node")" = "1:7" ]; then
      echo "stack_bench.sh: removing $node left by a killed engine" >&2
      rm -f "$node"
    fi
  done
  for n in "$UROCE_TMP"/embedded/uroce-embedded.* /var/run/dpdk/"$emb_prefix_a" \
    /var/run/dpdk/"$emb_prefix_b"; do
    [ -e "$n" ] || continue
    echo "stack_bench.sh: removing $n left by a killed engine" >&2
    rm -rf "$n"
  done
}

# cpu_pct FILE: utime+stime over the elapsed time, in % of one core, from
# /usr/bin/time's "%e %U %S" (its last line; empty when it never ran).
cpu_pct() {
  [ -s "$1" ] || return 0
  tail -n 1 "$1" | awk '$1 > 0 { printf "%.1f", 100 * ($2 + $3) / $1 }'
}

# point_embedded NAME PROGRAM ARGS...: point's embedded-mode twin.
point_embedded() {
  local name=$1 prog=$2
  shift 2
  local port cport limit
  limit=$((duration * 4 + 30))
  uroce_next_port port
  cport=$port
  relay=''
  if [ "$transport" = memif ]; then
    # The client reaches A's perftest on PORT through the relay on CPORT;
    # uroce_pair starts B once the relay listens (after A's memif socket).
    uroce_next_port cport
    uroce_bg relay --timeout "$limit" \
      "$UROCE_TMP/relay-e$((emb_seq + 1)).out" "$UROCE_TMP/relay-e$((emb_seq + 1)).err" -- \
      /usr/bin/python3 "$SOURCE_ROOT/scripts/lib/tcp_relay.py" "$cport" 127.0.0.1 "$port" \
      --timeout "$limit" --after "$UROCE_TMP/memif-e$((emb_seq + 1)).sock"
  fi
  local pa=("$prog" -d uroce0 -x 1 -F -p "$port" "$@")
  local pb=("$prog" -d uroce0 -x 1 -F -p "$cport" "$@" "$server_ip")
  embedded_pair "$name" "$port" "$cport" "$limit" pa pb "$prog $*"
}

# embedded_pair NAME PORT CPORT LIMIT CMD_A CMD_B TEXT [JSON OPTIONS...]:
# the two sides' commands (name arrays), each under its own engine
# (uroce-run --embedded, pinned), A listening on PORT, B started once
# something listens on CPORT (A, or the relay `relay` names, which is
# stopped after); appends the client's JSON line with the programs' CPU use.
relay=''
embedded_pair() {
  local name=$1 port=$2 cport=$3 limit=$4 text=$7 st=0 tag
  local -n cmd_a=$5 cmd_b=$6
  shift 7
  emb_seq=$((emb_seq + 1))
  tag=e$emb_seq
  local ca=$UROCE_TMP/cpu-$tag-a cb=$UROCE_TMP/cpu-$tag-b ta=() tb=()
  # GNU time for the CPU figure; without it the figure stays empty.
  if [ -x /usr/bin/time ]; then
    ta=(/usr/bin/time -o "$ca" -f "%e %U %S") tb=(/usr/bin/time -o "$cb" -f "%e %U %S")
  fi
  local da db
  da=$(dev 02:00:00:bb:00:01 10.204.0.1 "$port_a" "$tag")
  db=$(dev 02:00:00:bb:00:02 10.204.0.2 "$port_b" "$tag")
  # The engines' "stages at exit" line is an info one (embedded mode logs
  # warnings only by default).
  local ll=()
  [ "$stages" = 0 ] || ll=(--log-level info)
  local ea=(taskset -c 0 "${ta[@]}"
    "$UROCE_RUN" --embedded --config "$emb_cfg_a" --lcore 0 --device "$da" "${ll[@]}" --)
  local eb=(taskset -c 1 "${tb[@]}"
    "$UROCE_RUN" --embedded --config "$emb_cfg_b" --lcore 1 --device "$db" "${ll[@]}" --)
  echo "  $transport embedded $name: taskset -c 0|1 uroce-run --embedded ... -- $text" >&2
  local rtt0 rtt1
  rtt0=$(line_rtt)
  uroce_pair "$name" "$limit" "$cport" "$ns_a" "$ns_b" -- \
    "${ea[@]}" "${cmd_a[@]}" ::: "${eb[@]}" "${cmd_b[@]}" || st=1
  rtt1=$(line_rtt)
  local had_relay=0
  if [ -n "$relay" ]; then
    had_relay=1
    uroce_kill_group KILL "$relay"
    uroce_wait "$relay" UROCE_IGNORED_RC
    if [ "$st" != 0 ] && [ -s "$UROCE_TMP/relay-$tag.err" ]; then
      UROCE_WHY="$UROCE_WHY; $(tail -n 1 "$UROCE_TMP/relay-$tag.err")"
    fi
    relay=''
  fi
  embedded_leftovers
  [ "$st" = 0 ] || echo "stack_bench.sh: $transport embedded $name failed: $UROCE_WHY" >&2
  # Each engine logs its stage stamps as it exits (docs/tails.md).
  local sj=()
  [ "$stages" = 0 ] || sj=(--stages "a=$UROCE_SRV_ERR" --stages "b=$UROCE_CLI_ERR")
  /usr/bin/python3 "$BENCH_DIR/perftest_json.py" --transport "$transport" --mode embedded \
    --point "$name" --status "$st" --why "${UROCE_WHY:-}" --cmd "$text" \
    --perftest-cpu "a=$(cpu_pct "$ca")" --perftest-cpu "b=$(cpu_pct "$cb")" \
    --meta "events=0" --meta "pinned=1" --meta "relay=$had_relay" \
    --meta "line_rtt_ns=$rtt0/$rtt1" "${sj[@]}" "$@" \
    "$UROCE_CLI_OUT" >>"$out/stack-$transport-embedded.json" || true
}

run_point() {
  local p=$1
  case $p in
    write_bw) point write_bw ib_write_bw -s 65536 -D "$duration" --report_gbits ;;
    send_bw)
      if use_events send_bw; then
        point send_bw ib_send_bw -s 64 -n "$send_iters" --report_gbits
      else
        point send_bw ib_send_bw -s 64 -D "$duration" --report_gbits
      fi
      ;;
    send_lat) point send_lat ib_send_lat -s 2 -n "$lat_iters" ;;
    read_lat) point read_lat ib_read_lat -s 2 -n "$lat_iters" ;;
    write_bw_q16) point write_bw_q16 ib_write_bw -s 65536 -D "$duration" --report_gbits -q 16 ;;
    ucx_tag_lat) ucx_point ;;
    *) echo "stack_bench.sh: unknown point $p" >&2; exit 2 ;;
  esac
}

if [ "$mode" = embedded ]; then
  # The launchers' run directories go here, where embedded_leftovers looks.
  export TMPDIR=$UROCE_TMP/embedded
  mkdir -p "$TMPDIR"
  # A known EAL prefix per side, for embedded_leftovers.
  printf '[eal]\nfile_prefix = "%s"\n' "$emb_prefix_a" >"$emb_cfg_a"
  printf '[eal]\nfile_prefix = "%s"\n' "$emb_prefix_b" >"$emb_cfg_b"
  [ -z "$eal_a" ] || printf 'args = %s\n' "$eal_a" >>"$emb_cfg_a"
  [ -z "$eal_b" ] || printf 'args = %s\n' "$eal_b" >>"$emb_cfg_b"
  uroce_at_exit embedded_leftovers
  for p in $points; do run_point "$p"; done
  exit "$rc"
fi
for set_poll in backoff busy yield; do
  todo=()
  for p in $points; do
    [ "$(poll_for "$p")" = "$set_poll" ] && todo+=("$p")
  done
  [ ${#todo[@]} -gt 0 ] || continue
  start_set "$set_poll"
  for p in "${todo[@]}"; do run_point "$p"; done
  stop_set
done
exit "$rc"
