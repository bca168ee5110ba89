#!/usr/bin/env bash
# Issue 32 (metrics): a daemon with its metrics listener on a unix socket
# (daemon.metrics_listen); RC, UC and UD pingpongs and ib_write_bw through
# it, while a client holds two QPs. Then, with the programs done and again
# while an ib_write_bw runs, `curl --unix-socket` fetches /metrics between
# two pairs of `uroce-ctl counters --json` and `uroce-ctl metrics --json`:
# every counter of the status must be there under its name and labels, a
# count within its two readings (equal when they are: metrics_check.py),
# the sums by QP class and the holding client's series too; `promtool
# check metrics` must find nothing (promtool from Debian's prometheus
# package, which scripts/setup.sh unpacks, or UROCE_PROMTOOL). nobody's curl gets the class
# sums but no client's series; another path is 404; the socket goes with
# the daemon.
#
#   metrics.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vmetrics "$1" ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ib_write_bw curl \
  /usr/bin/python3 setpriv

CHECK=$VERBS_TEST_DIR/metrics_check.py
ABUSE=$VERBS_TEST_DIR/verbs_abuse.py
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
SOCK=$UROCE_TMP/metrics.sock
# promtool: given, installed, or unpacked by scripts/setup.sh.
PROMTOOL=${UROCE_PROMTOOL:-$(command -v promtool || true)}
if [ -z "$PROMTOOL" ] && [ -x /var/cache/uroce-test/prometheus/usr/bin/promtool ]; then
  PROMTOOL=/var/cache/uroce-test/prometheus/usr/bin/promtool
fi

uroce_daemon_start d --lcore 1 --daemon-key "metrics_listen = \"unix:$SOCK\"" -- \
  --device "$(verbs_device uroce0 02:00:00:e6:00:01 10.224.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:e6:00:02 10.224.0.2 ring:p0)"
run=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$run")
CTL=("$UROCE_CTL" --run-dir "$run")

# snapshot TAG: the listener's text between two pairs of readings.
snapshot() {
  local t=$UROCE_TMP/$1
  "${CTL[@]}" counters --json >"$t.c1.json" &&
    "${CTL[@]}" metrics --json >"$t.k1.json" &&
    curl -sS --fail --max-time 20 --unix-socket "$SOCK" -D "$t.headers" -o "$t.prom" \
      http://localhost/metrics &&
    "${CTL[@]}" metrics --json >"$t.k2.json" &&
    "${CTL[@]}" counters --json >"$t.c2.json"
}

# judge TAG LABEL: metrics_check.py and promtool on a snapshot.
judge() {
  local t=$UROCE_TMP/$1 label=$2 st=0 out
  if ! out=$(/usr/bin/python3 "$CHECK" "$t.prom" "$t.c1.json" "$t.c2.json" "$t.k1.json" \
    "$t.k2.json"); then
    UROCE_WHY=$(echo "$out" | head -n 12 | tr '\n' '|')
    st=1
  fi
  echo "  $(echo "$out" | sed -n 1p)"
  if [ "$st" -eq 0 ] && ! tr -d '\r' <"$t.headers" |
    grep -qix 'Content-Type: text/plain; version=0.0.4; charset=utf-8'; then
    UROCE_WHY="Content-Type: $(grep -i '^content-type' "$t.headers")"
    st=1
  fi
  uroce_verdict "$label: every status counter present, within its two readings" "$st"
  if [ -n "$PROMTOOL" ]; then
    st=0
    if ! out=$("$PROMTOOL" check metrics <"$t.prom" 2>&1); then
      UROCE_WHY="promtool: $(echo "$out" | head -n 8 | tr '\n' '|')"
      st=1
    fi
    uroce_verdict "$label: promtool check metrics clean" "$st"
  else
    echo "  NOTE: promtool not installed (Debian's prometheus package): the exposition was not linted"
  fi
}

# A client holding two RC QPs and a CQ until released.
hold=$UROCE_TMP/release
uroce_bg HPG --timeout 120 "$UROCE_TMP/holder.out" "$UROCE_TMP/holder.out" -- \
  "${R[@]}" /usr/bin/python3 "$ABUSE" objects uroce0 2 1 1 --hold "$hold"
if ! uroce_wait_for_line "$UROCE_TMP/holder.out" '^qps 2 ' 30 "$HPG"; then
  UROCE_WHY="the holding client did not make its QPs: $(tail -n 2 "$UROCE_TMP/holder.out" | tr '\n' '|')"
  uroce_verdict "a client holds two QPs" 1
fi

verbs_pingpong ibv_rc_pingpong "ibv_rc_pingpong 4 KiB x 500" 4096 500
verbs_pingpong ibv_uc_pingpong "ibv_uc_pingpong 4 KiB x 500" 4096 500
verbs_pingpong ibv_ud_pingpong "ibv_ud_pingpong 1 KiB x 500" 1024 500
PP_ITERS=2000 verbs_perf ib_write_bw bw "ib_write_bw 64 KiB x 2000" -s 65536

st=0
snapshot idle || st=1
uroce_verdict "curl --unix-socket: /metrics with the programs done" "$st"
[ "$st" -eq 0 ] && judge idle "programs done"
# The held QPs are one line of the sums by class; the holder is a client.
st=0
grep -q '^uroce_qp_class_qps{device="uroce0",type="RC",class="0"} 2$' "$UROCE_TMP/idle.prom" || {
  UROCE_WHY="no class line of the two held RC QPs: $(grep '^uroce_qp_class_qps' "$UROCE_TMP/idle.prom" | tr '\n' '|')"
  st=1
}
grep -q '^uroce_client_requests_total{client=' "$UROCE_TMP/idle.prom" || {
  UROCE_WHY="no client series"
  st=1
}
grep -qE '^uroce_device_tx_frames_total\{device="uroce1"\} [1-9]' "$UROCE_TMP/idle.prom" || {
  UROCE_WHY="uroce1 sent nothing?"
  st=1
}
uroce_verdict "the held QPs' class line, the client's series, the traffic's frames" "$st"

