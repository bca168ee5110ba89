#!/usr/bin/env bash
# Instructions per message of the daemon's engine (docs/benchmarks.md,
# "Instructions per message"), counted by callgrind, so the figure repeats on
# a noisy VM: uroce-engine-bench runs a fixed count of signaled 4 KiB RDMA
# WRITEs (path MTU 4096: one packet and one ACK per message) and of 64 B
# SENDs (B keeping receives posted) between two Vnics on one lcore over a
# net_ring pair; callgrind counts measured_window() alone: both Vnics' poll()
# (RX, doorbells, timers, scheduler, flush, CQ rings), the WQE writes and
# doorbells of the "application", and its CQ polling. In the same run, the
# raw DPDK baseline: uroce-raw-bench's ring self-test at 4096 B (TX and RX of
# plain UDP frames), for the ratio per frame. A second table splits each
# message's instructions by part of the path (CRC, copy, port, ring, wire,
# transport, engine, other: scripts/lib/callgrind_parts.py).
#
#   scripts/bench-callgrind.sh [--build-dir DIR] [--count N] [--json FILE] [--no-build]
#                              [--policy LIST]
#
# --policy homa,dcqcn,isolation,stages: also runs both workloads with that
# policy on in both hosts (uroce-engine-bench --policy: the Homa-like
# scheduler, DCQCN, isolation auto, the stage stamps), one more line each in
# the first table.
#
# Prints a table; with --json appends one JSON line
# {"bench":"uroce-engine-callgrind",...}. Needs root (EAL) and valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
script_dir=$PWD/scripts

build_dir=build
count=20000
json_out=
do_build=1
policies=
usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --policy) policies=$(echo "$2" | tr ',' ' '); shift 2 ;;
    -h|--help) usage ;;
    *) echo "bench-callgrind.sh: unknown option $1" >&2; usage ;;
  esac
done
command -v valgrind >/dev/null || { echo "bench-callgrind.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-callgrind.sh: needs root (DPDK EAL)" >&2; exit 1; }

if [ "$do_build" = 1 ]; then
  [ -f "$build_dir/build.ninja" ] || meson setup "$build_dir" >/dev/null
  ninja -C "$build_dir" -j2 bench/uroce-engine-bench bench/uroce-raw-bench >/dev/null
fi
eb=$build_dir/bench/uroce-engine-bench
rb=$build_dir/bench/uroce-raw-bench
for b in "$eb" "$rb"; do
  [ -x "$b" ] || { echo "bench-callgrind.sh: $b missing (run without --no-build)" >&2; exit 1; }
done

work=$(mktemp -d "/tmp/uroce-callgrind-$$.XXXXXX")
trap 'rm -rf "$work"' EXIT

for p in $policies; do
  case "$p" in
    homa|dcqcn|isolation|stages) ;;
    *) echo "bench-callgrind.sh: unknown policy $p (homa, dcqcn, isolation, stages)" >&2; exit 2 ;;
  esac
done
for p in off $policies; do
  for w in "write 4096" "send 64"; do
    set -- $w
    # The files of the run with every policy off keep their names.
    f=$1
    [ "$p" = off ] || f=$1-$p
    echo "callgrind: engine, $count x $2 B $1, policy $p ..." >&2
    valgrind --tool=callgrind --callgrind-out-file="$work/$f.cg" --collect-atstart=no \
      '--toggle-collect=*measured_window*' \
      "$eb" --qps 0 --op "$1" --size "$2" --warmup 0.01 --count "$count" --memory 256 \
      --policy "$p" >"$work/$f.json" 2>"$work/$f.log" || {
        echo "bench-callgrind.sh: engine run failed; end of its log:" >&2
        tail -n 5 "$work/$f.log" >&2; exit 1; }
  done
done

echo "callgrind: raw baseline, ring self-test 4096 B ..." >&2
valgrind --tool=callgrind --callgrind-out-file="$work/raw.cg" \
  --collect-atstart=no '--toggle-collect=uroce::bench::ring_stream*' \
  "$rb" --role ring-selftest --test stream --size 4096 --warmup 0 \
  --duration 0.5 --mbufs 2047 --memory 256 --log-level error \
  >"$work/raw.json" 2>"$work/raw.log" || {
    echo "bench-callgrind.sh: raw run failed; end of its log:" >&2
    tail -n 5 "$work/raw.log" >&2; exit 1; }

