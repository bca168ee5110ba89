// libFuzzer target: arbitrary bytes into the RoCEv2 parser and the PFC
// parser. Any out-of-bounds read is caught by ASan; on a successful parse the
// decoded view is checked against the frame, and the packet is rebuilt from
// its fields and must parse back to the same values.
//
// Each input is parsed twice: as given, and with its IPv4 header checksum (an
// IPv6 frame has none) and ICRC made valid, so that mutations get past the
// integrity checks and reach the layout checks behind them.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

#include "datapath/wire/builder.h"
#include "datapath/wire/icrc.h"
#include "datapath/wire/parser.h"
#include "datapath/wire/pfc.h"

namespace {

using namespace uroce::wire;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "invariant violated: %s\n", what);
  std::abort();
}

void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

void check_parsed(std::span<const std::uint8_t> frame, const ParsedPacket& p) {
  check(p.info != nullptr && p.info->valid, "opcode info");
  check(p.frame_len <= frame.size(), "frame_len within input");
  check(p.icrc_offset + kIcrcSize == p.frame_len, "ICRC at the end");
  const std::uint8_t* const begin = frame.data();
  check(p.payload.data() == begin + p.payload_offset, "payload offset");
  check(p.payload_offset + p.payload.size() + p.bth.pad_count() == p.icrc_offset,
        "payload + pad reach the ICRC");
  check(p.payload_offset == p.bth_offset + BthHdr::kSize + p.info->ext_len,
        "extension headers length");
  check(p.info->payload || p.payload.empty(), "payload only where allowed");
  if (p.ipv6) {
    check(p.ip6.payload_length() + EthHdr::kSize + Ipv6Hdr::kSize == p.frame_len, "IPv6 length");
    check(p.udp.length() + EthHdr::kSize + Ipv6Hdr::kSize == p.frame_len, "UDP length");
    check(p.bth_offset == EthHdr::kSize + Ipv6Hdr::kSize + UdpHdr::kSize, "BTH offset");
  } else {
    check(p.ip.total_length() + EthHdr::kSize == p.frame_len, "IP length");
    check(p.udp.length() + EthHdr::kSize + Ipv4Hdr::kSize == p.frame_len, "UDP length");
  }
}

// Rebuild from the decoded fields; the result must parse to the same values.
void check_rebuild(const ParsedPacket& p) {
  if (p.payload.size() > kMaxPathMtuBytes) return;  // parser has no PMTU
  PacketSpec s;
  s.eth_src = p.eth.src();
  s.eth_dst = p.eth.dst();
  const Ipv6Route route{p.ip6.src(), p.ip6.dst(), p.ip6.flow_label()};
  if (p.ipv6) {
    s.ip6 = &route;
    s.dscp = p.ip6.dscp();
    s.ecn = p.ip6.ecn();
    s.ttl = p.ip6.hop_limit();
  } else {
    s.ip_src = p.ip.src();
    s.ip_dst = p.ip.dst();
    s.dscp = p.ip.dscp();
    s.ecn = p.ip.ecn();
    s.ttl = p.ip.ttl();
    s.ip_id = p.ip.id();
    s.df = (p.ip.flags_frag() & kIpv4FlagDf) != 0;
  }
  s.udp_src = p.udp.src_port();
  s.opcode = p.bth.opcode();
  s.se = p.bth.se();
  s.mig_req = p.bth.mig_req();
  s.pkey = p.bth.pkey();
  s.fecn = p.bth.fecn();
  s.becn = p.bth.becn();
  s.dest_qp = p.bth.dest_qp();
  s.ack_req = p.bth.ack_req();
  s.psn = p.bth.psn();
  if (p.has(ExtHdr::kDeth)) s.deth = p.deth;
  if (p.has(ExtHdr::kDcEth)) s.dc_eth = p.dc_eth;
  if (p.has(ExtHdr::kDcAeth)) s.dc_aeth = p.dc_aeth;
  if (p.has(ExtHdr::kFeth)) s.feth = p.feth;
  if (p.has(ExtHdr::kReth)) s.reth = p.reth;
  if (p.has(ExtHdr::kAtomicEth)) s.atomic_eth = p.atomic_eth;
  if (p.has(ExtHdr::kAeth)) s.aeth = p.aeth;
  if (p.has(ExtHdr::kAtomicAckEth)) s.atomic_ack_eth = p.atomic_ack_eth;
  if (p.has(ExtHdr::kImmDt)) s.immdt = p.immdt;
  if (p.has(ExtHdr::kIeth)) s.ieth = p.ieth;
  if (p.has(ExtHdr::kSrEth)) s.sr_eth = p.sr_eth;
  if (p.has(ExtHdr::kSackEth)) s.sack_eth = p.sack_eth;
  s.payload = p.payload;
  static std::uint8_t buf[kMaxRoceFrame];
  const int n = build_roce(s, buf);
  check(n > 0, "rebuild succeeds");
  ParsedPacket q;
  check(parse_roce(std::span<const std::uint8_t>(buf, static_cast<std::size_t>(n)), q) ==
            ParseError::kOk,
        "rebuilt frame parses");
  check(q.ipv6 == p.ipv6 && q.bth.opcode() == p.bth.opcode() &&
            q.bth.dest_qp() == p.bth.dest_qp() && q.bth.psn() == p.bth.psn() &&
            q.payload.size() == p.payload.size() &&
            std::memcmp(q.payload.data(), p.payload.data(), p.payload.size()) == 0,
        "rebuilt frame has the same fields");
}

