#!/usr/bin/env bash
# uroce-ctl reaches an embedded engine (docs/embedded.md, "uroce-ctl"): a
# pyverbs program run by uroce-run --embedded over two ring devices holds a
# QP, a CQ and an MR; `uroce-ctl --pid PID` then finds the engine's socket
# in the program's private run directory and prints its status: the
# embedded poll mode, both devices, and the program's QP in `qps`. Asked
# about a process without an embedded engine (this script), it says so and
# exits 1. Then an embedded ibv_rc_pingpong pair over memif: `uroce-ctl
# --pid` of the server captures 200 of its engine's frames (pcapng that
# tshark decodes: every frame RoCE or ARP, exactly 200) and prints its
# metrics (the device's frame counters among them). After each program
# exits, its run directory is gone.
#
#   embedded_ctl.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vembctl "$1" /usr/bin/python3 ibv_rc_pingpong tshark

export TMPDIR=$UROCE_TMP/embedded
mkdir -p "$TMPDIR"
dev0=$(verbs_device uroce0 02:00:00:d8:00:01 10.219.1.1 ring:p0)
dev1=$(verbs_device uroce1 02:00:00:d8:00:02 10.219.1.2 ring:p0)
hold=$UROCE_TMP/release
out=$UROCE_TMP/program.out
uroce_bg PG --timeout 60 "$out" "$out" -- \
  "$UROCE_RUN" --embedded --lcore 0 --device "$dev0" --device "$dev1" -- \
  /usr/bin/python3 "$VERBS_TEST_DIR/verbs_abuse.py" objects uroce0 1 1 1 --hold "$hold"

st=0
if ! uroce_wait_for_line "$out" '^qps 1 errno 0' 30 "$PG"; then
  UROCE_WHY="the program did not make its objects ($(tail -n 3 "$out" | tr '\n' '|'))"
  st=1
fi
prog=$(pgrep -g "$PG" -x python3 | head -n 1)
json=$UROCE_TMP/status.json
if [ "$st" = 0 ] && ! "$UROCE_CTL" --pid "$prog" status --json >"$json" 2>"$UROCE_TMP/ctl.err"; then
  UROCE_WHY="uroce-ctl --pid $prog failed: $(cat "$UROCE_TMP/ctl.err")"
  st=1
