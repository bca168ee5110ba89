#!/usr/bin/env bash
# Checks one capture of scripts/interop-rxe.sh two independent ways:
#  1. roce_pcap_check (our parser, ICRC included): every frame parses, at
#     least one frame, and frames from both given addresses (uroce's and
#     rxe's packets alike);
#  2. tshark's decoder: every frame decodes as InfiniBand (RRoCE) over UDP
#     4791, none is malformed or carries an expert warning or error, and the
#     ICRC tshark reads (infiniband.invariant.crc; tshark 4.0 shows it but
#     does not verify it) is, frame by frame, the one our checker verified.
#     uroce's extension opcodes (0xC0-0xC7: the Homa-like scheduler's
#     GRANT, CUTOFFS, MLEN; docs/homa.md) are "Unknown" to tshark, which
#     then shows no ICRC: their ICRC is our checker's alone, and they are
#     counted per source on their own line.
#
#   check_capture.sh FILE.pcap CHECKER IP_A IP_B
#
# Last lines on success: "extension: X from IP_A, Y from IP_B" (frames with
# an opcode 0xC0-0xC7), then "capture: N frames (A from IP_A, B from IP_B),
# tshark and ICRC ok".
set -euo pipefail
pcap=$1 checker=$2 ipa=$3 ipb=$4

ours=$("$checker" --list --require-from "$ipa" --require-from "$ipb" "$pcap") || {
  echo "$ours" | grep -v '^frame ' | sed -n 1,20p
  echo "FAIL: roce_pcap_check rejected $pcap"
  exit 1
}
echo "$ours" | grep -v '^frame '

# The payload is the programs' test data: tshark's heuristic upper-layer
# dissectors (RPC-over-RDMA, SMB Direct, ...) would guess at it and call
# short SENDs malformed. Only the RoCE headers are judged. The two payload
# heuristics that are no protocol of their own go by their heuristic
# names: an ethertype in the first two bytes and zeros after them (a
# 2-byte SEND and its pad) read as an IPoIB header (eth_over_ib), and
# Mellanox's EoIB (test_check_capture.sh).
no_upper=(--disable-heuristic eth_over_ib --disable-heuristic mellanox_eoib)
for p in smc smb_direct rpcordma nvme-rdma lnet iser infiniband_sdp fcoib; do
  no_upper+=(--disable-protocol "$p")
done
# frame number, protocol stack, ICRC, malformed marker, expert severities,
# BTH opcode, IPv4 source.
decoded=$(tshark "${no_upper[@]}" -r "$pcap" -T fields -E separator='|' -E occurrence=a \
  -E aggregator=, -e frame.number -e frame.protocols -e infiniband.invariant.crc -e _ws.malformed \
  -e _ws.expert.severity -e infiniband.bth.opcode -e ip.src 2>"$pcap.tshark.err") || {
  cat "$pcap.tshark.err"
  echo "FAIL: tshark could not read $pcap"
  exit 1
}
echo "$ours" | awk '/^frame / { print $2, $4 }' >"$pcap.icrc"
# Expert severities: note 0x400000, warn 0x600000, error 0x800000.
bad=$(awk -F'|' '
  # mawk has no strtonum: severities come as 0x... or decimal.
  function num(s,   v, i, c) {
    if (s !~ /^0[xX]/) return s + 0
    v = 0
    for (i = 3; i <= length(s); i++) { c = index("0123456789abcdef", tolower(substr(s, i, 1))) - 1; v = v * 16 + c }
    return v
  }
  FILENAME == ARGV[1] { split($0, kv, " "); icrc[kv[1]] = kv[2]; next }
  {
    frames++
    if ($2 !~ /:udp:infiniband/) { print "frame " $1 ": not decoded as InfiniBand over UDP: " $2; next }
    if ($4 != "") { print "frame " $1 ": malformed"; next }
    ns = split($5, sev, ",")
    for (i = 1; i <= ns; i++) if (num(sev[i]) >= 6291456) { print "frame " $1 ": expert severity " sev[i]; next }
    # Extension opcodes: tshark knows no layout for them and shows no ICRC.
    if ($6 >= 192 && $6 <= 199 && $3 == "") next
    if (tolower($3) != icrc[$1]) { print "frame " $1 ": tshark ICRC " $3 " != ours " icrc[$1] }
  }
  END { if (frames == 0) print "tshark: no frames" }' "$pcap.icrc" - <<<"$decoded")
if [ -n "$bad" ]; then
  echo "$bad" | sed -n 1,10p
  echo "FAIL: tshark disagrees on $(echo "$bad" | wc -l) frame(s) of $pcap"
  exit 1
fi
ext=$(echo "$decoded" | awk -F'|' -v a="$ipa" -v b="$ipb" '
  $6 >= 192 && $6 <= 199 { if ($7 == a) na++; else if ($7 == b) nb++ }
  END { printf "%d from %s, %d from %s\n", na, a, nb, b }')
echo "extension: $ext"
total=$(echo "$decoded" | wc -l)
na=$(echo "$ours" | awk -v ip="$ipa" '$1 == ip && $2 == "->" { s += $NF } END { print s + 0 }')
nb=$(echo "$ours" | awk -v ip="$ipb" '$1 == ip && $2 == "->" { s += $NF } END { print s + 0 }')
echo "capture: $total frames ($na from $ipa, $nb from $ipb), tshark and ICRC ok"
