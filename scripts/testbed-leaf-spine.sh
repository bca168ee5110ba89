#!/usr/bin/env bash
# Issue 33, must-show 2, in the testbed (docs/lossy-figures.md
# "Leaf-spine"): testbed/scenarios/lossy_leaf_spine.toml, 16 real-engine
# hosts on a 4-way ECMP leaf-spine, the [workload] of W4 and W5 at 50 % and
# 80 % load, the same seeds side by side for each transport:
#   gbn+pfc    go-back-N with PFC on priority 3 (as shipped)
#   sr         selective repeat, PFC off
#   sr+spray   selective repeat sprayed over 16 ports, PFC off
#   sr+pfc, sr+spray+pfc  the same with PFC on priority 3 (only in MODES)
# A workload named W+incast is W with incast bursts beside it (INCAST,
# "senders:bytes:every_us", default 8:65536:1000: every millisecond 8
# random hosts each send 64 KiB to a ninth at once).
# Prints a Markdown table of message slowdowns (p50 and p99 overall, p99 of
# the smallest and largest tenth of the sizes), the bursts' completion
# times (p50, p99) and slowdown p99, PFC frames the switches sent, switch
# drops and deadlocks; exits 1 if a run failed its checks (a measured
# message or burst not received, a length, immediate or payload mismatch,
# a PFC frame where PFC is off, or an SR mode's connection left go-back-N
# because the engine's lossy_qps were all taken). A few minutes.
# SCENARIO picks the fabric: lossy_leaf_spine_8.toml is 32 hosts on an
# 8-way ECMP leaf-spine (about four times as long to run),
# lossy_leaf_spine_2to1.toml the same hosts under four spines (2:1
# oversubscribed; its header converts host load to uplink load).
#
#   scripts/testbed-leaf-spine.sh                 # BUILD_DIR=build
#   TESTBED=/path/uroce-testbed ...  # one built already (scripts/lib/testbed-bin.sh)
#   SEEDS="1 2 3" WORKLOADS="w4 w4+incast" LOADS="0.8" scripts/testbed-leaf-spine.sh
#   MODES="gbn+pfc sr+pfc sr+spray+pfc" scripts/testbed-leaf-spine.sh
#   SCENARIO=testbed/scenarios/lossy_leaf_spine_8.toml scripts/testbed-leaf-spine.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
SEEDS=${SEEDS:-"1 2 3"}
WORKLOADS=${WORKLOADS:-"w4 w5"}
LOADS=${LOADS:-"0.5 0.8"}
MODES=${MODES:-"gbn+pfc sr sr+spray"}
INCAST=${INCAST:-8:65536:1000}
# shellcheck source=lib/testbed-bin.sh
source scripts/lib/testbed-bin.sh
bin=
uroce_testbed_bin bin
scenario=${SCENARIO:-testbed/scenarios/lossy_leaf_spine.toml}
runs=$(mktemp -d /tmp/uroce-testbed-leaf-spine.XXXXXX)
trap 'rm -rf "$runs"' EXIT

mode_sets() {
  case "$1" in
    gbn+pfc) echo "--set defaults.host.lossy=false" ;;
    sr) echo "--set defaults.host.lossy=true --set pfc.priorities=[]" ;;
    sr+spray)
      echo "--set defaults.host.lossy=true --set pfc.priorities=[] --set defaults.host.spray_paths=16"
      ;;
    sr+pfc) echo "--set defaults.host.lossy=true" ;;
    sr+spray+pfc) echo "--set defaults.host.lossy=true --set defaults.host.spray_paths=16" ;;
  esac
}
for mode in $MODES; do
  [ -n "$(mode_sets "$mode")" ] || { echo "testbed-leaf-spine: unknown mode $mode" >&2; exit 2; }
done

# The --set words of workload W's incast bursts (none for a plain one).
incast_sets() {
  case "$1" in
    *+incast)
      IFS=: read -r senders bytes every <<<"$INCAST"
      echo "--set workload.incast_senders=$senders --set workload.incast_bytes=$bytes" \
        "--set workload.incast_every_us=$every"
      ;;
  esac
}

