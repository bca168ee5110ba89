#!/usr/bin/env bash
# One latency figure between two uroced daemons in two network namespaces
# over a veth pair: ib_send_lat 2 B x ITERS, with the daemons' port kind and
# polling chosen (docs/nic.md used it to compare af_xdp's busy_budget
# settings with af_packet). Prints perftest's result row and the client
# daemon's frame counters; everything it made is removed at exit.
#
#   scripts/netns-send-lat.sh BUILD_DIR af_xdp|af_packet [busy|backoff|yield] [ITERS]
#                             [-- EXTRA_AF_XDP_OPTIONS]   (e.g. -- busy_budget=64)
source "$(dirname "$0")/../tests/integration/verbs/common.sh"
build=$1 kind=$2 poll=${3:-backoff} iters=${4:-2000}
shift $(($# < 4 ? $# : 4))
[ "${1:-}" = -- ] && shift
extra=${1:-}
case $kind in
  af_xdp | af_packet) ;;
  *) echo "netns-send-lat.sh: the port kind is af_xdp or af_packet, not '$kind'" >&2; exit 2 ;;
esac
verbs_test_init "nslat" "$build" ib_send_lat
mtu=9000
[ "$kind" = af_xdp ] && mtu=3504
verbs_netns_pair s 219 "$mtu"
uroce_daemon_start a --netns "$NSA" --lcore 0 --poll "$poll" -- \
  --device "$(verbs_device uroce0 02:00:00:cb:00:01 10.219.0.1 "$(verbs_veth_port "$kind" "$DEVA" "$extra")" "$mtu")"
uroce_daemon_start b --netns "$NSB" --lcore 1 --poll "$poll" -- \
  --device "$(verbs_device uroce0 02:00:00:cb:00:02 10.219.0.2 "$(verbs_veth_port "$kind" "$DEVB" "$extra")" "$mtu")"
port=
uroce_next_port port
st=0
uroce_pair "ib_send_lat" 120 "$port" "$NSA" "$NSB" -- \
  "$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[a]}" ib_send_lat -d uroce0 -x 1 -p "$port" \
  -n "$iters" -F ::: \
  "$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[b]}" ib_send_lat -d uroce0 -x 1 -p "$port" \
  -n "$iters" -F "$TCP_IPA" && uroce_check_perftest lat "$iters" || st=1
[ "$st" -eq 0 ] && echo "$UROCE_RESULT"
echo "$kind, poll $poll${extra:+, $extra}, load $(cut -d' ' -f1-3 /proc/loadavg)"
uroce_verdict "ib_send_lat over $kind" "$st"
uroce_summary "netns-send-lat"
