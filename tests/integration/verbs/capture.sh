#!/usr/bin/env bash
# Live capture (docs/capture.md) against one uroced whose devices uroce0 and
# uroce1 share a crossed net_ring pair, during unmodified perftest runs:
#  - `uroce-ctl capture uroce0` from before an ib_write_bw to after it
#    (stopped with SIGINT, the polite stop): every frame is RoCE with a good
#    ICRC (tests/interop_rxe/check_capture.sh: tshark's decode and our own
#    parser) or ARP, none dropped, and the frames equal the port's
#    counters' delta over the capture (port_rx.frames + port_tx.sent: each
#    TX frame is captured once however often it was offered), read while
#    the daemon is quiet (no QP left) so that no frame falls between
#    counter and capture. The counted runs are 200 messages of 64 KiB
#    (~3,400 frames): fewer than the capture's ring holds (4,096 at MTU
#    9000), so however late its thread runs, nothing can be dropped; a
#    longer run at 2 GB/s outruns the thread on this machine, and its drops
#    are counted, not hidden (docs/capture.md);
#  - `-c 500` during an ib_send_bw: exactly 500 frames, all valid;
#  - `--snaplen 128` with -c 200: no frame kept longer, wire lengths kept;
#  - refusals with their exact messages: an unknown device, a second
#    capture of a device, a user other than root;
#  - a daemon stopped under a running capture ends it cleanly;
#  - stock `dpdk-dumpcap` (DPDK's secondary process, rte_pdump) against a
#    second uroced on hugepages (a hugetlbfs of the test's own, pages added
#    for the run and given back): the same checks, its count against
#    port_rx.frames + port_tx.sent + port_tx.refused (rte_pdump copies every
#    offering; its ring holds 8,191), then no hugepage file left behind.
#    Skipped, and said, when dpdk-dumpcap is not installed or the pages
#    cannot be had.
#
#   capture.sh BUILD_DIR ROCE_PCAP_CHECK
source "$(dirname "$0")/common.sh"
verbs_test_init vcap "$1" ib_write_bw ib_send_bw tshark editcap setpriv /usr/bin/python3
CHECKER=$2
if [ ! -x "$CHECKER" ]; then
  echo "FAIL: no $CHECKER (build it: ninja -C $1 tests/interop_rxe/roce_pcap_check)"
  exit 1
fi
CHECK_CAPTURE=$SOURCE_ROOT/tests/interop_rxe/check_capture.sh

IPA=10.223.0.1 IPB=10.223.0.2
uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:e7:00:01 $IPA ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:e7:00:02 $IPB ring:p0)"
R=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}")
CTL=("$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[d]}")
PP_ITERS=1000

# port_frames CTL... : "RX SENT REFUSED" of uroce0's port, from the status.
port_frames() {
  "$@" status --json | /usr/bin/python3 -c '
import json, sys
d = next(x for x in json.load(sys.stdin)["devices"] if x["name"] == "uroce0")
c = d["counters"]
print(c["port_rx"]["frames"], c["port_tx"]["sent"], c["port_tx"]["refused"])'
}

# quiet_frames VAR CTL... : port_frames once two readings 300 ms apart
# agree (the programs' last frames are through), into VAR.
quiet_frames() {
  local -n __out=$1
  shift
  local a b
  a=$(port_frames "$@")
  for _ in $(seq 1 50); do
    sleep 0.3
    b=$(port_frames "$@")
    [ "$a" = "$b" ] && break
    a=$b
  done
  __out=$b
}

# check_pcapng FILE EXPECTED_FRAMES|- : every frame RoCE with a good ICRC
# (check_capture.sh on the RoCE frames, as classic pcap) or ARP; with a
# number, exactly that many frames. Sets CHECK_FRAMES and CHECK_ARP.
check_pcapng() {
  local f=$1 want=$2
  CHECK_FRAMES=$(tshark -r "$f" 2>/dev/null | wc -l)
  CHECK_ARP=$(tshark -r "$f" -Y arp 2>/dev/null | wc -l)
  local other
  other=$(tshark -r "$f" -Y 'not arp and not udp.dstport == 4791' 2>/dev/null | wc -l)
  if [ "$other" -ne 0 ]; then
    UROCE_WHY="$other frame(s) of $f neither RoCE nor ARP"
    return 1
  fi
  if [ "$want" != - ] && [ "$CHECK_FRAMES" -ne "$want" ]; then
    UROCE_WHY="$f holds $CHECK_FRAMES frames, not $want"
    return 1
  fi
  tshark -r "$f" -Y 'udp.dstport == 4791' -F pcap -w "$f.roce.pcap" 2>/dev/null
  local out
  if ! out=$("$CHECK_CAPTURE" "$f.roce.pcap" "$CHECKER" $IPA $IPB 2>&1); then
    UROCE_WHY="check_capture.sh: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
    return 1
  fi
  echo "  $(echo "$out" | tail -n 1); $CHECK_ARP ARP"
}

