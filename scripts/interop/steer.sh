# shellcheck shell=bash
# shellcheck disable=SC2034 # UROCE_* globals are read by uroce-verbs.sh's checks
# RSS steering into the uroce guest's engine lcores (scripts/interop-rxe.sh
# --uroce-in-guest virtio --steer; sourced after cases.sh and uroce-guest.sh,
# run after the cases):
#
#   host: uroced "peer" (net_af_packet on the veth, its netns; steer_src_port)
#         == veth ==+
#   rxe guest ======+== bridge ==+== multi-queue tap == uroce guest: virtio-net
#                                   (capture)           2 queue pairs, RSS;
#                                                       uroced --lcores 0,1
#
# The guest's uroced programs kRssKey and its RETA into the NIC (its port's
# rss must read "programmed"); QEMU then hashes each frame and puts it on
# the queue the table names. Two phases, each with two servers in the uroce
# guest, one per shard (a client lives on the shard serving the fewest: the
# first on shard 0, the second on shard 1), and their clients run at once:
#   peer  the clients run through the host's uroced, which picks each RC
#         QP's source port so that the guest's hash lands it on the shard
#         owning the destination QP: both queues receive frames, none is
#         handed off;
#   rxe   the clients run in the rxe guest, whose source ports are its own:
#         frames land on either queue and those on the wrong one are handed
#         off, exactly as many as the capture's hashes say.
# Servers: ibv_rc_pingpong -c (4 KiB x 200) and ib_write_bw (2 QPs, 64 KiB x
# 100). Each phase's capture on the guest's tap is checked as every case's
# is (tshark, roce_pcap_check), then by scripts/interop/steer-check.py
# against the guest's status before and after.
# In flight: at most 128 PSNs per RC QP (both requesters' window), so at
# most 256 frames for queue 1 and a few for queue 0, and retransmissions
# start only after 1.07 s (min_ack_timeout on our side, -u 18 for rxe's
# perftest; rc_pingpong has one message out): well within the 1024-frame
# RX rings. QEMU's software RSS stops a tap queue for good when a frame it
# moves finds the other queue's ring full (uroce-guest.sh), which is the
# emulator's limit, not the steering's.
#
#   rxe_steer_run NET   NET: the run's /24 prefix (the peer is NET.4)

_rxe_steer_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

rxe_steer_run() {
  local net=$1
  rxe_steer_port || return 0
  rxe_steer_peer "$net" || return 0
  rxe_steer_phase peer
  rxe_steer_phase rxe
}

# rxe_steer_status FILE: the guest uroced's status JSON into FILE.
rxe_steer_status() {
  "$UROCE_CTL" --run-dir "${UROCE_DAEMON_RUN[main]}" status --json >"$1" 2>&1
}

# rxe_steer_py FILE EXPR: true when the Python expression over `d` (uroce0
# in the status JSON FILE) holds; prints `d`'s port_info and shards if not.
rxe_steer_py() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
d = [d for d in json.load(open(sys.argv[1]))["devices"] if d["name"] == "uroce0"][0]
if not eval(sys.argv[2]):
    print("port_info", d.get("port_info"), "shards", d.get("shards"))
    sys.exit(1)
PY
}

# The port: two queues, RSS programmed, and what the PMD offered.
rxe_steer_port() {
  local f=$UROCE_TMP/steer.port.json st=0
  uroce_no_pair
  if ! rxe_steer_status "$f"; then
    UROCE_WHY="uroce-ctl status failed: $(tail -n 3 "$f")"
    st=1
  elif ! rxe_steer_py "$f" \
    'd["port_info"]["queues"] == 2 and len(d["shards"]) == 2 and d["port_info"]["rss"] == "programmed"' \
    >"$f.why"; then
    UROCE_WHY="the port is not two queues with RSS programmed: $(cat "$f.why")"
    st=1
  fi
  local fig
  fig=$(/usr/bin/python3 - "$f" 2>&1 <<'PY'
import json, sys
d = [d for d in json.load(open(sys.argv[1]))["devices"] if d["name"] == "uroce0"][0]["port_info"]
print(f"{d['driver']} {d['queues']} queues, rss {d['rss']}: key {d['rss_key_size']} B "
      f"{d['rss_key']}, RETA {d['reta_size']}; offered {','.join(d['rss_types_offered'])}; "
      f"hashing {','.join(d['rss_types'])}")
PY
  ) || true
  echo "steer: $fig"
  rxe_row steer_port - "$st" "$fig"
  uroce_verdict "steer: the guest's port has two queues and RSS programmed" "$st"
  return "$st"
}

