#!/usr/bin/env bash
# One engine shard per application thread in embedded mode (docs/embedded.md
# "Several shards"): thread_shards (tests/integration/verbs/thread_shards.cpp)
# in one process over a net_ring pair, each of its threads sending 64 B
# SENDs between its own two contexts, with an embedded engine of one shard
# (--lcore 0) and of one shard per thread (--lcores 0,1). Prints each run's
# aggregate msg/s, the medians and the median of the turns' ratios.
#
#   scripts/bench-thread-shards.sh [--build-dir DIR] [--threads N]
#                                  [--iters N] [--repeat N] [--no-build]
#
# The two configurations take turns (--repeat, default 5) so that a machine
# whose speed drifts compares like with like. Needs root and 2 CPUs; run it
# on a quiet machine. Defaults take about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
threads=2
iters=2000000
repeat=5
do_build=1
usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) usage ;;
    *) echo "bench-thread-shards.sh: unknown option $1" >&2; usage ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench-thread-shards.sh: needs root (EAL, /dev/infiniband)" >&2; exit 1; }
if [ "$do_build" = 1 ]; then
  [ -f "$build_dir/build.ninja" ] || meson setup "$build_dir" -Dtests=true >/dev/null
  ninja -C "$build_dir" -j2 tests/integration/verbs/thread_shards bench/uroce-line-rtt \
    verbs-provider/uroce-run >/dev/null
fi
prog=$build_dir/tests/integration/verbs/thread_shards
run=$build_dir/verbs-provider/uroce-run
dev0="name=uroce0;mac=02:00:00:e3:01:01;ipv4=10.220.1.1;mtu=9000;port=ring:p0"
dev1="name=uroce1;mac=02:00:00:e3:01:02;ipv4=10.220.1.2;mtu=9000;port=ring:p0"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$build_dir/bench/uroce-line-rtt" 2>/dev/null | head -1 || true

# rate LCORE-OPTIONS...: one run's aggregate msg/s.
rate() {
  local out
  out=$(timeout 300 "$run" --embedded "$@" --device "$dev0" --device "$dev1" -- \
    "$prog" uroce0 uroce1 "$threads" "$iters")
  grep -qx 'thread_shards: ok' <<<"$out" || { echo "$out" >&2; return 1; }
  sed -n 's/^total: .* s, \([0-9]*\) msg\/s$/\1/p' <<<"$out"
}

one=() two=() ratios=()
for rep in $(seq "$repeat"); do
  a=$(rate --lcore 0)
  b=$(rate --lcores 0,1)
  one+=("$a") two+=("$b")
  ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')")
  echo "turn $rep: 1 shard $a msg/s, 2 shards $b msg/s, ratio ${ratios[-1]}"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "$threads threads, $iters 64 B SENDs each: 1 shard median $(median "${one[@]}") msg/s," \
  "2 shards median $(median "${two[@]}") msg/s, ratio median $(median "${ratios[@]}")" \
  "(min $(printf '%s\n' "${ratios[@]}" | sort -g | head -1), max $(printf '%s\n' "${ratios[@]}" | sort -g | tail -1))"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
