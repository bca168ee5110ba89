#!/usr/bin/env bash
# uroce-ctl reaches an embedded engine (docs/embedded.md, "uroce-ctl"): a
# pyverbs program run by uroce-run --embedded over two ring devices holds a
# QP, a CQ and an MR; `uroce-ctl --pid PID` then finds the engine's socket
# in the program's private run directory and prints its status: the
# embedded poll mode, both devices, and the program's QP in `qps`. Asked
# about a process without an embedded engine (this script), it says so and
# exits 1. After the program exits, its run directory is gone.
#
#   embedded_ctl.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vembctl "$1" /usr/bin/python3

export TMPDIR=$UROCE_TMP/embedded
mkdir -p "$TMPDIR"
dev0=$(verbs_device uroce0 02:00:00:d8:00:01 10.219.1.1 ring:p0)
dev1=$(verbs_device uroce1 02:00:00:d8:00:02 10.219.1.2 ring:p0)
hold=$UROCE_TMP/release
out=$UROCE_TMP/program.out
uroce_bg PG --timeout 60 "$out" "$out" -- \
  "$UROCE_RUN" --embedded --lcore 0 --device "$dev0" --device "$dev1" -- \
  /usr/bin/python3 "$VERBS_TEST_DIR/verbs_abuse.py" objects uroce0 1 1 1 --hold "$hold"

st=0
if ! uroce_wait_for_line "$out" '^qps 1 errno 0' 30 "$PG"; then
  UROCE_WHY="the program did not make its objects ($(tail -n 3 "$out" | tr '\n' '|'))"
  st=1
fi
prog=$(pgrep -s "$PG" -x python3 | head -n 1)
json=$UROCE_TMP/status.json
if [ "$st" = 0 ] && ! "$UROCE_CTL" --pid "$prog" status --json >"$json" 2>"$UROCE_TMP/ctl.err"; then
  UROCE_WHY="uroce-ctl --pid $prog failed: $(cat "$UROCE_TMP/ctl.err")"
  st=1
fi
if [ "$st" = 0 ]; then
  got=$(/usr/bin/python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(j["daemon"]["poll"], ",".join(d["name"] for d in j["devices"]))' "$json")
  echo "  uroce-ctl --pid $prog status: $got"
  [ "$got" = "embedded uroce0,uroce1" ] || {
    UROCE_WHY="status says '$got' (want 'embedded uroce0,uroce1')"
    st=1
  }
fi
if [ "$st" = 0 ]; then
  "$UROCE_CTL" --pid "$prog" qps >"$UROCE_TMP/qps.out" 2>&1 || st=1
  grep -Eq 'uroce0 +[0-9]+ +RC' "$UROCE_TMP/qps.out" || {
    UROCE_WHY="uroce-ctl --pid qps does not list the program's RC QP: $(head -n 5 "$UROCE_TMP/qps.out" | tr '\n' '|')"
    st=1
  }
fi
uroce_verdict "uroce-ctl --pid reads an embedded engine's status and QPs" "$st"

st=0
rc=0
msg=$("$UROCE_CTL" --pid $$ status 2>&1) || rc=$?
want="uroce-ctl: process $$ runs no embedded uroce engine (no SYSFS_PATH from uroce-run --embedded in its environment)"
[ "$rc" = 1 ] && [ "$msg" = "$want" ] || {
  UROCE_WHY="got rc $rc '$msg'"
  st=1
}
uroce_verdict "uroce-ctl --pid of a process without an engine says so and exits 1" "$st"

st=0
touch "$hold"
uroce_wait "$PG" rc
left=$(ls "$TMPDIR")
[ "$rc" = 0 ] && [ -z "$left" ] || {
  UROCE_WHY="the program exited $rc, left in TMPDIR: '$left'"
  st=1
}
uroce_verdict "the program exits 0 and its run directory (with the socket) is gone" "$st"
uroce_summary embedded_ctl