# The steering peer: uroced on the host's veth, steer_src_port on.
RXE_STEER_GID=''
rxe_steer_peer() {
  local net=$1 mac st=0
  mac=$(printf '02:00:00:4d:%02x:04' "${net##*.}")
  local port="net_af_packet0,iface=$RXE_VETH,qdisc_bypass=1,blocksz=4096,framesz=2048,framecnt=2048"
  uroce_no_pair
  if ! UROCED=$RXE_HOST_UROCED uroce_daemon_start peer --netns "$RXE_NS" --lcore 1 \
    --poll backoff -- --device \
    "name=uroce0;mac=$mac;ipv4=$net.4;mtu=$RXE_MTU;port=$port;min_ack_timeout=18;steer_src_port=on"; then
    UROCE_WHY="the host's steering uroced did not start"
    st=1
  else
    RXE_STEER_GID=$(rxe_uroce_gid "$RXE_HOST_UROCE_RUN" "${UROCE_DAEMON_RUN[peer]}" "$net.4")
    [ -n "$RXE_STEER_GID" ] || { UROCE_WHY="the peer's uroce0 has no RoCE v2 GID ::ffff:$net.4"; st=1; }
  fi
  uroce_verdict "steer: the host's uroced (steer_src_port=on) at $net.4" "$st"
  return "$st"
}

