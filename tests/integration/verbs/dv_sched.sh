#!/usr/bin/env bash
# uroce direct verbs and the rate-limit verbs (issue 14): dv_sched
# (dv_sched.cpp) links -luroce and runs under uroce-run against uroce0 of one
# uroced; judged on every check line. It also shows that the plugin
# libibverbs loads and the library the program links are one copy.
#
#   dv_sched.sh BUILD_DIR DV_SCHED
source "$(dirname "$0")/common.sh"
verbs_test_init vdvs "$1"
DV_SCHED=$2

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d6:00:01 10.214.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d6:00:02 10.214.0.2 ring:p0)"
R=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}")

out=$UROCE_TMP/dv_sched.out
st=0 rc=0
timeout 60 "${R[@]}" "$DV_SCHED" uroce0 >"$out" 2>&1 || rc=$?
cat "$out"
want=17
ok=$(grep -c ': ok$' "$out" || true)
if [ "$rc" -ne 0 ]; then
  UROCE_WHY="dv_sched exited $rc: $(grep -E 'FAILED|dv_sched:' "$out" | sed -n 1,5p | tr '\n' '|')"
  st=1
elif [ "$ok" -ne "$want" ] || ! grep -qx 'dv_sched: all passed' "$out"; then
  UROCE_WHY="$ok of $want checks ok"; st=1
fi
uroce_verdict "uroce_dv_modify_qp_sched, ibv_modify_qp_rate_limit and IBV_QP_RATE_LIMIT on an RC QP" "$st"
verbs_daemons_stop "uroced" d
uroce_summary dv_sched
