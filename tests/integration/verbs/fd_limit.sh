#!/usr/bin/env bash
# Issue 12, item 3: descriptors do not limit a client's objects. Rings live
# in one shared arena per context (docs/shm.md), so a client at the usual
# RLIMIT_NOFILE of 1,024 creates QPs, each with a CQ of its own, until the
# device's or its user's limit refuses one with ENOMEM, not until its fd
# limit does: nobody stops at its quota (three quarters of max_qp, 768),
# root at the device's max_cq (1,024). Before the arena each QP and CQ cost
# the client three descriptors, and both stopped at about 340 with EMFILE.
# The daemon lists exactly what the client holds (and a client of 3,000
# QPs, more than one status message lists, is counted whole). The same for memory
# registrations: nobody registers 4 KiB MRs up to its quota (3,072 of the
# device's max_mr 4,096), root up to max_mr (4,095 before the engine's key
# table gained its unused slot 0), and neither the client's nor the
# daemon's descriptor count moves (before ctl version 5 each MR kept a
# memfd open on both sides: EMFILE after about 1,000). Then a context opened
# with too few descriptors left fails with EMFILE at whatever step runs out
# (Hello's reply brings the arena's fd) and the daemon keeps nothing of it.
#
#   fd_limit.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vfdlim "$1" /usr/bin/python3 setpriv

ABUSE=$VERBS_TEST_DIR/verbs_abuse.py
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d0:00:01 10.208.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d0:00:02 10.208.0.2 ring:p0);max_qps=4096"
run=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$run")

# check_pairs WHO EXPECTED OUT: the first line is "pairs EXPECTED errno 12
# (ENOMEM)" and the daemon listed EXPECTED QPs and CQs.
check_pairs() {
  local got listed
  got=$(head -n 1 "$3")
  listed=$(grep -o 'lists [0-9]* QPs and [0-9]* CQs' "$3" || true)
  echo "  $1: $got; $listed"
  if [ "$got" != "pairs $2 errno 12 (ENOMEM)" ] || [ "$listed" != "lists $2 QPs and $2 CQs" ]; then
    UROCE_WHY="$1: '$got', '$listed' ($(tail -n 2 "$3" | tr '\n' '|'))"
    return 1
  fi
}

st=0
out=$UROCE_TMP/nobody-pairs.out
timeout 60 "${NOBODY[@]}" "${R[@]}" /usr/bin/python3 "$ABUSE" pairs uroce0 1024 5000 \
  "$UROCE_CTL" "$run" >"$out" 2>&1 || true
check_pairs nobody 768 "$out" || st=1
uroce_verdict "nobody at ulimit -n 1024: QP+CQ pairs up to its quota (768), ENOMEM, not EMFILE" "$st"

st=0
out=$UROCE_TMP/root-pairs.out
timeout 60 "${R[@]}" /usr/bin/python3 "$ABUSE" pairs uroce0 1024 5000 \
  "$UROCE_CTL" "$run" "${UROCE_DAEMON_PID[d]}" >"$out" 2>&1 || true
sed -n '2,$p' "$out"
check_pairs root 1024 "$out" || st=1
uroce_verdict "root at ulimit -n 1024: QP+CQ pairs up to the device's max_cq (1,024), ENOMEM" "$st"

