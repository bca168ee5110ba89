#!/usr/bin/env bash
# Must-show 1 of issue 16 (docs/dc.md, "First message"): what the first
# message to a new DCT costs, against the DC steady state and RC's, in one
# run. Two uroced daemons joined by memif (A: the server, EAL lcore 0; B:
# the client, lcore 1), uroce_dc_bench (apps/examples/dc_bench.cpp)
# through uroce-run: K new DCTs per operation (a SEND of 64 B, then a
# WRITE of 4 KiB), M RC and M DC steady messages per round. By hand, not in
# CI.
#
#   scripts/dc-bench.sh [--build-dir DIR] [--rounds K] [--per M]
#                       [--poll backoff|busy] [--spin] [--runs N]
#                       [--device-keys "K=V;K=V"] [--json FILE] [--no-build]
#                       [--keep]
#
# --spin makes the programs poll their CQ without yielding the CPU (two
# daemons and two programs share the 2 cores either way). --device-keys
# adds keys to both devices (e.g. "dc_idle_disconnect_us=100"). Each of
# --runs N runs starts fresh daemons. Prints the program's lines and the
# server's DC pool (`uroce-ctl --json qps`: contexts opened and retired),
# and writes every run's JSON lines with the load average before and after
# to --json (default /tmp/dc-bench-DATE-TIME.json). --poll busy is
# no use on 2 cores: two busy daemons beside two programs took RTTs to
# ~11 ms and an RC QP to retry exceeded. Needs root.
set -euo pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$SCRIPT_DIR/.."

build_dir=build
rounds=100
per=10
poll=backoff
spin=()
runs=1
keys=
json_out=
do_build=1
keep=0
usage() { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --per) per=$2; shift 2 ;;
    --poll) poll=$2; shift 2 ;;
    --spin) spin=(--spin); shift ;;
    --runs) runs=$2; shift 2 ;;
    --device-keys) keys=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --keep) keep=1; shift ;;
    *) usage ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "dc-bench.sh: needs root (DPDK EAL)" >&2; exit 1; }
if [ "$do_build" = 1 ]; then
  ninja -C "$build_dir" apps/uroced/uroced apps/uroce-ctl/uroce-ctl apps/examples/uroce_dc_bench \
    verbs-provider/liburoce-rdmav34.so verbs-provider/liburoce-preload.so >/dev/null
fi

# shellcheck source=lib/uroce-env.sh
source "$SCRIPT_DIR/lib/uroce-env.sh"
# shellcheck source=lib/uroce-verbs.sh
source "$SCRIPT_DIR/lib/uroce-verbs.sh"
# shellcheck disable=SC2034 # read by uroce-env.sh's cleanup
UROCE_KEEP=$keep
uroce_env_init dcb
uroce_find_tools "$(realpath "$build_dir")"
BENCH=$(realpath "$build_dir")/apps/examples/uroce_dc_bench
# Outside the work dir, which the exit trap removes.
[ -n "$json_out" ] || json_out=${TMPDIR:-/tmp}/dc-bench-$(date +%Y%m%d-%H%M%S).json
: >"$json_out.tmp"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "dc-bench.sh: load average before: $load_before; work dir $UROCE_TMP" >&2

device() { # MAC IPV4 PORT
  local d="name=uroce0;mac=$1;ipv4=$2;mtu=9000;port=$3"
  [ -n "$keys" ] && d+=";$keys"
  echo "$d"
}

failures=0
for run in $(seq 1 "$runs"); do
  a=run$run-a b=run$run-b
  # A is the memif server and starts first (a memif client does not retry
  # a refused connection).
  sock=$UROCE_TMP/memif-$run.sock
  mp="socket=$sock,socket-abstract=no,id=0,bsize=9216"
  uroce_daemon_start "$a" --lcore 0 --poll "$poll" -- \
    --device "$(device 02:00:00:dc:00:01 10.216.0.1 "net_memif0,role=server,$mp")"
  uroce_daemon_start "$b" --lcore 1 --poll "$poll" -- \
    --device "$(device 02:00:00:dc:00:02 10.216.0.2 "net_memif0,role=client,$mp")"
  uroce_next_port port
  ra=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[$a]}")
  rb=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[$b]}")
  st=0
  uroce_pair "dc-bench-$run" 300 "$port" - - -- \
    "${ra[@]}" "$BENCH" -p "$port" -k "$rounds" "${spin[@]}" ::: \
    "${rb[@]}" "$BENCH" -p "$port" -k "$rounds" -m "$per" "${spin[@]}" 127.0.0.1 || st=1
  cat "$UROCE_SRV_OUT" "$UROCE_CLI_OUT" | grep -v '^dc_bench_json'
  if [ "$st" = 0 ] && grep -qx 'dc_bench: all passed' "$UROCE_CLI_OUT" &&
    grep -qx 'dc_bench: all passed' "$UROCE_SRV_OUT"; then
    grep '^dc_bench_json' "$UROCE_CLI_OUT" | sed "s/^dc_bench_json {/{\"run\":$run,/" \
      >>"$json_out.tmp"
  else
    UROCE_WHY="the programs did not both pass"
    st=1
  fi
  uroce_verdict "uroce_dc_bench run $run: first message vs steady state" "$st" || true
  [ "$st" = 0 ] || failures=$((failures + 1))
  # The server's DC pool: contexts opened against the new DCTs the run
  # talked to (reconnects after idleness add to it).
  "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[$a]}" --json qps >"$UROCE_TMP/$a.qps.json" || true
  /usr/bin/python3 - "$UROCE_TMP/$a.qps.json" <<'EOF' || true
import json, sys
for d in json.load(open(sys.argv[1])).get("devices", []):
    pool = (d.get("dc") or {}).get("pool")
    if pool:
        print("dc-bench.sh: server DC pool", json.dumps(pool))
EOF
  uroce_daemon_stop "$b" || true
  uroce_daemon_stop "$a" || true
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
/usr/bin/python3 - "$json_out.tmp" "$json_out" "$load_before" "$load_after" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
json.dump({"load_before": sys.argv[3], "load_after": sys.argv[4], "runs": rows},
          open(sys.argv[2], "w"), indent=1)
for r in rows:
    f, s, rc = r["dc_first"], r["dc_steady"], r["rc"]
    print(f"run {r['run']} {r['op']:5} {r['size']:5} B: first p50 {f['p50']:8.1f} us  "
          f"DC steady p50 {s['p50']:8.1f}  RC p50 {rc['p50']:8.1f}  first/steady "
          f"{f['p50'] / s['p50']:.2f}  first/RC {f['p50'] / rc['p50']:.2f}  "
          f"(p99 {f['p99']:.1f} / {s['p99']:.1f} / {rc['p99']:.1f})  cold {r['cold_us']:.0f} us")
EOF
rm -f "$json_out.tmp"
echo "dc-bench.sh: load average after: $load_after; JSON in $json_out" >&2
[ "$failures" = 0 ]
