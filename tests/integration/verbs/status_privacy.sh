#!/usr/bin/env bash
# Issue 12, item 7 (status part): the status operation shows a user only
# their own clients; root sees everyone's. Root and nobody each hold a
# client; `uroce-ctl clients --json` as nobody must list nobody's client and
# not root's (before, any local user read every client's pid, uid, handles
# and QPNs), and as root both.
#
#   status_privacy.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vstpriv "$1" /usr/bin/python3 setpriv

ABUSE=$VERBS_TEST_DIR/verbs_abuse.py
CLIENTS=$VERBS_TEST_DIR/ctl_clients.py
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d2:00:01 10.210.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d2:00:02 10.210.0.2 ring:p0)"
run=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$run")
hold=$UROCE_TMP/release

uroce_bg RPG --timeout 60 "$UROCE_TMP/root.out" "$UROCE_TMP/root.out" -- \
  "${R[@]}" /usr/bin/python3 "$ABUSE" objects uroce0 1 1 1 --hold "$hold"
uroce_bg NPG --timeout 60 "$UROCE_TMP/nobody.out" "$UROCE_TMP/nobody.out" -- \
  "${NOBODY[@]}" "${R[@]}" /usr/bin/python3 "$ABUSE" objects uroce0 1 1 1 --hold "$hold"
st=0
uroce_wait_for_line "$UROCE_TMP/root.out" '^qps' 30 "$RPG" &&
  uroce_wait_for_line "$UROCE_TMP/nobody.out" '^qps' 30 "$NPG" || {
  UROCE_WHY="the clients did not start: $(tail -n 2 "$UROCE_TMP/root.out" "$UROCE_TMP/nobody.out" | tr '\n' '|')"
  st=1
}
# The python processes' pids (uroce-run and setpriv exec it).
root_pid=$(pgrep -g "$RPG" -x python3 | sed -n 1p)
nobody_pid=$(pgrep -g "$NPG" -x python3 | sed -n 1p)

as_nobody=$UROCE_TMP/clients.nobody.json
as_root=$UROCE_TMP/clients.root.json
"${NOBODY[@]}" "$UROCE_CTL" --run-dir "$run" clients --json >"$as_nobody" 2>&1 || st=1
"$UROCE_CTL" --run-dir "$run" clients --json >"$as_root" 2>&1 || st=1
nb_root=0 nb_own=0 r_root=0 r_nobody=0
/usr/bin/python3 "$CLIENTS" "$root_pid" <"$as_nobody" >/dev/null || nb_root=$?
/usr/bin/python3 "$CLIENTS" "$nobody_pid" <"$as_nobody" >/dev/null || nb_own=$?
/usr/bin/python3 "$CLIENTS" "$root_pid" <"$as_root" >/dev/null || r_root=$?
/usr/bin/python3 "$CLIENTS" "$nobody_pid" <"$as_root" >/dev/null || r_nobody=$?
echo "  as nobody: root's client listed: $([ $nb_root -eq 0 ] && echo yes || echo no), own: $([ $nb_own -eq 0 ] && echo yes || echo no)"
echo "  as root: root's client: $([ $r_root -eq 0 ] && echo yes || echo no), nobody's: $([ $r_nobody -eq 0 ] && echo yes || echo no)"
if [ "$st" -eq 0 ] && { [ "$nb_root" -ne 1 ] || [ "$nb_own" -ne 0 ] || [ "$r_root" -ne 0 ] || [ "$r_nobody" -ne 0 ]; }; then
  UROCE_WHY="visibility wrong (exit codes: nobody sees root $nb_root, own $nb_own; root sees root $r_root, nobody $r_nobody; 0 = listed)"
  st=1
fi
if grep -q "\"uid\": *0\b\|\"uid\":0[,}]" "$as_nobody"; then
  UROCE_WHY="${UROCE_WHY:+$UROCE_WHY; }nobody's status names uid 0: $(head -c 300 "$as_nobody")"
  st=1
fi
uroce_verdict "status shows nobody only its own client; root sees both" "$st"
touch "$hold"
uroce_wait "$RPG" ignored
uroce_wait "$NPG" ignored

verbs_daemons_stop "uroced exits 0 on SIGTERM" d
uroce_summary status_privacy
