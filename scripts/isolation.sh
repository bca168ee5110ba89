#!/usr/bin/env bash
# The isolation experiments of issue 14 (must-show 1; docs/isolation.md,
# "Isolation experiments"): unmodified perftest on two uroced daemons, one
# per side of a link, with the device's isolation "off" and then "classes"
# (and "auto" when asked: --modes "off classes auto").
# By hand, not in CI.
#
#   scripts/isolation.sh [--build-dir DIR] [--links "memif af_packet"]
#                        [--modes "off classes"] [--lat-iters N]
#                        [--duration S] [--elephant-duration S]
#                        [--select sl|tclass] [--lat-class C] [--thr-class C]
#                        [--elephant-class C] [--class-weights W,W,...]
#                        [--poll backoff|busy] [--memif-rsize LOG2]
#                        [--afp-framecnt N] [--tx-limit BYTES] [--points "lat thr ..."]
#                        [--json FILE] [--no-build]
#                        [--quick] [--keep]
#
# Per link (memif: two processes in this namespace; af_packet: two network
# namespaces joined by a veth pair, created here and removed on exit) and
# per isolation mode it starts a daemon pair (A: perftest servers, EAL lcore
# 0; B: clients, lcore 1) and runs, through uroce-run, with -d uroce0 -x 1 -F:
#   lat        ib_write_lat -s 16 -n N                     (the latency flow)
#   thr        ib_write_bw -s 64 -q 1 -D S                 (the throughput flow)
#   eleph1/16  ib_write_bw -s 1048576 [-q 16] -D E         (the elephants)
# each alone, then lat and thr each beside 1 and beside 16 elephants: the
# elephants start first; the small flow starts once their client measures
# and must end before they do (else the row is marked "partial overlap").
# --points runs only the named points, in that order (the ratios need the
# alone points).
# The flows' classes: with the default PFC maps a QP's class is its SL mod 8
# (SL -> priority -> DSCP 8 x priority -> priority DSCP / 8; docs/pfc.md),
# so --select sl passes perftest's -S CLASS, --select tclass its
# --tclass 32 x CLASS (DSCP 8 x CLASS). Defaults: latency flow class 6,
# throughput flow class 3, elephants class 0; "classes" makes the latency
# class strict and the others weighted (--class-weights, default 1 each).
# The same classes are used with isolation off, where they are recorded
# but unused. With isolation "auto" every flow runs with -S 0 (one DSCP
# for all), so only the engine's classifier can tell them apart: it must
# put the latency flow in class 6, the throughput flow in 3 and the
# elephants in 0 (sched/flow_classifier.h), which is what the check then
# expects (the --*-class options do not apply to it). While each small flow runs beside elephants, `uroce-ctl sched
# --json` of both daemons is saved and checked: the small flow's QP must sit
# in its class and every elephant QP in theirs.
#
# Prints one table (median and p99 latency, elephants' Gb/s, the
# throughput flow's M msg/s, alone and together, and the ratios the issue's
# goals use) and writes JSON (default DIR/isolation.json), with the load
# average before and after. --quick: 2,000 latency iterations, 2 s
# throughput-flow and 6 s elephant runs. Default: 20,000 iterations, 3 s
# and 7 s. By the runs' lengths either takes about 4 minutes; on a loaded
# machine the latency flow slows down beside the elephants, points are
# rerun, and a --quick run took 9 minutes at load average 11-17. --keep
# keeps the work dir (perftest outputs, sched snapshots, daemon logs and
# counters). --memif-rsize (memif's log2 ring size, PMD
# default 10) and --afp-framecnt (af_packet's frames per ring, default
# 2048) set the depth of the FIFO between the two daemons, below the
# scheduler; --tx-limit BYTES gives both devices the engine's port limit
# (tx_limit_bytes, docs/sched.md), which keeps that queue in the
# scheduler instead. The daemons' CPU and run-queue wait (schedstat, all threads)
# over each small flow's run go into the table. Needs root.
set -euo pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
cd "$ROOT"

