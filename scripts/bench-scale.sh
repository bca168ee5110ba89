#!/usr/bin/env bash
# The QP-scale benchmark (docs/engine.md, "QP scale"): does an idle QP cost
# the engine anything? For each count of idle RC QPs (connected, in RTS,
# never posting) on host A, with 1 and with 16 active QP pairs exchanging
# 64-byte RDMA WRITEs, uroce-engine-bench measures on one lcore (both hosts'
# Vnics over a crossed net_ring pair):
#   - messages/s (rate mode: 16 WRITEs outstanding per active QP),
#   - post-to-completion latency median and p99 (one outstanding per QP),
#   - callgrind instructions per frame of the measured loop (both Vnics'
#     poll() and the posting/polling around them), fixed message count,
#   - the engine's heap bytes per idle QP (allocated at its creation), the
#     Vnic's bytes per QP slot (allocated at construction for max_qps),
#     ring bytes per idle QP (the application's), RSS.
# The first count is the baseline; every row prints its ratio to it.
# A second table gives the engine's heap bytes per idle object of each kind
# (RC, UC and UD QPs in RTS, CQs), `--objects` of each, rings at --idle-depth.
#
#   scripts/bench-scale.sh [--build-dir DIR] [--counts "0 1000 ..."]
#                          [--active "1 16"] [--repeat N] [--idle-depth D]
#                          [--objects N] [--no-callgrind] [--callgrind-max N]
#                          [--json FILE] [--no-build]
#
# Idle QPs are created through the Vnic API (the control operations uroced's
# sessions call), not through the daemon: a million QPs through uroced would
# need two memfds each. Needs root (EAL); about 1-2 minutes without callgrind,
# more with it (setting up a million QPs under valgrind takes minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
counts="0 1000 10000 100000 1000000"
actives="1 16"
repeat=3
idle_depth=1
objects=10000
callgrind=1
callgrind_max=1000000
json_out=
do_build=1
usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --counts) counts=$2; shift 2 ;;
    --active) actives=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --idle-depth) idle_depth=$2; shift 2 ;;
    --objects) objects=$2; shift 2 ;;
    --no-callgrind) callgrind=0; shift ;;
    --callgrind-max) callgrind_max=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) usage ;;
    *) echo "bench-scale.sh: unknown option $1" >&2; usage ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench-scale.sh: needs root (DPDK EAL)" >&2; exit 1; }
if [ "$callgrind" = 1 ] && ! command -v valgrind >/dev/null; then
  echo "bench-scale.sh: needs valgrind for instruction counts (or --no-callgrind)" >&2; exit 1
fi
if [ "$do_build" = 1 ]; then
  [ -f "$build_dir/build.ninja" ] || meson setup "$build_dir" >/dev/null
  ninja -C "$build_dir" bench/uroce-engine-bench >/dev/null
fi
bin=$build_dir/bench/uroce-engine-bench
[ -x "$bin" ] || { echo "bench-scale.sh: $bin missing (run without --no-build)" >&2; exit 1; }

