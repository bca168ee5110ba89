#!/usr/bin/env bash
# Issue 12, item 1: destroying a completion channel releases the pipe write
# end the daemon holds for it at once. 2,000 create/destroy cycles (each
# channel registered by a CQ created on it) in one context must leave
# uroced's descriptor count where it was after the first 20; before the
# fix the daemon held one more fd per cycle until the context closed.
#
#   channel_fds.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vchanfd "$1" /usr/bin/python3

ABUSE=$VERBS_TEST_DIR/verbs_abuse.py

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:ce:00:01 10.206.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:ce:00:02 10.206.0.2 ring:p0)"

st=0
out=$UROCE_TMP/channels.out
if ! "$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}" /usr/bin/python3 "$ABUSE" channels uroce0 \
  "${UROCE_DAEMON_PID[d]}" 2000 >"$out" 2>&1; then
  UROCE_WHY="$(tail -n 3 "$out" | tr '\n' '|')"
  st=1
fi
cat "$out"
uroce_verdict "2,000 channel create/destroy cycles keep uroced's fd count flat" "$st"

verbs_daemons_stop "uroced exits 0 on SIGTERM" d
uroce_summary channel_fds