# uroce-ctl metrics: the same families as the listener's, promtool-clean.
st=0
ctl_prom=$UROCE_TMP/ctl.prom
"${CTL[@]}" metrics >"$ctl_prom" 2>"$UROCE_TMP/ctl.err" || {
  UROCE_WHY="uroce-ctl metrics failed: $(head -c 300 "$UROCE_TMP/ctl.err")"
  st=1
}
if [ "$st" -eq 0 ] && ! diff <(grep '^# TYPE' "$ctl_prom" | sort) \
  <(grep '^# TYPE' "$UROCE_TMP/idle.prom" | sort) >"$UROCE_TMP/families.diff"; then
  UROCE_WHY="families differ from the listener's: $(head -n 6 "$UROCE_TMP/families.diff" | tr '\n' '|')"
  st=1
fi
if [ "$st" -eq 0 ] && [ -n "$PROMTOOL" ] && ! out=$("$PROMTOOL" check metrics <"$ctl_prom" 2>&1); then
  UROCE_WHY="promtool: $(echo "$out" | head -n 8 | tr '\n' '|')"
  st=1
fi
echo "  uroce-ctl metrics: $(grep -c '^# TYPE' "$ctl_prom") families, $(grep -vc '^#' "$ctl_prom") samples"
uroce_verdict "uroce-ctl metrics: the listener's families${PROMTOOL:+, promtool clean}" "$st"

# nobody: the class sums (they name no client), no client and no user.
st=0
as_nobody=$UROCE_TMP/nobody.prom
# (The root shell writes the file: nobody may not write in the work dir.)
"${NOBODY[@]}" curl -sS --fail --max-time 20 --unix-socket "$SOCK" http://localhost/metrics \
  >"$as_nobody" 2>"$UROCE_TMP/nobody.err" || {
  UROCE_WHY="curl as nobody failed: $(head -c 300 "$UROCE_TMP/nobody.err")"
  st=1
}
if [ "$st" -eq 0 ]; then
  if ! grep -q '^uroce_qp_class_qps{device="uroce0",type="RC",class="0"} 2$' "$as_nobody"; then
    UROCE_WHY="nobody does not see the class sums"; st=1
  elif grep -qE '^uroce_(client|client_used|client_qp|user)_' "$as_nobody"; then
    UROCE_WHY="nobody sees another user's client or usage: $(grep -E '^uroce_(client|user)_' "$as_nobody" | head -n 2 | tr '\n' '|')"
    st=1
  fi
fi
uroce_verdict "as nobody: the class sums, no other user's client" "$st"

st=0
code=$(curl -sS --max-time 20 --unix-socket "$SOCK" -o /dev/null -w '%{http_code}' \
  http://localhost/other) || st=1
[ "$code" = 404 ] || { UROCE_WHY="GET /other answered ${code:-nothing}"; st=1; }
uroce_verdict "GET /other: 404" "$st"

# While ib_write_bw runs: wait for its two QPs to carry data, then take the
# snapshot (the test lasts 8 s; the snapshot well under one).
uroce_next_port port
bw_srv=$UROCE_TMP/bw.srv bw_cli=$UROCE_TMP/bw.cli
uroce_bg SPG --timeout 60 "$bw_srv" "$bw_srv" -- \
  "${R[@]}" ib_write_bw -d uroce1 -x 1 -p "$port" -F -s 65536 -D 8
uroce_wait_listen - "$port" 30 "$SPG" || true
uroce_bg CPG --timeout 60 "$bw_cli" "$bw_cli" -- \
  "${R[@]}" ib_write_bw -d uroce0 -x 1 -p "$port" -F -s 65536 -D 8 127.0.0.1
busy=0
deadline=$((SECONDS + 30))
while [ $SECONDS -lt $deadline ]; do
  # Two RC lines of traffic beside the held ones: ib_write_bw's QPs on each
  # device, the requester's having sent.
  if "${CTL[@]}" metrics --json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
k = json.load(sys.stdin)
rc = [c for c in k.get("qp_classes", []) if c["type"] == "RC"]
sent = [c for c in rc if c["device"] == "uroce0" and c["engine"]["tx_packets"] > 100]
sys.exit(0 if len(rc) >= 2 and sent else 1)'; then
    busy=1
    break
  fi
  uroce_running "$CPG" || break
  sleep 0.1
done
st=0
if [ "$busy" -ne 1 ]; then
  UROCE_WHY="ib_write_bw's QPs never carried data: $(tail -n 3 "$bw_cli" | tr '\n' '|')"
  st=1
else
  snapshot busy || st=1
fi
uroce_verdict "curl --unix-socket: /metrics during ib_write_bw" "$st"
[ "$st" -eq 0 ] && judge busy "during traffic"
uroce_wait "$CPG" bw_rc
uroce_wait "$SPG" bw_rs
st=0
[ "$bw_rc" -eq 0 ] && [ "$bw_rs" -eq 0 ] || {
  UROCE_WHY="ib_write_bw exited $bw_rs (server), $bw_rc (client)"; st=1
}
uroce_verdict "ib_write_bw -D 8 beside the scrapes" "$st"

touch "$hold"
uroce_wait "$HPG" ignored
verbs_daemons_stop "uroced exits 0 on SIGTERM" d
st=0
[ -e "$SOCK" ] && { UROCE_WHY="$SOCK left behind"; st=1; }
uroce_verdict "the metrics socket goes with the daemon" "$st"
uroce_summary metrics
