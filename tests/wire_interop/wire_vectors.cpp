// wire_vectors: the C++ side of the wire interop test (check_scapy.py).
//
//   wire_vectors gen PCAP     one JSON line per test vector: its name, the
//                             field values it was built from and the frame
//                             our builder produced (hex); all frames also go
//                             to PCAP for tshark.
//   wire_vectors parse        reads one hex frame per stdin line, prints our
//                             parser's verdict and decoded fields as JSON.
//   wire_vectors corpus DIR   writes every vector (and PFC frames) as a
//                             binary file: the fuzzer's seed corpus.
//
// The vectors cover every opcode class with fixed, distinctive field values
// (the DC packets of docs/dc.md and the selective-repeat packets of
// docs/lossy.md among them) and payload lengths 0..7 mod 4
// so that every pad count appears, each over
// IPv4 and again over IPv6 (name suffix _IPV6; a link-local source, a global
// destination, a distinct traffic class, flow label and hop limit each).
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "datapath/port/pcap_writer.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/parser.h"
#include "datapath/wire/pfc.h"

namespace {

using namespace uroce::wire;

struct Vector {
  std::string name;
  PacketSpec spec;
  std::vector<std::uint8_t> payload;
};

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<std::uint8_t>(seed + 7 * i);
  }
  return v;
}

