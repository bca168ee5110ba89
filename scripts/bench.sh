#!/usr/bin/env bash
# uroce against the raw DPDK baseline, on the same links in the same run
# (docs/benchmarks.md, docs/performance.md).
#
# Raw: UDP/IPv4 frames of 64 B and 4 KiB payload, streamed (Mpps, Gb/s at
# the receiver) and ping-ponged (RTT median and p99), over net_ring (one
# process), net_memif (two processes), and net_af_packet and net_af_xdp
# (two processes in two network namespaces joined by a veth; af_xdp at MTU
# 3504, busy_budget=0 as uroced's af_xdp ports).
# Stack: UNMODIFIED perftest through uroce-run over the same kind of link
# (memif, af_packet, af_xdp) (bench/stack_bench.sh): ib_write_bw 64 KiB (Gb/s),
# ib_send_bw 64 B (M msg/s), ib_send_lat and ib_read_lat 2 B (median, p99,
# p99.9, max), ib_write_bw -q 16, and UCX's ucx_perftest -t tag_lat 8 B (median, p99, p99.9 and
# overall average; skipped without ucx-utils), in each of --modes: daemon
# (two uroced daemons, one
# lcore each; the daemons' CPU use per point) and embedded (no daemon: each
# perftest runs its own engine, docs/embedded.md; the perftest processes'
# CPU use per point).
#
#   scripts/bench.sh [--build-dir DIR] [--duration S] [--warmup S]
#                    [--sizes "64 4096"] [--transports "ring memif af_packet af_xdp"]
#                    [--json FILE] [--no-build]
#                    [--stack | --no-stack] [--no-raw] [--modes "daemon embedded"]
#                    [--poll auto|busy|backoff|yield]
#                    [--lat-iters N] [--send-iters N] [--ucx-iters N]
#                    [--events auto|on|off] [--pin auto|on|off] [--stages]
#                    [--hugepages N]
#
#   --no-stack / --stack   skip / run the stack points (default: run them on
#                          memif, af_packet and af_xdp when listed in --transports;
#                          ring: daemon mode only, ONE daemon with both devices on
#                          core 0 and both perftest processes on core 1)
#   --no-raw               skip the raw baseline (no ratios then)
#   --modes                the stack's modes, each a stack_bench.sh run per
#                          transport: daemon, embedded (default both)
#   --poll                 the daemons' polling: auto (default), busy, backoff, yield
#   --events, --pin        perftest's -e and taskset placement in daemon mode
#                          (bench/stack_bench.sh; default auto)
#   --hugepages N          memif, af_xdp: make N 2 MiB hugepages free for the run
#                          (default 512; the count is put back at exit; 0: use
#                          what is free; scripts/lib/hugepages.sh). With 512
#                          free, B, the memif client, runs zero-copy, and both
#                          af_xdp sides keep their EAL memory (the UMEM) in
#                          hugepages, in the raw baseline and in the stack
#                          alike; the JSON's meta and the first lines say which
#   --stages               the stack's devices keep stage stamps (docs/tails.md):
#                          a table of each point's stages per side (p99 and the
#                          slowest 1 %'s mean) follows the comparison
#
# Prints the raw table, then the comparison table (per transport and mode:
# raw, uroce, ratio, CPU %) with issue 17's targets for each mode and where
# each stands, then embedded/daemon per metric when both modes ran; writes
# the merged JSON (default DIR/bench.json). Needs root (EAL, network
# namespaces, /dev/infiniband nodes). Raw points take about warmup +
# duration + 1 s each (about a minute in all); the stack takes about 1-2
# minutes per transport and mode. Examples:
#   scripts/bench.sh --build-dir build-bench
#   scripts/bench.sh --transports memif --no-raw --duration 2 --modes embedded
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
duration=3
warmup=0.5
sizes="64 4096"
transports="ring memif af_packet af_xdp"
json_out=
do_build=1
do_stack=1
do_raw=1
modes="daemon embedded"
poll=auto
lat_iters=20000
send_iters=200000
ucx_iters=10000
events=auto
pin=auto
stages=()
hugepages=512
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --transports) transports=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --stack) do_stack=1; shift ;;
    --no-stack) do_stack=0; shift ;;
    --no-raw) do_raw=0; shift ;;
    --modes) modes=$2; shift 2 ;;
    --poll) poll=$2; shift 2 ;;
    --lat-iters) lat_iters=$2; shift 2 ;;
    --send-iters) send_iters=$2; shift 2 ;;
    --ucx-iters) ucx_iters=$2; shift 2 ;;
    --events) events=$2; shift 2 ;;
    --stages) stages=(--stages); shift ;;
    --pin) pin=$2; shift 2 ;;
    --hugepages) hugepages=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "bench.sh: unknown option $1" >&2; usage ;;
  esac