# capture_start VAR NAME ARGS... : uroce-ctl capture in the background,
# stderr to $UROCE_TMP/NAME.err; waits for its "capturing" line.
capture_start() {
  local -n __cap_pid=$1
  local name=$2
  shift 2
  # No time limit wrapper: GNU timeout would pass our SIGINT on a second
  # time, and uroce-ctl takes a second one as "stop at once".
  uroce_bg __cap_pid /dev/null "$UROCE_TMP/$name.err" -- "$@"
  uroce_wait_for_line "$UROCE_TMP/$name.err" '^uroce-ctl: capturing ' 20 "$__cap_pid"
}

# capture_end PID NAME VAR : waits for the client, true when it exited 0;
# VAR gets its "N frames captured, D dropped" figures as "N D".
capture_end() {
  local pid=$1 name=$2 rc
  local -n __figs=$3
  uroce_wait "$pid" rc
  __figs=$(sed -n 's/^uroce-ctl: \([0-9]*\) frames captured, \([0-9]*\) dropped by uroced$/\1 \2/p' \
    "$UROCE_TMP/$name.err")
  if [ "$rc" -ne 0 ] || [ -z "$__figs" ]; then
    UROCE_WHY="uroce-ctl capture exited $rc: $(tail -n 3 "$UROCE_TMP/$name.err" | tr '\n' ' ')"
    return 1
  fi
}

# ---- a whole run, counted against the port --------------------------------
# Warm-up: ARP resolved both ways before the counted run.
verbs_perf ib_write_bw bw "warm-up ib_write_bw RC 64 KiB x $PP_ITERS"
uroce_no_pair
st=0
quiet_frames before "${CTL[@]}"
capture_start WPID whole "${CTL[@]}" capture uroce0 -w "$UROCE_TMP/whole.pcapng" || {
  UROCE_WHY="no capturing line: $(cat "$UROCE_TMP/whole.err")"
  st=1
}
if [ $st -eq 0 ]; then
  # A second capture of the same device is refused while this one runs.
  out=$("${CTL[@]}" capture uroce0 -w "$UROCE_TMP/second.pcapng" 2>&1) && rc=0 || rc=$?
  if [ "$rc" -ne 1 ] ||
    [ "$out" != "uroce-ctl: capture: a capture of uroce0 already runs (one per device at a time)" ]; then
    UROCE_WHY="second capture: exit $rc, '$out'"
    st=1
  fi
fi
uroce_verdict "a second capture of uroce0 is refused (EBUSY)" $st
PP_ITERS=200 verbs_perf ib_write_bw bw "ib_write_bw RC 64 KiB x 200 under capture"
uroce_no_pair
st=0
quiet_frames after "${CTL[@]}"
uroce_kill_group INT "$WPID"
capture_end "$WPID" whole figs || st=1
if [ $st -eq 0 ]; then
  read -r rx0 sent0 _ <<<"$before"
  read -r rx1 sent1 _ <<<"$after"
  want=$((rx1 - rx0 + sent1 - sent0))
  read -r got dropped <<<"$figs"
  echo "  port counters: $((rx1 - rx0)) received + $((sent1 - sent0)) sent = $want;" \
    "captured $got, dropped $dropped"
  if [ "$got" -ne "$want" ] || [ "$dropped" -ne 0 ]; then
    UROCE_WHY="captured $got (dropped $dropped), the port's counters $want frames"
    st=1
  elif ! check_pcapng "$UROCE_TMP/whole.pcapng" "$got"; then
    st=1
  fi
fi
uroce_verdict "uroce-ctl capture of a whole ib_write_bw: every frame valid, count = port counters" $st