build_dir=build
links="memif af_packet"
modes="off classes"
lat_iters=20000
duration=3
eleph_duration=
select=sl
lat_class=6
thr_class=3
eleph_class=0
class_weights=
poll=backoff
json_out=
do_build=1
keep=0
memif_rsize=
afp_framecnt=2048
tx_limit=0
all_points="lat thr eleph1 eleph16 lat+eleph1 lat+eleph16 thr+eleph1 thr+eleph16"
points=$all_points
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --links) links=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --lat-iters) lat_iters=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --elephant-duration) eleph_duration=$2; shift 2 ;;
    --select) select=$2; shift 2 ;;
    --lat-class) lat_class=$2; shift 2 ;;
    --thr-class) thr_class=$2; shift 2 ;;
    --elephant-class) eleph_class=$2; shift 2 ;;
    --class-weights) class_weights=$2; shift 2 ;;
    --poll) poll=$2; shift 2 ;;
    --memif-rsize) memif_rsize=$2; shift 2 ;;
    --tx-limit) tx_limit=$2; shift 2 ;;
    --points) points=$2; shift 2 ;;
    --afp-framecnt) afp_framecnt=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --quick) lat_iters=2000 duration=2 eleph_duration=6; shift ;;
    --keep) keep=1; shift ;;
    -h|--help) usage ;;
    *) echo "isolation.sh: unknown option $1" >&2; usage ;;
  esac
done
[ -n "$eleph_duration" ] || eleph_duration=$((duration + 4))
[ -n "$json_out" ] || json_out=$build_dir/isolation.json
case $select in sl|tclass) ;; *) echo "isolation.sh: --select sl|tclass" >&2; exit 2 ;; esac
case $poll in busy|backoff) ;; *) echo "isolation.sh: --poll busy|backoff" >&2; exit 2 ;; esac
for c in "$lat_class" "$thr_class" "$eleph_class"; do
  [[ $c =~ ^[0-7]$ ]] || { echo "isolation.sh: a class is 0..7, not $c" >&2; exit 2; }
done
for m in $modes; do
  case $m in off|classes|auto) ;; *) echo "isolation.sh: mode $m (off, classes or auto)" >&2; exit 2 ;; esac
done
for p in $points; do
  [[ " $all_points " == *" $p "* ]] || { echo "isolation.sh: unknown point $p" >&2; exit 2; }
done
if [ "$eleph_duration" -le "$duration" ]; then
  echo "isolation.sh: the elephants must run longer than the throughput flow" >&2
  exit 2
fi
[ "$(id -u)" = 0 ] || { echo "isolation.sh: needs root (DPDK EAL, network namespaces)" >&2; exit 1; }

if [ "$do_build" = 1 ]; then
  [ -f "$build_dir/build.ninja" ] || meson setup "$build_dir" >/dev/null
  ninja -C "$build_dir" apps/uroced/uroced apps/uroce-ctl/uroce-ctl \
    verbs-provider/liburoce-rdmav34.so verbs-provider/liburoce-preload.so >/dev/null
fi

# shellcheck source=lib/uroce-env.sh
source "$SCRIPT_DIR/lib/uroce-env.sh"
# shellcheck disable=SC2034 # read by uroce-env.sh's cleanup
UROCE_KEEP=$keep
uroce_env_init iso
id=$((UROCE_ID % 1000000))
# The library's EXIT trap removes processes, daemons, namespaces (with the
# veth ends in them), DPDK runtime dirs and the work dir. A veth pair is
# created in this namespace and then moved: one interrupted in between
# would stay here, so ours are removed first, then the library's trap runs
# with the script's exit status.
iso_on_exit() {
  local rc=$? v
  set +e
  for v in "uis${id}a" "uit${id}a"; do
    ip link show "$v" >/dev/null 2>&1 && ip link del "$v" 2>/dev/null
  done
  (exit "$rc")
  _uroce_on_exit
}
trap iso_on_exit EXIT
uroce_find_tools "$(realpath "$build_dir")"
out=$UROCE_TMP/results
mkdir -p "$out"
results=$out/points.jsonl
: >"$results"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%FT%TZ)
echo "isolation.sh: load average before: $load_before; work dir $UROCE_TMP" >&2

