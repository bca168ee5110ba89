#!/usr/bin/env bash
# The transport benchmark (docs/benchmarks.md, "Transport benchmark"), with
# the raw DPDK baseline measured in the same run for the ratios:
#   raw        uroce-raw-bench ring self-test, 64 B and 4096 B (stream only)
#   transport  uroce-transport-bench send64 and write64k, over the net_ring
#              pair and over the simulated link
#   callgrind  scripts/bench-callgrind.sh (instructions per packet, 4 KiB WRITE)
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
  ninja -C "$build_dir" -j2 bench/uroce-transport-bench bench/uroce-raw-bench >/dev/null
fi
tb=$build_dir/bench/uroce-transport-bench
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
  echo "transport $link: send64, write64k ..." >&2
  timeout -k 2 "$limit" "$tb" --link "$link" --workload send64 --workload write64k \
    --qps "$qps" --duration "$duration" --warmup "$warmup" --lcore 0 \
    --json "$json_out" >/dev/null || echo "bench-transport.sh: $link run failed" >&2
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
print(f"{'link':<6}{'workload':<10}{'Mmsg/s':>9}{'Mpps data':>11}{'payload Gb/s':>14}"
      f"{'vs raw':>9}  notes")
for r in lines:
    if r.get("bench") != "uroce-transport":
        continue
    m, s, c = r["messages"], r["stream"], r["counters"]
    if r["workload"] == "send64":
        base = raw.get(64, {}).get("mpps")
        ratio = m["mmsgs_per_s"] / base if base else None
        what = "msg/s / raw 64 B pps"
    else:
        base = raw.get(4096, {}).get("payload_gbps")
        ratio = m["payload_gbps"] / base if base else None
        what = "Gb/s / raw 4 KiB Gb/s"
    note = what if r["ok"] else "FAILED: " + r["error"]
    if c["retransmits"]:
        note += f", {c['retransmits']} retransmits"
    rs = f"{ratio:.3f}" if ratio is not None else "-"
    print(f"{r['transport']:<6}{r['workload']:<10}{m['mmsgs_per_s']:>9.3f}{s['mpps']:>11.3f}"
          f"{m['payload_gbps']:>14.2f}{rs:>9}  {note}")
for s, st in sorted(raw.items()):
    print(f"{'ring':<6}{'raw ' + str(s):<10}{'':>9}{st['mpps']:>11.3f}{st['payload_gbps']:>14.2f}"
          f"{'1':>9}  uroce-raw-bench ring self-test")
for r in lines:
    if r.get("bench") == "uroce-transport-callgrind":
        print(f"instructions/packet (4 KiB WRITE): TX {r['ir_tx_per_packet']:.0f} "
              f"(x{r['ratio_tx_to_raw']:.2f} raw), RX {r['ir_rx_per_packet']:.0f} "
              f"(x{r['ratio_rx_to_raw']:.2f}), ACK RX {r['ir_ack_rx_per_ack']:.0f}, "
              f"per message {r['ir_per_message']:.0f} (x{r['ratio_message_to_raw']:.2f}); "
              f"raw TX+RX {r['raw_ir_per_packet']:.0f}")
EOF
echo "JSON lines: $json_out" >&2
