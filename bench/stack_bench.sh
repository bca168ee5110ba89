#!/usr/bin/env bash
# uroce through unmodified perftest between two uroced daemons, one per side
# of a link, for scripts/bench.sh (docs/performance.md). Writes one JSON line
# per point (bench/perftest_json.py) into OUT_DIR.
#
#   bench/stack_bench.sh --build-dir DIR --transport memif|af_packet --out OUT_DIR
#                        [--duration S] [--lat-iters N] [--send-iters N]
#                        [--poll auto|busy|backoff] [--events auto|on|off]
#                        [--pin auto|on|off] [--points "write_bw send_bw ..."]
#
# Points (perftest flags in brackets; -F, -x 1, -d uroce0 everywhere):
#   write_bw      ib_write_bw -s 65536 -D S --report_gbits
#   send_bw       ib_send_bw  -s 64    -n M --report_gbits   (-D S without -e)
#   send_lat      ib_send_lat -s 2 -n N
#   read_lat      ib_read_lat -s 2 -n N
#   write_bw_q16  ib_write_bw -s 65536 -D S --report_gbits -q 16
#
# Side A (perftest server) and side B (client) each have their own daemon:
# memif: both in this namespace, A the memif server (lcore 0), B the client
# (lcore 1); af_packet: A and B in two network namespaces joined by a veth
# pair (as tests/integration/verbs/netns_af_packet.sh).
#
# Placement on 2 cores (docs/performance.md has the measurements behind
# it): one daemon per core, so every perftest process shares a core with a
# daemon. A perftest process that polls its CQ next to a busy-polling
# daemon gets the core only in scheduler slices (milliseconds). By default
# (auto):
#   - the latency points run against busy-polling daemons, with perftest's
#     -e (sleep on CQ events) and pinned with taskset to their daemon's
#     core, where the kernel's wake-up preemption runs them as soon as the
#     daemon signals the completion;
#   - the throughput points run against daemons in backoff polling (a
#     daemon with nothing to do sleeps and leaves the core to perftest);
#     send_bw with -e and pinned, the WRITE points polling and unpinned
#     (perftest refuses -e for WRITE, and -D together with -e).
# The two kinds use two daemon pairs, one after the other. --poll, --events
# and --pin busy|backoff / on|off force one choice for every point.
# The daemons' CPU use is the change of utime+stime in /proc/PID/stat over
# each point's client run (set-up included), as % of one core.
# Needs root. Sources scripts/lib/uroce-env.sh, whose EXIT trap removes
# everything started here.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SOURCE_ROOT=$(cd "$BENCH_DIR/.." && pwd)

build=
transport=
out=
duration=3
lat_iters=20000
send_iters=200000
poll=auto
events=auto
pin=auto
points="write_bw send_bw send_lat read_lat write_bw_q16"
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --transport) transport=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --lat-iters) lat_iters=$2; shift 2 ;;
    --poll) poll=$2; shift 2 ;;
    --send-iters) send_iters=$2; shift 2 ;;
    --events) events=$2; shift 2 ;;
    --pin) pin=$2; shift 2 ;;
    --points) points=$2; shift 2 ;;
    *) echo "stack_bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$build" ] || [ -z "$transport" ] || [ -z "$out" ]; then
  echo "stack_bench.sh: --build-dir, --transport and --out are required" >&2
  exit 2
fi
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
case $transport in
  memif)
    # One socket per daemon pair (the set's tag is appended below).
    sock=$UROCE_TMP/memif
    port_a="net_memif0,role=server,socket=$sock-@.sock,socket-abstract=no,id=0,bsize=8192"
    port_b="net_memif0,role=client,socket=$sock-@.sock,socket-abstract=no,id=0,bsize=8192"
    ;;
  af_packet)
    ns_a=ubs_A_$id ns_b=ubs_B_$id
    dev_a=ubs${id}a dev_b=ubs${id}b
    uroce_netns_add "$ns_a"
    uroce_netns_add "$ns_b"
    uroce_veth_dpdk "$ns_a" "$dev_a" "$ns_b" "$dev_b" 9000
    uroce_veth_ip "$ns_a" ubt${id}a 10.204.1.1/24 "$ns_b" ubt${id}b 10.204.1.2/24
    server_ip=10.204.1.1
    pa="qdisc_bypass=1,blocksz=8192,framesz=8192,framecnt=2048"
    port_a="net_af_packet0,iface=$dev_a,$pa"
    port_b="net_af_packet0,iface=$dev_b,$pa"
    ;;
  *) echo "stack_bench.sh: unknown transport $transport" >&2; exit 2 ;;
