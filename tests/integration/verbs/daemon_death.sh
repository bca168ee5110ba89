#!/usr/bin/env bash
# Issue 12, item 7 (errno part): after the daemon dies, every verb that
# fails says why. A client holding a completion channel and an armed CQ
# sees uroced SIGKILLed; then ibv_get_cq_event, ibv_poll_cq,
# ibv_req_notify_cq and ibv_alloc_pd must each fail with errno EIO (before:
# ibv_get_cq_event returned -1 with errno 0, and ibv_poll_cq left whatever
# errno the last failing call had set).
#
#   daemon_death.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vdeath "$1" /usr/bin/python3

ABUSE=$VERBS_TEST_DIR/verbs_abuse.py

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d3:00:01 10.211.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d3:00:02 10.211.0.2 ring:p0)"
run=${UROCE_DAEMON_RUN[d]}
hold=$UROCE_TMP/killed
out=$UROCE_TMP/afterdeath.out

st=0
uroce_bg CPG --timeout 60 "$out" "$out" -- \
  "$UROCE_RUN" --run-dir "$run" /usr/bin/python3 "$ABUSE" afterdeath uroce0 "$hold"
if uroce_wait_for_line "$out" '^ready' 30 "$CPG"; then
  uroce_daemon_kill d
  touch "$hold"
  uroce_wait "$CPG" crc
  got=$(grep '^get_cq_event' "$out" || true)
  echo "  $got"
  # EIO is 5.
  if [ "$got" != "get_cq_event 5, poll_cq 5, req_notify_cq 5, alloc_pd 5" ]; then
    UROCE_WHY="after the daemon's death: '$got' ($(tail -n 2 "$out" | tr '\n' '|'))"
    st=1
  fi
else
  UROCE_WHY="the client did not start: $(tail -n 3 "$out" | tr '\n' '|')"
  st=1
fi
uroce_verdict "after SIGKILL of uroced every failing verb sets errno EIO" "$st"
uroce_summary daemon_death