work=$(mktemp -d "/tmp/uroce-bench-scale-$$.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "bench-scale: load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2

for n in $counts; do
  for k in $actives; do
    for mode in rate latency; do
      for r in $(seq 1 "$repeat"); do
        echo "bench-scale: $n idle, $k active, $mode, run $r" >&2
        "$bin" --qps "$n" --active "$k" --idle-depth "$idle_depth" --mode "$mode" \
          --duration 1 >>"$work/runs.jsonl" 2>>"$work/err.log" || {
            echo "bench-scale: run failed ($n idle, $k active, $mode); end of its log:" >&2
            tail -n 5 "$work/err.log" >&2; exit 1; }
      done
    done
    if [ "$callgrind" = 1 ] && [ "$n" -le "$callgrind_max" ]; then
      echo "bench-scale: $n idle, $k active, callgrind" >&2
      valgrind --tool=callgrind --callgrind-out-file="$work/cg.$n.$k" --collect-atstart=no \
        '--toggle-collect=*measured_window*' "$bin" --qps "$n" --active "$k" \
        --idle-depth "$idle_depth" --mode rate --warmup 0.01 --count 20000 --memory 256 \
        >"$work/cg.$n.$k.json" 2>"$work/cg.$n.$k.log" || {
          echo "bench-scale: callgrind run failed; end of its log:" >&2
          tail -n 5 "$work/cg.$n.$k.log" >&2; exit 1; }
    fi
  done
done

for t in rc uc ud cq; do
  echo "bench-scale: $objects idle $t objects, memory" >&2
  "$bin" --qps "$objects" --idle-type "$t" --idle-depth "$idle_depth" --mode rate \
    --warmup 0.05 --duration 0.2 >>"$work/memory.jsonl" 2>>"$work/err.log" || {
      echo "bench-scale: memory run failed ($t); end of its log:" >&2
      tail -n 5 "$work/err.log" >&2; exit 1; }
done

/usr/bin/python3 - "$work" "$json_out" "$counts" "$actives" <<'EOF'
import json, re, statistics, sys

work, json_out = sys.argv[1], sys.argv[2]
counts = [int(x) for x in sys.argv[3].split()]
actives = [int(x) for x in sys.argv[4].split()]
runs = [json.loads(l) for l in open(f"{work}/runs.jsonl") if l.startswith("{")]

def median(vals):
    return statistics.median(vals) if vals else None

def callgrind(n, k):
    try:
        log = open(f"{work}/cg.{n}.{k}.log").read()
        res = json.loads([l for l in open(f"{work}/cg.{n}.{k}.json") if l.startswith("{")][-1])
    except (OSError, IndexError):
        return None
    m = re.search(r"Collected : ([0-9]+)", log)
    if not m or not res.get("frames"):
        return None
    return int(m.group(1)) / res["frames"]

rows = []
for k in actives:
    for n in counts:
        rate = [r for r in runs if r["idle_qps"] == n and r["active_qps"] == k and r["mode"] == "rate"]
        lat = [r for r in runs if r["idle_qps"] == n and r["active_qps"] == k and r["mode"] == "latency"]
        rows.append({
            "idle_qps": n, "active_qps": k,
            "msgs_per_s": median([r["msgs_per_s"] for r in rate]),
            "latency_median_ns": median([r["latency_ns"]["median"] for r in lat]),
            "latency_p99_ns": median([r["latency_ns"]["p99"] for r in lat]),
            "ir_per_frame": callgrind(n, k),
            "engine_heap_bytes_per_idle_qp": rate[0]["engine_heap_bytes_per_idle_qp"] if rate else None,
            "engine_slot_bytes_per_qp": rate[0]["engine_slot_bytes_per_qp"] if rate else None,
            "ring_bytes_per_idle_qp": rate[0]["ring_bytes_per_idle_qp"] if rate else None,
            "rss_bytes": max(r["rss_bytes"] for r in rate + lat) if rate + lat else None,
            "idle_depth": rate[0]["idle_depth"] if rate else None,
        })

def ratio(a, b):
    return None if a is None or not b else a / b

print(f"{'idle QPs':>9} {'active':>6} {'msg/s':>10} {'x':>5} {'lat p50':>8} {'x':>5} "
      f"{'lat p99':>8} {'x':>5} {'Ir/frame':>9} {'x':>5} {'heap B/idle':>11} {'slot B':>7} "
      f"{'RSS MiB':>8}")
for k in actives:
    base = next(r for r in rows if r["active_qps"] == k)
    for r in [x for x in rows if x["active_qps"] == k]:
        r["ratio_msgs_per_s"] = ratio(r["msgs_per_s"], base["msgs_per_s"])
        r["ratio_latency_median"] = ratio(r["latency_median_ns"], base["latency_median_ns"])
        r["ratio_latency_p99"] = ratio(r["latency_p99_ns"], base["latency_p99_ns"])
        r["ratio_ir_per_frame"] = ratio(r["ir_per_frame"], base["ir_per_frame"])
        f = lambda v, spec: "-" if v is None else format(v, spec)
        print(f"{r['idle_qps']:>9} {k:>6} {f(r['msgs_per_s'], '10.0f')} "
              f"{f(r['ratio_msgs_per_s'], '5.2f')} {f(r['latency_median_ns'], '8.0f')} "
              f"{f(r['ratio_latency_median'], '5.2f')} {f(r['latency_p99_ns'], '8.0f')} "
              f"{f(r['ratio_latency_p99'], '5.2f')} {f(r['ir_per_frame'], '9.0f')} "
              f"{f(r['ratio_ir_per_frame'], '5.2f')} "
              f"{f(r['engine_heap_bytes_per_idle_qp'], '11.0f')} "
              f"{f(r['engine_slot_bytes_per_qp'], '7.0f')} "
              f"{f(r['rss_bytes'] / 2**20 if r['rss_bytes'] else None, '8.0f')}")
memory = [json.loads(l) for l in open(f"{work}/memory.jsonl") if l.startswith("{")]
print()
print(f"{'idle object':>12} {'count':>8} {'engine heap B':>13} {'slot B/QP':>9} {'ring B':>7}")
for m in memory:
    kind = "CQ" if m["idle_type"] == "cq" else m["idle_type"].upper() + " QP"
    print(f"{kind:>12} {m['idle_qps']:>8} "
          f"{m['engine_heap_bytes_per_idle_qp']:>13.0f} {m['engine_slot_bytes_per_qp']:>9.0f} "
          f"{m['ring_bytes_per_idle_qp']:>7.0f}")
mem_rows = [{"kind": m["idle_type"], "count": m["idle_qps"],
             "engine_heap_bytes": m["engine_heap_bytes_per_idle_qp"],
             "engine_slot_bytes_per_qp": m["engine_slot_bytes_per_qp"],
             "ring_bytes": m["ring_bytes_per_idle_qp"]} for m in memory]
line = {"bench": "uroce-engine-scale-table", "schema": 2, "rows": rows, "memory": mem_rows}
print(json.dumps(line))
if json_out:
    with open(json_out, "a") as fh:
        fh.write(json.dumps(line) + "\n")
EOF
