#!/usr/bin/env bash
# Memory registration reads the client's memory through /proc/PID/map_files
# (docs/shm.md), so it depends on where uroced and its clients sit in PID
# namespaces:
#   - a client in a PID namespace of its own (a container under a host
#     daemon): the socket reports its pid as the daemon sees it, and an
#     ibv_rc_pingpong with data checks runs with its server in there;
#   - a daemon in a PID namespace of its own cannot see a host client (the
#     kernel reports pid 0): registration fails with EPERM and the daemon
#     says why, once per connection; opening the device still works.
#
#   pid_namespace.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vpidns "$1" ibv_rc_pingpong unshare /usr/bin/python3

ABUSE=$VERBS_TEST_DIR/verbs_abuse.py
DEV0=$(verbs_device uroce0 02:00:00:d1:00:01 10.211.0.1 ring:p0)
DEV1=$(verbs_device uroce1 02:00:00:d1:00:02 10.211.0.2 ring:p0)

uroce_daemon_start host --lcore 1 -- --device "$DEV0" --device "$DEV1"
R=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[host]}")
uroce_next_port port
st=0
uroce_pair "ibv_rc_pingpong, server in a PID namespace of its own" 30 "$port" - - -- \
  unshare --pid --fork --kill-child --mount-proc \
  "${R[@]}" ibv_rc_pingpong -d uroce0 -g 1 -p "$port" -c ::: \
  "${R[@]}" ibv_rc_pingpong -d uroce1 -g 1 -p "$port" -c 127.0.0.1 &&
  uroce_check_pingpong 4096 1000 || st=1
[ "$st" -eq 0 ] && echo "  $UROCE_RESULT"
uroce_verdict "a client in a child PID namespace registers memory and runs ibv_rc_pingpong -c" "$st"
verbs_daemons_stop "uroced exits 0 on SIGTERM" host

# The daemon in a PID namespace (and mount namespace, for its own /proc).
# unshare does not pass SIGTERM on to its child: the wrapper does, so that
# the daemon stops (and cleans up) as the harness expects.
wrapper=$UROCE_TMP/uroced-in-pidns
cat >"$wrapper" <<WRAP
#!/usr/bin/env bash
unshare --pid --fork --kill-child --mount-proc $(printf %q "$UROCED") "\$@" &
child=\$!
trap 'pkill -TERM -P \$child' TERM
wait \$child
wait \$child
WRAP
chmod 755 "$wrapper"
host_uroced=$UROCED
UROCED=$wrapper
uroce_daemon_start contained --lcore 1 -- --device "$DEV0" --device "$DEV1"
UROCED=$host_uroced
run=${UROCE_DAEMON_RUN[contained]}
log=${UROCE_DAEMON_LOG[contained]}
st=0
out=$UROCE_TMP/regmr.out
for i in 1 2; do
  if ! timeout 20 "$UROCE_RUN" --run-dir "$run" /usr/bin/python3 "$ABUSE" regmr uroce0 >>"$out" 2>&1; then
    UROCE_WHY="the client failed: $(tail -n 3 "$out" | tr '\n' '|')"
    st=1
  fi
done
cat "$out"
said=$(grep -c "not visible in uroced's PID namespace" "$log" || true)
if [ "$st" -eq 0 ] && [ "$(grep -c '^reg_mr errno 1$' "$out")" -ne 2 ]; then
  UROCE_WHY="expected 'reg_mr errno 1' (EPERM) twice: $(tr '\n' '|' <"$out")"
  st=1
elif [ "$st" -eq 0 ] && [ "$said" -ne 2 ]; then
  UROCE_WHY="the daemon's log explains it $said times (want once per connection, 2)"
  st=1
fi
echo "  daemon log: $said explanations"
uroce_verdict "a client the daemon's PID namespace cannot see gets EPERM from reg_mr, and the log says why" "$st"
verbs_daemons_stop "uroced in a PID namespace exits 0 on SIGTERM" contained
uroce_summary pid_namespace
