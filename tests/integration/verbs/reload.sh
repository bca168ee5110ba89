#!/usr/bin/env bash
# SIGHUP reloads the configuration (apps/uroced/config_reload.h): the daemon
# runs from its file; [limits] user_qps is added to the file and the daemon
# sent SIGHUP: an unprivileged client is then refused at exactly that many
# QPs (ENOMEM) and `uroce-ctl status --json` shows the new limit. A file
# that also changes a key that cannot change live (daemon.poll) is refused
# as a whole: the log names the key, and the limit stays what it was. A file
# that does not parse is refused too, and the daemon keeps serving. The TX
# class settings are live too: uroce0 runs isolation classes with class 0
# limited to 200 Mb/s; the file's limit becomes 100 Mb/s and SIGHUP: the
# log names the change, `uroce-ctl sched` shows 100, and an unmodified
# ib_write_bw from uroce0 reports at most 1.03 of 100 Mb/s of frames less
# their headers (4 KiB payload in 4,170-byte frames), and at least 0.85 of it
# less the time the engine was away beyond the class's 2 ms credit
# (engine_away.py): above 100 would mean the old limit still held.
#
#   reload.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vreload "$1" /usr/bin/python3 setpriv ib_write_bw

ABUSE=$VERBS_TEST_DIR/verbs_abuse.py
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

# The devices in the file, which SIGHUP reads again.
devices='[[device]]
name = "uroce0"
port = "ring:p0"
mac = "02:00:00:d7:00:01"
ipv4 = "10.219.0.1"
mtu = 9000
isolation = "classes"
class_rates_mbps = [200]

[[device]]
name = "uroce1"
port = "ring:p0"
mac = "02:00:00:d7:00:02"
ipv4 = "10.219.0.2"
mtu = 9000
'
uroce_daemon_start d --lcore 1 --toml "$devices"
run=${UROCE_DAEMON_RUN[d]}
log=${UROCE_DAEMON_LOG[d]}
pid=${UROCE_DAEMON_PID[d]}
conf=$UROCE_TMP/daemon-d/uroced.toml
R=("$UROCE_RUN" --run-dir "$run")

# hup N REGEX: sends SIGHUP and waits for the Nth line matching REGEX (the
# daemon logs the outcome of every reload).
hup() {
  local n=$1 regex=$2 deadline=$((SECONDS + 20))
  kill -HUP "$pid"
  while [ $SECONDS -lt $deadline ]; do
    [ "$(grep -cE -- "$regex" "$log")" -ge "$n" ] && return 0
    sleep 0.1
  done
  return 1
}

# qps_of: how many QPs nobody gets before a refusal, and the errno.
qps_of() {
  timeout 30 "${NOBODY[@]}" "${R[@]}" /usr/bin/python3 "$ABUSE" objects uroce0 20 2 2 2>&1 |
    sed -n '1s/^\(qps [0-9]* errno [0-9]*\),.*/\1/p'
}

limit_of() {
  "$UROCE_CTL" --run-dir "$run" status --json |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["limits"]["user_qps"])'
}

# quota_is N WHEN: nobody is refused (ENOMEM) at exactly N QPs and the
# status says user_qps N; st=1 otherwise.
quota_is() {
  local got lim
  got=$(qps_of)
  lim=$(limit_of)
  echo "  $2: nobody got '$got', status user_qps $lim"
  [ "$got" = "qps $1 errno 12" ] && [ "$lim" = "$1" ] || {
    UROCE_WHY="$2: nobody got '$got', status user_qps '$lim' (want 'qps $1 errno 12', $1)"
    st=1
  }
}

st=0
printf '\n[limits]\nuser_qps = 4\n' >>"$conf"
if ! hup 1 'SIGHUP: configuration reloaded: 1 change'; then
  UROCE_WHY="no reload line in the log ($(tail -n 3 "$log" | tr '\n' '|'))"
  st=1
fi
grep -F 'SIGHUP: limits.user_qps: 0 -> 4' "$log" >/dev/null || {
  UROCE_WHY="the log does not name limits.user_qps: 0 -> 4"
  st=1
}
quota_is 4 "after user_qps = 4"
uroce_verdict "SIGHUP takes a new [limits] value: the next client is held to it" "$st"

st=0
sed -i 's/^user_qps = 4$/user_qps = 9/; s/^poll = .*/poll = "busy"/' "$conf"
want='reload refused: daemon.poll \(backoff -> busy\) cannot change while uroced runs; restart it. Nothing was changed.'
if ! hup 1 "$want"; then
  UROCE_WHY="no refusal naming daemon.poll ($(tail -n 3 "$log" | tr '\n' '|'))"
  st=1
fi
quota_is 4 "after a refused reload"
uroce_verdict "a reload that changes a fixed key is refused as a whole and says which key" "$st"

st=0
echo 'user_qps = = 3' >>"$conf"
# The second refusal line: the first is the previous step's.
if ! hup 2 'SIGHUP: reload refused: .*Nothing was changed'; then
  UROCE_WHY="no refusal of a file that does not parse ($(tail -n 3 "$log" | tr '\n' '|'))"
  st=1
fi
quota_is 4 "after a bad file"
uroce_daemon_alive d || {
  UROCE_WHY="the daemon died"
  st=1
}
uroce_verdict "a file that does not parse is refused and the daemon keeps serving" "$st"

st=0
# The file again as it was before the bad line, with class 0 at 100 Mb/s.
sed -i '/^user_qps = = 3$/d; s/^user_qps = 9$/user_qps = 4/; s/^poll = "busy"$/poll = "backoff"/; s/^class_rates_mbps = \[200\]$/class_rates_mbps = [100]/' "$conf"
if ! hup 1 'SIGHUP: device\[0\]\.class_rates_mbps: 200,0,0,0,0,0,0,0 -> 100,0,0,0,0,0,0,0'; then
  UROCE_WHY="no reload line naming class_rates_mbps ($(tail -n 3 "$log" | tr '\n' '|'))"
  st=1
fi
table=$UROCE_TMP/sched.table
"$UROCE_CTL" --run-dir "$run" sched >"$table" 2>&1 || st=1
if ! grep -qE '^ +0  weighted +1 +100 ' "$table"; then
  UROCE_WHY="uroce-ctl sched does not show class 0's 100 Mb/s: $(head -n 4 "$table" | tr '\n' '|')"
  st=1
fi
"$UROCE_CTL" --run-dir "$run" status --json >"$UROCE_TMP/loops.before.json" 2>&1 || st=1
uroce_next_port port
uroce_pair "ib_write_bw after the reload" 60 "$port" - - -- \
  "${R[@]}" ib_write_bw -d uroce1 -x 1 -p "$port" -F -s 65536 -D 2 --report_gbits ::: \
  "${R[@]}" ib_write_bw -d uroce0 -x 1 -p "$port" -F -s 65536 -D 2 --report_gbits 127.0.0.1 ||
  st=1
if [ "$st" -eq 0 ]; then
  "$UROCE_CTL" --run-dir "$run" status --json >"$UROCE_TMP/loops.after.json" 2>&1 || st=1
  verbs_class_rate_check 0.1 2 "$UROCE_TMP/loops.before.json" "$UROCE_TMP/loops.after.json" || st=1
fi
uroce_verdict "SIGHUP takes new TX class settings: class 0 runs at its new 100 Mb/s" "$st"

verbs_daemons_stop "uroced exits 0 on SIGTERM after the reloads" d
uroce_summary reload
