#!/usr/bin/env bash
# rdma_cm through uroce-run: one uroced, uroce0 and uroce1 on a crossed
# net_ring pair, unmodified librdmacm programs connecting with IBTA CM MADs
# over QP1 (docs/cm.md): rping with data verification, ib_send_lat -R,
# ib_write_bw -R, ib_atomic_bw -R (the QPs get remote atomic access from the
# CM, as Linux's gives it), rdma_server/rdma_client, udaddy (SIDR), mckey
# (UD multicast joined through the CM); a connect to a port nobody listens
# on (REJ); a listener killed with SIGKILL (its ids reclaimed, its port
# free again).
#
#   ring_rdma_cm.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vring_cm "$1" rping ib_send_lat ib_write_bw ib_atomic_bw rdma_server rdma_client udaddy mckey

IP0=10.203.0.1
IP1=10.203.0.2
uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:cb:00:01 $IP0 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:cb:00:02 $IP1 ring:p0)"
RUN=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$RUN")

cm_json() { "$UROCE_CTL" --run-dir "$RUN" --json status; }
rej_no_listener() { cm_json | grep -o '"rej_no_listener":[0-9]*' | cut -d: -f2; }

# uroce0 resolves IP1 first (uroce1 learns IP0 from its request): the
# rdma_cm programs below allow 2 s for it.
uroce_cm_resolve "$RUN" $IP1 60 || echo "address resolution of $IP1 still failing after 60 s"

# rping_pings LIMIT PORT N LABEL: rping -v -C N from uroce0 to the server on
# uroce1 (IP1, PORT), each ping verified by the server and echoed back:
# true when both sides printed all N, the client's last one included (its
# exit race tolerated: uroce_rping_exit_race).
rping_pings() {
  local limit=$1 port=$2 n=$3 label=$4 nc ns
  uroce_pair "$label" "$limit" "cm:$RUN" - - -- \
    "${R[@]}" rping -s -v -a $IP1 -p "$port" -C "$n" ::: \
    "${R[@]}" rping -c -v -a $IP1 -p "$port" -C "$n" || uroce_rping_exit_race || return 1
  nc=$(grep -c '^ping data: rdma-ping-' "$UROCE_CLI_OUT" || true)
  ns=$(grep -c '^server ping data: rdma-ping-' "$UROCE_SRV_OUT" || true)
  if [ "$nc" -ne "$n" ] || [ "$ns" -ne "$n" ]; then
    UROCE_WHY="expected $n pings on each side, client $nc, server $ns"
    return 1
  fi
  if ! grep -q "^ping data: rdma-ping-$((n - 1)): " "$UROCE_CLI_OUT"; then
    UROCE_WHY="the client's last ping (rdma-ping-$((n - 1))) is missing"
    return 1
  fi
}

# ---- rping: 100 pings ----------------------------------------------------
uroce_next_port port
st=0
rping_pings 60 "$port" 100 "rping -v -C 100" || st=1
uroce_verdict "rping -v -C 100 uroce0 -> uroce1 (100 pings verified on both sides)" "$st"

# ---- perftest over rdma_cm ------------------------------------------------
perf_cm() {  # PROGRAM KIND ITERS LABEL
  local prog=$1 kind=$2 iters=$3 label=$4 st=0
  uroce_next_port port
  uroce_pair "$label" 60 "cm:$RUN" - - -- \
    "${R[@]}" "$prog" -d uroce1 -R -p "$port" -n "$iters" ::: \
    "${R[@]}" "$prog" -d uroce0 -R -p "$port" -n "$iters" $IP1 &&
    uroce_check_perftest "$kind" "$iters" || st=1
  [ "$st" -eq 0 ] && echo "$UROCE_RESULT" | sed 's/^/  /'
  uroce_verdict "$label" "$st"
}
perf_cm ib_send_lat lat 1000 "ib_send_lat -R -n 1000 uroce0 -> uroce1"
perf_cm ib_write_bw bw 5000 "ib_write_bw -R -n 5000 uroce0 -> uroce1"
# Atomics need IBV_ACCESS_REMOTE_ATOMIC on the responder's QP, which only
# the CM's INIT attributes give it here (perftest adds none with -R).
perf_cm ib_atomic_bw bw 5000 "ib_atomic_bw -R -n 5000 uroce0 -> uroce1 (fetch-and-add)"

# ---- rdma_server / rdma_client (rdma_getaddrinfo, rdma_create_ep) ----------
uroce_next_port port
st=0
uroce_pair "rdma_server/rdma_client" 30 "cm:$RUN" - - -- \
  "${R[@]}" rdma_server -p "$port" ::: \
  "${R[@]}" rdma_client -s $IP1 -p "$port" || st=1
if [ "$st" -eq 0 ]; then
  grep -qx 'rdma_client: end 0' "$UROCE_CLI_OUT" || { UROCE_WHY="no 'rdma_client: end 0'"; st=1; }
  grep -qx 'rdma_server: end 0' "$UROCE_SRV_OUT" || { UROCE_WHY="no 'rdma_server: end 0'"; st=1; }
fi
uroce_verdict "rdma_server/rdma_client uroce0 -> uroce1" "$st"

