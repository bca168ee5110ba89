#!/usr/bin/env bash
# Issue 12, item 3: a client that cannot receive a reply's descriptors (its
# own RLIMIT_NOFILE, here 64) gets EMFILE from the verb, not EPROTO, and
# the daemon destroys what it created for that reply, so that the device's
# count of the client's objects equals what the client holds. The client
# runs as nobody.
#
#   fd_limit.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vfdlim "$1" /usr/bin/python3 setpriv

ABUSE=$VERBS_TEST_DIR/verbs_abuse.py
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d0:00:01 10.208.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d0:00:02 10.208.0.2 ring:p0)"
run=${UROCE_DAEMON_RUN[d]}

st=0
out=$UROCE_TMP/fdlimit.out
if ! timeout 60 "${NOBODY[@]}" "$UROCE_RUN" --run-dir "$run" /usr/bin/python3 "$ABUSE" fdlimit \
  uroce0 64 "$UROCE_CTL" "$run" >"$out" 2>&1; then
  UROCE_WHY="$(tail -n 3 "$out" | tr '\n' '|')"
  st=1
fi
cat "$out"
uroce_verdict "fd-limited client: EMFILE, and the daemon holds exactly the CQs the client holds" "$st"

verbs_daemons_stop "uroced exits 0 on SIGTERM" d
uroce_summary fd_limit