fi
if [ "$st" = 0 ]; then
  got=$(/usr/bin/python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(j["daemon"]["poll"], ",".join(d["name"] for d in j["devices"]))' "$json")
  echo "  uroce-ctl --pid $prog status: $got"
  [ "$got" = "embedded uroce0,uroce1" ] || {
    UROCE_WHY="status says '$got' (want 'embedded uroce0,uroce1')"
    st=1
  }
fi
if [ "$st" = 0 ]; then
  "$UROCE_CTL" --pid "$prog" qps >"$UROCE_TMP/qps.out" 2>&1 || st=1
  grep -Eq 'uroce0 +[0-9]+ +RC' "$UROCE_TMP/qps.out" || {
    UROCE_WHY="uroce-ctl --pid qps does not list the program's RC QP: $(head -n 5 "$UROCE_TMP/qps.out" | tr '\n' '|')"
    st=1
  }
fi
uroce_verdict "uroce-ctl --pid reads an embedded engine's status and QPs" "$st"

st=0
rc=0
msg=$("$UROCE_CTL" --pid $$ status 2>&1) || rc=$?
want="uroce-ctl: process $$ runs no embedded uroce engine (no SYSFS_PATH from uroce-run --embedded in its environment)"
[ "$rc" = 1 ] && [ "$msg" = "$want" ] || {
  UROCE_WHY="got rc $rc '$msg'"
  st=1
}
uroce_verdict "uroce-ctl --pid of a process without an engine says so and exits 1" "$st"

st=0
touch "$hold"
uroce_wait "$PG" rc
left=$(ls "$TMPDIR")
[ "$rc" = 0 ] && [ -z "$left" ] || {
  UROCE_WHY="the program exited $rc, left in TMPDIR: '$left'"
  st=1
}
uroce_verdict "the program exits 0 and its run directory (with the socket) is gone" "$st"

# ---- capture and metrics of an embedded engine ----
st=0
mp="socket=$UROCE_TMP/memif.sock,socket-abstract=no,id=0,bsize=8192"
dev_a=$(verbs_device uroce0 02:00:00:d8:00:11 10.219.1.11 "net_memif0,role=server,$mp")
dev_b=$(verbs_device uroce0 02:00:00:d8:00:12 10.219.1.12 "net_memif0,role=client,$mp")
uroce_next_port port
# 100,000 round trips: the capture, attached before the client starts,
# takes the first 200 frames, and the metrics are read a few milliseconds
# later while the run (seconds, far longer under load) goes on.
pp=(ibv_rc_pingpong -d uroce0 -g 1 -p "$port" -n 100000)
uroce_bg SPG --timeout 120 "$UROCE_TMP/pp-server.out" "$UROCE_TMP/pp-server.out" -- \
  "$UROCE_RUN" --embedded --lcore 0 --device "$dev_a" -- "${pp[@]}"
for _ in $(seq 1 300); do
  ss -ltn | grep -q ":$port " && break
  sleep 0.1
done
server=$(pgrep -g "$SPG" -x ibv_rc_pingpong | head -n 1)
pcap=$UROCE_TMP/embedded.pcapng
cap_err=$UROCE_TMP/cap.err
if [ -z "$server" ]; then
  UROCE_WHY="the pingpong server did not start: $(tail -n 3 "$UROCE_TMP/pp-server.out" | tr '\n' '|')"
  st=1
else
  # The capture is attached before the client starts: its 200 frames are
  # the run's first ones, not a race against the run's end.
  uroce_bg CAP --timeout 60 /dev/null "$cap_err" -- \
    "$UROCE_CTL" --pid "$server" capture uroce0 -c 200 -w "$pcap"
  if ! uroce_wait_for_line "$cap_err" '^uroce-ctl: capturing ' 30 "$CAP"; then
    UROCE_WHY="no capturing line from uroce-ctl --pid $server capture: $(tail -n 3 "$cap_err" | tr '\n' '|')"
    st=1
  fi
fi
uroce_bg CPG --timeout 120 "$UROCE_TMP/pp-client.out" "$UROCE_TMP/pp-client.out" -- \
  "$UROCE_RUN" --embedded --lcore 1 --device "$dev_b" -- "${pp[@]}" 127.0.0.1
[ "$st" = 0 ] && uroce_wait "$CAP" caprc
if [ "$st" = 0 ] && [ "$caprc" != 0 ]; then
  UROCE_WHY="uroce-ctl --pid $server capture exited $caprc: $(tail -n 3 "$cap_err" | tr '\n' '|')"
  st=1
elif [ "$st" = 0 ] && ! "$UROCE_CTL" --pid "$server" metrics >"$UROCE_TMP/metrics.prom" 2>&1; then
  UROCE_WHY="uroce-ctl --pid $server metrics: $(head -n 3 "$UROCE_TMP/metrics.prom" | tr '\n' '|')"
  st=1
fi
uroce_wait "$SPG" src
uroce_wait "$CPG" crc
if [ "$st" = 0 ]; then
  frames=$(tshark -r "$pcap" 2>/dev/null | wc -l)
  other=$(tshark -r "$pcap" -Y 'not arp and not (udp.dstport == 4791 and infiniband)' 2>/dev/null | wc -l)
  rx=$(sed -n 's/^uroce_device_rx_frames_total{device="uroce0"} \([0-9]*\)$/\1/p' "$UROCE_TMP/metrics.prom")
  echo "  capture of the embedded server: $frames frames, $other neither RoCE nor ARP;" \
    "its metrics: uroce0 received ${rx:-no} frames; pingpongs exited $src and $crc"
  if [ "$frames" != 200 ] || [ "$other" != 0 ]; then
    UROCE_WHY="$pcap: $frames frames (want 200), $other neither RoCE nor ARP"
    st=1
  elif [ -z "$rx" ] || [ "$rx" -lt 100 ]; then
    UROCE_WHY="the metrics do not count uroce0's received frames: $(grep -m 3 rx_frames "$UROCE_TMP/metrics.prom" | tr '\n' '|')"
    st=1
  elif [ "$src" != 0 ] || [ "$crc" != 0 ]; then
    UROCE_WHY="the pingpongs exited $src and $crc"
    st=1
  elif [ -n "$(ls "$TMPDIR")" ]; then
    UROCE_WHY="the pingpongs left in TMPDIR: '$(ls "$TMPDIR" | tr '\n' ' ')'"
    st=1
  fi
fi
uroce_verdict "uroce-ctl --pid captures an embedded engine's frames and reads its metrics; the pingpongs exit 0 and leave no run directory" "$st"

uroce_summary embedded_ctl
