#!/usr/bin/env bash
# The DC scale benchmark (docs/dc.md, "Scale"): does a message cost more as
# the targets grow, and does the target's memory follow its initiators?
# uroce-dc-scale (bench/dc_scale.cpp) runs the daemon's engine in process,
# both hosts' Vnics on one lcore over a crossed net_ring pair, 64-byte
# WRITEs (--op), and for each point prints one JSON line; this script runs
#   - fanout: one DCI to each count of DCTs (round robin), with each number
#     of streams in --streams,
#   - rc-fanout: the same with one RC QP pair per target, counts up to
#     --rc-max,
#   - many-dci: each count in --dcis of DCIs to one DCT, with each target
#     pool size in --dci-contexts (a pool smaller than what the DCIs hold
#     shows it staying bounded),
# and prints a table: messages/s (--window WRs outstanding), latency p50/p99
# (one outstanding), frames per message, with --callgrind instructions per
# message (the measured loop: both Vnics and the application's posting and
# polling), the engine's heap per target object and in all (targets plus the
# DC pool), the pool's contexts (most open at once / capacity), RSS. Every
# row's ratios are to the first count of its kind measured in the same run.
#
#   scripts/bench-dc-scale.sh [--build-dir DIR] [--counts "1 100 10000 100000"]
#                             [--streams "1"] [--dcis "10000"]
#                             [--dci-contexts "4096"] [--rc-max N] [--op write|send]
#                             [--window W] [--duration S] [--repeat N]
#                             [--callgrind] [--callgrind-messages N]
#                             [--json FILE] [--no-build]
#
# Needs root (EAL). About 2 s a point plus setup (100,000 DCTs take ~3 s).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
counts="1 100 10000 100000"
streams="1"
dcis="10000"
dci_contexts="4096"
rc_max=100000
op=write
window=16
duration=1
repeat=1
callgrind=0
cg_messages=20000
json_out=
do_build=1
usage() { sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --counts) counts=$2; shift 2 ;;
    --streams) streams=$2; shift 2 ;;
    --dcis) dcis=$2; shift 2 ;;
    --dci-contexts) dci_contexts=$2; shift 2 ;;
    --rc-max) rc_max=$2; shift 2 ;;
    --op) op=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --callgrind) callgrind=1; shift ;;
    --callgrind-messages) cg_messages=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) usage ;;
    *) echo "bench-dc-scale.sh: unknown option $1" >&2; usage ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench-dc-scale.sh: needs root (DPDK EAL)" >&2; exit 1; }
if [ "$callgrind" = 1 ] && ! command -v valgrind >/dev/null; then
  echo "bench-dc-scale.sh: --callgrind needs valgrind" >&2; exit 1
fi
if [ "$do_build" = 1 ]; then
  [ -f "$build_dir/build.ninja" ] || meson setup "$build_dir" >/dev/null
  ninja -C "$build_dir" -j1 bench/uroce-dc-scale >/dev/null
fi
bin=$build_dir/bench/uroce-dc-scale
[ -x "$bin" ] || { echo "bench-dc-scale.sh: $bin missing (run without --no-build)" >&2; exit 1; }

work=$(mktemp -d "/tmp/uroce-bench-dc-scale-$$.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "bench-dc-scale: load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# point TAG ARGS...: the runs of one point (and its callgrind run), tagged.
point() {
  local tag=$1; shift
  for r in $(seq 1 "$repeat"); do
    echo "bench-dc-scale: $tag, run $r" >&2
    "$bin" "$@" --op "$op" --window "$window" --duration "$duration" --memory 512 \
      >"$work/run.json" 2>>"$work/err.log" || {
        echo "bench-dc-scale: $tag failed; its output and the end of its log:" >&2
        cat "$work/run.json" >&2; tail -n 5 "$work/err.log" >&2; exit 1; }
    sed "s/^{/{\"tag\":\"$tag\",/" "$work/run.json" >>"$work/runs.jsonl"
  done
  if [ "$callgrind" = 1 ]; then
    echo "bench-dc-scale: $tag, callgrind" >&2
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.$tag" --collect-atstart=no \
      '--toggle-collect=*measured_window*' "$bin" "$@" --op "$op" --window "$window" \
      --warmup 0.05 --messages "$cg_messages" --memory 256 \
      >"$work/cg.$tag.json" 2>"$work/cg.$tag.log" || {
        echo "bench-dc-scale: callgrind run of $tag failed; end of its log:" >&2
        tail -n 5 "$work/cg.$tag.log" >&2; exit 1; }
  fi
}

for s in $streams; do
  for n in $counts; do point "fanout-s$s-$n" --mode fanout --count "$n" --streams "$s"; done
done
for n in $counts; do
  if [ "$n" -le "$rc_max" ]; then point "rc-fanout-$n" --mode rc-fanout --count "$n"; fi
