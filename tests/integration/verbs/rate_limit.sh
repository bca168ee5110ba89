#!/usr/bin/env bash
# Per-QP rate limits through the standard verbs (issue 14): rate_check
# (rate_check.cpp) opens uroce0 and uroce1 of one uroced (a ring) through
# uroce-run, checks packet_pacing_caps, measures the unpaced goodput of
# 4 KiB RDMA WRITEs, then the goodput and completion gaps under
# ibv_modify_qp_rate_limit at several rates and once under ibv_modify_qp
# IBV_QP_RATE_LIMIT, rate 0 and a rate above the maximum (EINVAL). Judged
# on every check line; the table is printed with the load average.
#
#   rate_limit.sh BUILD_DIR RATE_CHECK
source "$(dirname "$0")/common.sh"
verbs_test_init vrate "$1"
RATE_CHECK=$2

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:e1:00:01 10.214.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:e1:00:02 10.214.0.2 ring:p0)"
R=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}")

out=$UROCE_TMP/rate_check.out
uroce_no_pair
st=0 rc=0
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
timeout 150 "${R[@]}" "$RATE_CHECK" uroce0 uroce1 1 "${RATE_SECONDS:-1}" >"$out" 2>&1 || rc=$?
cat "$out"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
# Which rates are judged depends on the unpaced rate the machine reaches
# now (rate_check.cpp: a quarter of it at most); the 10 Mb/s and the
# ibv_modify_qp 20 Mb/s checks must always be there.
ok=$(grep -c ': ok$' "$out" || true)
if [ "$rc" -ne 0 ]; then
  UROCE_WHY="rate_check exited $rc: $(grep -E 'FAILED|rate_check:' "$out" | sed -n 1,5p | tr '\n' '|')"; st=1
elif ! grep -qx 'rate_check: all passed' "$out"; then
  UROCE_WHY="rate_check did not say all passed ($ok checks ok)"; st=1
elif ! grep -qE '^ibv_modify_qp_rate_limit 10 Mb/s within .*: ok$' "$out" ||
  ! grep -qE '^ibv_modify_qp IBV_QP_RATE_LIMIT 20 Mb/s within .*: ok$' "$out"; then
  UROCE_WHY="the 10 Mb/s or the 20 Mb/s rate was not judged (the machine reached only $(grep -E '^  unpaced' "$out"))"; st=1
fi
uroce_verdict "ibv_modify_qp_rate_limit and IBV_QP_RATE_LIMIT pace an RC QP's WRITEs; 0 removes the limit; above the maximum EINVAL" "$st"

verbs_daemons_stop "uroced exits 0 on SIGTERM and removes its run dir and nodes" d
uroce_summary rate_limit
