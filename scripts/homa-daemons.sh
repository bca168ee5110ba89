#!/usr/bin/env bash
# Must-show 2 of issue 15 (docs/homa.md, "On real daemons"): the Homa-like
# scheduler on three real uroced daemons. By hand, not in CI.
#
#   scripts/homa-daemons.sh [--build-dir DIR] [--modes "off on"] [--rounds N]
#                           [--lat-iters N] [--elephant-size BYTES]
#                           [--lcores "R S1 S2"] [--poll backoff|busy] [--events]
#                           [--elephant-nice N] [--homa-keys "K=V;K=V"]
#                           [--elephant-duration S] [--bottleneck-mbps N]
#                           [--bottleneck-buffer BYTES]
#                           [--json FILE] [--no-build] [--keep]
#
# The switch: a Linux bridge in a namespace of its own, with one veth pair
# per host (MTU 9000, no kernel address on the hosts' ends; each daemon
# drives its end with net_af_packet), and a second bridge with kernel
# addresses for the programs' TCP exchange. Hosts, each a namespace with a
# daemon (device uroce0, homa=MODE): R, the receiver, and the senders S1
# and S2. Per mode (homa off, then on; each round runs every mode):
#   alone   ib_send_lat -s 64 -n N, client on S1, server on R;
#   loaded  two elephants, ib_write_bw -s 4194304 -D E from S1 and from S2 to
#           R, and once both measure, the same ib_send_lat beside them (E:
#           long enough that they outlast it; a point where they did not is
#           run once more with longer ones, then kept and marked "partial").
# While the loaded latency flow runs: the three daemons' CPU and run-queue
# wait (schedstat of all their threads); right after it ends, with the
# elephants still running, each daemon's `uroce-ctl --json qps` (per-QP
# homa and retransmit counters); at each mode's end their status
# (`uroce-ctl --json status` and `uroce-ctl homa`).
# Prints a table (latency p50/p99/p99.9 alone and loaded, the elephants'
# Gb/s, CPU, the scheduler's counters) and writes JSON (default
# DIR/homa-daemons.json) with the load average before and after. Lcores:
# the daemons' EAL lcores, default "1 0 0" (the receiver alone on one; the
# VM has 2 cores). --events runs the latency flow with -e: its two
# programs sleep on completion events instead of polling their CQs (on 2
# cores, four polling programs beside three daemons leave each a share of
# the CPUs). The elephants' clients poll either way (perftest has no events
# for WRITE, nor with -D); their servers wait idle. --elephant-nice runs
# the elephants' programs at that nice value, so that the daemons and the
# latency flow come first for the CPUs. --homa-keys adds device keys
# (docs/homa.md) to every daemon with homa on, e.g.
# "homa_grant_timeout_us=20000". --elephant-duration fixes the elephants'
# -D (default: from the latency flow's times, below).
# --bottleneck-mbps N makes the switch's port toward R a bottleneck: a
# token bucket (tc tbf, N Mb/s) with a FIFO of --bottleneck-buffer bytes
# (default 2000000) on the bridge's egress to R, the incast point of the
# two elephants. Without it the switch forwards as fast as the senders'
# CPUs allow, and on this 2-core VM the daemons' CPUs are the bottleneck.
# --keep keeps the work dir (outputs, snapshots, logs).
# Needs root.
set -euo pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
cd "$ROOT"

build_dir=build
modes="off on"
rounds=1
lat_iters=5000
eleph_size=4194304
lcores="1 0 0"
poll=backoff
events=()
eleph_nice=0
homa_keys=
eleph_duration=0
bottleneck_mbps=0
bottleneck_buffer=2000000
json_out=
do_build=1
keep=0
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --lat-iters) lat_iters=$2; shift 2 ;;
    --elephant-size) eleph_size=$2; shift 2 ;;
    --lcores) lcores=$2; shift 2 ;;
    --poll) poll=$2; shift 2 ;;
    --events) events=(-e); shift ;;
    --elephant-nice) eleph_nice=$2; shift 2 ;;
    --homa-keys) homa_keys=$2; shift 2 ;;
    --elephant-duration) eleph_duration=$2; shift 2 ;;
    --bottleneck-mbps) bottleneck_mbps=$2; shift 2 ;;
    --bottleneck-buffer) bottleneck_buffer=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --keep) keep=1; shift ;;
    -h|--help) usage ;;
    *) echo "homa-daemons.sh: unknown option $1" >&2; usage ;;
  esac