# perftest's class selection for class C (default PFC maps, docs/pfc.md).
class_args() {
  if [ "$select" = sl ]; then echo "-S $1"; else echo "--tclass $((32 * $1))"; fi
}
# Small flows and elephants. Flow names are the row names of the table.
commands() { # the flows' perftest commands for $mode
  if [ "$mode" = auto ]; then
    lat_sel=(-S 0) thr_sel=(-S 0) eleph_sel=(-S 0)
  else
    read -r -a lat_sel <<<"$(class_args "$lat_class")"
    read -r -a thr_sel <<<"$(class_args "$thr_class")"
    read -r -a eleph_sel <<<"$(class_args "$eleph_class")"
  fi
  lat_cmd=(ib_write_lat -s 16 -n "$lat_iters" "${lat_sel[@]}")
  thr_cmd=(ib_write_bw -s 64 -q 1 -D "$duration" --report_gbits "${thr_sel[@]}")
}
eleph_cmd() { # Q [SECONDS]
  local qps=()
  [ "$1" -gt 1 ] && qps=(-q "$1")
  echo ib_write_bw -s 1048576 "${qps[@]}" -D "${2:-$eleph_duration}" --report_gbits "${eleph_sel[@]}"
}

link='' mode='' ns_a=- ns_b=- server_ip=127.0.0.1 port_a='' port_b=''
ra=() rb=() dname_a='' dname_b='' lat_wall=0
failures=0

# A process may live: connection set-up plus its run, generously. The
# latency flow's run is a count of iterations: it may take up to 20 ms each
# (50 a second; beside elephants on the loaded 2-core VM it did ~100).
limit_for() { echo $(( $1 + 60 )); }
lat_secs=$(( lat_iters / 50 > duration ? lat_iters / 50 : duration ))

# ---- links ----------------------------------------------------------------
link_up() {
  link=$1
  case $link in
    memif)
      ns_a=- ns_b=- server_ip=127.0.0.1
      ;;
    af_packet)
      ns_a=uis_A_$id ns_b=uis_B_$id
      uroce_netns_add "$ns_a"
      uroce_netns_add "$ns_b"
      uroce_veth_dpdk "$ns_a" uis${id}a "$ns_b" uis${id}b 9000
      uroce_veth_ip "$ns_a" uit${id}a 10.214.1.1/24 "$ns_b" uit${id}b 10.214.1.2/24
      server_ip=10.214.1.1
      local pa="qdisc_bypass=1,blocksz=8192,framesz=8192,framecnt=$afp_framecnt"
      port_a="net_af_packet0,iface=uis${id}a,$pa"
      port_b="net_af_packet0,iface=uis${id}b,$pa"
      ;;
    *) echo "isolation.sh: unknown link $link (memif or af_packet)" >&2; exit 2 ;;
  esac
}

# Namespaces go as soon as their link is done (the EXIT trap removes them
# otherwise); deleting a namespace deletes its veth ends.
link_down() {
  if [ "$link" = af_packet ]; then
    local ns
    for ns in "$ns_a" "$ns_b"; do ip netns del "$ns" 2>/dev/null || true; done
    local kept=()
    for ns in "${_UROCE_NETNS[@]}"; do
      [ "$ns" = "$ns_a" ] || [ "$ns" = "$ns_b" ] || kept+=("$ns")
    done
    _UROCE_NETNS=("${kept[@]}")
  fi
}

# ---- daemons --------------------------------------------------------------
device() { # MAC IPV4 PORT
  local d="name=uroce0;mac=$1;ipv4=$2;mtu=9000;port=$3;isolation=$mode"
  [ "$tx_limit" -gt 0 ] && d+=";tx_limit_bytes=$tx_limit"
  if [ "$mode" = classes ]; then
    d+=";strict_classes=$lat_class"
    [ -n "$class_weights" ] && d+=";class_weights=$class_weights"
  fi
  echo "$d"
}