# ---- -c N during a run ----------------------------------------------------
st=0
capture_start CPID count "${CTL[@]}" capture uroce0 -w "$UROCE_TMP/count.pcapng" -c 500 || {
  UROCE_WHY="no capturing line: $(cat "$UROCE_TMP/count.err")"
  st=1
}
PP_ITERS=1000 verbs_perf ib_send_bw bw "ib_send_bw RC 64 KiB x 1000 under capture -c 500"
uroce_no_pair
if [ $st -eq 0 ]; then
  capture_end "$CPID" count figs && read -r got dropped <<<"$figs" || st=1
  if [ $st -eq 0 ] && [ "$got" -ne 500 ]; then
    UROCE_WHY="-c 500 gave $got frames"
    st=1
  fi
  [ $st -eq 0 ] && { check_pcapng "$UROCE_TMP/count.pcapng" 500 || st=1; }
fi
uroce_verdict "uroce-ctl capture -c 500 during ib_send_bw: 500 valid frames" $st

# ---- snaplen ----------------------------------------------------------------
st=0
capture_start SPID snap "${CTL[@]}" capture uroce0 -w "$UROCE_TMP/snap.pcapng" -c 200 \
  --snaplen 128 || {
  UROCE_WHY="no capturing line: $(cat "$UROCE_TMP/snap.err")"
  st=1
}
PP_ITERS=1000 verbs_perf ib_write_bw bw "ib_write_bw RC 64 KiB x 1000 under capture --snaplen 128"
uroce_no_pair
if [ $st -eq 0 ]; then
  capture_end "$SPID" snap figs || st=1
  if [ $st -eq 0 ]; then
    lens=$(tshark -r "$UROCE_TMP/snap.pcapng" -T fields -e frame.cap_len -e frame.len 2>/dev/null)
    long=$(echo "$lens" | awk '$1 > 128' | wc -l)
    cut=$(echo "$lens" | awk '$2 > 128 && $1 == 128' | wc -l)
    echo "  $(echo "$lens" | wc -l) frames, $cut cut to 128 bytes (wire length kept), $long longer"
    if [ "$long" -ne 0 ] || [ "$cut" -eq 0 ]; then
      UROCE_WHY="snaplen 128: $long frames longer than 128, $cut cut"
      st=1
    fi
  fi
fi
uroce_verdict "uroce-ctl capture --snaplen 128 keeps 128 bytes and the wire length" $st

# ---- refusals -----------------------------------------------------------------
st=0
out=$("${CTL[@]}" capture uroce9 -w "$UROCE_TMP/none.pcapng" 2>&1) && rc=0 || rc=$?
if [ "$rc" -ne 1 ] || [ "$out" != "uroce-ctl: capture: uroced has no device uroce9" ]; then
  UROCE_WHY="unknown device: exit $rc, '$out'"
  st=1
fi
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "${CTL[@]}" capture uroce0 \
  2>&1 >/dev/null) && rc=0 || rc=$?
if [ "$rc" -ne 1 ] ||
  [ "$out" != "uroce-ctl: capture: only root may capture (a capture shows every client's payload)" ]; then
  UROCE_WHY="capture as nobody: exit $rc, '$out'"
  st=1
fi
uroce_verdict "capture refusals: unknown device, not root" $st

# ---- the daemon stops under a capture -------------------------------------
st=0
capture_start EPID ending "${CTL[@]}" capture uroce0 -w "$UROCE_TMP/ending.pcapng" || {
  UROCE_WHY="no capturing line: $(cat "$UROCE_TMP/ending.err")"
  st=1
}
verbs_daemons_stop "uroced exits 0 on SIGTERM under a running capture" d
if [ $st -eq 0 ]; then
  # Its "dropped by uroced" figure comes from the statistics block.
  capture_end "$EPID" ending figs || st=1
  if [ $st -eq 0 ] && ! tshark -r "$UROCE_TMP/ending.pcapng" >/dev/null 2>&1; then
    UROCE_WHY="tshark cannot read $UROCE_TMP/ending.pcapng"
    st=1
  fi
fi
uroce_verdict "a capture ends cleanly when uroced stops (statistics block, exit 0)" $st

# ---- dpdk-dumpcap ----------------------------------------------------------
if ! command -v dpdk-dumpcap >/dev/null; then
  echo "SKIP: dpdk-dumpcap: not installed (apt-get install dpdk-dev)"
  uroce_summary capture
  exit $?