esac

dev() { echo "name=uroce0;mac=$1;ipv4=$2;mtu=9000;port=${3//@/$4}"; }
set_tag='' pid_a='' pid_b=''
ra=() rb=()
rc=0
# start_set POLL: a daemon pair polling POLL (daemons POLL-a, POLL-b).
start_set() {
  set_tag=$1
  # A first: a memif client does not retry a refused connection.
  uroce_daemon_start "$set_tag-a" --netns "$ns_a" --lcore 0 --poll "$set_tag" -- \
    --device "$(dev 02:00:00:bb:00:01 10.204.0.1 "$port_a" "$set_tag")"
  uroce_daemon_start "$set_tag-b" --netns "$ns_b" --lcore 1 --poll "$set_tag" -- \
    --device "$(dev 02:00:00:bb:00:02 10.204.0.2 "$port_b" "$set_tag")"
  pid_a=${UROCE_DAEMON_PID[$set_tag-a]} pid_b=${UROCE_DAEMON_PID[$set_tag-b]}
  ra=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[$set_tag-a]}")
  rb=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[$set_tag-b]}")
}
# stop_set: both must still run and stop cleanly.
stop_set() {
  local d
  for d in "$set_tag-a" "$set_tag-b"; do
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
    busy|backoff) echo "$poll" ;;
    *) case $1 in send_lat|read_lat) echo busy ;; *) echo backoff ;; esac ;;
  esac
}
# use_events POINT / use_pin POINT: the placement policy above.
use_events() {
  case $events in
    on) [ "$1" != write_bw ] && [ "$1" != write_bw_q16 ] ;;
    off) false ;;
    *) [ "$1" != write_bw ] && [ "$1" != write_bw_q16 ] ;;
  esac
}
use_pin() {
  case $pin in
    on) true ;;
    off) false ;;
    *) use_events "$1" ;;
  esac
}

# CPU ticks (utime + stime) of a process so far.
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

# point NAME PROGRAM ARGS...: one perftest pair; appends its JSON line.
point() {
  local name=$1 prog=$2
  shift 2
  local port st=0 limit ta=() tb=() ev=()
  limit=$((duration * 4 + 30))
  use_events "$name" && ev=(-e)
  use_pin "$name" && ta=(taskset -c 0) tb=(taskset -c 1)
  uroce_next_port port
  echo "  $transport $name: ${ta[*]} $prog ${ev[*]} $*" >&2
  local a0 b0 t0 a1 b1 t1
  a0=$(ticks "$pid_a") b0=$(ticks "$pid_b") t0=$(date +%s.%N)
  uroce_pair "$name" "$limit" "$port" "$ns_a" "$ns_b" -- \
    "${ta[@]}" "${ra[@]}" "$prog" -d uroce0 -x 1 -F -p "$port" "${ev[@]}" "$@" ::: \
    "${tb[@]}" "${rb[@]}" "$prog" -d uroce0 -x 1 -F -p "$port" "${ev[@]}" "$@" "$server_ip" ||
    st=1
  a1=$(ticks "$pid_a") b1=$(ticks "$pid_b") t1=$(date +%s.%N)
  [ "$st" = 0 ] || echo "stack_bench.sh: $transport $name failed: $UROCE_WHY" >&2
  /usr/bin/python3 "$BENCH_DIR/perftest_json.py" --transport "$transport" --point "$name" \
    --status "$st" --why "${UROCE_WHY:-}" --cmd "$prog ${ev[*]} $*" \
    --cpu "a=$(awk -v d=$((a1 - a0)) -v h="$hz" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.1f", 100 * d / h / (e - s) }')" \
    --cpu "b=$(awk -v d=$((b1 - b0)) -v h="$hz" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.1f", 100 * d / h / (e - s) }')" \
    --meta "poll=$set_tag" --meta "events=$(( ${#ev[@]} > 0 ))" --meta "pinned=$(( ${#ta[@]} > 0 ))" \
    "$UROCE_CLI_OUT" >>"$out/stack-$transport.json" || true
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
    *) echo "stack_bench.sh: unknown point $p" >&2; exit 2 ;;
  esac
}

for mode in backoff busy; do
  todo=()
  for p in $points; do
    [ "$(poll_for "$p")" = "$mode" ] && todo+=("$p")
  done
  [ ${#todo[@]} -gt 0 ] || continue
  start_set "$mode"
  for p in "${todo[@]}"; do run_point "$p"; done
  stop_set
done
exit "$rc"
