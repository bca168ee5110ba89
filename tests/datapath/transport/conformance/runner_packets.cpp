// The runner's recv and send lines: packets built as the peer would send
// them, and the QP's packets checked field by field.
#include "tests/datapath/transport/conformance/runner_internal.h"

#include "datapath/wire/builder.h"
#include "datapath/wire/parser.h"
#include "tests/datapath/transport/conformance/names.h"

namespace uroce::transport::conformance::detail {

namespace {

// Which extension header a packet key belongs to.
std::optional<wire::ExtHdr> header_of(std::string_view key, const wire::OpcodeInfo& info) {
  if (key == "va" || key == "rkey") {
    return info.has(wire::ExtHdr::kAtomicEth) ? wire::ExtHdr::kAtomicEth : wire::ExtHdr::kReth;
  }
  if (key == "dmalen") return wire::ExtHdr::kReth;
  if (key == "swap" || key == "add" || key == "compare") return wire::ExtHdr::kAtomicEth;
  if (key == "orig") return wire::ExtHdr::kAtomicAckEth;
  if (key == "imm") return wire::ExtHdr::kImmDt;
  if (key == "inv") return wire::ExtHdr::kIeth;
  if (key == "qkey" || key == "src_qp") return wire::ExtHdr::kDeth;
  if (key == "nak" || key == "timer" || key == "msn" || key == "credits" || key == "syndrome") {
    return wire::ExtHdr::kAeth;
  }
  // DC (docs/dc.md, "Wire"): lane and conn are in both DC headers.
  if (key == "key" || key == "dci_qpn" || key == "first_psn" || key == "acked_psn") {
    return wire::ExtHdr::kDcEth;
  }
  if (key == "status" || key == "value") return wire::ExtHdr::kDcAeth;
  // Selective repeat (docs/lossy.md "The wire extension").
  if (key == "rsn" || key == "off") return wire::ExtHdr::kSrEth;
  if (key == "trigger" || key == "sack" || key == "ce") return wire::ExtHdr::kSackEth;
  if (key == "lane" || key == "conn") {
    return info.has(wire::ExtHdr::kDcAeth) ? wire::ExtHdr::kDcAeth : wire::ExtHdr::kDcEth;
  }
  return std::nullopt;
}

// Which uroce extension packet (the Homa-like scheduler's) a key belongs
// to: their headers are not IBTA extension headers (wire/homa_*.h).
std::optional<std::uint8_t> homa_opcode_of(std::string_view key) {
  if (key == "offset" || key == "prio") return wire::op::kHomaGrant;
  if (key == "cutoffs" || key == "top" || key == "generation") return wire::op::kHomaCutoffs;
  if (key == "length" || key == "unsched") return wire::op::kHomaMlen;
  return std::nullopt;
}

void check_keys_fit(const Line& l, std::uint8_t opcode) {
  const wire::OpcodeInfo& info = wire::opcode_info(opcode);
  const bool ext = info.transport == wire::Transport::kExt;
  for (const auto& [k, v] : l.kv) {
    if (const auto op = homa_opcode_of(k); op && opcode != *op) {
      fail(l, std::string(k) + "= belongs to " + packet_name(wire::opcode_info(*op)) + ", not " +
                  packet_name(info));
    }
    if ((k == "len" || k == "seed" || k == "bytes") && ext) {
      fail(l, packet_name(info) + " carries its own header where a payload would be");
    }
    if (const auto h = header_of(k, info); h && !info.has(*h)) {
      fail(l, std::string(k) + "= needs " + std::string(wire::ext_hdr_name(*h)) + ", which " +
                  packet_name(info) + " does not carry");
    }
    if ((k == "len" || k == "seed" || k == "bytes") && !info.payload) {
      fail(l, packet_name(info) + " carries no payload");
    }
  }
  if (l.has_word("ack") && !info.has(wire::ExtHdr::kAeth)) {
    fail(l, "'ack' needs an AETH, which " + packet_name(info) + " does not carry");
  }
  if ((l.has_word("syn") || l.has_word("nosyn")) && !info.has(wire::ExtHdr::kDcEth)) {
    fail(l, "'syn' needs a DCETH, which " + packet_name(info) + " does not carry");
  }
  if (l.has_word("syn") && l.has_word("nosyn")) fail(l, "give syn or nosyn, not both");
  if ((l.has_word("dup") || l.has_word("nodup")) && !info.has(wire::ExtHdr::kSackEth)) {
    fail(l, "'dup' needs a SACKETH, which " + packet_name(info) + " does not carry");
  }
}

// The AETH syndrome a line names: ack [credits=N], nak=CODE [timer=N] or
// syndrome=N. Empty when the line names none.
std::optional<std::uint8_t> syndrome_of(const Line& l) {
  const std::string* nak = l.find("nak");
  const std::string* syn = l.find("syndrome");
  const int given =
      (l.has_word("ack") ? 1 : 0) + (nak != nullptr ? 1 : 0) + (syn != nullptr ? 1 : 0);
  if (given > 1) fail(l, "give one of ack, nak= and syndrome=");
  if (l.find("timer") != nullptr && (nak == nullptr || *nak != "rnr")) {
    fail(l, "timer= goes with nak=rnr");
  }
  if (l.find("credits") != nullptr && !l.has_word("ack")) fail(l, "credits= goes with ack");
  if (syn != nullptr) {
    const auto v = parse_number(*syn);
    if (!v || *v > 0xff) fail(l, "bad syndrome=");
    return static_cast<std::uint8_t>(*v);
  }
  if (nak != nullptr) {
    if (*nak == "rnr") {
      const std::string* t = l.find("timer");
      if (t == nullptr) fail(l, "nak=rnr needs timer=");
      const auto v = parse_number(*t);
      if (!v || *v > 31) fail(l, "timer= takes 0..31");
      return wire::aeth_rnr_nak_syndrome(static_cast<std::uint8_t>(*v));
    }
    for (const NamedNak& n : kNaks) {
      if (n.name == *nak) return wire::aeth_nak_syndrome(n.code);
    }
    fail(l, "bad nak=" + *nak + " (seq, inv, access, op, inv_rd, rnr)");
  }
  if (l.has_word("ack")) {
    std::uint8_t credits = wire::kAethCreditInvalid;
    if (const std::string* c = l.find("credits")) {
      const auto v = parse_number(*c);
      if (!v || *v > 31) fail(l, "credits= takes 0..31");
      credits = static_cast<std::uint8_t>(*v);
    }
    return wire::aeth_ack_syndrome(credits);
  }
  return std::nullopt;
}

// An IPv4 address field (dotted quad), or `dflt` when the line has none.
wire::Ipv4Addr ip_value(const Line& l, std::string_view key, wire::Ipv4Addr dflt) {
  const std::string* v = l.find(key);
  if (v == nullptr) return dflt;
  const auto a = wire::Ipv4Addr::parse(*v);
  if (!a) fail(l, "bad " + std::string(key) + "= (a dotted quad)");
  return *a;
}

}  // namespace

std::uint8_t opcode_of(const Line& l) {
  const auto op = opcode_by_name(l.words[0]);
  if (!op) fail(l, "unknown opcode '" + l.words[0] + "'");
  return *op;
}

void Runner::cmd_recv(const Line& l) {
  const std::uint8_t op = opcode_of(l);
  const wire::OpcodeInfo& info = wire::opcode_info(op);
  check_keys_fit(l, op);
  wire::PacketSpec s;
  s.eth_src = kPeerMac;
  s.eth_dst = kLocalMac;
  s.ip_src = ip_value(l, "src_ip", kPeerIp);
  s.ip_dst = ip_value(l, "dst_ip", kLocalIp);
  s.opcode = op;
  s.dest_qp = static_cast<std::uint32_t>(num(l, "dest_qp", qpn_));
  s.psn = static_cast<std::uint32_t>(num_req(l, "psn"));
  s.ack_req = l.has_word("ackreq");
  s.se = l.has_word("se");
  s.pkey = static_cast<std::uint16_t>(num(l, "pkey", wire::kDefaultPKey));
  // The builder's limit is 4096 so scripts can send oversized packets and
  // watch the QP refuse them.
  s.pmtu = wire::PathMtu::k4096;
  if (const auto d = num_opt(l, "dscp")) {
    if (*d > 63) fail(l, "dscp= takes 0..63");
    s.dscp = static_cast<std::uint8_t>(*d);
  }
  const std::vector<std::uint8_t> data = info.transport == wire::Transport::kExt
                                             ? homa_header(l, op)
                                             : payload(l).value_or(std::vector<std::uint8_t>{});
  s.payload = data;
  if (info.has(wire::ExtHdr::kDeth)) {
    s.deth = wire::DethHdr::make(static_cast<std::uint32_t>(num(l, "qkey", qkey_)),
                                 static_cast<std::uint32_t>(num(l, "src_qp", dest_)));
  }
  dc_recv_headers(l, s);
  sr_recv_headers(l, s);
  auto va = [&]() -> std::uint64_t {
    const std::string* v = l.find("va");
    return v != nullptr ? addr_value(l, "va", *v) : 0;
  };
  auto rkey = [&]() -> std::uint32_t {
    const std::string* v = l.find("rkey");
    return v != nullptr ? key_value(l, "rkey", *v) : 0;
  };
  if (info.has(wire::ExtHdr::kReth)) {
    s.reth = wire::RethHdr::make(va(), rkey(),
                                 static_cast<std::uint32_t>(num(l, "dmalen", data.size())));
  }
  if (info.has(wire::ExtHdr::kAtomicEth)) {
    if (l.find("add") != nullptr && l.find("swap") != nullptr) {
      fail(l, "give add= (fetch_add) or swap= (cmp_swap), not both");
    }
    s.atomic_eth = wire::AtomicEthHdr::make(va(), rkey(), num(l, "add", num(l, "swap", 0)),
                                            num(l, "compare", 0));
  }
  if (info.has(wire::ExtHdr::kAeth)) {
    s.aeth = wire::AethHdr::make(syndrome_of(l).value_or(wire::aeth_ack_syndrome()),
                                 static_cast<std::uint32_t>(num(l, "msn", 0)));
  }
  if (info.has(wire::ExtHdr::kAtomicAckEth)) {
    s.atomic_ack_eth = wire::AtomicAckEthHdr::make(num(l, "orig", 0));
  }
  if (info.has(wire::ExtHdr::kImmDt)) {
    s.immdt = wire::ImmDtHdr::make(static_cast<std::uint32_t>(num(l, "imm", 0)));
  }
  if (info.has(wire::ExtHdr::kIeth)) {
    const std::string* v = l.find("inv");
    s.ieth = wire::IethHdr::make(v != nullptr ? key_value(l, "inv", *v) : 0);
  }
  std::vector<std::uint8_t> frame(wire::roce_frame_size(s));
  const int n = wire::build_roce(s, frame);
  if (n < 0) {
    fail(l, "cannot build this packet: " +
                std::string(wire::build_error_name(static_cast<wire::BuildError>(n))));
  }
  frame.resize(static_cast<std::size_t>(n));
  auto pkt = rctest::parse_frame(frame);
  if (pkt->err != wire::ParseError::kOk) {
    fail(l, "built packet does not parse: " + std::string(wire::parse_error_name(pkt->err)));
  }
  last_injected_ = frame;
  if (homa_deliver(l, pkt->p)) return;
  qp_->deliver(pkt->p, now_);
  after_event(now_);
}

void Runner::cmd_send(const Line& l) {
  const std::uint8_t op = opcode_of(l);
  const wire::OpcodeInfo& info = wire::opcode_info(op);
  check_keys_fit(l, op);
  if (l.find("psn") == nullptr) fail(l, "send needs psn=");
  const auto want_syndrome = syndrome_of(l);
  if (frames_seen_ >= s_.tx.frames.size()) {
    fail(l, "expected " + packet_name(info) + " psn=" + *l.find("psn") +
                ", but the QP sent nothing (now " + format_time(now_) + ")");
  }
  const std::size_t idx = frames_seen_++;
  const wire::ParsedPacket& p = s_.tx.frames[idx]->p;
  const std::string got = "got " + packet_text(p) + " (sent at " + format_time(frame_t_[idx]) + ")";
  if (s_.tx.frames[idx]->err != wire::ParseError::kOk) {
    fail(l, "the QP sent a frame that does not parse: " +
                std::string(wire::parse_error_name(s_.tx.frames[idx]->err)));
  }
  auto mismatch = [&](const std::string& field, const std::string& want) {
    fail(l, "packet field " + field + ": expected " + want + ", " + got);
  };
  if (p.bth.opcode() != op) mismatch("opcode", packet_name(info));
  const auto want_psn = num_req(l, "psn");
  if (p.bth.psn() != want_psn) mismatch("psn", hex(want_psn));
  // Packets of a connected QP go to its destination QP; UD names it per WR.
  // A DCI's go to the DCT its WR named (`dest` by default), a DCT's to the
  // DCI that asked (`dest` by default).
  if (const auto d = num_opt(l, "dest_qp")) {
    if (p.bth.dest_qp() != *d) mismatch("dest_qp", hex(*d));
  } else if (type_ != QpType::kUd && p.bth.dest_qp() != dest_) {
    mismatch("dest_qp", hex(dest_));
  }
  if (l.has_word("ackreq") && !p.bth.ack_req()) mismatch("ackreq", "set");
  if (l.has_word("noackreq") && p.bth.ack_req()) mismatch("ackreq", "clear");
  if (l.has_word("se") && !p.bth.se()) mismatch("se", "set");
  if (l.has_word("nose") && p.bth.se()) mismatch("se", "clear");
  if (const auto v = num_opt(l, "pkey"); v && p.bth.pkey() != *v) mismatch("pkey", hex(*v));
  if (l.find("src_ip") != nullptr && p.ip.src() != ip_value(l, "src_ip", {})) {
    mismatch("src_ip", *l.find("src_ip"));
  }
  if (l.find("dst_ip") != nullptr && p.ip.dst() != ip_value(l, "dst_ip", {})) {
    mismatch("dst_ip", *l.find("dst_ip"));
  }
  auto check = [&](std::string_view key, std::uint64_t actual, bool is_addr) {
    const std::string* v = l.find(key);
    if (v == nullptr) return;
    const std::uint64_t want = is_addr                           ? addr_value(l, key, *v)
                               : (key == "rkey" || key == "inv") ? key_value(l, key, *v)
                                                                 : num_req(l, key);
    if (actual != want) mismatch(std::string(key), hex(want));
  };
  if (info.has(wire::ExtHdr::kReth)) {
    check("va", p.reth.va(), true);
    check("rkey", p.reth.rkey(), false);
    check("dmalen", p.reth.dma_len(), false);
  }
  if (info.has(wire::ExtHdr::kAtomicEth)) {
    check("va", p.atomic_eth.va(), true);
    check("rkey", p.atomic_eth.rkey(), false);
    check("add", p.atomic_eth.swap_add(), false);
    check("swap", p.atomic_eth.swap_add(), false);
    check("compare", p.atomic_eth.compare(), false);
  }
  if (info.has(wire::ExtHdr::kDeth)) {
    check("qkey", p.deth.qkey(), false);
    check("src_qp", p.deth.src_qp(), false);
  }
  if (info.has(wire::ExtHdr::kAeth)) {
    if (want_syndrome) {
      const wire::AethHdr w = wire::AethHdr::make(*want_syndrome, 0);
      const bool credits_given = l.find("credits") != nullptr;
      // "ack" alone means any ACK; the credit field is checked only when named.
      const bool same = w.is_ack() && !credits_given && l.find("syndrome") == nullptr
                            ? p.aeth.is_ack()
                            : p.aeth.syndrome() == *want_syndrome;
      if (!same) mismatch("aeth", aeth_text(w).substr(0, aeth_text(w).find(" msn=")));
    }
    check("msn", p.aeth.msn(), false);
  }
  if (info.has(wire::ExtHdr::kAtomicAckEth))
    check("orig", p.atomic_ack_eth.orig_remote_data(), false);
  if (info.has(wire::ExtHdr::kImmDt)) check("imm", p.immdt.imm(), false);
  if (info.has(wire::ExtHdr::kIeth)) check("inv", p.ieth.rkey(), false);
  if (const auto v = num_opt(l, "dscp"); v && p.dscp() != *v) mismatch("dscp", std::to_string(*v));
  check_homa_fields(l, p, mismatch);
  check_dc_fields(l, p, mismatch);
  check_sr_fields(l, p, mismatch);
  if (const auto len = num_opt(l, "len"); len && p.payload.size() != *len) {
    mismatch("len", std::to_string(*len));
  }
  if (l.find("seed") != nullptr || l.find("bytes") != nullptr) {
    const auto want = *payload(l);
    if (want.size() != p.payload.size()) mismatch("len", std::to_string(want.size()));
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (want[i] != p.payload[i]) {
        mismatch("payload byte " + std::to_string(i),
                 hex(want[i]) + " (got " + hex(p.payload[i]) + ")");
      }
    }
  }
  check_time(l, frame_t_[idx],
             "packet " + packet_name(info) + " psn=" + hex(p.bth.psn()) + " sent");
}

}  // namespace uroce::transport::conformance::detail
