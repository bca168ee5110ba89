#!/usr/bin/env bash
# What happens when a party misbehaves, with stock programs:
#   1. a client SIGKILLed in the middle of a pingpong: the daemon drops its
#      objects (uroce-ctl clients --json no longer lists it) within a few
#      seconds, and keeps serving others;
#   2. another user: a client run as nobody works against root's server,
#      and a hostile client (ctl_probe.py), as nobody and as root, gets
#      ENOENT for every handle while root's pingpong holds live objects,
#      which must then still carry a verified pingpong;
#   3. the daemon SIGKILLed under a running pingpong: both programs exit
#      non-zero within a few seconds (completion-event mode: EOF on the
#      channel; polling mode: poll_cq fails) instead of hanging; and
#      SIGTERMed: it exits 0 within 5 s with clients connected, and the
#      programs exit non-zero as well.
#
#   robustness.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vrobust "$1" ibv_rc_pingpong setpriv stdbuf pgrep

CLIENTS=$VERBS_TEST_DIR/ctl_clients.py
PROBE=$VERBS_TEST_DIR/ctl_probe.py
# Whatever a non-root client needs to reach: the tools and the tests.
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

start_daemon() {  # NAME
  uroce_daemon_start "$1" --lcore 1 -- \
    --device "$(verbs_device uroce0 02:00:00:cd:00:01 10.205.0.1 ring:p0)" \
    --device "$(verbs_device uroce1 02:00:00:cd:00:02 10.205.0.2 ring:p0)"
}

# clients_json DAEMON FILE: uroce-ctl clients --json into FILE.
clients_json() {
  "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[$1]}" clients --json >"$2" 2>&1
}

# listed DAEMON PID...: true when uroce-ctl lists one of the PIDs.
listed() {
  local d=$1
  shift
  local f=$UROCE_TMP/clients.json
  clients_json "$d" "$f" || { echo "uroce-ctl clients --json failed: $(head -c 300 "$f")"; return 2; }
  "$CLIENTS" "$@" <"$f"
}

# until_gone DAEMON SECS PID...: true once none of the PIDs is listed.
until_gone() {
  local d=$1 secs=$2
  shift 2
  local deadline=$((SECONDS + secs)) rc
  while :; do
    rc=0
    listed "$d" "$@" >"$UROCE_TMP/listed.out" || rc=$?
    [ "$rc" -eq 1 ] && return 0
    [ $SECONDS -ge "$deadline" ] && return 1
    sleep 0.2
  done
}

# A long pingpong pair whose output is line-buffered (so "remote address"
# shows up while it runs). Sets SRV_PG/CLI_PG (process groups), SRV_PID/
# CLI_PID (the programs) and PP_PORT. Args: DAEMON LABEL EXTRA-ARGS...
start_long_pair() {
  local d=$1 label=$2
  shift 2
  local -a r=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[$d]}")
  SRV_PG='' CLI_PG='' SRV_PID='' CLI_PID=''
  uroce_next_port PP_PORT
  PP_SRV_OUT=$UROCE_TMP/$label.server.out
  PP_CLI_OUT=$UROCE_TMP/$label.client.out
  UROCE_SRV_OUT=$PP_SRV_OUT UROCE_SRV_ERR=$PP_SRV_OUT.err
  UROCE_CLI_OUT=$PP_CLI_OUT UROCE_CLI_ERR=$PP_CLI_OUT.err
  local -a srv=("${r[@]}" stdbuf -oL ibv_rc_pingpong -d uroce0 -g 1 -p "$PP_PORT" -n 100000000 "$@")
  local -a cli=("${r[@]}" stdbuf -oL ibv_rc_pingpong -d uroce1 -g 1 -p "$PP_PORT" -n 100000000 "$@" 127.0.0.1)
  UROCE_SRV_CMD="${srv[*]}" UROCE_CLI_CMD="${cli[*]}"
  UROCE_SRV_RC=- UROCE_CLI_RC=-
  uroce_bg SRV_PG --timeout 120 "$PP_SRV_OUT" "$UROCE_SRV_ERR" -- "${srv[@]}"
  uroce_wait_listen - "$PP_PORT" 20 "$SRV_PG" || { UROCE_WHY="server never listened"; return 1; }
  uroce_bg CLI_PG --timeout 120 "$PP_CLI_OUT" "$UROCE_CLI_ERR" -- "${cli[@]}"
  if ! uroce_wait_for_line "$PP_SRV_OUT" 'remote address' 20 "$SRV_PG" ||
    ! uroce_wait_for_line "$PP_CLI_OUT" 'remote address' 20 "$CLI_PG"; then
    UROCE_WHY="the pair did not connect"
    return 1
  fi
  SRV_PID=$(pgrep -g "$SRV_PG" -x ibv_rc_pingpong | sed -n 1p)
  CLI_PID=$(pgrep -g "$CLI_PG" -x ibv_rc_pingpong | sed -n 1p)
  if [ -z "$SRV_PID" ] || [ -z "$CLI_PID" ]; then
    UROCE_WHY="cannot find the ibv_rc_pingpong processes"
    return 1
  fi
  # Let the exchange run (both sides in their loops).
  sleep 1
  if ! uroce_running "$SRV_PID" || ! uroce_running "$CLI_PID"; then
    UROCE_WHY="the pair ended early"
    return 1
  fi
}

