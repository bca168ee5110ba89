#!/usr/bin/env bash
# A 4096-byte path MTU over ports whose RX buffers are 2 KiB: one uroced,
# two devices joined by a memif pair with rx_buf=2048, so that the memif PMD
# copies every data frame into a chain of 2 KiB mbufs, which the engine
# reads in place (engine/eth_port_io.h, wire/payload.h). The memif ring's
# own buffers are 8 KiB (bsize), one descriptor a frame: frames spread over
# several memif descriptors are not received correctly by Debian's DPDK 22.11
# memif PMD in one process (docs/nic.md).
# Unmodified pingpongs with data checks (-c) and perftest, then the status
# JSON: both ports counted chained frames, none too long, none unreadable,
# no parse error, and port_info says rx_buf 2048.
#
#   memif_chained.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vmchain "$1" ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong \
  ibv_srq_pingpong ib_write_bw ib_send_bw ib_read_bw

sock=$UROCE_TMP/memif.sock
mp="socket=$sock,socket-abstract=no,id=0,bsize=8192"
uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:cc:00:01 10.204.0.1 "net_memif0,role=server,$mp");rx_buf=2048" \
  --device "$(verbs_device uroce1 02:00:00:cc:00:02 10.204.0.2 "net_memif1,role=client,$mp");rx_buf=2048"
RUN=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$RUN")

# pingpong PROGRAM LABEL SIZE ITERS [EXTRA-ARGS...]: server on uroce0.
pingpong() { verbs_pingpong "$@"; }

# perf PROGRAM LABEL [EXTRA-ARGS...]: a bandwidth test of 500 iterations.
perf() { PP_ITERS=500 verbs_perf "$1" bw "${@:2}"; }

pingpong ibv_rc_pingpong "chained: ibv_rc_pingpong -m 4096 64 KiB x 200" 65536 200 -m 4096
pingpong ibv_rc_pingpong "chained: ibv_rc_pingpong -m 4096 4096 B x 500" 4096 500 -m 4096
pingpong ibv_uc_pingpong "chained: ibv_uc_pingpong -m 4096 16 KiB x 200" 16384 200 -m 4096
pingpong ibv_ud_pingpong "chained: ibv_ud_pingpong 4000 B x 500" 4000 500
pingpong ibv_srq_pingpong "chained: ibv_srq_pingpong -m 4096 4 QPs 16 KiB x 200" 16384 200 \
  -m 4096 -q 4
perf ib_write_bw "chained: ib_write_bw 64 KiB x 500" -s 65536
perf ib_send_bw "chained: ib_send_bw 64 KiB x 500" -s 65536
perf ib_read_bw "chained: ib_read_bw 64 KiB x 500" -s 65536

uroce_no_pair
st=0
json=$UROCE_TMP/status.json
if ! "$UROCE_CTL" --run-dir "$RUN" status --json >"$json" 2>&1; then
  UROCE_WHY="uroce-ctl status --json failed: $(tail -n 3 "$json")"; st=1
elif ! why=$(/usr/bin/python3 - "$json" <<'EOF'
import json, sys
devs = json.load(open(sys.argv[1]))["devices"]
for d in devs:
    c, i = d["counters"], d.get("port_info", {})
    rx = c.get("port_rx", {})
    bad = []
    if rx.get("chained", 0) == 0: bad.append("no chained frames")
    if rx.get("too_many_segments", -1) != 0: bad.append(f"too_many_segments {rx.get('too_many_segments')}")
    if c["rx_unreadable"] != 0: bad.append(f"rx_unreadable {c['rx_unreadable']}")
    if c["rx_parse_errors"] != 0: bad.append(f"rx_parse_errors {c['rx_parse_errors']}")
    if i.get("rx_buf") != 2048: bad.append(f"port_info.rx_buf {i.get('rx_buf')}")
    if i.get("driver") != "net_memif": bad.append(f"port_info.driver {i.get('driver')}")
    if bad:
        print(d["name"] + ": " + ", ".join(bad))
        sys.exit(1)
    print(f"  {d['name']}: {rx['chained']} chained of {rx['frames']} frames, rx_buf {i['rx_buf']}, driver {i['driver']}")
EOF
); then
  UROCE_WHY="status: $why"; st=1
else
  echo "$why"
fi
uroce_verdict "status: chained frames on both ports, none unreadable, no parse error" "$st"

verbs_daemons_stop "uroced exits 0 on SIGTERM and removes its run dir and nodes" d

uroce_summary memif_chained