# rxe_steer_phase peer|rxe
rxe_steer_phase() {
  local kind=$1 label=steer_$1 run=${UROCE_DAEMON_RUN[main]} st=0 t0=$SECONDS
  local base=$UROCE_TMP/steer_$1 pp pw src expect=unsteered fig=''
  uroce_next_port pp
  uroce_next_port pw
  local pp_args="-p $pp -s 4096 -n 200 -m $RXE_PATH_MTU -c"
  local pw_args="-p $pw -s 65536 -n 100 -q 2 -u 18 -F --report_gbits"
  src=$RXE_GUEST_IP
  [ "$kind" = peer ] && src=${RXE_UROCE_IP%.*}.4 expect=steered
  uroce_no_pair
  rxe_uguest_sweep
  # The servers, one after the other: each listens once it has opened the
  # device, so the first is placed before the second asks.
  local spp='' spw=''
  # shellcheck disable=SC2086 # $pp_args, $pw_args: one word per option
  uroce_bg spp --timeout 300 "$base.pp.server.out" "$base.pp.server.err" -- \
    "$UROCE_RUN" --run-dir "$run" ibv_rc_pingpong -d uroce0 -g "$RXE_UGID" $pp_args
  if ! rxe_guest_exec "$RXE_UGUEST_DIR" 90 "wait-listen $pp 80" >/dev/null; then
    UROCE_WHY="the guest's ibv_rc_pingpong server never listened on $pp"
    st=1
  fi
  if [ "$st" -eq 0 ]; then
    # shellcheck disable=SC2086
    uroce_bg spw --timeout 300 "$base.pw.server.out" "$base.pw.server.err" -- \
      "$UROCE_RUN" --run-dir "$run" ib_write_bw -d uroce0 -x "$RXE_UGID" $pw_args
    if ! rxe_guest_exec "$RXE_UGUEST_DIR" 90 "wait-listen $pw 80" >/dev/null; then
      UROCE_WHY="the guest's ib_write_bw server never listened on $pw"
      st=1
    fi
  fi
  if [ "$st" -eq 0 ]; then
    if ! rxe_steer_status "$base.before.json" || ! rxe_steer_py "$base.before.json" \
      'd["shards"][0]["clients"] == 1 and d["shards"][1]["clients"] == 1' >"$base.why"; then
      UROCE_WHY="the servers are not one per shard: $(cat "$base.why")"
      st=1
    fi
  fi
  local cpp='' cpw='' rpp=- rpw=- jpp jpw
  if [ "$st" -eq 0 ]; then
    rxe_capture_start "$label"
    if [ "$kind" = peer ]; then
      local -a prun=("$RXE_HOST_UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[peer]}")
      # shellcheck disable=SC2086
      uroce_bg cpp --timeout 240 "$base.pp.client.out" "$base.pp.client.err" -- \
        "${prun[@]}" ibv_rc_pingpong -d uroce0 -g "$RXE_STEER_GID" $pp_args "$RXE_UROCE_TCP_IP"
      # shellcheck disable=SC2086
      uroce_bg cpw --timeout 240 "$base.pw.client.out" "$base.pw.client.err" -- \
        "${prun[@]}" ib_write_bw -d uroce0 -x "$RXE_STEER_GID" $pw_args "$RXE_UROCE_TCP_IP"
      uroce_wait "$cpp" rpp
      uroce_wait "$cpw" rpw
    else
      : >"$base.pp.client.err"
      : >"$base.pw.client.err"
      rxe_guest_bg jpp "$RXE_GUEST_DIR" \
        "timeout 235 ibv_rc_pingpong -d rxe0 -g $RXE_GGID $pp_args $RXE_UROCE_TCP_IP"
      rxe_guest_bg jpw "$RXE_GUEST_DIR" \
        "timeout 235 ib_write_bw -d rxe0 -x $RXE_GGID $pw_args $RXE_UROCE_TCP_IP"
      rpp=0 rpw=0
      rxe_guest_wait "$RXE_GUEST_DIR" "$jpp" 240 >"$base.pp.client.out" 2>&1 || rpp=$?
      rxe_guest_wait "$RXE_GUEST_DIR" "$jpw" 240 >"$base.pw.client.out" 2>&1 || rpw=$?
    fi
  fi
  # The servers end with their clients (or at their time limit); without
  # clients they are stopped (the stand-ins pass SIGTERM on into the guest).
  local sp=- sw=-
  if [ "$st" -ne 0 ]; then
    uroce_kill_group TERM "$spp"
    uroce_kill_group TERM "$spw"
  fi
  if [ -n "$spp" ]; then uroce_wait "$spp" sp; fi
  if [ -n "$spw" ]; then uroce_wait "$spw" sw; fi
  if [ "$st" -eq 0 ]; then
    rxe_capture_stop || st=1
    rxe_steer_status "$base.after.json" || true
    UROCE_SRV_CMD="(uroce guest) ibv_rc_pingpong $pp_args; ib_write_bw $pw_args"
    UROCE_CLI_CMD="($kind) ibv_rc_pingpong $pp_args; ib_write_bw $pw_args"
    UROCE_SRV_OUT=$base.pp.server.out UROCE_SRV_ERR=$base.pp.server.err
    UROCE_CLI_OUT=$base.pp.client.out UROCE_CLI_ERR=$base.pp.client.err
    UROCE_SRV_RC="$sp/$sw" UROCE_CLI_RC="$rpp/$rpw"
    if [ "$sp" != 0 ] || [ "$sw" != 0 ] || [ "$rpp" != 0 ] || [ "$rpw" != 0 ]; then
      UROCE_WHY="exit status: servers $sp/$sw, clients $rpp/$rpw (expected 0)"
      st=1
    elif ! uroce_check_pingpong 4096 200; then
      st=1
    else
      fig="rc_pingpong $(awk '/usec\/iter/ { print $(NF - 1) " us/iter" }' "$UROCE_CLI_OUT")"
      UROCE_SRV_OUT=$base.pw.server.out UROCE_SRV_ERR=$base.pw.server.err
      UROCE_CLI_OUT=$base.pw.client.out UROCE_CLI_ERR=$base.pw.client.err
      if ! uroce_check_perftest bw 200; then
        st=1
      else
        fig="$fig, write_bw 2 QPs $(echo "$UROCE_RESULT" | tail -n 1 | awk '{ print $4 }') Gb/s"
      fi
    fi
    if [ "$st" -eq 0 ] && ! "$_rxe_steer_dir/../../tests/interop_rxe/check_capture.sh" "$RXE_CAP_FILE" "$RXE_CHECKER" \
      "$RXE_UROCE_IP" "$src" >"$base.capture-check" 2>&1; then
      UROCE_WHY="capture check failed: $(tail -n 3 "$base.capture-check" | tr '\n' ' ')"
      st=1
    fi
    local steer=''
    if [ "$st" -eq 0 ]; then
      if steer=$("$_rxe_steer_dir/steer-check.py" "$base.before.json" \
        "$base.after.json" "$RXE_CAP_FILE" "$src" "$RXE_UROCE_IP" "$expect" 2>&1); then
        fig="$fig; $(sed -n 's/^capture: //p' "$base.capture-check"); $steer"
      else
        UROCE_WHY="steer-check ($expect): $(echo "$steer" | tr '\n' ' ')"
        st=1
      fi
    fi
    [ -z "$fig" ] || echo "steer $kind: $fig"
  fi
  rxe_row "$label" "$kind" "$st" "${fig:-$UROCE_WHY} ($((SECONDS - t0)) s)"
  uroce_verdict "steer: $kind traffic to QPs on both shards ($expect)" "$st"
}