done
[ -n "$json_out" ] || json_out=$build_dir/homa-daemons.json
for m in $modes; do
  case $m in off|on) ;; *) echo "homa-daemons.sh: mode $m (off or on)" >&2; exit 2 ;; esac
done
case $poll in busy|backoff) ;; *) echo "homa-daemons.sh: --poll busy|backoff" >&2; exit 2 ;; esac
read -r -a lcore <<<"$lcores"
[ "${#lcore[@]}" = 3 ] || { echo "homa-daemons.sh: --lcores takes three lcores" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "homa-daemons.sh: --rounds N (N >= 1)" >&2; exit 2; }
[[ $eleph_nice =~ ^-?[0-9]+$ ]] || { echo "homa-daemons.sh: --elephant-nice N" >&2; exit 2; }
for v in "$eleph_duration" "$bottleneck_mbps" "$bottleneck_buffer"; do
  [[ $v =~ ^[0-9]+$ ]] || { echo "homa-daemons.sh: $v is not a whole number" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "homa-daemons.sh: needs root (DPDK EAL, namespaces)" >&2; exit 1; }

if [ "$do_build" = 1 ]; then
  [ -f "$build_dir/build.ninja" ] || meson setup "$build_dir" >/dev/null
  ninja -C "$build_dir" apps/uroced/uroced apps/uroce-ctl/uroce-ctl \
    verbs-provider/liburoce-rdmav34.so verbs-provider/liburoce-preload.so >/dev/null
fi

# shellcheck source=lib/uroce-env.sh
source "$SCRIPT_DIR/lib/uroce-env.sh"
# shellcheck disable=SC2034 # read by uroce-env.sh's cleanup
UROCE_KEEP=$keep
uroce_env_init homa
id=$((UROCE_ID % 100000))
HOSTS=(r s1 s2)
declare -A NS=() RIF=() TIF=() IP=() TCP=() MAC=()
SW=uhd_sw_$id
for i in 0 1 2; do
  h=${HOSTS[$i]}
  NS[$h]=uhd_${h}_$id
  RIF[$h]=uh$id$h TIF[$h]=ut$id$h
  IP[$h]=10.216.0.$((i + 1)) TCP[$h]=10.216.1.$((i + 1)) MAC[$h]=02:00:00:d8:00:0$((i + 1))
done
# Veth pairs are made here and then moved: one interrupted in between would
# stay in this namespace, so ours go first; then the library's trap runs
# (processes, daemons, namespaces with the veth ends and bridges in them,
# DPDK runtime dirs, the work dir).
hd_on_exit() {
  local rc=$? h v
  set +e
  for h in "${HOSTS[@]}"; do
    for v in "${RIF[$h]}" "${RIF[$h]}s" "${TIF[$h]}" "${TIF[$h]}s"; do
      ip link show "$v" >/dev/null 2>&1 && ip link del "$v" 2>/dev/null
    done
  done
  (exit "$rc")
  _uroce_on_exit
}
trap hd_on_exit EXIT
uroce_find_tools "$(realpath "$build_dir")"
out=$UROCE_TMP/results
mkdir -p "$out"
points=$out/points.jsonl
: >"$points"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%FT%TZ)
echo "homa-daemons.sh: load average before: $load_before; work dir $UROCE_TMP" >&2
TABLE=$ROOT/bench/homa_daemons_table.py
failures=0

# ---- the switch -------------------------------------------------------------
uroce_netns_add "$SW"
for b in br0 br1; do
  ip -n "$SW" link add "$b" type bridge
  ip -n "$SW" link set "$b" up
done
ip netns exec "$SW" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 >/dev/null 2>&1 || true
for h in "${HOSTS[@]}"; do
  uroce_netns_add "${NS[$h]}"
  # RoCE: the host's end for af_packet (no kernel address), the switch's in br0.
  uroce_veth_dpdk "${NS[$h]}" "${RIF[$h]}" "$SW" "${RIF[$h]}s" 9000
  ip -n "$SW" link set "${RIF[$h]}s" master br0
  # TCP for perftest's exchange: a kernel address on the host's end.
  ip link add "${TIF[$h]}" type veth peer name "${TIF[$h]}s"
  ip link set "${TIF[$h]}" netns "${NS[$h]}"
  ip link set "${TIF[$h]}s" netns "$SW"
  ip -n "${NS[$h]}" addr add "${TCP[$h]}/24" dev "${TIF[$h]}"
  ip -n "${NS[$h]}" link set "${TIF[$h]}" up
  ip -n "$SW" link set "${TIF[$h]}s" master br1 up