daemons_up() {
  dname_a=$link-$mode-a dname_b=$link-$mode-b
  if [ "$link" = memif ]; then
    # One socket per daemon pair; A is the memif server and starts first
    # (a memif client does not retry a refused connection).
    local sock=$UROCE_TMP/memif-$mode.sock rs=''
    [ -n "$memif_rsize" ] && rs=",rsize=$memif_rsize"
    port_a="net_memif0,role=server,socket=$sock,socket-abstract=no,id=0,bsize=8192$rs"
    port_b="net_memif0,role=client,socket=$sock,socket-abstract=no,id=0,bsize=8192$rs"
  fi
  uroce_daemon_start "$dname_a" --netns "$ns_a" --lcore 0 --poll "$poll" -- \
    --device "$(device 02:00:00:c4:00:01 10.214.0.1 "$port_a")"
  uroce_daemon_start "$dname_b" --netns "$ns_b" --lcore 1 --poll "$poll" -- \
    --device "$(device 02:00:00:c4:00:02 10.214.0.2 "$port_b")"
  ra=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[$dname_a]}")
  rb=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[$dname_b]}")
}

daemons_down() {
  local d side
  for side in a b; do
    d=$link-$mode-$side
    "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[$d]}" counters \
      >"$out/$d.counters.txt" 2>&1 || true
    if ! uroce_daemon_alive "$d"; then
      echo "isolation.sh: uroced $d died during the run" >&2
      uroce_daemon_log_tail "$d" 20 >&2
      failures=$((failures + 1))
    fi
    uroce_daemon_stop "$d" || failures=$((failures + 1))
  done
}

# ---- flows ----------------------------------------------------------------
# A flow is one perftest server (side A) and client (side B), both in the
# background; FLOW_* hold their process groups and outputs by flow name.
declare -A FLOW_SPID=() FLOW_CPID=() FLOW_SOUT=() FLOW_COUT=() FLOW_RC=() FLOW_CMD=()
flow_seq=0

# flow_start NAME SECS PROG ARGS...: true once the server listens (the
# perftest server/client race: the client fails at once when nobody
# listens on its TCP port) and the client is started.
flow_start() {
  local name=$1 secs=$2
  shift 2
  local port spid cpid base
  FLOW_SPID[$name]='' FLOW_CPID[$name]=''
  flow_seq=$((flow_seq + 1))
  base=$out/$(printf '%03d' "$flow_seq")-$link-$mode-$name
  uroce_next_port port
  FLOW_SOUT[$name]=$base.server.out FLOW_COUT[$name]=$base.client.out
  FLOW_CMD[$name]="$*"
  FLOW_RC[$name]=-
  uroce_bg spid --netns "$ns_a" --timeout "$(limit_for "$secs")" \
    "${FLOW_SOUT[$name]}" "${FLOW_SOUT[$name]}" -- \
    stdbuf -oL "${ra[@]}" "$@" -d uroce0 -x 1 -F -p "$port"
  FLOW_SPID[$name]=$spid
  if ! uroce_wait_listen "$ns_a" "$port" 20 "$spid"; then
    echo "isolation.sh: $link $mode $name: the server never listened on port $port" >&2
    tail -n 5 "${FLOW_SOUT[$name]}" >&2 || true
    uroce_kill_group KILL "$spid"
    local src
    uroce_wait "$spid" src
    FLOW_SPID[$name]='' FLOW_CPID[$name]='' FLOW_RC[$name]=1
    return 1
  fi
  uroce_bg cpid --netns "$ns_b" --timeout "$(limit_for "$secs")" \
    "${FLOW_COUT[$name]}" "${FLOW_COUT[$name]}" -- \
    stdbuf -oL "${rb[@]}" "$@" -d uroce0 -x 1 -F -p "$port" "$server_ip"
  FLOW_CPID[$name]=$cpid
}