# ---- udaddy: UD QPs resolved with SIDR, 50 messages each way --------------
# (udaddy's -p is the port space; it always uses port 7174.)
st=0
uroce_pair "udaddy -C 50" 30 "cm:$RUN" - - -- \
  "${R[@]}" udaddy -b $IP1 -C 50 ::: \
  "${R[@]}" udaddy -s $IP1 -C 50 || st=1
if [ "$st" -eq 0 ]; then
  for f in "$UROCE_SRV_OUT" "$UROCE_CLI_OUT"; do
    grep -qx 'return status 0' "$f" || { UROCE_WHY="no 'return status 0' in ${f##*/}"; st=1; }
  done
fi
uroce_verdict "udaddy -C 50 uroce0 -> uroce1 (SIDR, UD both ways)" "$st"

# ---- mckey: UD multicast joined through rdma_cm ---------------------------
# The receiver joins 239.203.0.1 on uroce1; the sender, once the receiver's
# QP is in the group, joins on uroce0 and sends to it (docs/multicast.md).
rx_mcast() {  # the devices' rx_mcast, summed
  "$UROCE_CTL" --run-dir "$RUN" --json counters | grep -o '"rx_mcast":[0-9]*' |
    awk -F: '{ s += $2 } END { print s + 0 }'
}
mckey_pair() {  # LABEL MESSAGES SIZE SENDER-OPTIONS...
  local label=$1 n=$2 size=$3 st=0 before after
  shift 3
  before=$(rx_mcast)
  uroce_pair "$label" 30 "mcast:$RUN" - - -- \
    "${R[@]}" mckey -m 239.203.0.1 -b $IP1 -C "$n" -S "$size" ::: \
    "${R[@]}" mckey -m 239.203.0.1 -b $IP0 -s -C "$n" -S "$size" "$@" || st=1
  if [ "$st" -eq 0 ]; then
    for f in "$UROCE_SRV_OUT" "$UROCE_CLI_OUT"; do
      grep -qx 'return status 0' "$f" || { UROCE_WHY="no 'return status 0' in ${f##*/}"; st=1; }
    done
    grep -qx 'mckey: joined dgid: ::ffff:239.203.0.1 mlid 0x0 sl 0' "$UROCE_SRV_OUT" ||
      { UROCE_WHY="the receiver did not print the group's GID"; st=1; }
    after=$(rx_mcast)
    [ "$((after - before))" -eq "$n" ] ||
      { UROCE_WHY="rx_mcast rose by $((after - before)), expected $n"; st=1; }
  fi
  uroce_verdict "$label" "$st"
}
mckey_pair "mckey uroce0 -> group 239.203.0.1 <- uroce1 (10 datagrams)" 10 100
mckey_pair "mckey -C 100 -S 1024, the sender a send-only member (-o)" 100 1024 -o

# ---- a port nobody listens on: REJ (invalid Service ID) --------------------
uroce_no_pair
uroce_next_port port
st=0
out=$UROCE_TMP/rej.out
rej_before=$(rej_no_listener)
if timeout 20 "${R[@]}" rping -c -a $IP1 -p "$port" -C 1 >"$out" 2>&1; then
  UROCE_WHY="rping to a port without listener exited 0"; st=1
elif ! grep -q 'RDMA_CM_EVENT_REJECTED, error 8' "$out"; then
  UROCE_WHY="no 'RDMA_CM_EVENT_REJECTED, error 8' (invalid Service ID): $(tr '\n' '|' <"$out")"; st=1
elif ! rej_after=$(rej_no_listener) || ! [[ $rej_after =~ ^[0-9]+$ ]] ||
  ((rej_after <= rej_before)); then
  UROCE_WHY="uroce-ctl status: rej_no_listener $rej_before before, '$rej_after' after"; st=1
fi
cat "$out"
uroce_verdict "connect to a port nobody listens on is rejected (REJ reason 8)" "$st"

# ---- a listener killed with SIGKILL: its ids are reclaimed -----------------
uroce_no_pair
uroce_next_port port
st=0
uroce_bg kpid --timeout 30 "$UROCE_TMP/kill.out" "$UROCE_TMP/kill.err" -- \
  "${R[@]}" rping -s -a $IP1 -p "$port" -C 1
if ! uroce_wait_cm_listen "$RUN" 20 "$kpid"; then
  UROCE_WHY="rping -s never listened"; st=1
fi
uroce_kill_group KILL "$kpid"
uroce_wait "$kpid" krc
if [ "$st" -eq 0 ]; then
  deadline=$((SECONDS + 10))
  until grep -q '"files":0,"ids":0,"listeners":0' <<<"$(cm_json)"; do
    if [ $SECONDS -ge "$deadline" ]; then
      UROCE_WHY="ids left after SIGKILL: $(cm_json | grep -o '"cm":{[^}]*}')"; st=1; break
    fi
    sleep 0.1
  done
fi
uroce_verdict "rping -s killed with SIGKILL: every id and listener reclaimed" "$st"
# The port is free again: a new server on it serves a full rping.
st=0
rping_pings 30 "$port" 10 "rping on the reclaimed port" || st=1
uroce_verdict "rping -v -C 10 on the port the killed listener held" "$st"

cm_json | grep -o '"cm":{[^}]*}' || true
uroce_no_pair
verbs_daemons_stop "uroced exits 0 on SIGTERM and removes its run dir and nodes" d

uroce_summary ring_rdma_cm