done
ip -n "$SW" link set br0 mtu 9000
if [ "$bottleneck_mbps" -gt 0 ]; then
  # The bridge sends to R through the switch's end of R's veth: its qdisc
  # is the egress queue of that switch port.
  ip netns exec "$SW" tc qdisc add dev "${RIF[r]}s" root tbf rate "${bottleneck_mbps}mbit" \
    burst 65536 limit "$bottleneck_buffer"
  echo "homa-daemons.sh: switch port to R: $(ip netns exec "$SW" tc qdisc show dev "${RIF[r]}s")" >&2
fi

# ---- daemons ----------------------------------------------------------------
declare -A DNAME=()
daemons_up() { # ROUND MODE
  local i h keys=''
  [ "$2" = on ] && [ -n "$homa_keys" ] && keys=";$homa_keys"
  for i in 0 1 2; do
    h=${HOSTS[$i]}
    DNAME[$h]=$1-$2-$h
    uroce_daemon_start "${DNAME[$h]}" --netns "${NS[$h]}" --lcore "${lcore[$i]}" --poll "$poll" -- \
      --device "name=uroce0;mac=${MAC[$h]};ipv4=${IP[$h]};mtu=9000;homa=$2$keys;port=net_af_packet0,iface=${RIF[$h]},qdisc_bypass=1,blocksz=8192,framesz=8192,framecnt=2048"
  done
}
daemons_down() { # ROUND MODE
  local h d base
  if [ "$bottleneck_mbps" -gt 0 ]; then
    ip netns exec "$SW" tc -s qdisc show dev "${RIF[r]}s" >"$out/$1-$2-bottleneck.txt" 2>&1 || true
  fi
  for h in "${HOSTS[@]}"; do
    d=${DNAME[$h]}
    base=$out/$1-$2-$h
    "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[$d]}" --json status >"$base.status.json" 2>&1 || true
    "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[$d]}" homa >"$base.homa.txt" 2>&1 || true
    if ! uroce_daemon_alive "$d"; then
      echo "homa-daemons.sh: uroced $d died during the run" >&2
      uroce_daemon_log_tail "$d" 20 >&2
      failures=$((failures + 1))
    fi
    uroce_daemon_stop "$d" || failures=$((failures + 1))
  done
}

# ---- flows --------------------------------------------------------------------
# A flow: a perftest server on R and its client on host H, both in the
# background, by name.
declare -A F_SPID=() F_CPID=() F_OUT=() F_RC=() F_CMD=()
seq_no=0
flow_start() { # NAME HOST SECS [nice -n N] PROG ARGS...
  local name=$1 h=$2 secs=$3 port spid cpid base
  shift 3
  local -a pre=()
  if [ "$1" = nice ]; then pre=(nice -n "$3"); shift 3; fi
  seq_no=$((seq_no + 1))
  base=$out/$(printf '%03d' "$seq_no")-$name
  F_OUT[$name]=$base.client.out F_CMD[$name]="$*" F_RC[$name]=1 F_SPID[$name]='' F_CPID[$name]=''
  uroce_next_port port
  uroce_bg spid --netns "${NS[r]}" --timeout $((secs + 60)) "$base.server.out" "$base.server.out" -- \
    "${pre[@]}" stdbuf -oL "$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[${DNAME[r]}]}" "$@" \
    -d uroce0 -x 1 -F -p "$port"
  F_SPID[$name]=$spid
  if ! uroce_wait_listen "${NS[r]}" "$port" 20 "$spid"; then
    echo "homa-daemons.sh: $name: the server never listened" >&2
    uroce_kill_group KILL "$spid"
    uroce_wait "$spid" UROCE_IGNORED_RC
    F_SPID[$name]=''
    return 1
  fi
  uroce_bg cpid --netns "${NS[$h]}" --timeout $((secs + 60)) "${F_OUT[$name]}" "${F_OUT[$name]}" -- \
    "${pre[@]}" stdbuf -oL "$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[${DNAME[$h]}]}" "$@" \
    -d uroce0 -x 1 -F -p "$port" "${TCP[r]}"
  F_CPID[$name]=$cpid
}
flow_measuring() { # NAME: the client printed its result header
  [ -n "${F_CPID[$1]:-}" ] && uroce_wait_for_line "${F_OUT[$1]}" '#bytes' 30 "${F_CPID[$1]}"
}
flow_running() { [ -n "${F_CPID[$1]:-}" ] && uroce_running "${F_CPID[$1]}"; }
flow_finish() { # NAME: sets F_RC (0: client and server exited 0)
  local name=$1 crc=1 src=1 spid=${F_SPID[$1]:-} cpid=${F_CPID[$1]:-}
  [ -n "$cpid" ] && uroce_wait "$cpid" crc
  if [ -n "$spid" ]; then
    local deadline=$((SECONDS + 5))
    while uroce_running "$spid" && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    uroce_running "$spid" && uroce_kill_group KILL "$spid"
    uroce_wait "$spid" src
  fi
  F_CPID[$name]='' F_SPID[$name]=''
  if [ "$crc" = 0 ] && [ "$src" = 0 ]; then F_RC[$name]=0; return 0; fi
  echo "homa-daemons.sh: $name failed: client exit $crc, server exit $src" >&2
  tail -n 5 "${F_OUT[$name]:-/dev/null}" >&2 || true
  F_RC[$name]=1
  return 1
}

