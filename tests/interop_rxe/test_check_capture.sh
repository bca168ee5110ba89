#!/usr/bin/env bash
# check_capture.sh on frames whose payloads tshark's InfiniBand payload
# heuristics mistake for an IPoIB header (payload_frames.py): the programs'
# data is no header, so the capture passes. The payload of ib_send_lat's
# 2-byte SENDs is whatever its buffer holds, and a run whose bytes read
# as an ethertype failed the rxe interop's capture check on every SEND.
#
#   test_check_capture.sh ROCE_PCAP_CHECK
set -euo pipefail
check=$1
dir=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 "$dir/payload_frames.py" "$tmp/p.pcap" 10.0.0.1 10.0.0.2
if ! out=$("$dir/check_capture.sh" "$tmp/p.pcap" "$check" 10.0.0.1 10.0.0.2 2>&1); then
  echo "$out"
  echo "FAIL: SEND payloads that read as an ethertype failed the capture check"
  exit 1
fi
grep -q '^capture: 10 frames (5 from 10.0.0.1, 5 from 10.0.0.2), tshark and ICRC ok$' <<<"$out" || {
  echo "$out"
  echo "FAIL: no summary line for the 10 frames"
  exit 1
}
echo "PASS"
