#!/usr/bin/env bash
# Issue 15 on real daemons: the Homa-like scheduler between two uroced
# daemons in two network namespaces joined by a veth pair (net_af_packet,
# as netns_af_packet.sh), under stock perftest.
#   1. Both devices with homa=on: ib_write_bw with 1 MiB messages and
#      ib_send_bw with 256 KiB messages pass, and the connection is
#      scheduled: both QPs show homa_peer true, the sender gated its
#      messages, sent MLENs and got GRANTs with no fallback, the receiver
#      sent GRANTs (homa_check.py reads `uroce-ctl --json qps`, sampled while
#      the QPs carry traffic, and the status after the run).
#   2. Daemon a with homa=on, b with it off: the same runs, one with the
#      scheduler's side receiving and one with it sending, pass as plain RC:
#      homa_peer false on both QPs, nothing gated, the scheduler's side
#      probed and the plain QP dropped the probe (drop_not_rc).
# `uroce-ctl homa` of each daemon is printed after each run.
#
#   netns_homa.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vhoma "$1" /usr/bin/python3 ib_write_bw ib_send_bw

CHECK=$VERBS_TEST_DIR/homa_check.py
verbs_netns_pair h 215
IPA=10.215.0.1 IPB=10.215.0.2

# start_daemons ROUND HOMA_A HOMA_B: daemons DA=aROUND in NSA and
# DB=bROUND in NSB (a fresh pair per round: names, run dirs and EAL prefixes
# are never reused).
start_daemons() {
  DA=a$1 DB=b$1
  uroce_daemon_start "$DA" --netns "$NSA" --lcore 0 --poll backoff -- \
    --device "$(verbs_device uroce0 02:00:00:d7:00:01 $IPA "$(verbs_af_packet_port "$DEVA")");homa=$2"
  uroce_daemon_start "$DB" --netns "$NSB" --lcore 1 --poll backoff -- \
    --device "$(verbs_device uroce0 02:00:00:d7:00:02 $IPB "$(verbs_af_packet_port "$DEVB")");homa=$3"
  grep -h "Homa-like scheduler on" "${UROCE_DAEMON_LOG[$DA]}" "${UROCE_DAEMON_LOG[$DB]}" |
    sed 's/^/  log: /' || true
}

# run EXPECT SENDER(a|b) PROGRAM SIZE ITERS LABEL: PROGRAM's server on the
# receiving daemon's side, its client (which sends) on SENDER's (DA or DB),
# judged as a perftest bw run and by homa_check.py.
run() {
  local expect=$1 sender=$2 prog=$3 size=$4 iters=$5 label=$6
  local rs=${UROCE_DAEMON_RUN[$DB]} rr=${UROCE_DAEMON_RUN[$DA]}
  local sns=$NSA cns=$NSB server_ip=$TCP_IPA
  if [ "$sender" = a ]; then
    rs=${UROCE_DAEMON_RUN[$DA]} rr=${UROCE_DAEMON_RUN[$DB]}
    sns=$NSB cns=$NSA server_ip=$TCP_IPB
  fi
  local port st=0 spid prefix=$UROCE_TMP/qps.${label//[^A-Za-z0-9]/_}
  uroce_next_port port
  rm -f "$prefix".*.json
  uroce_bg spid --timeout 120 /dev/null "$UROCE_TMP/sampler.$label.err" -- \
    /usr/bin/python3 "$CHECK" sample "$prefix" "$UROCE_CTL" "$rs" "$rr"
  uroce_pair "$label" 60 "$port" "$sns" "$cns" -- \
    "$UROCE_RUN" --run-dir "$rr" "$prog" -d uroce0 -x 1 -p "$port" -s "$size" -n "$iters" -F ::: \
    "$UROCE_RUN" --run-dir "$rs" "$prog" -d uroce0 -x 1 -p "$port" -s "$size" -n "$iters" -F \
    "$server_ip" &&
    uroce_check_perftest bw "$iters" || st=1
  uroce_kill_group KILL "$spid"
  uroce_wait "$spid" UROCE_IGNORED_RC
  [ "$st" -eq 0 ] && echo "$UROCE_RESULT" | sed 's/^/  /'
  if [ "$st" -eq 0 ]; then
    if ! "$UROCE_CTL" --run-dir "$rs" --json status >"$prefix.sender.status" ||
      ! "$UROCE_CTL" --run-dir "$rr" --json status >"$prefix.receiver.status"; then
      UROCE_WHY="uroce-ctl status failed"; st=1
    fi
  fi
  if [ "$st" -eq 0 ]; then
    local why
    if why=$(/usr/bin/python3 "$CHECK" check "$expect" "$prefix.0.json" "$prefix.1.json" \
      "$prefix.sender.status" "$prefix.receiver.status"); then
      echo "  $why"
    else
      UROCE_WHY=$why; st=1
    fi
  fi
  uroce_verdict "$label: $expect" "$st"
}

show_homa() {
  local d
  for d in "$DA" "$DB"; do
    echo "  uroce-ctl homa of $d:"
    "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[$d]}" homa | sed 's/^/    /'
  done
}

# Round 1 checks that the connection is scheduled, so no sender may give up
# on its grants: the sender falls back after three grant timeouts, and the
# default 4 ms is shorter than a busy host's waits for a CPU (a fallback
# seen at load 21). 500 ms per timeout tolerates those waits.
HOMA_PATIENT="on;homa_grant_timeout_us=500000"
start_daemons 1 "$HOMA_PATIENT" "$HOMA_PATIENT"
run scheduled b ib_write_bw 1048576 200 "ib_write_bw 1 MiB x 200, both on"
run scheduled b ib_send_bw 262144 400 "ib_send_bw 256 KiB x 400, both on"
show_homa
verbs_daemons_stop "uroced a and b (both homa=on) exit 0 on SIGTERM" "$DA" "$DB"

start_daemons 2 on off
run receiver-only b ib_write_bw 1048576 200 "ib_write_bw 1 MiB x 200, receiver on"
run sender-only a ib_send_bw 262144 400 "ib_send_bw 256 KiB x 400, sender on"
show_homa
verbs_daemons_stop "uroced a (homa=on) and b (off) exit 0 on SIGTERM" "$DA" "$DB"

uroce_summary netns_homa
