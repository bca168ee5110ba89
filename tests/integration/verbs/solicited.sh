#!/usr/bin/env bash
# Solicited-only CQ arming end to end (issue 28): solicited (solicited.cpp)
# opens uroce0 and uroce1 of one uroced (a ring) through uroce-run; the
# receiver's CQ armed with ibv_req_notify_cq(cq, 1) gets no event for a
# plain SEND, exactly one for a SEND with IBV_SEND_SOLICITED (the BTH SE
# bit), none more without re-arming, and one for a receive completed in
# error. A marker CQ on the same channel orders the records, so no check
# waits for "nothing within N ms". Judged on every check line.
#
#   solicited.sh BUILD_DIR SOLICITED
source "$(dirname "$0")/common.sh"
verbs_test_init vsol "$1"
SOLICITED=$2

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:e8:00:01 10.228.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:e8:00:02 10.228.0.2 ring:p0)"
R=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}")

out=$UROCE_TMP/solicited.out
uroce_no_pair
st=0 rc=0
timeout 120 "${R[@]}" "$SOLICITED" uroce0 uroce1 1 >"$out" 2>&1 || rc=$?
cat "$out"
ok=$(grep -c ': ok$' "$out" || true)
if [ "$rc" -ne 0 ]; then
  UROCE_WHY="solicited exited $rc: $(grep -E 'FAILED|solicited:' "$out" | head -n 5 | tr '\n' '|')"
  st=1
elif [ "$ok" -ne 8 ] || ! grep -qx 'solicited: all passed' "$out"; then
  UROCE_WHY="$ok of 8 checks ok"; st=1
fi
uroce_verdict "ibv_req_notify_cq(cq, 1): no event for a plain SEND, one for a solicited SEND and for an error" "$st"

verbs_daemons_stop "uroced" d
uroce_summary solicited