# flow_measuring NAME: true once the client has printed its result header
# (perftest prints it when the connection is up, before it measures; its
# output is line-buffered through stdbuf, else a file gets it at exit).
flow_measuring() {
  local cpid=${FLOW_CPID[$1]:-}
  [ -n "$cpid" ] && uroce_wait_for_line "${FLOW_COUT[$1]}" '#bytes' 30 "$cpid"
}

flow_running() {
  local cpid=${FLOW_CPID[$1]:-}
  [ -n "$cpid" ] && uroce_running "$cpid"
}

# flow_finish NAME: waits for the client, gives the server a few seconds to
# end with it, and sets FLOW_RC[NAME] (0: both exited 0).
flow_finish() {
  local name=$1 crc=0 src=0 cpid=${FLOW_CPID[$1]:-} spid=${FLOW_SPID[$1]:-}
  if [ -z "$cpid" ]; then
    [ -n "$spid" ] && { uroce_kill_group KILL "$spid"; uroce_wait "$spid" src; }
    FLOW_RC[$name]=1
    return 1
  fi
  uroce_wait "$cpid" crc
  local deadline=$((SECONDS + 5))
  while uroce_running "$spid" && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  uroce_running "$spid" && uroce_kill_group KILL "$spid"
  uroce_wait "$spid" src
  FLOW_CPID[$name]='' FLOW_SPID[$name]=''
  if [ "$crc" != 0 ] || [ "$src" != 0 ]; then
    echo "isolation.sh: $link $mode $name failed: client exit $crc, server exit $src;" \
      "end of the client's output:" >&2
    tail -n 5 "${FLOW_COUT[$name]}" >&2 || true
    FLOW_RC[$name]=1
    return 1
  fi
  FLOW_RC[$name]=0
}

# record POINT FLOW ROLE [KEY=VALUE...]: one JSON line for FLOW's client
# output into the results.
record() {
  local point=$1 flow=$2 role=$3
  shift 3
  local kv=() a
  for a in "$@"; do kv+=(--meta "$a"); done
  /usr/bin/python3 "$ROOT/bench/isolation_table.py" line \
    --link "$link" --mode "$mode" --point "$point" --role "$role" \
    --status "${FLOW_RC[$flow]}" --cmd "${FLOW_CMD[$flow]}" "${kv[@]}" \
    "${FLOW_COUT[$flow]}" >>"$results" || failures=$((failures + 1))
}

# sched_snapshot POINT: both daemons' `uroce-ctl sched` (text and JSON).
sched_snapshot() {
  local point=$1 side d base
  for side in a b; do
    d=$link-$mode-$side
    base=$out/sched-$link-$mode-$point-$side
    "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[$d]}" sched >"$base.txt" 2>&1 || true
    "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[$d]}" --json sched >"$base.json" 2>&1 || true
  done
}

# ---- the daemons' CPU -----------------------------------------------------
# schedstat of all threads of both daemons: CPU time and time spent
# runnable but waiting for a CPU (ns), summed. cpu_mark stores them and the
# time; cpu_since prints "cpu_a=..% wait_a=..% cpu_b=.. wait_b=.." since the
# mark, as % of the wall time (100 = one core; a daemon's engine thread that
# busy-polls or backs off is the main part).
cpu_t0=0 cpu_a0='0 0' cpu_b0='0 0'
daemon_sched() { uroce_daemon_schedstat "$1"; }
cpu_mark() {
  cpu_t0=$(date +%s%N)
  cpu_a0=$(daemon_sched "$dname_a") cpu_b0=$(daemon_sched "$dname_b")
}
cpu_since() {
  local t1 a1 b1
  t1=$(date +%s%N)
  a1=$(daemon_sched "$dname_a") b1=$(daemon_sched "$dname_b")
  awk -v t="$((t1 - cpu_t0))" -v a0="$cpu_a0" -v a1="$a1" -v b0="$cpu_b0" -v b1="$b1" 'BEGIN {
    split(a0, x); split(a1, y); split(b0, u); split(b1, v)
    printf "cpu_a=%.1f wait_a=%.1f cpu_b=%.1f wait_b=%.1f\n", 100 * (y[1] - x[1]) / t,
      100 * (y[2] - x[2]) / t, 100 * (v[1] - u[1]) / t, 100 * (v[2] - u[2]) / t }'
}

