#!/usr/bin/env bash
# Instructions per packet of the RC transport (docs/benchmarks.md,
# "Transport benchmark"), counted by callgrind, so the figure repeats on a
# noisy VM: a fixed count of 4 KiB RDMA WRITEs (path MTU 4096: one packet
# per message, one ACK per message) over a net_ring pair, with the engine
# phases run through named functions (uroce-transport-bench --phased):
#
#   TX  region_tx_requester  A: pump_tx (requester builds the WRITE, gathers
#                            the payload from the MR), MbufTxSink, tx_burst
#   RX  region_rx_responder  B: rx_burst, parse_roce (ICRC), QpDemux,
#                            responder (checks, copy into the MR), the ACK
#                            it builds inline, mbuf free
#   ACK region_rx_completer  A: rx_burst, parse, completer, send completion
#   (region_tx_responder: B's pump/flush, near zero: ACKs leave inline)
#
# and, in the same run, the raw DPDK baseline: uroce-raw-bench's ring
# self-test at 4096 B (one function, ring_stream, doing TX and RX of plain
# UDP frames), for the ratio.
#
#   scripts/bench-callgrind.sh [--build-dir DIR] [--count N] [--json FILE] [--no-build]
#
# Prints a table; with --json appends one JSON line
# {"bench":"uroce-transport-callgrind",...}. Needs root (EAL) and valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
count=20000
json_out=
do_build=1
usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) usage ;;
    *) echo "bench-callgrind.sh: unknown option $1" >&2; usage ;;
  esac
done
command -v valgrind >/dev/null || { echo "bench-callgrind.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-callgrind.sh: needs root (DPDK EAL)" >&2; exit 1; }

if [ "$do_build" = 1 ]; then
  [ -f "$build_dir/build.ninja" ] || meson setup "$build_dir" >/dev/null
  ninja -C "$build_dir" -j2 bench/uroce-transport-bench bench/uroce-raw-bench >/dev/null
fi
tb=$build_dir/bench/uroce-transport-bench
rb=$build_dir/bench/uroce-raw-bench
for b in "$tb" "$rb"; do
  [ -x "$b" ] || { echo "bench-callgrind.sh: $b missing (run without --no-build)" >&2; exit 1; }
done

work=$(mktemp -d "/tmp/uroce-callgrind-$$.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Small pools: valgrind makes EAL's memory set-up slow, and 4 KiB frames
# in flight never need more.
eal=(--mbufs 2047 --memory 256 --log-level error)

regions=(region_tx_requester region_rx_responder region_tx_responder region_rx_completer)
toggles=()
for r in "${regions[@]}"; do toggles+=("--toggle-collect=*${r}<*"); done

echo "callgrind: transport, $count x 4 KiB WRITE ..." >&2
valgrind --tool=callgrind --callgrind-out-file="$work/transport.cg" \
  --collect-atstart=no "${toggles[@]}" \
  "$tb" --workload write4k --count "$count" --phased "${eal[@]}" \
  >"$work/transport.json" 2>"$work/transport.log" || {
    echo "bench-callgrind.sh: transport run failed; end of its log:" >&2
    tail -n 5 "$work/transport.log" >&2; exit 1; }
callgrind_annotate --inclusive=yes --threshold=100 "$work/transport.cg" \
  >"$work/transport.txt" 2>/dev/null

echo "callgrind: raw baseline, ring self-test 4096 B ..." >&2
valgrind --tool=callgrind --callgrind-out-file="$work/raw.cg" \
  --collect-atstart=no '--toggle-collect=uroce::bench::ring_stream*' \
  "$rb" --role ring-selftest --test stream --size 4096 --warmup 0 \
  --duration 0.5 "${eal[@]}" >"$work/raw.json" 2>"$work/raw.log" || {
    echo "bench-callgrind.sh: raw run failed; end of its log:" >&2
    tail -n 5 "$work/raw.log" >&2; exit 1; }

/usr/bin/python3 - "$work" "$json_out" "${regions[@]}" <<'EOF'
import json, re, sys

work, json_out, regions = sys.argv[1], sys.argv[2], sys.argv[3:]

def collected(log):
    m = re.search(r"Collected : ([0-9]+)", open(log).read())
    return int(m.group(1)) if m else None

def one_json(path):
    lines = [l for l in open(path) if l.startswith("{")]
    return json.loads(lines[-1])

# Inclusive cost per region: callgrind_annotate lists a function once per
# source file its code came from; the largest line is the whole function.
incl = {r: 0 for r in regions}
for line in open(f"{work}/transport.txt"):
    m = re.match(r"\s*([0-9,]+)\s+\(.*?\)\s+(.*)$", line)
    if not m:
        continue
    for r in regions:
        if f"{r}<" in m.group(2):
            incl[r] = max(incl[r], int(m.group(1).replace(",", "")))
total = collected(f"{work}/transport.log")
t = one_json(f"{work}/transport.json")
raw = one_json(f"{work}/raw.json")
raw_total = collected(f"{work}/raw.log")
if not t.get("ok") or not raw.get("ok"):
    sys.exit(f"bench-callgrind: a run failed: {t.get('error')} / {raw.get('error')}")
req = t["frames"]["requests"]
acks = t["frames"]["acks"]
msgs = t["messages"]["count"]
if t["counters"]["retransmits"] or req != msgs:
    print("bench-callgrind: warning: retransmissions; per-packet figures include them",
          file=sys.stderr)
if total and abs(sum(incl.values()) - total) > 0.01 * total:
    print(f"bench-callgrind: warning: regions sum {sum(incl.values())} != collected {total}",
          file=sys.stderr)
tx = incl["region_tx_requester"] / req
rx = incl["region_rx_responder"] / req
ack_rx = incl["region_rx_completer"] / acks if acks else 0.0
ack_tx = incl["region_tx_responder"] / acks if acks else 0.0
per_msg = total / msgs
raw_pp = raw_total / raw["stream"]["packets"]
print(f"{'path':<34}{'Ir/packet':>12}{'x raw':>8}")
rows = [("TX  requester+sink+tx_burst (A)", tx), ("RX  parse+responder+ACK (B)", rx),
        ("ACK completer RX (A, per ACK)", ack_rx), ("ACK pump/flush (B, per ACK)", ack_tx),
        ("all regions, per 4 KiB WRITE", per_msg), ("raw ring TX+RX, per 4 KiB frame", raw_pp)]
for name, v in rows:
    print(f"{name:<34}{v:>12.0f}{v / raw_pp:>8.2f}")
line = {"bench": "uroce-transport-callgrind", "schema": 1, "transport": "ring",
        "payload_bytes": 4096, "messages": msgs, "request_frames": req, "ack_frames": acks,
        "ir_tx_per_packet": round(tx, 1), "ir_rx_per_packet": round(rx, 1),
        "ir_ack_rx_per_ack": round(ack_rx, 1), "ir_ack_tx_per_ack": round(ack_tx, 1),
        "ir_per_message": round(per_msg, 1), "raw_ir_per_packet": round(raw_pp, 1),
        "raw_packets": raw["stream"]["packets"],
        "ratio_tx_to_raw": round(tx / raw_pp, 3), "ratio_rx_to_raw": round(rx / raw_pp, 3),
        "ratio_message_to_raw": round(per_msg / raw_pp, 3),
        "retransmits": t["counters"]["retransmits"]}
print(json.dumps(line))
if json_out:
    with open(json_out, "a") as f:
        f.write(json.dumps(line) + "\n")
EOF
