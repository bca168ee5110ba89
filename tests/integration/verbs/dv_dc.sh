#!/usr/bin/env bash
# DC QPs (docs/dc.md) through libibverbs, uroce-run and uroced.
#   1. dv_dc (dv_dc.cpp, links -luroce) against uroce0 of one uroced:
#      uroce_dv_query_device, the create rules' errno, a DCT and a DCI
#      made by the engine; judged on every check line.
#   2. uroce_dc_pingpong (apps/examples) between uroce0 and uroce1 of that
#      daemon (a crossed net_ring pair): SEND ping-pongs with their bytes
#      checked on both sides, a WRITE read back, exit status 0 on both.
#   3. The same between two daemons in two namespaces joined by a veth
#      pair (net_af_packet, as netns_homa.sh), and each daemon's status
#      afterwards: its DC pool opened contexts, no DC packet was dropped
#      for want of a target. The RTT lines (first message, steady median)
#      are printed.
#
#   dv_dc.sh BUILD_DIR DV_DC DC_PINGPONG
source "$(dirname "$0")/common.sh"
verbs_test_init vddc "$1" /usr/bin/python3
DV_DC=$2
PP=$3
ITERS=${DC_PINGPONG_ITERS:-1000}

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d7:00:01 10.215.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d7:00:02 10.215.0.2 ring:p0)"
R=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}")

out=$UROCE_TMP/dv_dc.out
st=0 rc=0
timeout 60 "${R[@]}" "$DV_DC" uroce0 >"$out" 2>&1 || rc=$?
cat "$out"
want=14
ok=$(grep -c ': ok$' "$out" || true)
if [ "$rc" -ne 0 ]; then
  UROCE_WHY="dv_dc exited $rc: $(grep -E 'FAILED|dv_dc:' "$out" | sed -n 1,5p | tr '\n' '|')"
  st=1
elif [ "$ok" -ne "$want" ] || ! grep -qx 'dv_dc: all passed' "$out"; then
  UROCE_WHY="$ok of $want checks ok"; st=1
fi
uroce_verdict "uroce_dv_create_qp (DCT and DCI made), uroce_dv_query_device and the DC setters through uroced" "$st"

# Both sides' output: every check passed, the RTT lines are there.
# Sets UROCE_RESULT to the RTT lines.
pingpong_check() {
  local f
  for f in "$UROCE_SRV_OUT" "$UROCE_CLI_OUT"; do
    if ! grep -qx 'dc_pingpong: all passed' "$f"; then
      UROCE_WHY="${f##*/}: $(grep -m 3 FAILED "$f" | tr '\n' '|')"; return 1
    fi
    if grep -q FAILED "$f"; then
      UROCE_WHY="${f##*/}: $(grep -m 3 FAILED "$f" | tr '\n' '|')"; return 1
    fi
  done
  if ! grep -q "^dc_pingpong: client: $ITERS pongs, bytes ok" "$UROCE_CLI_OUT" ||
    ! grep -q '^dc_pingpong: client: WRITE and READ of .* bytes ok' "$UROCE_CLI_OUT" ||
    ! grep -q "^dc_pingpong: server: $ITERS pings, bytes ok" "$UROCE_SRV_OUT" ||
    ! grep -q "^dc_pingpong: server: the client's WRITE of .* bytes ok" "$UROCE_SRV_OUT"; then
    UROCE_WHY="a byte check line is missing"; return 1
  fi
  UROCE_RESULT=$(grep -h 'first RTT' "$UROCE_CLI_OUT" "$UROCE_SRV_OUT")
  [ -n "$UROCE_RESULT" ] || { UROCE_WHY="no RTT lines"; return 1; }
}

# dc_status RUN_DIR: the DC pool of every device that has one opened
# contexts, and no device dropped more DC packets for want of a target than
# its two closing streams explain: a program exits within its peer's
# dc_idle_disconnect_us (1 ms), so the peer's DC_DISCONNECT (tried up to
# retry_cnt + 1 = 8 times) may find the DCT gone, and the answer to its own
# stream's DISCONNECT its DCI gone: at most 8 + 8.
dc_status() {
  "$UROCE_CTL" --run-dir "$1" --json status | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
opened = 0
for d in j["devices"]:
    lost = d["counters"]["rx_dc_no_target"]
    if lost > 16:
        sys.exit(d["name"] + ": rx_dc_no_target " + str(lost))
    print("  " + d["name"] + ": rx_dc_no_target " + str(lost) + " (at most 16)")
    p = d["dc"]["pool"]
    if p is not None:
        opened += p["counters"]["opened"]
        print("  " + d["name"] + ": DC pool " + json.dumps(p["counters"]))
if opened == 0:
    sys.exit("no DC context was ever opened")
'
}

uroce_next_port port
st=0
uroce_pair "dc_pingpong uroce0 to uroce1" 90 "$port" - - -- \
  "${R[@]}" "$PP" -d uroce1 -p "$port" ::: \
  "${R[@]}" "$PP" -d uroce0 -p "$port" -n "$ITERS" 127.0.0.1 && pingpong_check || st=1
[ "$st" -eq 0 ] && echo "$UROCE_RESULT" | sed 's/^/  /'
if [ "$st" -eq 0 ] && ! why=$(dc_status "${UROCE_DAEMON_RUN[d]}" 2>&1); then
  UROCE_WHY=$why; st=1
fi
[ "$st" -eq 0 ] && echo "$why"
uroce_verdict "uroce_dc_pingpong between uroce0 and uroce1 of one daemon: $ITERS ping-pongs, WRITE, READ" "$st"
verbs_daemons_stop "uroced d exits 0 on SIGTERM" d

verbs_netns_pair c 216
IPA=10.216.0.1 IPB=10.216.0.2
uroce_daemon_start da --netns "$NSA" --lcore 0 --poll backoff -- \
  --device "$(verbs_device uroce0 02:00:00:d8:00:01 $IPA "$(verbs_af_packet_port "$DEVA")")"
uroce_daemon_start db --netns "$NSB" --lcore 1 --poll backoff -- \
  --device "$(verbs_device uroce0 02:00:00:d8:00:02 $IPB "$(verbs_af_packet_port "$DEVB")")"
uroce_next_port port
st=0
echo "  load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
uroce_pair "dc_pingpong two daemons" 120 "$port" "$NSB" "$NSA" -- \
  "$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[db]}" "$PP" -d uroce0 -p "$port" ::: \
  "$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[da]}" "$PP" -d uroce0 -p "$port" -n "$ITERS" \
  "$TCP_IPB" && pingpong_check || st=1
[ "$st" -eq 0 ] && echo "$UROCE_RESULT" | sed 's/^/  /'
for dm in da db; do
  if [ "$st" -eq 0 ] && ! why=$(dc_status "${UROCE_DAEMON_RUN[$dm]}" 2>&1); then
    UROCE_WHY="$dm: $why"; st=1
  fi
  [ "$st" -eq 0 ] && echo "$why"
done
uroce_verdict "uroce_dc_pingpong between two daemons in two namespaces: $ITERS ping-pongs, WRITE, READ" "$st"
verbs_daemons_stop "uroced da and db exit 0 on SIGTERM" da db
uroce_summary dv_dc