for w in $WORKLOADS; do
  # W5's messages are ten times longer (up to 29 MB, 23 ms alone at
  # 10 Gb/s): a longer window measures enough of them, and the run needs
  # far longer than the window for the measured ones to finish.
  measure=20
  duration=200
  if [ "${w%+incast}" = w5 ]; then
    measure=60
    duration=2000
  fi
  for load in $LOADS; do
    for mode in $MODES; do
      for seed in $SEEDS; do
        # shellcheck disable=SC2046 # the sets are words on purpose
        "$bin" "$scenario" --seed "$seed" --out "$runs/$w-$load-$mode-$seed" $(mode_sets "$mode") \
          $(incast_sets "$w") --set "workload.distribution=\"../workloads/${w%+incast}.csv\"" \
          --set "workload.load=$load" \
          --set "workload.measure_ms=$measure" --set "scenario.duration_ms=$duration" >/dev/null
      done
    done
  done
done

/usr/bin/python3 - "$runs" "$WORKLOADS" "$LOADS" "$SEEDS" "$MODES" <<'PY'
import json, sys

runs, workloads, loads, seeds, modes = (sys.argv[1], sys.argv[2].split(), sys.argv[3].split(),
                                        sys.argv[4].split(), sys.argv[5].split())
failed = []


def num(x, digits):
    return "-" if x is None else f"{x:.{digits}f}"


print("| workload | load | transport | seed | messages | slowdown p50 | p99 | p99 smallest 10 % | "
      "p99 largest 10 % | incast us p50 | p99 | incast slowdown p99 | PFC frames | switch drops | "
      "deadlocks |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for w in workloads:
    for load in loads:
        for mode in modes:
            for seed in seeds:
                name = f"{w}-{load}-{mode}-{seed}"
                d = json.load(open(f"{runs}/{name}/summary.json"))
                wl = d["workload"]
                sd = wl["slowdown"]
                c = wl["counts"]
                pfc = sum(s.get("pfc_frames_sent", 0) for s in d["switches"])
                drops = sum(sum(s["drops_packets"].values()) for s in d["switches"])
                dl = len(d["deadlocks"]["list"])
                bad = [k for k in ("length_mismatch", "imm_mismatch", "payload_mismatch",
                                   "send_errors", "recv_errors") if c[k]]
                if c["measured_done"] != c["measured"] or bad:
                    failed.append(f"{name}: incomplete or mismatched messages")
                inc = wl.get("incast")
                if inc is not None and inc["done"] != inc["measured"]:
                    failed.append(f"{name}: {inc['measured'] - inc['done']} bursts not done")
                cu = inc["completion_us"] if inc else {}
                # Go-back-N hosts have no lossy counters; SR hosts must.
                if mode.startswith("sr"):
                    gbn = sum(h["lossy"]["sr_pool_empty"] for h in d["engine"]["hosts"])
                    if gbn != 0:
                        failed.append(f"{name}: {gbn} RC QPs left go-back-N (lossy_qps full)")
                if not mode.endswith("+pfc") and pfc != 0:
                    failed.append(f"{name}: {pfc} PFC frames with PFC off")
                b = sd["buckets"]
                print(f"| {w} | {load} | {mode} | {seed} | {sd['overall']['count']} | "
                      f"{num(sd['overall']['p50'], 2)} | {num(sd['overall']['p99'], 1)} | "
                      f"{num(b[0]['p99'], 1)} | {num(b[-1]['p99'], 1)} | "
                      f"{num(cu.get('p50'), 0)} | {num(cu.get('p99'), 0)} | "
                      f"{num(inc['slowdown']['p99'] if inc else None, 1)} | {pfc} | {drops} | {dl} |")
if failed:
    print("\nFAILED:\n  " + "\n  ".join(failed))
    sys.exit(1)
PY
