#!/usr/bin/env bash
# Issue 12, item 4: per-user limits. The daemon runs with small [limits]
# (6 QPs, 6 CQs, 6 MRs, 200 GiB registered, 300 GiB mapped per user, as
# --limit options). A client running as nobody creates QPs, CQs and MRs
# until refused: exactly the quota, each refused with ENOMEM. While it
# holds all that, another user (daemon) still creates QPs, CQs and MRs, and
# `uroce-ctl status` shows both users against the limits. Then the
# sparse-memfd attack, speaking the protocol directly: nobody registers
# 64 GiB sparse memfds (no memory behind them) until refused: the
# registered-bytes quota stops it after 3, the mapped-bytes quota (4 KiB
# registered, 64 GiB mapped each) after 4; meanwhile the other user can
# still have one mapped. Before [limits], nobody mapped 2,046 of them
# (127 TiB) and a single user took whole devices. Between the two parts,
# user_connections (3): nobody's fourth context is refused with EAGAIN.
#
#   quota.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vquota "$1" /usr/bin/python3 setpriv

ABUSE=$VERBS_TEST_DIR/verbs_abuse.py
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
OTHER=(setpriv --reuid=daemon --regid=daemon --clear-groups)
GIB=$((1 << 30))

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d1:00:01 10.209.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d1:00:02 10.209.0.2 ring:p0)" \
  --limit user_qps=6 --limit user_cqs=6 --limit user_mrs=6 \
  --limit user_reg_bytes=$((200 * GIB)) --limit user_map_bytes=$((300 * GIB)) \
  --limit user_connections=3
run=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$run")

# wait_line FILE SECS PGID: the first line of FILE, once it is there.
wait_line() {
  uroce_wait_for_line "$1" '.' "$2" "$3" && head -n 1 "$1"
}

# ---- counts -------------------------------------------------------------------
st=0
hold=$UROCE_TMP/release-objects
out=$UROCE_TMP/nobody-objects.out
uroce_bg NPG --timeout 60 "$out" "$out" -- \
  "${NOBODY[@]}" "${R[@]}" /usr/bin/python3 "$ABUSE" objects uroce0 100 100 100 --hold "$hold"
got=$(wait_line "$out" 30 "$NPG" || true)
echo "  nobody: $got"
# One CQ is made first for the QPs: 5 more fit in the 6.
if [ "$got" != "qps 6 errno 12, cqs 5 errno 12, mrs 6 errno 12" ]; then
  UROCE_WHY="nobody got '$got' ($(tail -n 2 "$out" | tr '\n' '|'))"
  st=1
fi
uroce_verdict "a user at its quota gets ENOMEM after exactly 6 QPs, 6 CQs, 6 MRs" "$st"

st=0
other=$UROCE_TMP/other-objects.out
timeout 30 "${OTHER[@]}" "${R[@]}" /usr/bin/python3 "$ABUSE" objects uroce0 3 3 3 >"$other" 2>&1 || true
got=$(head -n 1 "$other")
echo "  daemon (uid 1): $got"
if [ "$got" != "qps 3 errno 0, cqs 3 errno 0, mrs 3 errno 0" ]; then
  UROCE_WHY="the other user got '$got' ($(tail -n 2 "$other" | tr '\n' '|'))"
  st=1
fi
uroce_verdict "another user still creates QPs, CQs and MRs while nobody is at its quota" "$st"

st=0
"$UROCE_CTL" --run-dir "$run" status >"$UROCE_TMP/status.out" 2>&1 || st=1
sed -n '/per user/,$p' "$UROCE_TMP/status.out"
nobody_uid=$(id -u nobody)
if ! grep -Eq "^ *$nobody_uid +1 +6 +6 +6 " "$UROCE_TMP/status.out" ||
  ! grep -Eq '^ *limit +[0-9]+ +6 +6 +6 ' "$UROCE_TMP/status.out"; then
  UROCE_WHY="uroce-ctl status does not show nobody at 6/6/6 and the limits"
  st=1
fi
uroce_verdict "uroce-ctl status shows each user's use against the limits" "$st"
touch "$hold"
uroce_wait "$NPG" ignored

# ---- connections ----------------------------------------------------------------
st=0
got=$(timeout 30 "${NOBODY[@]}" "${R[@]}" /usr/bin/python3 "$ABUSE" contexts uroce0 10 2>&1 | sed -n 1p)
echo "  nobody, contexts: $got"
# EAGAIN is 11.
[ "$got" = "opened 3 errno 11" ] || {
  UROCE_WHY="connections quota: '$got'"
  st=1
}
uroce_verdict "a user's fourth context gets EAGAIN (user_connections 3)" "$st"

# ---- sparse memfds -------------------------------------------------------------
st=0
sock=$run/uroced.sock
got=$(timeout 30 "${NOBODY[@]}" /usr/bin/python3 "$ABUSE" sparse "$sock" uroce0 $((64 * GIB)) 100 2>&1 | sed -n 1p)
echo "  nobody, 64 GiB registered each: $got"
[ "$got" = "registered 3, then status 12 (ENOMEM)" ] || {
  UROCE_WHY="registered-bytes quota: '$got'"
  st=1
}
hold=$UROCE_TMP/release-sparse
out=$UROCE_TMP/nobody-sparse.out
uroce_bg SPG --timeout 60 "$out" "$out" -- \
  "${NOBODY[@]}" /usr/bin/python3 "$ABUSE" sparse "$sock" uroce0 4096 100 --hold "$hold"
got=$(wait_line "$out" 30 "$SPG" || true)
echo "  nobody, 4 KiB registered, 64 GiB mapped each: $got"
[ "$got" = "registered 4, then status 12 (ENOMEM)" ] || {
  UROCE_WHY="${UROCE_WHY:+$UROCE_WHY; }mapped-bytes quota: '$got'"
  st=1
}
got=$(timeout 30 "${OTHER[@]}" /usr/bin/python3 "$ABUSE" sparse "$sock" uroce0 $((64 * GIB)) 1 2>&1 | sed -n 1p)
echo "  daemon (uid 1) meanwhile: $got"
[ "$got" = "registered 1, then status 0 (none)" ] || {
  UROCE_WHY="${UROCE_WHY:+$UROCE_WHY; }the other user's registration: '$got'"
  st=1
}
touch "$hold"
uroce_wait "$SPG" ignored
uroce_verdict "byte quotas hold against sparse 64 GiB memfds; the other user still registers" "$st"

verbs_daemons_stop "uroced exits 0 on SIGTERM" d
uroce_summary quota