# ---- points ---------------------------------------------------------------
# Wall time of the last "alone" point, set-up included (seconds).
alone_wall=0
alone() { # POINT SECS PROG ARGS...
  local point=$1 secs=$2 t0
  shift 2
  echo "  $link $mode $point: $*" >&2
  t0=$(date +%s.%N)
  cpu_mark
  if flow_start "$point" "$secs" "$@"; then flow_finish "$point" || true; fi
  local -a cpu
  read -r -a cpu <<<"$(cpu_since)"
  alone_wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  [ "${FLOW_RC[$point]}" = 0 ] || failures=$((failures + 1))
  case $point in
    eleph*) record "$point" "$point" elephants "duration_s=$secs" "${cpu[@]}" ;;
    *) record "$point" "$point" small "${cpu[@]}" ;;
  esac
}

# together POINT SMALL-FLOW Q: Q elephants, then the small flow (lat or
# thr) beside them. The elephants run --elephant-duration seconds, and
# beside the latency flow (a count of iterations) at least 3 times what it
# took alone plus 2 s. When the small flow still ran as the elephants
# ended, the point is run once more with the elephants lasting twice the
# small flow's time plus 3 s; a second miss is kept and marked
# "partial overlap".
together() {
  local point=$1 small=$2 q=$3 ed=$eleph_duration attempt
  if [ "$small" = lat ]; then
    ed=$(awk -v e="$ed" -v w="$lat_wall" 'BEGIN { x = int(3 * w + 2.999); print (x > e ? x : e) }')
  fi
  for attempt in 1 2; do
    together_once "$point" "$small" "$q" "$ed"
    [ "$t_overlap" = 1 ] || [ "${FLOW_RC[$point]}" != 0 ] && break
    [ "$attempt" = 1 ] || break
    ed=$(awk -v w="$t_small_wall" 'BEGIN { print int(2 * w + 3.999) }')
    echo "isolation.sh: $link $mode $point: the elephants ended before the $small" \
      "flow ($t_small_wall s); again with elephants of $ed s" >&2
  done
  if [ "$t_overlap" = 0 ] && [ "${FLOW_RC[$point]}" = 0 ]; then
    echo "isolation.sh: $link $mode $point: partial overlap (the elephants ended first)" >&2
  fi
  local eflow=$point-eleph
  [ "${FLOW_RC[$point]}" = 0 ] || failures=$((failures + 1))
  [ "${FLOW_RC[$eflow]}" = 0 ] || failures=$((failures + 1))
  local -a cpu=()
  [ -n "$t_cpu" ] && read -r -a cpu <<<"$t_cpu"
  record "$point" "$point" small "overlap=$t_overlap" "elephants=$q" "${cpu[@]}" \
    "wall_s=$t_small_wall" "setup_s=$t_small_setup" \
    "sched_a=$out/sched-$link-$mode-$point-a.json" "sched_b=$out/sched-$link-$mode-$point-b.json"
  record "$point" "$eflow" elephants "overlap=$t_overlap" "elephants=$q" "duration_s=$ed"
}