# check_mrs WHO EXPECTED ERRNO OUT: "mrs EXPECTED errno ERRNO", the daemon
# listed EXPECTED MRs, and the client's descriptor count (and the daemon's,
# when sampled) after 1,000 MRs equals the count before the first.
check_mrs() {
  local got listed flat
  got=$(head -n 1 "$4")
  listed=$(grep -o 'lists [0-9]* MRs' "$4" || true)
  flat=$(awk '/^after 0 MRs/ {c0 = $6; d0 = $9} /^after 1000 MRs/ {c1 = $6; d1 = $9}
    END {print (c0 != "" && c0 == c1 && d0 == d1) ? "flat" : "moved"}' "$4")
  echo "  $1: $got; $listed; fds $flat"
  if [ "${got% (*}" != "mrs $2 errno $3" ] || [ "$listed" != "lists $2 MRs" ] ||
    [ "$flat" != flat ] || ! grep -q 'bytes changed: 0$' "$4"; then
    UROCE_WHY="$1: '$got', '$listed', fds $flat ($(tail -n 5 "$4" | tr '\n' '|'))"
    return 1
  fi
}

# The MR phases' limit guards against a hang only: 3-4k registrations take
# about a minute on a quiet 2-core VM, and each is a round trip of two
# processes that both read the client's /proc/PID/maps, so at load 20 (seen
# beside six compiling worktrees) one phase took over 180 s. -u: what was
# printed survives a kill.
MR_PHASE_S=600
st=0
out=$UROCE_TMP/nobody-mrs.out
timeout "$MR_PHASE_S" "${NOBODY[@]}" "${R[@]}" /usr/bin/python3 -u "$ABUSE" mrs uroce0 1024 10000 \
  "$UROCE_CTL" "$run" >"$out" 2>&1 || true
sed -n '2,$p' "$out"
check_mrs nobody 3072 12 "$out" || st=1
uroce_verdict "nobody at ulimit -n 1024: 4 KiB MRs up to its quota (3,072), ENOMEM, fds flat" "$st"

st=0
out=$UROCE_TMP/root-mrs.out
timeout "$MR_PHASE_S" "${R[@]}" /usr/bin/python3 -u "$ABUSE" mrs uroce0 1024 10000 \
  "$UROCE_CTL" "$run" "${UROCE_DAEMON_PID[d]}" >"$out" 2>&1 || true
sed -n '2,$p' "$out"
check_mrs root 4096 12 "$out" || st=1
uroce_verdict "root at ulimit -n 1024: 4 KiB MRs up to the device's max_mr (4,096), ENOMEM, fds flat" "$st"

st=0
out=$UROCE_TMP/fdlimit.out
if ! timeout 60 "${NOBODY[@]}" "${R[@]}" /usr/bin/python3 "$ABUSE" fdlimit uroce0 \
  "$UROCE_CTL" "$run" >"$out" 2>&1; then
  UROCE_WHY="$(tail -n 3 "$out" | tr '\n' '|')"
  st=1
fi
cat "$out"
uroce_verdict "a context short of descriptors fails with EMFILE; the daemon keeps none of it" "$st"

# A client holding more QPs than one status message lists (~2,300 handle
# lines fit 64 KiB): `uroce-ctl clients` still answers, its row counts all
# 3,000 QPs, and it says the lists were cut; the JSON keeps the first
# handles and counts the rest in "qps_omitted". uroce1 holds 4,096 QPs.
st=0
out=$UROCE_TMP/many-qps.out
hold=$UROCE_TMP/release-many-qps
uroce_bg MPG --timeout 600 "$out" "$out" -- \
  "${R[@]}" /usr/bin/python3 "$ABUSE" objects uroce1 3000 0 0 --hold "$hold"
if ! uroce_wait_for_line "$out" '^qps ' 540 "$MPG"; then
  UROCE_WHY="the client did not make its QPs: $(tail -n 3 "$out" | tr '\n' '|')"
  st=1
elif ! grep -q '^qps 3000 errno 0,' "$out"; then
  UROCE_WHY="$(head -n 1 "$out")"
  st=1
else
  table=$UROCE_TMP/many-qps.table
  "$UROCE_CTL" --run-dir "$run" clients >"$table" 2>&1 || st=1
  row=$(awk '$4 == "uroce1"' "$table")
  listed=$("$UROCE_CTL" --run-dir "$run" clients --json | /usr/bin/python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin)["clients"] if c["device"] == "uroce1"]
o = c[0]["objects"] if len(c) == 1 else {}
print(len(o.get("qps", [])), o.get("qps_omitted", 0))') || st=1
  echo "  row: $row; json: $listed (listed, omitted)"
  if [ "$st" -ne 0 ] || [ "$(echo "$row" | awk '{print $11}')" != 3000 ] ||
    ! grep -q "the clients' lists truncated" "$table" ||
    [ "$(echo "$listed" | awk '{print $1 + $2}')" != 3000 ] ||
    [ "$(echo "$listed" | awk '{print ($1 > 0 && $2 > 0)}')" != 1 ]; then
    UROCE_WHY="row '$row', json '$listed': $(tail -n 3 "$table" | tr '\n' '|')"
    st=1
  fi
fi
touch "$hold"
uroce_wait "$MPG" ignored
uroce_verdict "a client of 3,000 QPs: uroce-ctl clients answers, counts them all, says the lists were cut" "$st"

verbs_daemons_stop "uroced exits 0 on SIGTERM" d
uroce_summary fd_limit