fi
HUGE_PAGES=400  # 800 MiB: the daemon's -m 512 and dumpcap's ring of 8192 (x2 buffers of 9 KiB)
HUGE_ADDED=0
HUGE_DIR=$UROCE_TMP/huge
huge_cleanup() {
  mountpoint -q "$HUGE_DIR" && umount "$HUGE_DIR"
  if [ "$HUGE_ADDED" -gt 0 ]; then
    echo $(($(cat /proc/sys/vm/nr_hugepages) - HUGE_ADDED)) >/proc/sys/vm/nr_hugepages
  fi
}
uroce_at_exit huge_cleanup
before_pages=$(cat /proc/sys/vm/nr_hugepages)
echo $((before_pages + HUGE_PAGES)) >/proc/sys/vm/nr_hugepages || true
HUGE_ADDED=$(($(cat /proc/sys/vm/nr_hugepages) - before_pages))
mkdir -p "$HUGE_DIR"
if [ "$HUGE_ADDED" -lt "$HUGE_PAGES" ] || ! mount -t hugetlbfs -o pagesize=2M nodev "$HUGE_DIR"; then
  echo "SKIP: dpdk-dumpcap: $HUGE_ADDED of $HUGE_PAGES huge pages could be added, or no hugetlbfs"
  uroce_summary capture
  exit $?
fi
uroce_daemon_start h --lcore 1 \
  --eal-args "[\"--no-pci\", \"--no-telemetry\", \"-m\", \"512\", \"--huge-dir\", \"$HUGE_DIR\"]" -- \
  --device "$(verbs_device uroce0 02:00:00:e7:01:01 $IPA ring:p1)" \
  --device "$(verbs_device uroce1 02:00:00:e7:01:02 $IPB ring:p1)"
R=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[h]}")
HCTL=("$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[h]}")
verbs_perf ib_write_bw bw "warm-up ib_write_bw RC 64 KiB x $PP_ITERS (hugepage daemon)"
uroce_no_pair
st=0
quiet_frames before "${HCTL[@]}"
uroce_bg DPID --timeout 300 "$UROCE_TMP/dumpcap.out" "$UROCE_TMP/dumpcap.err" -- \
  dpdk-dumpcap --file-prefix "${UROCE_DAEMON_PREFIX[h]}" -i net_ring_p1_a -s 9216 -N 8192 \
  -w "$UROCE_TMP/dumpcap.pcapng"
if ! uroce_wait_for_line "$UROCE_TMP/dumpcap.err" '^Packets captured' 30 "$DPID"; then
  UROCE_WHY="dpdk-dumpcap did not start: $(tail -n 5 "$UROCE_TMP/dumpcap.err" | tr '\n' ' ')"
  st=1
fi
PP_ITERS=200 verbs_perf ib_write_bw bw "ib_write_bw RC 64 KiB x 200 under dpdk-dumpcap"
uroce_no_pair
quiet_frames after "${HCTL[@]}"
uroce_kill_group INT "$DPID"
uroce_wait "$DPID" rc
if [ $st -eq 0 ]; then
  stats=$(sed -n "s/^Packets received\/dropped on interface 'net_ring_p1_a': \([0-9]*\)\/\([0-9]*\).*/\1 \2/p" \
    "$UROCE_TMP/dumpcap.err")
  read -r rx0 sent0 ref0 <<<"$before"
  read -r rx1 sent1 ref1 <<<"$after"
  want=$((rx1 - rx0 + sent1 - sent0 + ref1 - ref0))
  if [ "$rc" -ne 0 ] || [ -z "$stats" ]; then
    UROCE_WHY="dpdk-dumpcap exited $rc: $(tail -n 3 "$UROCE_TMP/dumpcap.err" | tr '\n' ' ')"
    st=1
  else
    read -r got dropped <<<"$stats"
    echo "  port counters: $((rx1 - rx0)) received + $((sent1 - sent0)) sent +" \
      "$((ref1 - ref0)) refused offers = $want; dumpcap received $got, dropped $dropped"
    if [ "$got" -ne "$want" ] || [ "$dropped" -ne 0 ]; then
      UROCE_WHY="dumpcap received $got (dropped $dropped), the port's counters $want offers"
      st=1
    elif ! check_pcapng "$UROCE_TMP/dumpcap.pcapng" "$got"; then
      st=1
    fi
  fi
fi
uroce_verdict "dpdk-dumpcap against uroced: every frame valid, count = port counters" $st
verbs_daemons_stop "hugepage uroced exits 0 on SIGTERM" h
left=$(find "$HUGE_DIR" -type f | wc -l)
st=0
if [ "$left" -ne 0 ]; then
  UROCE_WHY="$left hugepage file(s) left in $HUGE_DIR after the daemon exited"
  st=1
fi
uroce_verdict "the hugepage daemon leaves no hugepage file" $st

uroce_summary capture
