#!/usr/bin/env bash
# A posted receive is visible to the next packet once ibv_post_recv returns
# (issue 28, item 2): recv_visibility (recv_visibility.cpp) runs ITERATIONS
# of "B posts one receive, A at once SENDs to it" over RC with rnr_retry 0
# and over UD, between uroce0 and uroce1 of one engine (a ring port) in one
# process, under uroced in each poll mode (busy, backoff, yield) and in
# embedded mode (uroce-run --embedded). Judged on the program's lines:
# every iteration received, no RNR failure, no datagram lost. A property
# test: nothing here waits for a time, only for completions.
#
#   recv_visibility.sh BUILD_DIR RECV_VISIBILITY [ITERATIONS]   (default 1000)
source "$(dirname "$0")/common.sh"
verbs_test_init vrcv "$1"
PROG=$2
N=${3:-1000}

dev0=$(verbs_device uroce0 02:00:00:d6:00:01 10.214.0.1 ring:p0)
dev1=$(verbs_device uroce1 02:00:00:d6:00:02 10.214.0.2 ring:p0)

# check_run LABEL OUTFILE RC: the verdict on one run of the program.
check_run() {
  local label=$1 out=$2 rc=$3 st=0
  sed 's/^/  /' "$out"
  if [ "$rc" -ne 0 ]; then
    UROCE_WHY="recv_visibility exited $rc: $(grep -E 'FAILED|iteration|recv_visibility:' "$out" | head -n 4 | tr '\n' '|')"
    st=1
  elif ! grep -qx "rc: $N of $N received, rnr_retry 0: ok" "$out" ||
    ! grep -qx "ud: $N of $N received: ok" "$out"; then
    UROCE_WHY="not every iteration was received"; st=1
  fi
  uroce_verdict "$label: $N x (post one receive, then SEND at once), RC rnr_retry 0 and UD: no RNR, no loss" "$st"
}

for poll in busy backoff yield; do
  uroce_daemon_start "$poll" --lcore 1 --poll "$poll" -- --device "$dev0" --device "$dev1"
  uroce_no_pair
  out=$UROCE_TMP/$poll.out
  rc=0
  timeout 300 "$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[$poll]}" "$PROG" uroce0 uroce1 1 "$N" \
    >"$out" 2>&1 || rc=$?
  check_run "uroced --poll $poll" "$out" "$rc"
  verbs_daemons_stop "uroced --poll $poll survives and stops" "$poll"
done

# Embedded: the engine runs in the program (its progress thread and its
# verbs calls); the launcher's run directory goes under our work dir.
export TMPDIR=$UROCE_TMP/embedded
mkdir -p "$TMPDIR"
uroce_no_pair
out=$UROCE_TMP/embedded.out
rc=0
timeout 300 "$UROCE_RUN" --embedded --lcore 1 --device "$dev0" --device "$dev1" -- \
  "$PROG" uroce0 uroce1 1 "$N" >"$out" 2>&1 || rc=$?
check_run "embedded" "$out" "$rc"

uroce_summary recv_visibility
