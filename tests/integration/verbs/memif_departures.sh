#!/usr/bin/env bash
# A memif peer that leaves does not crash the process it leaves
# (datapath/port/memif_unmap_guard.h): uroced busy-polls a memif server
# port beside two busy loops (so that its engine is often preempted, and
# now and then inside a burst when a peer's departure unmaps the rings on
# EAL's interrupt thread), while 40 embedded clients one after another
# open the device over a memif client port (ibv_devinfo: the port must be
# PORT_ACTIVE) and exit. Unguarded, such a daemon died of SIGSEGV in
# rte_eth_rx_burst after 18 and 83 departures of 100 beside three busy
# loops (docs/port.md, "A memif peer that leaves"). Checked: every client saw
# the port active; the daemon is alive after the last; its log says for
# each departure that the engine left its bursts before the PMD unmapped
# the region. Between clients a hasty peer connects to the server's socket
# and closes at once: the PMD's hello to it fails, and unguarded it left
# that socket's callback registered with EAL, whose interrupt thread then
# panicked (datapath/port/memif_intr_guard.h).
#
#   memif_departures.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vmemifgo "$1" ibv_devinfo

departures=40
sock=$UROCE_TMP/memif.sock
mp="socket=$sock,socket-abstract=no,id=0,bsize=8192"
uroce_daemon_start d --lcore 0 --poll busy -- \
  --device "$(verbs_device uroce0 02:00:00:d9:00:01 10.219.9.1 "net_memif0,role=server,$mp")" ||
  exit 1
client_dev=$(verbs_device uroce0 02:00:00:d9:00:02 10.219.9.2 "net_memif0,role=client,$mp")

for k in 1 2; do
  uroce_bg busy "$UROCE_TMP/busy$k.out" "$UROCE_TMP/busy$k.out" -- \
    /bin/bash -c 'while :; do :; done'
done

export TMPDIR=$UROCE_TMP/embedded
mkdir -p "$TMPDIR"
st=0
done_count=0
for i in $(seq 1 "$departures"); do
  out=$UROCE_TMP/client.out
  rc=0
  timeout 60 "$UROCE_RUN" --embedded --lcore 1 --device "$client_dev" -- \
    ibv_devinfo -d uroce0 >"$out" 2>&1 || rc=$?
  if [ "$rc" != 0 ] || ! grep -q 'state:.*PORT_ACTIVE' "$out"; then
    UROCE_WHY="client $i exited $rc: $(tail -n 3 "$out" | tr '\n' '|')"
    st=1
    break
  fi
  /usr/bin/python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.close()' "$sock" || true
  if ! uroce_running "${UROCE_DAEMON_PID[d]}"; then
    UROCE_WHY="the daemon died after $i departures: $(tail -n 2 "${UROCE_DAEMON_LOG[d]}" | tr '\n' '|')"
    st=1
    break
  fi
  done_count=$i
done
guarded=$(grep -c 'memif: a peer left; 1 engine(s) outside their bursts' "${UROCE_DAEMON_LOG[d]}" || true)
hasty=$(grep -c 'sendmsg fail: Broken pipe' "${UROCE_DAEMON_LOG[d]}" || true)
echo "  $done_count departures; the daemon's guarded unmaps: $guarded; hellos to a hasty peer that failed: $hasty"
if [ "$st" = 0 ] && [ "$guarded" -lt "$departures" ]; then
  UROCE_WHY="$guarded guarded unmaps in the daemon's log for $departures departures"
  st=1
fi
uroce_verdict "a busy-polling daemon outlives $departures memif peers leaving, each unmap guarded, and as many hasty peers" "$st"
uroce_summary memif_departures
