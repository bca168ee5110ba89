#!/usr/bin/env bash
# roce_pcap_check on known input: the frames our builder writes
# (wire_vectors gen) pass; the same file with one payload byte flipped
# fails with BadIcrc; a file without frames fails; a missing direction
# fails; a file that is not a pcap is a usage error (2).
#
#   test_roce_pcap_check.sh ROCE_PCAP_CHECK WIRE_VECTORS
set -euo pipefail
check=$1 vectors=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

"$vectors" gen "$tmp/good.pcap" >/dev/null
out=$("$check" "$tmp/good.pcap") || fail "good vectors rejected: $out"
grep -qE ': [1-9][0-9]* RoCEv2 frames, 0 bad$' <<<"$out" || fail "no frame count: $out"
grep -q 'opcode RC_SEND_ONLY' <<<"$out" || fail "no per-opcode count: $out"
grep -qE '^  [0-9.]+ -> [0-9.]+: [0-9]+$' <<<"$out" || fail "no per-direction count: $out"

# Flip the last byte before the first frame's ICRC (its payload or last
# header; that vector's UDP checksum is zero, so only the ICRC covers it).
# The first record starts at 24; its incl_len is at 24 + 8 (little endian).
cp "$tmp/good.pcap" "$tmp/bad.pcap"
incl=$(od -An -tu4 -j 32 -N4 "$tmp/bad.pcap" | tr -d ' ')
off=$((24 + 16 + incl - 5))
byte=$(od -An -tu1 -j "$off" -N1 "$tmp/bad.pcap" | tr -d ' ')
# shellcheck disable=SC2059 # the format is the octal escape of the byte
printf "$(printf '\\%03o' $((byte ^ 0x5a)))" |
  dd of="$tmp/bad.pcap" bs=1 seek="$off" conv=notrunc status=none
rc=0
out=$("$check" "$tmp/bad.pcap") || rc=$?
[ "$rc" -eq 1 ] || fail "corrupt frame: exit $rc, expected 1: $out"
grep -qE '^BAD frame [0-9]+ .*: BadIcrc$' <<<"$out" || fail "corrupt frame not named BadIcrc: $out"

# The 24-byte file header alone: no frames.
head -c 24 "$tmp/good.pcap" >"$tmp/empty.pcap"
rc=0
out=$("$check" "$tmp/empty.pcap") || rc=$?
if [ "$rc" -ne 1 ] || ! grep -q '^FAIL: no frames$' <<<"$out"; then
  fail "empty capture: exit $rc: $out"
fi

rc=0
out=$("$check" --require-from 192.0.2.250 "$tmp/good.pcap") || rc=$?
if [ "$rc" -ne 1 ] || ! grep -q '^FAIL: no good frame from 192.0.2.250$' <<<"$out"; then
  fail "missing direction: exit $rc: $out"
fi

echo "not a pcap file at all, but long enough" >"$tmp/text.pcap"
rc=0
"$check" "$tmp/text.pcap" 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "text file: exit $rc, expected 2"
echo "PASS"
