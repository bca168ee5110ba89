#!/usr/bin/env bash
# The transport benchmark (docs/benchmarks.md, "Transport benchmark"), with
# the raw DPDK baseline measured in the same run for the ratios:
#   raw        uroce-raw-bench ring self-test, 64 B and 4096 B (stream only)
#   transport  uroce-engine-bench: 64 B SENDs and 64 KiB WRITEs between two
#              of the daemon's Vnics on one lcore, over the net_ring pair and
#              over the simulated link
#   callgrind  scripts/bench-callgrind.sh (instructions per 4 KiB WRITE and
#              per 64 B SEND)
# Every process runs on one lcore (-l 0), one after the other.
#
#   scripts/bench-transport.sh [--build-dir DIR] [--duration S] [--warmup S]
#                              [--qps N] [--json FILE] [--no-callgrind] [--no-build]
#
# Prints a table and writes the JSON lines of every run (default
# DIR/bench-transport.json). Needs root (EAL). Defaults take about 40 s.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
duration=3
warmup=0.5
qps=1
json_out=
do_build=1
callgrind=1
usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --qps) qps=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --no-callgrind) callgrind=0; shift ;;
    --no-build) do_build=0; shift ;;
    -h|--help) usage ;;
    *) echo "bench-transport.sh: unknown option $1" >&2; usage ;;
  esac
done
[ -n "$json_out" ] || json_out=$build_dir/bench-transport.json
[ "$(id -u)" = 0 ] || { echo "bench-transport.sh: needs root (DPDK EAL)" >&2; exit 1; }

if [ "$do_build" = 1 ]; then
  [ -f "$build_dir/build.ninja" ] || meson setup "$build_dir" >/dev/null
  ninja -C "$build_dir" -j2 bench/uroce-engine-bench bench/uroce-raw-bench >/dev/null
fi
tb=$build_dir/bench/uroce-engine-bench
rb=$build_dir/bench/uroce-raw-bench

mkdir -p "$(dirname "$json_out")"
: >"$json_out"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
limit=$(awk -v u="$warmup" -v d="$duration" 'BEGIN { printf "%d", 4 * (u + d) + 20 }')

for s in 64 4096; do
  echo "raw ring $s B ..." >&2
  timeout -k 2 "$limit" "$rb" --role ring-selftest --test stream --size "$s" \
    --duration "$duration" --warmup "$warmup" --lcore 0 --json "$json_out.tmp" >/dev/null
  cat "$json_out.tmp" >>"$json_out"
done
for link in ring sim; do
  for w in "send 64" "write 65536"; do
    set -- $w
    echo "transport $link: $1 $2 B ..." >&2
    timeout -k 2 "$limit" "$tb" --link "$link" --op "$1" --size "$2" --active "$qps" \
      --duration "$duration" --warmup "$warmup" --lcore 0 >>"$json_out" \
      || echo "bench-transport.sh: $link $1 run failed" >&2
  done
done
rm -f "$json_out.tmp"
if [ "$callgrind" = 1 ]; then
  scripts/bench-callgrind.sh --build-dir "$build_dir" --no-build --json "$json_out" >/dev/null
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

/usr/bin/python3 - "$json_out" "$load_before" "$load_after" <<'EOF'
import json, sys

path, before, after = sys.argv[1:4]
lines = [json.loads(l) for l in open(path) if l.startswith("{")]
raw = {r["payload_bytes"]: r["stream"] for r in lines if r.get("bench") == "uroce-raw"}
print(f"load average: {before} before, {after} after")
print(f"{'link':<6}{'workload':<12}{'Mmsg/s':>9}{'payload Gb/s':>14}{'vs raw':>9}  notes")
for r in lines:
    if r.get("bench") != "uroce-engine":
        continue
    name = f"{r['op']}{r['size']}"
    mmsgs = r["msgs_per_s"] / 1e6
    if r["op"] == "send":
        base = raw.get(64, {}).get("mpps")
        ratio = mmsgs / base if base else None
        what = "msg/s / raw 64 B pps"
    else:
        base = raw.get(4096, {}).get("payload_gbps")
        ratio = r["payload_gbps"] / base if base else None
        what = "Gb/s / raw 4 KiB Gb/s"
    ok = r["errors"] == 0 and r["verified"] and r["completions"] > 0
    note = what if ok else f"FAILED: errors {r['errors']}, verified {r['verified']}"
    rs = f"{ratio:.3f}" if ratio is not None else "-"
    print(f"{r['link']:<6}{name:<12}{mmsgs:>9.3f}{r['payload_gbps']:>14.2f}{rs:>9}  {note}")
for s, st in sorted(raw.items()):
    print(f"{'ring':<6}{'raw ' + str(s):<12}{'':>9}{st['payload_gbps']:>14.2f}"
          f"{'1':>9}  uroce-raw-bench ring self-test, {st['mpps']:.3f} Mpps")
for r in lines:
    if r.get("bench") == "uroce-engine-callgrind":
        print(f"instructions per message: 4 KiB WRITE {r['write4k_ir_per_message']:.0f}, "
              f"64 B SEND {r['send64_ir_per_message']:.0f}; per frame x raw "
              f"{r['write4k_frame_ratio_to_raw']:.2f} / {r['send64_frame_ratio_to_raw']:.2f}")
EOF
echo "JSON lines: $json_out" >&2