# together_once POINT SMALL-FLOW Q SECONDS: one run; sets t_overlap (1: the
# elephants' client still ran when the small flow's ended), t_small_wall
# (the small flow's seconds, set-up included), t_small_setup (seconds until
# its client printed its result header) and t_cpu (the daemons' CPU
# while the small flow ran, cpu_since).
t_overlap=0 t_small_wall=0 t_small_setup=0 t_cpu=''
together_once() {
  local point=$1 small=$2 q=$3 ed=$4 small_cmd t0
  local -a ecmd
  t_overlap=0 t_small_wall=0 t_small_setup=0 t_cpu=''
  read -r -a ecmd <<<"$(eleph_cmd "$q" "$ed")"
  if [ "$small" = lat ]; then small_cmd=("${lat_cmd[@]}"); else small_cmd=("${thr_cmd[@]}"); fi
  echo "  $link $mode $point: ${ecmd[*]} + ${small_cmd[*]}" >&2
  local eflow=$point-eleph
  # Names repeat per link, mode and attempt: nothing earlier may count.
  FLOW_RC[$point]=1 FLOW_RC[$eflow]=1 FLOW_COUT[$point]='' FLOW_COUT[$eflow]=''
  FLOW_CMD[$point]="${small_cmd[*]}" FLOW_CMD[$eflow]="${ecmd[*]}"
  rm -f "$out/sched-$link-$mode-$point-"[ab].*
  if flow_start "$eflow" "$ed" "${ecmd[@]}" && flow_measuring "$eflow"; then
    sleep 0.5
    t0=$(date +%s.%N)
    cpu_mark
    local secs=$duration
    [ "$small" = lat ] && secs=$lat_secs
    if flow_start "$point" "$secs" "${small_cmd[@]}"; then
      if flow_measuring "$point"; then
        t_small_setup=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        sleep 0.3
        sched_snapshot "$point"
      fi
      flow_finish "$point" || true
      t_cpu=$(cpu_since)
      # The small flow ran beside the elephants to its end only if their
      # client still runs now.
      flow_running "$eflow" && t_overlap=1
      t_small_wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    fi
  fi
  flow_finish "$eflow" || true
}

for l in $links; do
  link_up "$l"
  for mode in $modes; do
    echo "isolation.sh: $link, isolation $mode" >&2
    daemons_up
    commands
    read -r -a e1 <<<"$(eleph_cmd 1)"
    read -r -a e16 <<<"$(eleph_cmd 16)"
    for p in $points; do
      case $p in
        lat) alone lat "$lat_secs" "${lat_cmd[@]}"; lat_wall=$alone_wall ;;
        thr) alone thr "$duration" "${thr_cmd[@]}" ;;
        eleph1) alone eleph1 "$eleph_duration" "${e1[@]}" ;;
        eleph16) alone eleph16 "$eleph_duration" "${e16[@]}" ;;
        lat+eleph1) together lat+eleph1 lat 1 ;;
        lat+eleph16) together lat+eleph16 lat 16 ;;
        thr+eleph1) together thr+eleph1 thr 1 ;;
        thr+eleph16) together thr+eleph16 thr 16 ;;
      esac
    done
    daemons_down
  done
  link_down
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "isolation.sh: load average after: $load_after" >&2
mkdir -p "$(dirname "$json_out")"
/usr/bin/python3 "$ROOT/bench/isolation_table.py" table --out "$json_out" \
  --meta "started=$started" --meta "ended=$(date -u +%FT%TZ)" \
  --meta "host=$(hostname)" --meta "nproc=$(nproc)" \
  --meta "loadavg_before=$load_before" --meta "loadavg_after=$load_after" \
  --meta "lat_iters=$lat_iters" --meta "duration_s=$duration" \
  --meta "elephant_duration_s=$eleph_duration" --meta "select=$select" \
  --meta "lat_class=$lat_class" --meta "thr_class=$thr_class" \
  --meta "elephant_class=$eleph_class" --meta "class_weights=${class_weights:-1 each}" \
  --meta "poll=$poll" --meta "memif_rsize=${memif_rsize:-default}" --meta "tx_limit_bytes=$tx_limit" \
  --meta "afp_framecnt=$afp_framecnt" "$results" || failures=$((failures + 1))
echo "JSON: $json_out" >&2
if [ "$failures" -gt 0 ]; then
  echo "isolation.sh: $failures failure(s) (see above)" >&2
  exit 1
fi