PacketSpec base(std::uint8_t opcode, std::uint32_t n) {
  PacketSpec s;
  s.eth_src = MacAddr{{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
  s.eth_dst = MacAddr{{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}};
  s.ip_src = Ipv4Addr{0xc0a80001};  // 192.168.0.1
  s.ip_dst = Ipv4Addr{0xc0a80002};
  s.dscp = static_cast<std::uint8_t>(n % 64);
  s.ecn = static_cast<std::uint8_t>(n % 4);
  s.ip_id = static_cast<std::uint16_t>(0x100 + n);
  s.udp_src = static_cast<std::uint16_t>(0xc000 | (n * 37));
  s.opcode = opcode;
  s.se = (n % 3) == 0;
  s.mig_req = (n % 5) == 0;
  s.pkey = (n % 2) == 0 ? 0xffff : 0x8001;
  s.becn = (n % 7) == 0;
  s.dest_qp = 0x000011 + n * 0x010203;
  s.ack_req = (n % 2) == 1;
  s.psn = (0xfffff0 + n * 3) & kPsnMask;  // crosses the 24-bit wrap
  return s;
}

std::vector<Vector> make_vectors() {
  std::vector<Vector> v;
  std::uint32_t n = 0;
  auto add = [&](std::string name, std::uint8_t opcode, std::size_t len, auto&& fill) {
    Vector x;
    x.name = std::move(name);
    x.spec = base(opcode, n++);
    x.payload = pattern(len, static_cast<std::uint8_t>(opcode + n));
    fill(x.spec);
    v.push_back(std::move(x));
  };
  auto none = [](PacketSpec&) {};
  auto imm = [](PacketSpec& s) { s.immdt = ImmDtHdr::make(0xdeadbeef); };
  auto reth = [](PacketSpec& s) {
    s.reth = RethHdr::make(0x00007f1234567000ull, 0x00abcdef, 12345);
  };
  auto reth_imm = [&](PacketSpec& s) {
    reth(s);
    s.immdt = ImmDtHdr::make(0x01020304);
  };
  auto aeth = [](std::uint8_t syn) {
    return [syn](PacketSpec& s) { s.aeth = AethHdr::make(syn, 0x00abcdef); };
  };
  auto inv = [](PacketSpec& s) { s.ieth = IethHdr::make(0x13572468); };

  for (const char* t : {"RC", "UC"}) {
    const std::uint8_t b = std::string_view(t) == "RC" ? 0x00 : 0x20;
    const std::string p = t;
    add(p + "_SEND_FIRST", b + 0x00, 256, none);
    add(p + "_SEND_MIDDLE", b + 0x01, 256, none);
    add(p + "_SEND_LAST", b + 0x02, 1, none);
    add(p + "_SEND_LAST_WITH_IMMEDIATE", b + 0x03, 2, imm);
    add(p + "_SEND_ONLY", b + 0x04, 3, none);
    add(p + "_SEND_ONLY_WITH_IMMEDIATE", b + 0x05, 0, imm);
    add(p + "_RDMA_WRITE_FIRST", b + 0x06, 256, reth);
    add(p + "_RDMA_WRITE_MIDDLE", b + 0x07, 256, none);
    add(p + "_RDMA_WRITE_LAST", b + 0x08, 5, none);
    add(p + "_RDMA_WRITE_LAST_WITH_IMMEDIATE", b + 0x09, 6, imm);
    add(p + "_RDMA_WRITE_ONLY", b + 0x0a, 7, reth);
    add(p + "_RDMA_WRITE_ONLY_WITH_IMMEDIATE", b + 0x0b, 9, reth_imm);
  }
  add("RC_SEND_LAST_WITH_INVALIDATE", op::kRcSendLastInv, 10, inv);
  add("RC_SEND_ONLY_WITH_INVALIDATE", op::kRcSendOnlyInv, 11, inv);
  add("RC_RDMA_READ_REQUEST", op::kRcReadRequest, 0, reth);
  add("RC_RDMA_READ_RESPONSE_FIRST", op::kRcReadResponseFirst, 256, aeth(aeth_ack_syndrome()));
  add("RC_RDMA_READ_RESPONSE_MIDDLE", op::kRcReadResponseMiddle, 256, none);
  add("RC_RDMA_READ_RESPONSE_LAST", op::kRcReadResponseLast, 13, aeth(aeth_ack_syndrome()));
  add("RC_RDMA_READ_RESPONSE_ONLY", op::kRcReadResponseOnly, 14, aeth(aeth_ack_syndrome()));
  add("RC_ACKNOWLEDGE", op::kRcAck, 0, aeth(aeth_ack_syndrome()));
  add("RC_ACKNOWLEDGE_CREDITS_3", op::kRcAck, 0, aeth(aeth_ack_syndrome(3)));
  add("RC_NAK_PSN_SEQ_ERROR", op::kRcAck, 0, aeth(aeth_nak_syndrome(NakCode::kPsnSeqError)));
  add("RC_NAK_INVALID_REQUEST", op::kRcAck, 0, aeth(aeth_nak_syndrome(NakCode::kInvalidRequest)));
  add("RC_NAK_REMOTE_ACCESS_ERROR", op::kRcAck, 0,
      aeth(aeth_nak_syndrome(NakCode::kRemoteAccessError)));
  add("RC_NAK_REMOTE_OP_ERROR", op::kRcAck, 0, aeth(aeth_nak_syndrome(NakCode::kRemoteOpError)));
  add("RC_RNR_NAK", op::kRcAck, 0, aeth(aeth_rnr_nak_syndrome(14)));
  add("RC_CMP_SWAP", op::kRcCompareSwap, 0, [](PacketSpec& s) {
    s.atomic_eth = AtomicEthHdr::make(0x00007f0000001000ull, 0x0badf00d, 0x1111222233334444ull,
                                      0x5555666677778888ull);
  });
  add("RC_FETCH_ADD", op::kRcFetchAdd, 0, [](PacketSpec& s) {
    s.atomic_eth = AtomicEthHdr::make(0x00007f0000002008ull, 0x0badf00d, 42, 0);
  });
  add("RC_ATOMIC_ACKNOWLEDGE", op::kRcAtomicAck, 0, [](PacketSpec& s) {
    s.aeth = AethHdr::make(aeth_ack_syndrome(), 0x000102);
    s.atomic_ack_eth = AtomicAckEthHdr::make(0x8877665544332211ull);
  });
  add("UD_SEND_ONLY", op::kUdSendOnly, 17,
      [](PacketSpec& s) { s.deth = DethHdr::make(0x11111111, 0x000abc); });
  add("UD_SEND_ONLY_WITH_IMMEDIATE", op::kUdSendOnlyImm, 18, [](PacketSpec& s) {
    s.deth = DethHdr::make(0x80010000, 0x000def);
    s.immdt = ImmDtHdr::make(0xcafef00d);
  });
  add("CNP", op::kCnp, 0, [](PacketSpec& s) {
    s.becn = true;
    s.psn = 0;
    s.se = false;
    s.mig_req = false;
    s.ack_req = false;
  });
  add("RC_SEND_ONLY_UDP_CHECKSUM", op::kRcSendOnly, 21,
      [](PacketSpec& s) { s.udp_checksum = true; });
  // DC (docs/dc.md): uroce's own headers right after the BTH, which scapy
  // packs from these fields and tshark does not know.
  auto dc_eth = [](bool syn) {
    return [syn](PacketSpec& s) {
      s.dc_eth = DcEthHdr::make(0x0123456789abcdefull, syn, 0x00c0ffee, 0x0102, 0x89abcdef,
                                0x00fffff0, 0x00abcdef);
    };
  };
  auto dc_aeth = [](DcStatus st) {
    return [st](PacketSpec& s) { s.dc_aeth = DcAethHdr::make(0x0304, st, 0x76543210); };
  };
  add("DC_SEND_ONLY", op::kDcSendOnly, 22, dc_eth(true));
  add("DC_RDMA_WRITE_FIRST", op::kDcWriteFirst, 256, [&](PacketSpec& s) {
    dc_eth(false)(s);
    reth(s);
  });
  add("DC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", op::kDcWriteOnlyImm, 23, [&](PacketSpec& s) {
    dc_eth(true)(s);
    reth_imm(s);
  });
  add("DC_RDMA_READ_REQUEST", op::kDcReadRequest, 0, [&](PacketSpec& s) {
    dc_eth(true)(s);
    reth(s);
  });
  add("DC_RDMA_READ_RESPONSE_FIRST", op::kDcReadResponseFirst, 256, [&](PacketSpec& s) {
    dc_aeth(DcStatus::kOk)(s);
    aeth(aeth_ack_syndrome())(s);
  });
  add("DC_RDMA_READ_RESPONSE_ONLY", op::kDcReadResponseOnly, 25, [&](PacketSpec& s) {
    dc_aeth(DcStatus::kOk)(s);
    aeth(aeth_ack_syndrome())(s);
  });
  add("DC_ACKNOWLEDGE_GONE", op::kDcAck, 0, [](PacketSpec& s) {
    s.dc_aeth = DcAethHdr::make(0x0304, DcStatus::kGone, 0x76543210, 0x00123456);
    s.aeth = AethHdr::make(aeth_ack_syndrome(), 0);
  });
  add("DC_CMP_SWAP", op::kDcCompareSwap, 0, [&](PacketSpec& s) {
    dc_eth(true)(s);
    s.atomic_eth = AtomicEthHdr::make(0x00007f0000003000ull, 0x0badf00d, 0x1111222233334444ull,
                                      0x5555666677778888ull);
  });
  add("DC_ATOMIC_ACKNOWLEDGE", op::kDcAtomicAck, 0, [&](PacketSpec& s) {
    dc_aeth(DcStatus::kOk)(s);
    s.aeth = AethHdr::make(aeth_ack_syndrome(), 0x000103);
    s.atomic_ack_eth = AtomicAckEthHdr::make(0x0102030405060708ull);
  });
  add("DC_DISCONNECT", op::kDcDisconnect, 0, dc_eth(false));
  // Selective repeat (docs/lossy.md): SRETH after every IBTA header,
  // SACKETH after the AETH, which scapy packs from these fields.
  auto sr_eth = [](std::uint32_t rsn, std::uint32_t offset) {
    return [=](PacketSpec& s) { s.sr_eth = SrEthHdr::make(rsn, offset); };
  };
  add("SR_SEND_FIRST", op::kSrSendFirst, 256, sr_eth(0x00fffffe, 0));
  add("SR_RDMA_WRITE_MIDDLE", op::kSrWriteMiddle, 256, [&](PacketSpec& s) {
    reth(s);
    sr_eth(0x000002, 4096)(s);
  });
  add("SR_RDMA_WRITE_LAST_WITH_IMMEDIATE", op::kSrWriteLastImm, 27, [&](PacketSpec& s) {
    reth_imm(s);
    sr_eth(0x000003, 12288)(s);
  });
  add("SR_SEND_ONLY_WITH_INVALIDATE", op::kSrSendOnlyInv, 29, [&](PacketSpec& s) {
    inv(s);
    sr_eth(0x123456, 0)(s);
  });
  add("SR_RDMA_READ_REQUEST", op::kSrReadRequest, 0, reth);
  add("SR_SACK", op::kSrSack, 0, [](PacketSpec& s) {
    s.aeth = AethHdr::make(aeth_ack_syndrome(), 0x000042);
    SrSackEthHdr k = SrSackEthHdr::make(SrSackEthHdr::kFlagDup, 0x00fffff3, 256);
    k.set_ce(-3);
    for (std::size_t b : {2, 3, 64, 130, 255}) k.set_bit(b);
    s.sack_eth = k;
  });
  static const Ipv6Addr kSrc6 = Ipv6Addr::link_local(MacAddr{{0x02, 0, 0, 0, 0, 0x01}});
  static const Ipv6Addr kDst6 = *Ipv6Addr::parse("2001:db8:0:1::2");
  // One route per vector (each has its own flow label); reserved so that
  // the specs' pointers stay valid.
  static std::vector<Ipv6Route> routes;
  const std::size_t n4 = v.size();
  routes.clear();
  routes.reserve(n4);
  for (std::size_t i = 0; i < n4; ++i) {
    Vector x = v[i];
    x.name += "_IPV6";
    routes.push_back(
        Ipv6Route{kSrc6, kDst6, static_cast<std::uint32_t>(0x10000 + i * 0x1357) & kFlowLabelMask});
    x.spec.ip6 = &routes.back();
    x.spec.ttl = static_cast<std::uint8_t>(1 + i * 5);
    v.push_back(std::move(x));
  }
  for (Vector& x : v) x.spec.payload = x.payload;
  return v;
}

std::string hex(std::span<const std::uint8_t> b) {
  static constexpr char d[] = "0123456789abcdef";
  std::string s;
  s.reserve(b.size() * 2);
  for (std::uint8_t x : b) {
    s += d[x >> 4];
    s += d[x & 15];
  }
  return s;
}

bool unhex(std::string_view s, std::vector<std::uint8_t>& out) {
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  out.clear();
  if (s.size() % 2 != 0) return false;
  for (std::size_t i = 0; i < s.size(); i += 2) {
    const int hi = nib(s[i]), lo = nib(s[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<std::uint8_t>(hi << 4 | lo));
  }
  return true;
}

// Minimal JSON object writer: keys are identifiers, values numbers, bools
// or hex/ASCII strings that need no escaping.
class Json {
 public:
  Json& num(std::string_view k, std::uint64_t v) {
    key(k);
    s_ += std::to_string(v);
    return *this;
  }
  Json& flag(std::string_view k, bool v) {
    key(k);
    s_ += v ? "true" : "false";
    return *this;
  }
  Json& str(std::string_view k, std::string_view v) {
    key(k);
    s_ += '"';
    s_ += v;
    s_ += '"';
    return *this;
  }
  Json& obj(std::string_view k, const Json& o) {
    key(k);
    s_ += o.done();
    return *this;
  }
  std::string done() const { return s_ + "}"; }

 private:
  void key(std::string_view k) {
    s_ += s_.size() > 1 ? ",\"" : "\"";
    s_ += k;
    s_ += "\":";
  }
  std::string s_ = "{";
};

// Fields shared by the vector description and the parse result, named as
// check_scapy.py expects.
void ext_fields(Json& j, const OpcodeInfo& info, const DethHdr& deth, const DcEthHdr& dc_eth,
                const DcAethHdr& dc_aeth, const RethHdr& reth, const AtomicEthHdr& at,
                const AethHdr& aeth, const AtomicAckEthHdr& aack, const ImmDtHdr& immdt,
                const IethHdr& ieth, const SrEthHdr& sr, const SrSackEthHdr& sack) {
  if (info.has(ExtHdr::kDeth)) {
    j.obj("deth", Json().num("qkey", deth.qkey()).num("src_qp", deth.src_qp()));
  }
  if (info.has(ExtHdr::kDcEth)) {
    j.obj("dc_eth", Json()
                        .num("key", dc_eth.key())
                        .num("flags", dc_eth.flags())
                        .num("dci_qpn", dc_eth.dci_qpn())
                        .num("lane", dc_eth.lane())
                        .num("conn", dc_eth.conn())
                        .num("first_psn", dc_eth.first_psn())
                        .num("acked_psn", dc_eth.acked_psn()));
  }
  if (info.has(ExtHdr::kDcAeth)) {
    j.obj("dc_aeth", Json()
                         .num("lane", dc_aeth.lane())
                         .num("status", static_cast<std::uint8_t>(dc_aeth.status()))
                         .num("conn", dc_aeth.conn())
                         .num("value", dc_aeth.value()));
  }
  if (info.has(ExtHdr::kReth)) {
    j.obj("reth",
          Json().num("va", reth.va()).num("rkey", reth.rkey()).num("dma_len", reth.dma_len()));
  }
  if (info.has(ExtHdr::kAtomicEth)) {
    j.obj("atomic_eth", Json()
                            .num("va", at.va())
                            .num("rkey", at.rkey())
                            .num("swap_add", at.swap_add())
                            .num("compare", at.compare()));
  }
  if (info.has(ExtHdr::kAeth)) {
    j.obj("aeth", Json().num("syndrome", aeth.syndrome()).num("msn", aeth.msn()));
  }
  if (info.has(ExtHdr::kAtomicAckEth)) {
    j.obj("atomic_ack_eth", Json().num("orig", aack.orig_remote_data()));
  }
  if (info.has(ExtHdr::kImmDt)) j.num("imm", immdt.imm());
  if (info.has(ExtHdr::kIeth)) j.num("ieth_rkey", ieth.rkey());
  if (info.has(ExtHdr::kSrEth)) {
    j.obj("sr_eth", Json().num("rsn", sr.rsn()).num("offset", sr.offset()));
  }
  if (info.has(ExtHdr::kSackEth)) {
    j.obj("sack_eth", Json()
                          .num("flags", sack.flags())
                          .num("trigger_psn", sack.trigger_psn())
                          .num("window", sack.window())
                          .num("ce_offset", static_cast<std::uint16_t>(sack.ce_offset()))
                          .str("bitmap", hex(std::span<const std::uint8_t>(sack.raw + 8, 32))));
  }
}

// The IP layer's fields, named as check_scapy.py expects: over IPv6 the hop
// limit is "ttl" and there is no identification or DF.
void ipv4_fields(Json& j, Ipv4Addr src, Ipv4Addr dst, std::uint8_t dscp, std::uint8_t ecn,
                 std::uint8_t ttl, std::uint16_t id, bool df) {
  j.flag("ipv6", false)
      .str("ip_src", src.to_string())
      .str("ip_dst", dst.to_string())
      .num("dscp", dscp)
      .num("ecn", ecn)
      .num("ttl", ttl)
      .num("ip_id", id)
      .flag("df", df);
}

void ipv6_fields(Json& j, const Ipv6Addr& src, const Ipv6Addr& dst, std::uint8_t dscp,
                 std::uint8_t ecn, std::uint8_t hop_limit, std::uint32_t flow_label) {
  j.flag("ipv6", true)
      .str("ip_src", src.to_string())
      .str("ip_dst", dst.to_string())
      .num("dscp", dscp)
      .num("ecn", ecn)
      .num("ttl", hop_limit)
      .num("flow_label", flow_label);
}

int cmd_gen(const char* pcap_path) {
  uroce::port::PcapWriter pcap;
  if (const int rc = pcap.open(pcap_path); rc != 0) {
    std::fprintf(stderr, "cannot open %s: %s\n", pcap_path, std::strerror(rc));
    return 1;
  }
  std::vector<std::uint8_t> buf(kMaxRoceFrame);
  uroce::TimeNs ts = 1'000'000'000;
  for (const Vector& x : make_vectors()) {
    const PacketSpec& s = x.spec;
    const int n = build_roce(s, buf);
    if (n < 0) {
      std::fprintf(stderr, "%s: build failed: %s\n", x.name.c_str(),
                   std::string(build_error_name(static_cast<BuildError>(n))).c_str());
      return 1;
    }
    const auto frame = std::span<const std::uint8_t>(buf.data(), static_cast<std::size_t>(n));
    if (pcap.write(ts, frame) != 0) return 1;
    ts += 1000;
    const OpcodeInfo& info = opcode_info(s.opcode);
    Json f;
    f.str("eth_src", s.eth_src.to_string()).str("eth_dst", s.eth_dst.to_string());
    if (s.ip6 != nullptr) {
      ipv6_fields(f, s.ip6->src, s.ip6->dst, s.dscp, s.ecn, s.ttl, s.ip6->flow_label);
    } else {
      ipv4_fields(f, s.ip_src, s.ip_dst, s.dscp, s.ecn, s.ttl, s.ip_id, s.df);
    }
    f.num("udp_src", s.udp_src)
        .flag("udp_checksum", s.udp_checksum)
        .num("opcode", s.opcode)
        .flag("se", s.se)
        .flag("mig_req", s.mig_req)
        .num("pkey", s.pkey)
        .flag("fecn", s.fecn)
        .flag("becn", s.becn)
        .num("dest_qp", s.dest_qp)
        .flag("ack_req", s.ack_req)
        .num("psn", s.psn);
    ext_fields(f, info, s.deth.value_or(DethHdr{}), s.dc_eth.value_or(DcEthHdr{}),
               s.dc_aeth.value_or(DcAethHdr{}), s.reth.value_or(RethHdr{}),
               s.atomic_eth.value_or(AtomicEthHdr{}), s.aeth.value_or(AethHdr{}),
               s.atomic_ack_eth.value_or(AtomicAckEthHdr{}), s.immdt.value_or(ImmDtHdr{}),
               s.ieth.value_or(IethHdr{}), s.sr_eth.value_or(SrEthHdr{}),
               s.sack_eth.value_or(SrSackEthHdr{}));
    f.str("payload", hex(x.payload));
    std::printf("%s\n",
                Json().str("name", x.name).obj("fields", f).str("hex", hex(frame)).done().c_str());
  }
  return pcap.close() == 0 ? 0 : 1;
}

int cmd_parse() {
  std::string line;
  std::vector<std::uint8_t> frame;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    if (!unhex(line, frame)) {
      std::printf("{\"error\":\"BadHex\"}\n");
      continue;
    }
    ParsedPacket p;
    const ParseError e = parse_roce(frame, p);
    Json j;
    j.str("error", parse_error_name(e));
    if (e == ParseError::kOk) {
      j.str("name", p.info->name)
          .str("eth_src", p.eth.src().to_string())
          .str("eth_dst", p.eth.dst().to_string());
      if (p.ipv6) {
        ipv6_fields(j, p.ip6.src(), p.ip6.dst(), p.ip6.dscp(), p.ip6.ecn(), p.ip6.hop_limit(),
                    p.ip6.flow_label());
      } else {
        ipv4_fields(j, p.ip.src(), p.ip.dst(), p.ip.dscp(), p.ip.ecn(), p.ip.ttl(), p.ip.id(),
                    (p.ip.flags_frag() & kIpv4FlagDf) != 0);
      }
      j.num("udp_src", p.udp.src_port())
          .flag("udp_checksum", p.udp.checksum() != 0)
          .num("opcode", p.bth.opcode())
          .flag("se", p.bth.se())
          .flag("mig_req", p.bth.mig_req())
          .num("pkey", p.bth.pkey())
          .flag("fecn", p.bth.fecn())
          .flag("becn", p.bth.becn())
          .num("dest_qp", p.bth.dest_qp())
          .flag("ack_req", p.bth.ack_req())
          .num("psn", p.bth.psn());
      ext_fields(j, *p.info, p.deth, p.dc_eth, p.dc_aeth, p.reth, p.atomic_eth, p.aeth,
                 p.atomic_ack_eth, p.immdt, p.ieth, p.sr_eth, p.sack_eth);
      j.str("payload", hex(p.payload));
    }
    std::printf("%s\n", j.done().c_str());
  }
  return 0;
}

int cmd_corpus(const std::string& dir) {
  std::vector<std::uint8_t> buf(kMaxRoceFrame);
  auto put = [&](const std::string& name, std::size_t n) {
    const std::string path = dir + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return false;
    const bool ok = std::fwrite(buf.data(), 1, n, f) == n;
    return std::fclose(f) == 0 && ok;
  };
  for (const Vector& x : make_vectors()) {
    const int n = build_roce(x.spec, buf);
    if (n < 0 || !put(x.name, static_cast<std::size_t>(n))) return 1;
  }
  const MacAddr src{{0x02, 0, 0, 0, 0, 0x09}};
  if (!put("PFC_PAUSE", build_pfc_pause(buf, src, 0x08, 0xffff))) return 1;
  if (!put("PFC_RESUME", build_pfc_resume(buf, src, 0xff))) return 1;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view cmd = argc > 1 ? argv[1] : "";
  if (cmd == "gen" && argc == 3) return cmd_gen(argv[2]);
  if (cmd == "parse" && argc == 2) return cmd_parse();
  if (cmd == "corpus" && argc == 3) return cmd_corpus(argv[2]);
  std::fprintf(stderr, "usage: wire_vectors gen PCAP | parse | corpus DIR\n");
  return 2;
}
