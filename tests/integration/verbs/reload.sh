#!/usr/bin/env bash
# SIGHUP reloads the configuration (apps/uroced/config_reload.h): the daemon
# runs from its file; [limits] user_qps is added to the file and the daemon
# sent SIGHUP: an unprivileged client is then refused at exactly that many
# QPs (ENOMEM) and `uroce-ctl status --json` shows the new limit. A file
# that also changes a key that cannot change live (daemon.poll) is refused
# as a whole: the log names the key, and the limit stays what it was. A file
# that does not parse is refused too, and the daemon keeps serving.
#
#   reload.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vreload "$1" /usr/bin/python3 setpriv

ABUSE=$VERBS_TEST_DIR/verbs_abuse.py
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d7:00:01 10.219.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d7:00:02 10.219.0.2 ring:p0)"
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
got=$(qps_of)
lim=$(limit_of)
echo "  after user_qps = 4: nobody got '$got', status user_qps $lim"
[ "$got" = "qps 4 errno 12" ] && [ "$lim" = 4 ] || {
  UROCE_WHY="nobody got '$got', status user_qps '$lim' (want 'qps 4 errno 12', 4)"
  st=1
}
uroce_verdict "SIGHUP takes a new [limits] value: the next client is held to it" "$st"

st=0
sed -i 's/^user_qps = 4$/user_qps = 9/; s/^poll = .*/poll = "busy"/' "$conf"
want='reload refused: daemon.poll \(backoff -> busy\) cannot change while uroced runs; restart it. Nothing was changed.'
if ! hup 1 "$want"; then
  UROCE_WHY="no refusal naming daemon.poll ($(tail -n 3 "$log" | tr '\n' '|'))"
  st=1
fi
got=$(qps_of)
lim=$(limit_of)
echo "  after a refused reload: nobody got '$got', status user_qps $lim"
[ "$got" = "qps 4 errno 12" ] && [ "$lim" = 4 ] || {
  UROCE_WHY="after the refusal nobody got '$got', status '$lim' (want the old limit 4)"
  st=1
}
uroce_verdict "a reload that changes a fixed key is refused as a whole and says which key" "$st"

st=0
echo 'user_qps = = 3' >>"$conf"
if ! hup 1 'SIGHUP: reload refused: .*Nothing was changed'; then
  UROCE_WHY="no refusal of a file that does not parse ($(tail -n 3 "$log" | tr '\n' '|'))"
  st=1
fi
got=$(qps_of)
[ "$got" = "qps 4 errno 12" ] || {
  UROCE_WHY="after a bad file nobody got '$got'"
  st=1
}
uroce_daemon_alive d || {
  UROCE_WHY="the daemon died"
  st=1
}
uroce_verdict "a file that does not parse is refused and the daemon keeps serving" "$st"

verbs_daemons_stop "uroced exits 0 on SIGTERM after the reloads" d
uroce_summary reload
