#!/usr/bin/env bash
# Invalidation and memory windows (issue 28, docs/memory-windows.md):
# mw_inval (mw_inval.cpp) as two processes through uroce-run on one uroced
# (uroce0 and uroce1 on a ring). The victim owns an MR on uroce0; the
# attacker, another process with its own context and PD on uroce1, sends
# SEND_WITH_INV naming the victim's rkey over an RC connection to it. Judged
# on every check line of both: the attacker's send and the victim's receive
# complete IBV_WC_REM_INV_REQ_ERR and the victim's WRITE into and SEND out of
# the MR still succeed; the same within one PD; type-2 windows (bind by WR,
# remote and local invalidation), type-1 windows (ibv_bind_mw, unbind); and
# on the daemon's counters of refused invalidations.
#
#   mw_inval.sh BUILD_DIR MW_INVAL
source "$(dirname "$0")/common.sh"
verbs_test_init vmwi "$1"
MW_INVAL=$2

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d7:00:01 10.215.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d7:00:02 10.215.0.2 ring:p0)"
R=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}")

v2a=$UROCE_TMP/v2a
a2v=$UROCE_TMP/a2v
mkfifo "$v2a" "$a2v"
vout=$UROCE_TMP/victim.out
aout=$UROCE_TMP/attacker.out
st=0 vrc=0 arc=0
timeout 120 "${R[@]}" "$MW_INVAL" attacker uroce1 1 "$a2v" "$v2a" >"$aout" 2>&1 &
apid=$!
timeout 120 "${R[@]}" "$MW_INVAL" victim uroce0 uroce1 1 "$v2a" "$a2v" >"$vout" 2>&1 || vrc=$?
wait "$apid" || arc=$?
echo "--- victim"
cat "$vout"
echo "--- attacker"
cat "$aout"
want=30
ok=$(($(grep -c ': ok$' "$vout" || true) + $(grep -c ': ok$' "$aout" || true)))
if [ "$vrc" -ne 0 ] || [ "$arc" -ne 0 ]; then
  UROCE_WHY="victim exited $vrc, attacker $arc: $(grep -hE 'FAILED|mw_inval:' "$vout" "$aout" | head -n 5 | tr '\n' '|')"
  st=1
elif [ "$ok" -ne "$want" ] || ! grep -qx 'mw_inval: all passed' "$vout"; then
  UROCE_WHY="$ok of $want checks ok"; st=1
fi
uroce_verdict "SEND_WITH_INV of another tenant's and of an ordinary MR refused; type-1 and type-2 memory windows" "$st"

# The refusals are answered on the wire and leave the daemon serving.
st=0
if ! "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[d]}" status >/dev/null 2>&1; then
  UROCE_WHY="uroced did not answer status after the run"; st=1
fi
uroce_verdict "uroced still answers after the refused invalidations" "$st"

verbs_daemons_stop "uroced" d
uroce_summary mw_inval
