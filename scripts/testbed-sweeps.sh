#!/usr/bin/env bash
# Regenerates the paper reproduction in docs/testbed-paper.md: the sweeps over the
# routing-loop scenario (TBB-parallel, one seed per point) and the
# transient-loop runs, as CSV and Markdown tables and PNG plots in
# docs/testbed/. Takes several minutes on 2 cores (the minimum-rate
# bisection runs each point for up to a second of virtual time).
#
#   scripts/testbed-sweeps.sh            # BUILD_DIR=build THREADS=2
#   BUILD_DIR=build-x THREADS=1 scripts/testbed-sweeps.sh
#   PARTS="ttd transient" scripts/testbed-sweeps.sh   # skip the long min-rate part
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
THREADS=${THREADS:-2}
SEED=${SEED:-1}
PARTS=${PARTS:-"min-rate ttd transient"}
want() { [[ " $PARTS " == *" $1 "* ]]; }
out=docs/testbed
mkdir -p "$out"
[ -f "$BUILD_DIR/build.ninja" ] || meson setup "$BUILD_DIR" -Dtests=true
ninja -C "$BUILD_DIR" testbed/uroce-testbed
bin="$BUILD_DIR/testbed/uroce-testbed"
common=(--threads "$THREADS" --seed "$SEED")

py=/usr/bin/python3
if want min-rate; then
echo "== minimum deadlocking rate, loops 2..4 x TTL 16..128 (alpha 1/16, 1 s horizon)"
"$bin" sweep min-rate --loops 2,3,4 --ttls 16,32,64,128 --alpha 1/16 \
  --horizon-ms 1000 --tolerance 0.005 "${common[@]}" \
  --csv "$out/min_rate.csv" --markdown "$out/min_rate.md"
$py scripts/plot_testbed.py --min-rate "$out/min_rate.csv" --out "$out"
fi

if want ttd; then
echo "== time to deadlock: rate x alpha (TTL 64)"
"$bin" sweep time-to-deadlock --loop 2 --ttls 64 \
  --alphas 1/16,1/8,1/4,1/2,1,2,4,8 --rates 1.5,2,3,5,10,20,40 \
  --horizon-ms 200 "${common[@]}" \
  --csv "$out/ttd_rate_alpha.csv" --markdown "$out/ttd_rate_alpha.md"

echo "== time to deadlock: rate x TTL (alpha 1/16)"
"$bin" sweep time-to-deadlock --loop 2 --ttls 16,32,64,128 --alphas 1/16 \
  --rates 1.5,2,3,5,10,20,40 --horizon-ms 200 "${common[@]}" \
  --csv "$out/ttd_rate_ttl.csv" --markdown "$out/ttd_rate_ttl.md"
$py scripts/plot_testbed.py --ttd "$out/ttd_rate_alpha.csv" --by alpha --name ttd_by_alpha --out "$out"
$py scripts/plot_testbed.py --ttd "$out/ttd_rate_ttl.csv" --by ttl --name ttd_by_ttl --out "$out"
fi

if want transient; then
echo "== transient loop, without and with the PFC watchdog"
runs=$(mktemp -d /tmp/uroce-testbed-sweeps.XXXXXX)
trap 'rm -rf "$runs"' EXIT
"$bin" testbed/scenarios/transient_loop.toml --seed "$SEED" --out "$runs/plain" \
  | tee "$out/transient_loop.txt"
"$bin" testbed/scenarios/transient_loop_watchdog.toml --seed "$SEED" --out "$runs/wd" \
  | tee "$out/transient_loop_watchdog.txt"
# Keep the summaries (small) next to the plots; drop the run directories.
cp "$runs/plain/summary.json" "$out/transient_loop.summary.json"
cp "$runs/wd/summary.json" "$out/transient_loop_watchdog.summary.json"
sed -i "s|$runs/plain|out/transient_loop|; s|$runs/wd|out/transient_loop_watchdog|" \
  "$out/transient_loop.txt" "$out/transient_loop_watchdog.txt"

wd_detect=$($py -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["watchdog"]["storms"]; print(s[0]["detected_ns"]/1e6 if s else 0)' \
  "$out/transient_loop_watchdog.summary.json")
formed=$($py -c 'import json,sys; d=json.load(open(sys.argv[1])); l=d["deadlocks"]["list"]; print(l[0]["formed_ns"]/1e6 if l else 0)' \
  "$out/transient_loop.summary.json")
$py scripts/plot_testbed.py --timeseries "$runs/plain/timeseries.csv" "$runs/wd/timeseries.csv" \
  --labels "no watchdog,watchdog 10 ms/10 ms" --name transient_loop \
  --marks "deadlock@$formed,route fixed@5,watchdog@$wd_detect" --out "$out"
fi
echo "done: $out"