void parse_and_check(std::span<const std::uint8_t> frame) {
  ParsedPacket p;
  const ParseError e = parse_roce(frame, p);
  check(static_cast<std::size_t>(e) < kNumParseErrors, "error code in range");
  if (e == ParseError::kOk) {
    check_parsed(frame, p);
    check_rebuild(p);
  }
}

// Copy of `in` with valid IPv4 checksum and ICRC where the lengths allow;
// empty when the input is too short or too long for the buffer.
std::span<const std::uint8_t> with_valid_checksums(std::span<const std::uint8_t> in,
                                                   std::uint8_t* buf, std::size_t cap) {
  constexpr std::size_t kIp = EthHdr::kSize;
  if (in.size() < kIp + kIcrcMaskedPrefix + kIcrcSize || in.size() > cap) {
    return {};
  }
  std::memcpy(buf, in.data(), in.size());
  if (load_be16(buf + 12) == kEtherTypeIpv6) {
    const std::size_t ip_len = Ipv6Hdr::kSize + Ipv6Hdr::read(buf + kIp).payload_length();
    if (ip_len >= kIcrcMaskedPrefixIpv6 + kIcrcSize && ip_len <= in.size() - kIp) {
      write_icrc(std::span<std::uint8_t>(buf + kIp, ip_len));  // a version-6 nibble: IPv6's
    }
    return {buf, in.size()};
  }
  Ipv4Hdr ip = Ipv4Hdr::read(buf + kIp);
  ip.fill_checksum();
  ip.write(buf + kIp);
  const std::size_t ip_len = ip.total_length();
  if (ip_len >= kIcrcMaskedPrefix + kIcrcSize && ip_len <= in.size() - kIp) {
    write_icrc(std::span<std::uint8_t>(buf + kIp, ip_len));
  }
  return {buf, in.size()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> frame(data, size);
  parse_and_check(frame);
  // Heap copy of exactly the input size, so ASan sees any over-read.
  if (size > 0 && size <= 16384) {
    auto* fixed = static_cast<std::uint8_t*>(std::malloc(size));
    const auto f2 = with_valid_checksums(frame, fixed, size);
    if (!f2.empty()) parse_and_check(f2);
    std::free(fixed);
  }
  PfcFrame f;
  if (parse_pfc(frame, f) == PfcParseError::kOk) {
    check(size >= EthHdr::kSize + PfcHdr::kSize, "PFC length");
    check(f.pfc.opcode() == kMacControlOpcodePfc, "PFC opcode");
  }
  return 0;
}