# exits_within PGID SECS VAR: true when the process group's leader exits
# within SECS; its status goes to VAR. Kills it otherwise.
exits_within() {
  local pg=$1 secs=$2 deadline=$((SECONDS + $2))
  while uroce_running "$pg" && [ $SECONDS -lt "$deadline" ]; do
    sleep 0.1
  done
  if uroce_running "$pg"; then
    uroce_kill_group KILL "$pg"
    uroce_wait "$pg" "$3"
    return 1
  fi
  uroce_wait "$pg" "$3"
}

# short_pair DAEMON LABEL [CLIENT-PREFIX...]: a verified 200-iteration
# pingpong, server as root on uroce0, client on uroce1 (optionally under a
# prefix such as setpriv).
short_pair() {
  local d=$1 label=$2
  shift 2
  local -a r=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[$d]}")
  local port st=0
  uroce_next_port port
  uroce_pair "$label" 60 "$port" - - -- \
    "${r[@]}" ibv_rc_pingpong -d uroce0 -g 1 -p "$port" -n 200 -c ::: \
    "$@" "${r[@]}" ibv_rc_pingpong -d uroce1 -g 1 -p "$port" -n 200 -c 127.0.0.1 &&
    uroce_check_pingpong 4096 200 || st=1
  uroce_verdict "$label" "$st"
}

start_daemon d

# ---- 1. a client killed mid-run ----------------------------------------------
st=0
if start_long_pair d killclient; then
  if ! listed d "$CLI_PID" >"$UROCE_TMP/listed.out"; then
    UROCE_WHY="uroce-ctl clients does not list the running client (pid $CLI_PID): $(cat "$UROCE_TMP/listed.out")"
    st=1
  else
    sed 's/^/  before: /' "$UROCE_TMP/listed.out"
    uroce_kill_group KILL "$CLI_PG"
    uroce_wait "$CLI_PG" UROCE_IGNORED_RC
    if until_gone d 5 "$CLI_PID"; then
      sed 's/^/  after:  /' "$UROCE_TMP/listed.out"
    else
      UROCE_WHY="client pid $CLI_PID still listed 5 s after SIGKILL: $(cat "$UROCE_TMP/listed.out")"
      st=1
    fi
  fi
else
  st=1
fi
uroce_verdict "SIGKILLed client's objects are destroyed within 5 s" "$st"
uroce_kill_group KILL "${SRV_PG:-}"
[ -z "${SRV_PG:-}" ] || uroce_wait "$SRV_PG" UROCE_IGNORED_RC
uroce_no_pair
st=0
if ! until_gone d 5 "${SRV_PID:-0}" || listed d >/dev/null; then
  UROCE_WHY="clients still listed after both programs died: $(cat "$UROCE_TMP/listed.out")"
  st=1
fi
uroce_verdict "no client listed once both programs are gone" "$st"
short_pair d "the daemon still serves a new pair after the kill"

