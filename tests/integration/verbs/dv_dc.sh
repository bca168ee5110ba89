#!/usr/bin/env bash
# uroce direct verbs for DC QPs (docs/dc.md): dv_dc (dv_dc.cpp) links
# -luroce and runs under uroce-run against uroce0 of one uroced; judged on
# every check line.
#
#   dv_dc.sh BUILD_DIR DV_DC
source "$(dirname "$0")/common.sh"
verbs_test_init vddc "$1"
DV_DC=$2

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d7:00:01 10.215.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d7:00:02 10.215.0.2 ring:p0)"
R=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}")

out=$UROCE_TMP/dv_dc.out
st=0 rc=0
timeout 60 "${R[@]}" "$DV_DC" uroce0 >"$out" 2>&1 || rc=$?
cat "$out"
want=14
ok=$(grep -c ': ok$' "$out" || true)
if [ "$rc" -ne 0 ]; then
  UROCE_WHY="dv_dc exited $rc: $(grep -E 'FAILED|dv_dc:' "$out" | head -n 5 | tr '\n' '|')"
  st=1
elif [ "$ok" -ne "$want" ] || ! grep -qx 'dv_dc: all passed' "$out"; then
  UROCE_WHY="$ok of $want checks ok"; st=1
fi
uroce_verdict "uroce_dv_create_qp, uroce_dv_query_device and the DC setters through uroced" "$st"
verbs_daemons_stop "uroced" d
uroce_summary dv_dc