done
[ -n "$json_out" ] || json_out=$build_dir/bench.json
for m in $modes; do
  case "$m" in
    daemon|embedded) ;;
    *) echo "bench.sh: unknown mode $m (daemon, embedded)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench.sh: needs root (DPDK EAL, network namespaces)" >&2; exit 1; }
case "$hugepages" in
  '' | *[!0-9]*) echo "bench.sh: --hugepages takes a count of 2 MiB pages" >&2; exit 2 ;;
esac
# shellcheck source=lib/hugepages.sh
source scripts/lib/hugepages.sh

if [ "$do_build" = 1 ]; then
  [ -f "$build_dir/build.ninja" ] || meson setup "$build_dir" >/dev/null
  ninja -C "$build_dir" -j2 bench/uroce-raw-bench bench/uroce-line-rtt >/dev/null
  if [ "$do_stack" = 1 ]; then
    ninja -C "$build_dir" -j2 apps/uroced/uroced apps/uroce-ctl/uroce-ctl \
      verbs-provider/liburoce-rdmav34.so verbs-provider/liburoce-preload.so \
      apps/uroced/liburoce-engine.so apps/uroced/uroce-embedded >/dev/null
  fi
fi
bin=$build_dir/bench/uroce-raw-bench
[ -x "$bin" ] || { echo "bench.sh: $bin missing (run without --no-build)" >&2; exit 1; }

# Everything this run creates carries the PID: work dir, EAL file prefixes,
# memif sockets, namespaces, veth names (<= 15 bytes).
tag=ub$$
work=$(mktemp -d "/tmp/uroce-bench-$$.XXXXXX")
ns_a=${tag}a ns_b=${tag}b
if_a=${tag}va if_b=${tag}vb
ns_up=0
pids=()

cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  [ "$ns_up" = 1 ] && scripts/netns.sh down "$ns_a" "$ns_b" || true
  # EAL leaves a runtime directory per --file-prefix behind.
  rm -rf /var/run/dpdk/"$tag"-*
  [ -n "${BENCH_KEEP_WORK:-}" ] && echo "bench.sh: work dir kept: $work" >&2 || rm -rf "$work"
  hugepages_restore
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_s=10
# The longest a process may live: peer wait + warm-up + run + grace + setup.
limit=$(awk -v w=$wait_s -v u="$warmup" -v d="$duration" 'BEGIN { printf "%d", w + u + 2 * d + 10 }')
common=(--duration "$duration" --warmup "$warmup" --wait "$wait_s" --burst 32)

# report NAME RC: says which run failed and shows the end of its log.
report() {
  [ "$2" = 0 ] && return 0
  echo "bench.sh: $1 failed (exit $2); end of its log:" >&2
  tail -n 5 "$work/$1.log" >&2 || true
}

# run_one NAME CMD...: one process in the foreground, bounded by `timeout`.
run_one() {
  local name=$1 rc=0; shift
  timeout -k 2 "$limit" "$@" --json "$work/$name.json" >"$work/$name.log" 2>&1 || rc=$?
  report "$name" $rc
}

# run_pair NAME_A CMD_A NAME_B CMD_B [FILE] (CMD_* name arrays): two
# processes side by side, A being the side that waits (receiver / pong); B
# starts once FILE exists (a memif client does not retry a refused
# connection, so it must start after the server's socket is there).
# `timeout` is the direct child, so the EXIT trap can stop both by PID.
run_pair() {
  local na=$1 nb=$3 ready=${5:-} ra=0 rb=0 i
  local -n ca=$2 cb=$4
  timeout -k 2 "$limit" "${ca[@]}" --json "$work/$na.json" >"$work/$na.log" 2>&1 &
  pids=($!)
  if [ -n "$ready" ]; then
    for i in $(seq 200); do [ -e "$ready" ] && break; sleep 0.05; done
    sleep 0.2  # the socket file exists from bind(); listen() comes just after
  fi
  timeout -k 2 "$limit" "${cb[@]}" --json "$work/$nb.json" >"$work/$nb.log" 2>&1 &
  pids+=($!)
  wait "${pids[0]}" || ra=$?
  wait "${pids[1]}" || rb=$?
  pids=()
  report "$na" $ra
  report "$nb" $rb
}

