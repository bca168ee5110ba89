#!/usr/bin/env bash
# Middleware that finds its devices and peers through rdma_cm, at its
# defaults, through uroce-run: libfabric's verbs;ofi_rxm RDM endpoint
# (fi_pingpong, Debian's libfabric-bin) with FI_UNIVERSE_SIZE unset, whose
# one MSG CQ asks for (128 + 128) x 256 = 65,536 CQEs; and qperf's RC
# atomics over rdma_cm (-cm1), which need the remote atomic access the CM
# gives the QPs.
#
# Both programs open a TCP control channel to the server's address and
# pick the device by the address of a kernel interface (libfabric binds
# rdma_cm ids to each interface address; qperf connects rdma_cm to the
# address it reached over TCP), so the daemon's two devices get their
# IPv4 addresses also on a veth pair in a namespace of the test's own, where
# both programs run. The devices themselves talk over a net_ring pair.
#
#   cm_middleware.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vcm_mw "$1" fi_pingpong qperf

IP0=10.214.0.1
IP1=10.214.0.2
uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d6:00:01 $IP0 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d6:00:02 $IP1 ring:p0)"
RUN=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$RUN")

# Both addresses on one veth pair inside NS: the programs' TCP control
# channel (local delivery) and their address-to-device lookup.
id=$((UROCE_ID % 1000000))
NS=uroce_mw_$id
uroce_netns_add "$NS"
ip link add "umw${id}a" type veth peer name "umw${id}b"
ip link set "umw${id}a" netns "$NS"
ip link set "umw${id}b" netns "$NS"
ip -n "$NS" addr add "$IP0/24" dev "umw${id}a"
ip -n "$NS" addr add "$IP1/24" dev "umw${id}b"
ip -n "$NS" link set "umw${id}a" up
ip -n "$NS" link set "umw${id}b" up

# ---- libfabric verbs;ofi_rxm, RDM, default universe size -------------------
# fi_pingpong's rows: bytes, #sent, #ack, total, time, MB/sec, usec/xfer,
# Mxfers/sec, with sizes abbreviated ("64k"; "=200": every message sent
# was answered). The client must report 200 round trips of the size, all
# answered, at a positive time per transfer; -c has both sides check every
# byte received (a mismatch fails the program). 200, not more: on a busy
# 2-vCPU machine a round trip between two busy-polling processes and the
# engine took up to 10 ms, and the pair has 90 s.
rxm_check() {  # SIZE_AS_PRINTED
  local row
  row=$(awk -v s="$1" '$1 == s' "$UROCE_CLI_OUT" | tail -n 1)
  if [ -z "$row" ]; then
    UROCE_WHY="no result row for $1 bytes in the client's output"; return 1
  fi
  read -r -a f <<<"$row"
  if [ "${f[1]}" != 200 ] || [ "${f[2]}" != =200 ]; then
    UROCE_WHY="row is not 200 sent and 200 answered: $row"; return 1
  fi
  if ! awk -v r="${f[6]}" 'BEGIN { exit !(r > 0) }'; then
    UROCE_WHY="row without a positive usec/xfer: $row"; return 1
  fi
  UROCE_RESULT=$row
}
rxm() {  # SIZE SIZE_AS_PRINTED
  local size=$1 port st=0
  uroce_next_port port
  uroce_pair "fi_pingpong rxm $size" 90 "$port" "$NS" "$NS" -- \
    env -u FI_UNIVERSE_SIZE "${R[@]}" fi_pingpong -p "verbs;ofi_rxm" -e rdm -d uroce1 \
      -B "$port" -I 200 -S "$size" -c ::: \
    env -u FI_UNIVERSE_SIZE "${R[@]}" fi_pingpong -p "verbs;ofi_rxm" -e rdm -d uroce0 \
      -P "$port" -I 200 -S "$size" -c "$IP1" &&
    rxm_check "$2" || st=1
  if [ "$st" -eq 0 ]; then
    grep -m1 '^bytes' "$UROCE_CLI_OUT" | sed 's/^/  /'
    echo "  $UROCE_RESULT"
  fi
  uroce_verdict "fi_pingpong -p 'verbs;ofi_rxm' -e rdm -S $size -c uroce0 -> uroce1 (universe size 256)" "$st"
}
rxm 64 64
rxm 65536 64k

# ---- qperf RC atomics over rdma_cm ----------------------------------------
# qperf's server takes its TCP port with --listen_port; its _mr atomic
# tests print "<test>:" then "msg_rate = <n> K/sec" (or /sec, M/sec), and
# qperf exits non-zero when the operation fails (a QP in error, a remote
# access error). -cm1: rdma_cm connects the QPs.
qperf_cm() {  # TEST
  local t=$1 port st=0
  uroce_next_port port
  uroce_pair "qperf -cm1 $t" 60 "$port" "$NS" "$NS" -- \
    "${R[@]}" qperf --listen_port "$port" ::: \
    "${R[@]}" qperf "$IP1" --listen_port "$port" -cm1 -t 2 "$t" quit || st=1
  if [ "$st" -eq 0 ]; then
    if ! grep -qE "^ +msg_rate += +[0-9.]*[1-9][0-9.]* [KM]?/sec" "$UROCE_CLI_OUT"; then
      UROCE_WHY="no positive msg_rate: $(tr '\n' '|' <"$UROCE_CLI_OUT")"; st=1
    elif grep -qi "failed\|error" "$UROCE_CLI_OUT" "$UROCE_CLI_ERR"; then
      UROCE_WHY="an error: $(cat "$UROCE_CLI_OUT" "$UROCE_CLI_ERR" | tr '\n' '|')"; st=1
    else
      sed 's/^/  /' "$UROCE_CLI_OUT"
    fi
  fi
  uroce_verdict "qperf -cm1 $t uroce0 -> uroce1" "$st"
}
qperf_cm rc_compare_swap_mr
qperf_cm rc_fetch_add_mr

uroce_no_pair
verbs_daemons_stop "uroced exits 0 on SIGTERM and removes its run dir and nodes" d

uroce_summary cm_middleware