# ---- 2. another user -----------------------------------------------------------
short_pair d "a client running as nobody talks to root's server" "${NOBODY[@]}"

st=0
probe_log=$UROCE_TMP/probe.out
if start_long_pair d probed; then
  sock=${UROCE_DAEMON_RUN[d]}/uroced.sock
  for who in nobody root; do
    prefix=()
    [ "$who" = nobody ] && prefix=("${NOBODY[@]}")
    if ! "${prefix[@]}" /usr/bin/python3 "$PROBE" "$sock" uroce0 64 >"$probe_log" 2>&1; then
      UROCE_WHY="ctl_probe.py as $who: $(head -n 5 "$probe_log" | tr '\n' '|')"
      st=1
      break
    fi
    echo "  probe as $who: $(tail -n 1 "$probe_log")"
  done
  # The probed pair must still be exchanging: both alive, and the client's
  # objects still listed.
  if [ "$st" -eq 0 ]; then
    sleep 0.5
    if ! uroce_running "$SRV_PID" || ! uroce_running "$CLI_PID"; then
      UROCE_WHY="root's pingpong died while the probe ran: $(tail -n 2 "$UROCE_CLI_ERR" "$UROCE_SRV_ERR" | tr '\n' '|')"
      st=1
    elif ! listed d "$CLI_PID" >/dev/null; then
      UROCE_WHY="root's client vanished from uroce-ctl clients during the probe"
      st=1
    fi
  fi
else
  st=1
fi
uroce_kill_group KILL "${CLI_PG:-}"
uroce_kill_group KILL "${SRV_PG:-}"
[ -z "${CLI_PG:-}" ] || uroce_wait "$CLI_PG" UROCE_IGNORED_RC
[ -z "${SRV_PG:-}" ] || uroce_wait "$SRV_PG" UROCE_IGNORED_RC
uroce_verdict "foreign handles (another connection, as nobody and as root) get ENOENT" "$st"
short_pair d "the daemon still serves a verified pair after the probes"

uroce_no_pair
verbs_daemons_stop "uroced exits 0 on SIGTERM after all this" d

# ---- 3. the daemon killed or stopped under running programs ------------------
# SIGKILL: nothing is cleaned up, the programs must notice the dead socket.
# SIGTERM: the daemon must also exit 0 within 5 s with clients connected,
# removing its run dir and nodes, and the programs must notice it as well.
for spec in "KILL events" "KILL polling" "TERM events"; do
  read -r sig mode <<<"$spec"
  name=k$sig$mode
  extra=()
  [ "$mode" = events ] && extra=(-e)
  st=0
  if ! start_daemon "$name"; then
    UROCE_WHY="daemon $name did not start"; st=1
  elif start_long_pair "$name" "daemon$sig-$mode" "${extra[@]}"; then
    if [ "$sig" = KILL ]; then
      uroce_daemon_kill "$name"
    elif ! uroce_daemon_stop "$name" 5; then
      UROCE_WHY="uroced did not exit 0 within 5 s of SIGTERM with two clients connected (or left files behind)"
      st=1
    fi
    src=0 crc=0
    if ! exits_within "$CLI_PG" 5 crc; then
      UROCE_WHY="${UROCE_WHY:+$UROCE_WHY; }client still running 5 s after the daemon went (hang)"
      st=1
    fi
    if ! exits_within "$SRV_PG" 5 src; then
      UROCE_WHY="${UROCE_WHY:+$UROCE_WHY; }server still running 5 s after the daemon went (hang)"
      st=1
    fi
    UROCE_SRV_RC=$src UROCE_CLI_RC=$crc
    if [ "$st" -eq 0 ] && { [ "$crc" -eq 0 ] || [ "$src" -eq 0 ]; }; then
      UROCE_WHY="a program exited 0 although its device went away (server $src, client $crc)"
      st=1
    fi
    [ "$st" -eq 0 ] && echo "  exit status: server $src, client $crc; client stderr: $(tail -n 1 "$UROCE_CLI_ERR")"
  else
    st=1
  fi
  uroce_verdict "daemon SIG$sig: ibv_rc_pingpong ($mode) exits non-zero within 5 s" "$st"
done

uroce_summary robustness
