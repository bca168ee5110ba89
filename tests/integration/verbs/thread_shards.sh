#!/usr/bin/env bash
# One engine shard per application thread (issue 30; docs/embedded.md
# "Several shards"): thread_shards (thread_shards.cpp) opens, for each of
# its threads, a context of uroce0 and one of uroce1 (a crossed net_ring
# pair in one engine) and checks that thread t's contexts live on shard t
# mod n (uroce_dv_query_device); each thread then sends SENDs between its
# two contexts, every one checked in order. Runs:
#   embedded, --lcores 0,1, 2 threads  each thread on its own shard; the
#       engine's exit log (--log-level info) must show the application's
#       calls on both shards' engines (the provider's progress calls name
#       the context's shard);
#   embedded, --lcores 0,1, 4 threads  two threads per shard;
#   embedded, one lcore, 2 threads     both on shard 0 of 1;
#   uroced, --lcores 0,1, 2 threads    the same placement through the daemon.
#
#   thread_shards.sh BUILD_DIR THREAD_SHARDS
source "$(dirname "$0")/common.sh"
verbs_test_init vthsh "$1"
PROG=$2
ITERS=${THREAD_SHARDS_ITERS:-20000}

DEV0=$(verbs_device uroce0 02:00:00:e3:00:01 10.220.0.1 ring:p0)
DEV1=$(verbs_device uroce1 02:00:00:e3:00:02 10.220.0.2 ring:p0)
export TMPDIR=$UROCE_TMP/embedded
mkdir -p "$TMPDIR"

# run_prog LABEL THREADS SHARDS [PREFIX...]: thread_shards through PREFIX,
# judged on its exit status and on one placement line per context, each
# on shard t mod SHARDS of SHARDS. Its output stays in $UROCE_TMP/last.out.
run_prog() {
  local label=$1 threads=$2 shards=$3 st=0 rc=0 t want got
  shift 3
  local out=$UROCE_TMP/last.out
  uroce_no_pair
  timeout 180 "$@" "$PROG" uroce0 uroce1 "$threads" "$ITERS" >"$out" 2>&1 || rc=$?
  grep -E '^(placement|thread|total)' "$out" | sed 's/^/  /'
  if [ "$rc" -ne 0 ] || ! grep -qx 'thread_shards: ok' "$out"; then
    UROCE_WHY="thread_shards exited $rc: $(grep -vE '^(placement|thread [0-9]+:|total)' "$out" | tail -n 6 | tr '\n' '|')"
    st=1
  else
    for ((t = 0; t < threads; t++)); do
      want="on shard $((t % shards)) of $shards"
      got=$(grep -c "^placement: thread $t uroce[01] $want\$" "$out" || true)
      if [ "$got" -ne 2 ]; then
        UROCE_WHY="thread $t: $got of its 2 contexts $want"; st=1
      fi
    done
  fi
  uroce_verdict "$label" "$st"
  return "$st"
}

# app_calls SHARD: the application calls the embedded engine's exit log
# counted on that shard's engine (empty when the line is missing).
app_calls() {
  sed -n "s/.*engine shard $1: \([0-9]*\) application calls.*/\1/p" "$UROCE_TMP/last.out"
}

EMB=("$UROCE_RUN" --embedded --log-level info --device "$DEV0" --device "$DEV1")
if run_prog "embedded, 2 shards, 2 threads: each thread's contexts on its own shard, data checked" \
  2 2 "${EMB[@]}" --lcores 0,1 --; then
  a0=$(app_calls 0) a1=$(app_calls 1) st=0
  echo "  application calls: shard 0 ${a0:-none}, shard 1 ${a1:-none}"
  if [ -z "$a0" ] || [ -z "$a1" ] || [ "$a0" -eq 0 ] || [ "$a1" -eq 0 ]; then
    UROCE_WHY="the exit log does not show the application's calls on both shards"; st=1
  fi
  uroce_verdict "embedded, 2 shards: each thread's polls and posts drive its own shard's engine" "$st"
fi
run_prog "embedded, 2 shards, 4 threads: two threads on each shard" 4 2 \
  "${EMB[@]}" --lcores 0,1 -- || true
run_prog "embedded, one lcore, 2 threads: both on shard 0 of 1" 2 1 \
  "${EMB[@]}" --lcore 0 -- || true

uroce_daemon_start d -- --lcores 0,1 --device "$DEV0" --device "$DEV1"
run_prog "uroced --lcores 0,1, 2 threads: each thread's contexts on its own shard" 2 2 \
  "$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}" || true
verbs_daemons_stop "uroced" d

st=0
left=$(ls -A "$TMPDIR")
if [ -n "$left" ]; then
  UROCE_WHY="left in the launchers' TMPDIR: $left"; st=1
fi
uroce_no_pair
uroce_verdict "the embedded launchers left nothing behind" "$st"
uroce_summary thread_shards