# The machine's speed state at the start and the end (bench/line_rtt.cpp;
# each stack point records its own in its meta).
line_rtt() {
  "$build_dir/bench/uroce-line-rtt" 2>/dev/null |
    /usr/bin/python3 -c 'import json, sys; print(round(json.load(sys.stdin)["ns_per_round_trip"]))' \
      2>/dev/null || echo -
}
rtt_start=$(line_rtt)
echo "bench.sh: cache-line round trip CPU 0 <-> 1: $rtt_start ns" >&2

# memif's client side (B) runs zero-copy when 512 hugepages are free, in
# the raw baseline as in the stack (bench/stack_bench.sh --memif-zero-copy),
# so that a ratio compares the same PMD mode.
# af_xdp likewise runs with its EAL memory, the UMEM among it, in hugepages
# on both sides (-m 512 each) when 512 are free, raw and stack alike
# (bench/stack_bench.sh --af-xdp-hugepages).
memif_zc=off xdp_huge=off
if [[ " $transports " == *" memif "* ]] || [[ " $transports " == *" af_xdp "* ]]; then
  [ "$hugepages" = 0 ] || hugepages_reserve "$hugepages" || true
fi
if [[ " $transports " == *" memif "* ]]; then
  [ "$(hugepages_free)" -ge 512 ] && memif_zc=on
  echo "bench.sh: memif client zero-copy: $memif_zc ($(hugepages_free) free 2 MiB hugepages)" >&2
fi
if [[ " $transports " == *" af_xdp "* ]]; then
  [ "$(hugepages_free)" -ge 512 ] && xdp_huge=on
  echo "bench.sh: af_xdp in hugepages: $xdp_huge ($(hugepages_free) free 2 MiB hugepages)" >&2
fi

for t in $transports; do
  [ "$do_raw" = 1 ] || break
  case "$t" in
    ring)
      for s in $sizes; do
        echo "ring $s B ..." >&2
        run_one "ring-$s" "$bin" --role ring-selftest --size "$s" "${common[@]}" --lcore 0
      done
      ;;
    memif)
      # With client zero-copy on, raw runs in both PMD modes and each raw
      # figure is the better of the two (bench_table.py keeps the best line
      # of a transport and size): zero-copy is faster for raw's ping-pong
      # and slower for its 4 KiB stream on this VM.
      raw_zc=off
      [ "$memif_zc" = off ] || raw_zc="off on"
      for zc in $raw_zc; do
        for s in $sizes; do
          for kind in stream rtt; do
            echo "memif $s B $kind (client zero-copy $zc) ..." >&2
            sock=$work/memif-$s-$kind-$zc.sock
            # memif carries frames up to bsize; EthPort sizes the pool from
            # the MTU and data room.
            port=(--vdev net_memif0 --mtu 9000 --data-room 8192)
            da="role=server,socket=$sock,socket-abstract=no,id=0,bsize=8192"
            db="role=client,socket=$sock,socket-abstract=no,id=0,bsize=8192"
            zc_b=()
            if [ "$zc" = on ]; then
              db+=",zero-copy=yes"
              zc_b=(--hugepages --eal-arg=--single-file-segments)
            fi
            if [ $kind = stream ]; then ra=receiver rb=sender; else ra=pong rb=ping; fi
            cmd_a=("$bin" --role $ra --size "$s" "${common[@]}" --lcore 0
                   --file-prefix "$tag-m$s$kind$zc-a" "${port[@]}" --devargs "$da")
            cmd_b=("$bin" --role $rb --size "$s" "${common[@]}" --lcore 1
                   --file-prefix "$tag-m$s$kind$zc-b" "${port[@]}" --devargs "$db" "${zc_b[@]}")
            run_pair "memif-$s-$ra-zc$zc" cmd_a "memif-$s-$rb-zc$zc" cmd_b "$sock"
          done
        done
      done
      ;;
    af_packet | af_xdp)
      # Per kind: the veth MTU, the PMD, its devargs after iface=, the
      # file-prefix letter and the row label. af_packet: the kernel's veth
      # MTU limits frames and the data room must be at least framesz. XDP
      # on a veth carries frames up to an MTU of 3504 (docs/nic.md);
      # busy_budget=0 as uroced's af_xdp ports.
      if [ "$t" = af_packet ]; then
        mtu=9000 letter=p label=afp
        port=(--vdev net_af_packet0 --mtu 9000 --data-room 8192)
        pa="qdisc_bypass=1,blocksz=8192,framesz=8192,framecnt=2048"
      else
        mtu=3504 letter=x label=afx
        port=(--vdev net_af_xdp0 --mtu 3504)
        [ "$xdp_huge" = off ] || port+=(--hugepages)
        pa="busy_budget=0"
      fi
      scripts/netns.sh up "$ns_a" "$ns_b" "$if_a" "$if_b" "$mtu"
      ns_up=1
      for s in $sizes; do
        # The UDP payload and its IPv4 and UDP headers (28 B) must fit the
        # MTU: no 4 KiB row over af_xdp (no Gb/s counterpart of
        # ib_write_bw there).
        if [ $((s + 28)) -gt "$mtu" ]; then
          echo "$t $s B: larger than the veth's MTU ($mtu); skipped" >&2
          continue
        fi
        for kind in stream rtt; do
          echo "$t $s B $kind ..." >&2
          if [ $kind = stream ]; then ra=receiver rb=sender; else ra=pong rb=ping; fi
          cmd_a=(ip netns exec "$ns_b" "$bin" --role $ra --size "$s" "${common[@]}"
                 --lcore 0 --file-prefix "$tag-$letter$s$kind-a" "${port[@]}"
                 --devargs "iface=$if_b,$pa")
          cmd_b=(ip netns exec "$ns_a" "$bin" --role $rb --size "$s" "${common[@]}"
                 --lcore 1 --file-prefix "$tag-$letter$s$kind-b" "${port[@]}"
                 --devargs "iface=$if_a,$pa")
          run_pair "$label-$s-$ra" cmd_a "$label-$s-$rb" cmd_b
        done
      done
      scripts/netns.sh down "$ns_a" "$ns_b"
      ns_up=0
      ;;
    *) echo "bench.sh: unknown transport $t" >&2; exit 2 ;;
  esac