# ---- the daemons' CPU -----------------------------------------------------------
declare -A CPU0=()
cpu_t0=0
cpu_mark() {
  local h
  cpu_t0=$(date +%s%N)
  for h in "${HOSTS[@]}"; do CPU0[$h]=$(uroce_daemon_schedstat "${DNAME[$h]}"); done
}
cpu_since() { # "cpu_r=.. wait_r=.. cpu_s1=.. ..." in % of the wall time (100 = a core)
  local t h a b
  t=$(($(date +%s%N) - cpu_t0))
  for h in "${HOSTS[@]}"; do
    a=${CPU0[$h]} b=$(uroce_daemon_schedstat "${DNAME[$h]}")
    awk -v t="$t" -v h="$h" -v a="$a" -v b="$b" 'BEGIN { split(a, x); split(b, y)
      printf "cpu_%s=%.1f wait_%s=%.1f ", h, 100 * (y[1] - x[1]) / t, h, 100 * (y[2] - x[2]) / t }'
  done
  echo
}

record() { # ROUND MODE POINT FLOW ROLE [K=V...]
  local r=$1 m=$2 p=$3 f=$4 role=$5 kv=() a
  shift 5
  for a in "$@"; do kv+=(--meta "$a"); done
  /usr/bin/python3 "$TABLE" point --round "$r" --mode "$m" --point "$p" --role "$role" \
    --status "${F_RC[$f]}" --cmd "${F_CMD[$f]}" "${kv[@]}" "${F_OUT[$f]:-}" >>"$points" ||
    failures=$((failures + 1))
}

lat_cmd=(ib_send_lat -s 64 -n "$lat_iters" "${events[@]}")
eleph_cmd() { echo ib_write_bw -s "$eleph_size" -D "$1" --report_gbits; }

# alone ROUND MODE: the latency flow by itself; sets alone_wall (s).
alone_wall=0
alone() {
  local t0 cpu
  echo "  round $1 homa $2 alone: ${lat_cmd[*]}" >&2
  t0=$(date +%s.%N)
  cpu_mark
  if flow_start lat s1 60 "${lat_cmd[@]}"; then flow_finish lat || true; fi
  cpu=$(cpu_since)
  alone_wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  [ "${F_RC[lat]}" = 0 ] || failures=$((failures + 1))
  # shellcheck disable=SC2086 # one K=V per word
  record "$1" "$2" alone lat lat "wall_s=$alone_wall" $cpu
}

