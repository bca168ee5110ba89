#!/usr/bin/env bash
# The engine on several lcores (docs/engine.md "Several lcores"):
# uroce-lcore-bench in one process over a net_ring pair with one queue per
# lcore, 64 B SENDs and 64 KiB WRITEs, with 1 and 2 engine lcores (each
# lcore with its own QPs), and with 2 lcores whose QPs talk across lcores on
# purpose (--cross: every packet handed to its owner through the hand-off
# rings). Prints the aggregate figures, the 2-lcore/1-lcore ratios and what
# one hand-off costs: (lcore-seconds per message, crossed - straight) /
# hand-offs per message.
#
#   scripts/bench-lcores.sh [--build-dir DIR] [--duration S] [--repeat N]
#                           [--json FILE] [--no-build]
#
# Each configuration runs --repeat times (default 5), the configurations
# taking turns; medians are shown, and each ratio is the median of the
# turns' ratios. Needs root (EAL) and 2 CPUs; run it on a quiet machine.
# Defaults take about 2 min.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
duration=2
repeat=5
json_out=
do_build=1
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) usage ;;
    *) echo "bench-lcores.sh: unknown option $1" >&2; usage ;;
  esac
done
[ -n "$json_out" ] || json_out=$build_dir/bench-lcores.json
[ "$(id -u)" = 0 ] || { echo "bench-lcores.sh: needs root (DPDK EAL)" >&2; exit 1; }
if [ "$do_build" = 1 ]; then
  [ -f "$build_dir/build.ninja" ] || meson setup "$build_dir" >/dev/null
  ninja -C "$build_dir" -j2 bench/uroce-lcore-bench bench/uroce-line-rtt >/dev/null
fi
lb=$build_dir/bench/uroce-lcore-bench
mkdir -p "$(dirname "$json_out")"
: >"$json_out"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$build_dir/bench/uroce-line-rtt" 2>/dev/null | head -1 || true
limit=$(awk -v d="$duration" 'BEGIN { printf "%d", 4 * d + 30 }')

# The configurations take turns (1, 2, 2 crossed, for each op, then again):
# the ratios are taken pair by pair within one turn, so that a machine whose
# speed drifts between turns still compares like with like.
for rep in $(seq "$repeat"); do
  for op in "send 64" "write 65536"; do
    set -- $op
    for cfg in "1" "2" "2 --cross"; do
      # shellcheck disable=SC2086
      timeout -k 2 "$limit" "$lb" --op "$1" --size "$2" --lcores $cfg \
        --duration "$duration" | sed "s/^{/{\"rep\":$rep,/" >>"$json_out"
    done
  done
done

/usr/bin/python3 - "$json_out" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def pick(op, lcores, cross, key):
    return {r["rep"]: r[key] for r in runs
            if r["op"] == op and r["lcores"] == lcores and r["cross"] == cross}
def med(op, lcores, cross, key):
    v = list(pick(op, lcores, cross, key).values())
    return statistics.median(v) if v else float("nan")
def ratio(op, a, b, key="msgs_per_s"):
    x, y = pick(op, *a, key), pick(op, *b, key)
    v = sorted(x[k] / y[k] for k in x if k in y and y[k] > 0)
    return (statistics.median(v), v[0], v[-1]) if v else (float("nan"),) * 3
bad = [r for r in runs if not r["verified"] or r["errors"]]
print(f"{'op':6} {'config':14} {'Mmsg/s':>8} {'Gb/s':>8} {'frames/msg':>10} {'handoffs/msg':>12}")
for op in ("send", "write"):
    for lc, cross, name in ((1, False, "1 lcore"), (2, False, "2 lcores"), (2, True, "2 crossed")):
        print(f"{op:6} {name:14} {med(op, lc, cross, 'msgs_per_s') / 1e6:8.3f} "
              f"{med(op, lc, cross, 'payload_gbps'):8.2f} {med(op, lc, cross, 'frames_per_msg'):10.2f} "
              f"{med(op, lc, cross, 'handoffs_per_msg'):12.2f}")
print("medians of the turns; ratios are the median (min-max) of each turn's pair")
for op in ("send", "write"):
    two = ratio(op, (2, False), (1, False))
    cr = ratio(op, (2, True), (2, False))
    # Lcore-seconds per message crossed minus straight, per hand-off.
    s2, c2 = pick(op, 2, False, "msgs_per_s"), pick(op, 2, True, "msgs_per_s")
    h = pick(op, 2, True, "handoffs_per_msg")
    costs = sorted((2 / c2[k] - 2 / s2[k]) / h[k] * 1e9 for k in c2 if k in s2 and h.get(k, 0) > 0)
    cost = statistics.median(costs) if costs else float("nan")
    print(f"{op}: 2 lcores / 1 lcore = {two[0]:.2f}x ({two[1]:.2f}-{two[2]:.2f}); "
          f"crossed / straight = {cr[0]:.2f}; one hand-off costs {cost:.0f} ns of an lcore")
if bad:
    print(f"{len(bad)} runs with errors or unverified data", file=sys.stderr)
    sys.exit(1)
PY