/usr/bin/python3 - "$work" "$json_out" "$script_dir/lib/callgrind_parts.py" $policies <<'PY'
import json, re, subprocess, sys

work, json_out, parts_py = sys.argv[1], sys.argv[2], sys.argv[3]
policies = sys.argv[4:]

def collected(log):
    m = re.search(r"Collected : ([0-9]+)", open(log).read())
    if not m:
        sys.exit(f"bench-callgrind: no callgrind total in {log}")
    return int(m.group(1))

def one_json(path):
    return json.loads([l for l in open(path) if l.startswith("{")][-1])

raw = one_json(f"{work}/raw.json")
if not raw.get("ok"):
    sys.exit(f"bench-callgrind: the raw run failed: {raw.get('error')}")
raw_pp = collected(f"{work}/raw.log") / raw["stream"]["packets"]
line = {"bench": "uroce-engine-callgrind", "schema": 2, "transport": "ring",
        "raw_ir_per_frame": round(raw_pp, 1), "raw_frames": raw["stream"]["packets"]}
print(f"{'workload':<26}{'Ir/message':>11}{'Ir/frame':>10}{'frame x raw':>12}")
for op, size, name in (("write", 4096, "write4k"), ("send", 64, "send64")):
    r = one_json(f"{work}/{op}.json")
    if r.get("errors") or not r.get("verified") or not r.get("completions"):
        sys.exit(f"bench-callgrind: the {name} run failed: {r}")
    ir = collected(f"{work}/{op}.log")
    per_msg = ir / r["completions"]
    per_frame = ir / r["frames"]
    print(f"{name + ' (both ends)':<26}{per_msg:>11.0f}{per_frame:>10.0f}{per_frame / raw_pp:>12.2f}")
    line[f"{name}_messages"] = r["completions"]
    line[f"{name}_frames"] = r["frames"]
    line[f"{name}_ir_per_message"] = round(per_msg, 1)
    line[f"{name}_ir_per_frame"] = round(per_frame, 1)
    line[f"{name}_frame_ratio_to_raw"] = round(per_frame / raw_pp, 3)
for p in policies:
    for op, name in (("write", "write4k"), ("send", "send64")):
        r = one_json(f"{work}/{op}-{p}.json")
        if r.get("errors") or not r.get("verified") or not r.get("completions"):
            sys.exit(f"bench-callgrind: the {name} run with {p} failed: {r}")
        ir = collected(f"{work}/{op}-{p}.log")
        per_msg = ir / r["completions"]
        per_frame = ir / r["frames"]
        label = f"{name} {p}"
        print(f"{label:<26}{per_msg:>11.0f}{per_frame:>10.0f}{per_frame / raw_pp:>12.2f}")
        line[f"{name}_{p}_ir_per_message"] = round(per_msg, 1)
        line[f"{name}_{p}_ir_per_frame"] = round(per_frame, 1)
print(f"{'raw ring TX+RX, 4 KiB':<26}{'':>11}{raw_pp:>10.0f}{1:>12.2f}")
# Where each message's instructions go (lib/callgrind_parts.py).
print()
print(f"{'Ir/message by part':<20}" + "".join(f"{n:>10}" for n in ("write4k", "send64")))
shares = {}
for op, name in (("write", "write4k"), ("send", "send64")):
    out = subprocess.run(["/usr/bin/python3", parts_py, f"{work}/{op}.cg",
                          str(line[f"{name}_messages"])], capture_output=True, text=True,
                         check=True).stdout
    shares[name] = json.loads(out)
    line[f"{name}_ir_by_part"] = shares[name]
for part in shares["write4k"]:
    print(f"{part:<20}" + "".join(
        f"{shares[n][part]:>7.0f} {100 * shares[n][part] / line[n + '_ir_per_message']:>2.0f}%"
        for n in ("write4k", "send64")))
print(json.dumps(line))
if json_out:
    with open(json_out, "a") as f:
        f.write(json.dumps(line) + "\n")
PY