done

if [ "$do_stack" = 1 ]; then
  for t in $transports; do
    case "$t" in
      memif|af_packet|af_xdp|ring)
        for m in $modes; do
          # ring: one daemon with both devices (daemon mode only).
          [ "$t" != ring ] || [ "$m" = daemon ] || continue
          echo "$t: uroce ($m mode) through perftest ..." >&2
          bench/stack_bench.sh --build-dir "$build_dir" --transport "$t" --mode "$m" \
            --out "$work" --duration "$duration" --lat-iters "$lat_iters" \
            --send-iters "$send_iters" --ucx-iters "$ucx_iters" --poll "$poll" \
            --events "$events" --pin "$pin" --memif-zero-copy "$memif_zc" --af-xdp-hugepages "$xdp_huge" "${stages[@]}" ||
            echo "bench.sh: the $t $m-mode stack run reported a failure (see above)" >&2
        done
        ;;
    esac
  done
fi

rtt_end=$(line_rtt)
echo "bench.sh: cache-line round trip CPU 0 <-> 1 at the end: $rtt_end ns" >&2
mkdir -p "$(dirname "$json_out")"
shopt -s nullglob
/usr/bin/python3 bench/bench_table.py --out "$json_out" \
  --meta "date=$(date -u +%FT%TZ)" --meta "host=$(hostname)" \
  --meta "nproc=$(nproc)" --meta "loadavg=$(cut -d' ' -f1-3 /proc/loadavg)" \
  --meta "duration_s=$duration" --meta "warmup_s=$warmup" --meta "burst=32" \
  --meta "kernel=$(uname -r)" --meta "poll=$poll" --meta "events=$events" \
  --meta "pin=$pin" --meta "lat_iters=$lat_iters" --meta "send_iters=$send_iters" \
  --meta "ucx_iters=$ucx_iters" --meta "memif_client_zero_copy=$memif_zc" --meta "af_xdp_hugepages=$xdp_huge" \
  --meta "modes=$modes" --meta "line_rtt_ns=$rtt_start/$rtt_end" \
  "$work"/*.json
echo "JSON: $json_out" >&2
