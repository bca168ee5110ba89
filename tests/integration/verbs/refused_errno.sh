#!/usr/bin/env bash
# Issue 12, item 7 (session 6): a connection uroced refuses for want of a
# thread or of descriptors gets an error reply, the refusal notice of
# docs/ctl.md, not just a closed socket, and ibv_open_device reports it:
# EAGAIN when the daemon already serves [limits] connections (here 2, held
# by nobody's raw connections), EMFILE when it is out of descriptors (a
# daemon at RLIMIT_NOFILE 64 while nobody holds 100 connections). Each open
# is made once the daemon is seen in that state. Before, both failed with
# EIO.
#
#   refused_errno.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vrefno "$1" /usr/bin/python3 setpriv

ABUSE=$VERBS_TEST_DIR/verbs_abuse.py
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

# open_while_held NAME HOLD EXPECTED: nobody holds HOLD raw connections to
# daemon NAME; once the daemon is seen refusing (it serves [limits]
# connections, or its log says it is out of descriptors), nobody opens
# uroce0 once, which must fail with "opened 0 errno EXPECTED".
open_while_held() {
  local run=${UROCE_DAEMON_RUN[$1]} log=${UROCE_DAEMON_LOG[$1]} out=$UROCE_TMP/$1-flood.out got
  local stop=$UROCE_TMP/$1-flood.stop deadline clients
  uroce_bg HOLD_PG --timeout 150 "$out" "$out" -- \
    "${NOBODY[@]}" /usr/bin/python3 "$ABUSE" flood "$run/uroced.sock" "$2" 120 "$stop"
  if ! uroce_wait_for_line "$out" '^holding ' 60 "$HOLD_PG"; then
    touch "$stop"
    uroce_wait "$HOLD_PG" ignored
    UROCE_WHY="nobody's client did not make its connections: $(tr '\n' '|' <"$out")"
    return 1
  fi
  deadline=$((SECONDS + 60))
  while :; do
    if [ "$3" -eq 24 ]; then
      grep -q 'out of descriptors' "$log" && break
    else
      clients=$("$UROCE_CTL" --run-dir "$run" status --json 2>/dev/null |
        /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["clients"])' ||
        echo 0)
      [ "$clients" -ge "$2" ] && break
    fi
    if [ $SECONDS -ge "$deadline" ]; then
      touch "$stop"
      uroce_wait "$HOLD_PG" ignored
      UROCE_WHY="the daemon was not seen refusing while nobody held $2 connections (nothing tested)"
      return 1
    fi
    sleep 0.1
  done
  got=$(timeout 20 "${NOBODY[@]}" "$UROCE_RUN" --run-dir "$run" /usr/bin/python3 "$ABUSE" \
    contexts uroce0 1 2>&1 | sed -n 1p)
  touch "$stop"
  uroce_wait "$HOLD_PG" ignored
  echo "  $(tail -n 1 "$out")"
  echo "  while nobody holds $2 connections: $got"
  if [ "$got" != "opened 0 errno $3" ]; then
    UROCE_WHY="ibv_open_device gave '$got', not errno $3"
    return 1
  fi
}

# ---- no thread: [limits] connections = 2 -----------------------------------------
uroce_daemon_start t --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d2:00:01 10.210.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d2:00:02 10.210.0.2 ring:p0)" \
  --limit connections=2
st=0
open_while_held t 2 11 || st=1
uroce_verdict "over [limits] connections: ibv_open_device fails with EAGAIN, not EIO" "$st"
verbs_daemons_stop "uroced exits 0 on SIGTERM" t

# ---- no descriptor: uroced at RLIMIT_NOFILE 64 ---------------------------------
verbs_uroced_nofile 64
uroce_daemon_start f --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d2:00:11 10.210.0.11 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d2:00:12 10.210.0.12 ring:p0)"
st=0
open_while_held f 100 24 || st=1
uroce_verdict "daemon out of descriptors: ibv_open_device fails with EMFILE, not EIO" "$st"

st=0
out=$UROCE_TMP/open.out
if ! timeout 20 "${NOBODY[@]}" "$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[f]}" /usr/bin/python3 \
  "$ABUSE" open uroce0 >"$out" 2>&1; then
  UROCE_WHY="a client failed once the connections were gone: $(tail -n 3 "$out" | tr '\n' '|')"
  st=1
fi
uroce_verdict "a client opens the device once the held connections are gone" "$st"
verbs_daemons_stop "uroced exits 0 on SIGTERM" f
uroce_summary refused_errno