# loaded ROUND MODE: both elephants, then the latency flow beside them.
# The elephants' duration: at least 8 s, 3 times the latency flow's time
# alone plus 5 s, and twice its last loaded time plus 10 s (beside the
# elephants it is 30-100 times slower than alone on this VM, and slower
# still once they run all along: a first guess from a partial overlap
# falls short).
prev_loaded_wall=0
loaded() {
  local r=$1 m=$2 ed attempt
  ed=$(awk -v w="$alone_wall" -v p="$prev_loaded_wall" 'BEGIN { x = int(3 * w + 4.999)
    y = int(2 * p + 10.999); if (y > x) x = y; print (x > 8 ? x : 8) }')
  [ "$eleph_duration" -gt 0 ] && ed=$eleph_duration
  for attempt in 1 2; do
    loaded_once "$r" "$m" "$ed"
    [ "$overlap" = 1 ] || [ "$attempt" = 2 ] && break
    # Only part of the latency flow ran beside the elephants, the slow
    # part: 4 times its time.
    ed=$(awk -v w="$lat_wall" 'BEGIN { x = int(4 * w + 10.999); print (x > 8 ? x : 8) }')
    echo "homa-daemons.sh: the elephants ended before the latency flow ($lat_wall s);" \
      "again with elephants of $ed s" >&2
  done
  prev_loaded_wall=$lat_wall
  local f
  for f in lat e1 e2; do [ "${F_RC[$f]}" = 0 ] || failures=$((failures + 1)); done
  # shellcheck disable=SC2086 # one K=V per word
  record "$r" "$m" loaded lat lat "overlap=$overlap" "wall_s=$lat_wall" $lat_cpu \
    "qps_r=$out/$r-$m-r.qps.json" "qps_s1=$out/$r-$m-s1.qps.json" "qps_s2=$out/$r-$m-s2.qps.json"
  record "$r" "$m" loaded e1 eleph1 "duration_s=$ed"
  record "$r" "$m" loaded e2 eleph2 "duration_s=$ed"
}

overlap=0 lat_wall=0 lat_cpu=''
loaded_once() { # ROUND MODE SECONDS
  local r=$1 m=$2 ed=$3 t0 h
  local -a ecmd
  read -r -a ecmd <<<"$(eleph_cmd "$ed")"
  echo "  round $r homa $m loaded: 2 x ${ecmd[*]} + ${lat_cmd[*]}" >&2
  overlap=0 lat_wall=0 lat_cpu=''
  F_RC[lat]=1 F_RC[e1]=1 F_RC[e2]=1
  local -a en=(nice -n "$eleph_nice")
  if flow_start e1 s1 "$ed" "${en[@]}" "${ecmd[@]}" && flow_start e2 s2 "$ed" "${en[@]}" "${ecmd[@]}" &&
    flow_measuring e1 && flow_measuring e2; then
    sleep 0.5
    t0=$(date +%s.%N)
    cpu_mark
    if flow_start lat s1 120 "${lat_cmd[@]}"; then
      flow_finish lat || true
      lat_cpu=$(cpu_since)
      flow_running e1 && flow_running e2 && overlap=1
      # Per-QP counters with the elephants' QPs still there.
      for h in "${HOSTS[@]}"; do
        "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[${DNAME[$h]}]}" --json qps \
          >"$out/$r-$m-$h.qps.json" 2>&1 || true
      done
      lat_wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    fi
  fi
  flow_finish e1 || true
  flow_finish e2 || true
}

for r in $(seq 1 "$rounds"); do
  for m in $modes; do
    echo "homa-daemons.sh: round $r, homa $m" >&2
    daemons_up "$r" "$m"
    alone "$r" "$m"
    loaded "$r" "$m"
    daemons_down "$r" "$m"
    /usr/bin/python3 "$TABLE" counters --round "$r" --mode "$m" \
      --status r="$out/$r-$m-r.status.json" --status s1="$out/$r-$m-s1.status.json" \
      --status s2="$out/$r-$m-s2.status.json" >>"$points" || failures=$((failures + 1))
  done
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "homa-daemons.sh: load average after: $load_after" >&2
mkdir -p "$(dirname "$json_out")"
/usr/bin/python3 "$TABLE" table --out "$json_out" \
  --meta "started=$started" --meta "ended=$(date -u +%FT%TZ)" --meta "host=$(hostname)" \
  --meta "nproc=$(nproc)" --meta "loadavg_before=$load_before" --meta "loadavg_after=$load_after" \
  --meta "lat_iters=$lat_iters" --meta "elephant_size=$eleph_size" --meta "lcores=$lcores" \
  --meta "poll=$poll" --meta "lat_events=${#events[@]}" --meta "elephants=ib_write_bw" \
  --meta "elephant_nice=$eleph_nice" --meta "homa_keys=${homa_keys:-defaults}" \
  --meta "bottleneck_mbps=$bottleneck_mbps" --meta "bottleneck_buffer=$bottleneck_buffer" \
  --meta "switch=linux bridge of veths, net_af_packet, namespaces" \
  "$points" || failures=$((failures + 1))
echo "JSON: $json_out" >&2
if [ "$failures" -gt 0 ]; then
  echo "homa-daemons.sh: $failures failure(s) (see above)" >&2
  exit 1
fi