done
for c in $dci_contexts; do
  for n in $dcis; do point "many-dci-c$c-$n" --mode many-dci --count "$n" --dc-contexts "$c"; done
done
echo "bench-dc-scale: load average after $(cut -d' ' -f1-3 /proc/loadavg)" >&2

/usr/bin/python3 - "$work" "$json_out" <<'EOF'
import json, re, statistics, sys

work, json_out = sys.argv[1], sys.argv[2]
runs = [json.loads(l) for l in open(f"{work}/runs.jsonl") if l.startswith("{")]
tags = list(dict.fromkeys(r["tag"] for r in runs))

def callgrind(tag):
    try:
        log = open(f"{work}/cg.{tag}.log").read()
        res = json.loads([l for l in open(f"{work}/cg.{tag}.json") if l.startswith("{")][-1])
    except (OSError, IndexError):
        return None
    m = re.search(r"Collected : ([0-9]+)", log)
    done = res["rate"]["completions"]
    return int(m.group(1)) / done if m and done else None

rows = []
for tag in tags:
    rs = [r for r in runs if r["tag"] == tag]
    med = lambda f: statistics.median(f(r) for r in rs)
    last = rs[-1]
    m = last["memory"]
    rows.append({
        "tag": tag, "mode": last["mode"], "count": last["count"], "streams": last["streams"],
        "dc_contexts": last["dc_contexts"],
        "group": re.sub(r"-[0-9]+$", "", tag),
        "msgs_per_s": med(lambda r: r["rate"]["msgs_per_s"]),
        "latency_median_ns": med(lambda r: r["latency_ns"]["median"]),
        "latency_p99_ns": med(lambda r: r["latency_ns"]["p99"]),
        "frames_per_msg": med(lambda r: r["rate"]["frames_per_msg"]),
        "ir_per_msg": callgrind(tag),
        "heap_bytes_per_target": m["engine_heap_bytes_per_target"],
        "heap_bytes_per_initiator": m["engine_heap_bytes_per_initiator"],
        "target_heap_bytes": m["target_heap_bytes"],
        "pool_memory_bytes": m["pool_memory_bytes"],
        "contexts_max": max(r["memory"]["contexts_max"] for r in rs),
        "contexts_open_end": last["memory"]["contexts_open_end"],
        "contexts_capacity": m["contexts_capacity"],
        "rss_bytes": max(r["memory"]["rss_bytes"] for r in rs),
        "setup_s": last["setup_s"],
        "pool": last["pool"],
        "verified": all(r["verified"] for r in rs),
    })

def ratio(a, b):
    return None if a is None or not b else a / b

f = lambda v, spec: "-" if v is None else format(v, spec)
print(f"{'mode':>10} {'S':>2} {'count':>7} {'msg/s':>8} {'x':>5} {'p50 ns':>7} {'x':>5} "
      f"{'p99 ns':>7} {'x':>5} {'fr/msg':>6} {'Ir/msg':>7} {'x':>5} {'B/target':>8} "
      f"{'target MiB':>10} {'ctx max/cap':>11} {'RSS MiB':>7} ok")
for r in rows:
    base = next(x for x in rows if x["group"] == r["group"])
    r["ratio_msgs_per_s"] = ratio(r["msgs_per_s"], base["msgs_per_s"])
    r["ratio_latency_median"] = ratio(r["latency_median_ns"], base["latency_median_ns"])
    r["ratio_latency_p99"] = ratio(r["latency_p99_ns"], base["latency_p99_ns"])
    r["ratio_ir_per_msg"] = ratio(r["ir_per_msg"], base["ir_per_msg"])
    ctx = f"{r['contexts_max']}/{r['contexts_capacity']}" if r["contexts_capacity"] else "-"
    print(f"{r['mode']:>10} {r['streams'] if r['mode'] == 'fanout' else '':>2} {r['count']:>7} "
          f"{r['msgs_per_s']:>8.0f} {f(r['ratio_msgs_per_s'], '5.2f')} "
          f"{r['latency_median_ns']:>7.0f} {f(r['ratio_latency_median'], '5.2f')} "
          f"{r['latency_p99_ns']:>7.0f} {f(r['ratio_latency_p99'], '5.2f')} "
          f"{r['frames_per_msg']:>6.2f} {f(r['ir_per_msg'], '7.0f')} "
          f"{f(r['ratio_ir_per_msg'], '5.2f')} {r['heap_bytes_per_target']:>8.0f} "
          f"{r['target_heap_bytes'] / 2**20:>10.1f} {ctx:>11} {r['rss_bytes'] / 2**20:>7.0f} "
          f"{'yes' if r['verified'] else 'NO'}")
line = {"bench": "uroce-dc-scale-table", "schema": 1, "rows": rows}
print(json.dumps(line))
if json_out:
    with open(json_out, "a") as fh:
        fh.write(json.dumps(line) + "\n")
EOF
