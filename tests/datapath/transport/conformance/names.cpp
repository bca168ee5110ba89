#include "tests/datapath/transport/conformance/names.h"

#include <arpa/inet.h>

#include <cctype>
#include <sstream>

#include "datapath/wire/homa_cutoffs.h"
#include "datapath/wire/homa_grant.h"
#include "datapath/wire/homa_mlen.h"
#include "datapath/wire/opcodes.h"

namespace uroce::transport::conformance {

std::string hex(std::uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

// "DropQkey" -> "drop_qkey".
std::string snake(std::string_view camel) {
  std::string r;
  for (char c : camel) {
    if (std::isupper(static_cast<unsigned char>(c)) && !r.empty()) r += '_';
    r += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return r;
}

std::optional<std::uint8_t> opcode_by_name(std::string_view name) {
  std::string n = lower(name);
  // Short forms a reader of the spec would write.
  auto replace_prefix = [&n](std::string_view from, std::string_view to) {
    if (n.starts_with(from)) n = std::string(to) + n.substr(from.size());
  };
  auto replace_suffix = [&n](std::string_view from, std::string_view to) {
    if (n.ends_with(from)) n = n.substr(0, n.size() - from.size()) + std::string(to);
  };
  if (n == "rc_ack") n = "rc_acknowledge";
  if (n == "rc_atomic_ack") n = "rc_atomic_acknowledge";
  if (n == "dc_ack") n = "dc_acknowledge";
  if (n == "dc_atomic_ack") n = "dc_atomic_acknowledge";
  replace_prefix("rc_write_", "rc_rdma_write_");
  replace_prefix("dc_write_", "dc_rdma_write_");
  replace_prefix("dc_read_", "dc_rdma_read_");
  replace_prefix("uc_write_", "uc_rdma_write_");
  replace_prefix("rc_read_", "rc_rdma_read_");
  replace_prefix("sr_write_", "sr_rdma_write_");
  replace_prefix("sr_read_", "sr_rdma_read_");
  replace_prefix("homa_", "uroce_homa_");
  replace_suffix("_imm", "_with_immediate");
  replace_suffix("_inv", "_with_invalidate");
  for (unsigned op = 0; op < 256; ++op) {
    const wire::OpcodeInfo& i = wire::opcode_info(static_cast<std::uint8_t>(op));
    if (i.valid && lower(i.name) == n) return static_cast<std::uint8_t>(op);
  }
  return std::nullopt;
}

std::string status_name(std::uint32_t s) {
  for (const NamedStatus& n : kStatuses) {
    if (static_cast<std::uint32_t>(n.st) == s) return std::string(n.name);
  }
  return "status_" + std::to_string(s);
}

std::string wc_op_name(std::uint32_t o) {
  for (const NamedWcOp& n : kWcOps) {
    if (static_cast<std::uint32_t>(n.op) == o) return std::string(n.name);
  }
  return "opcode_" + std::to_string(o);
}

std::string state_name(QpState s) {
  for (const NamedState& n : kStates) {
    if (n.st == s) return std::string(n.name);
  }
  return "?";
}

std::string event_name(AsyncEventType t) {
  for (const NamedEvent& n : kEvents) {
    if (n.type == t) return std::string(n.name);
  }
  return "event_" + std::to_string(static_cast<std::uint32_t>(t));
}

std::string dc_status_text(std::uint8_t raw) {
  for (const NamedDcStatus& n : kDcStatuses) {
    if (static_cast<std::uint8_t>(n.st) == raw) return std::string(n.name);
  }
  return std::to_string(raw);
}

std::string aeth_text(const wire::AethHdr& a) {
  std::string s;
  switch (a.type()) {
    case wire::AethType::kAck: s = "ack credits=" + std::to_string(a.value()); break;
    case wire::AethType::kRnrNak: s = "nak=rnr timer=" + std::to_string(a.value()); break;
    case wire::AethType::kReserved: s = "syndrome=" + hex(a.syndrome()); break;
    case wire::AethType::kNak: {
      s = "nak=code" + std::to_string(a.value());
      for (const NamedNak& n : kNaks) {
        if (n.code == a.nak_code()) s = "nak=" + std::string(n.name);
      }
      break;
    }
  }
  return s + " msn=" + std::to_string(a.msn());
}

std::string packet_name(const wire::OpcodeInfo& info) {
  std::string n = lower(info.name);
  if (info.transport == wire::Transport::kExt && n.starts_with("uroce_")) n.erase(0, 6);
  return n;
}

namespace {

// The header of a uroce extension packet (the Homa-like scheduler's).
void homa_text(std::ostringstream& o, const wire::ParsedPacket& p) {
  const std::span<const std::uint8_t> b = p.payload;
  switch (p.bth.opcode()) {
    case wire::op::kHomaMlen:
      if (b.size() >= wire::HomaMlenHdr::kSize) {
        const wire::HomaMlenHdr m = wire::HomaMlenHdr::read(b.data());
        o << " length=" << m.length() << " unsched=" << m.unscheduled();
      }
      break;
    case wire::op::kHomaGrant:
      if (b.size() >= wire::HomaGrantHdr::kSize) {
        const wire::HomaGrantHdr g = wire::HomaGrantHdr::read(b.data());
        o << " offset=" << g.offset() << " prio=" << unsigned{g.priority()};
      }
      break;
    case wire::op::kHomaCutoffs:
      if (b.size() >= wire::HomaCutoffsHdr::kSize) {
        const wire::HomaCutoffsHdr c = wire::HomaCutoffsHdr::read(b.data());
        o << " generation=" << c.generation() << " levels=" << unsigned{c.levels()}
          << " top=" << unsigned{c.top_priority()};
      }
      break;
    default: break;
  }
}

}  // namespace

// A packet as a script line would write it (for failure messages).
std::string packet_text(const wire::ParsedPacket& p) {
  std::ostringstream o;
  o << (p.info != nullptr ? packet_name(*p.info) : "?") << " psn=" << hex(p.bth.psn())
    << " dest_qp=" << hex(p.bth.dest_qp());
  if (p.bth.ack_req()) o << " ackreq";
  if (p.bth.se()) o << " se";
  if (p.has(wire::ExtHdr::kDcEth)) {
    const wire::DcEthHdr& d = p.dc_eth;
    o << " key=" << hex(d.key()) << (d.syn() ? " syn" : " nosyn") << " dci_qpn=" << hex(d.dci_qpn())
      << " lane=" << d.lane() << " conn=" << d.conn() << " first_psn=" << hex(d.first_psn())
      << " acked_psn=" << hex(d.acked_psn());
  }
  if (p.has(wire::ExtHdr::kDcAeth)) {
    const wire::DcAethHdr& d = p.dc_aeth;
    o << " lane=" << d.lane() << " status=" << dc_status_text(d.raw[2]) << " conn=" << d.conn()
      << " value=" << hex(d.value());
  }
  if (p.has(wire::ExtHdr::kDeth)) {
    o << " qkey=" << hex(p.deth.qkey()) << " src_qp=" << hex(p.deth.src_qp());
  }
  if (p.has(wire::ExtHdr::kReth)) {
    o << " va=" << hex(p.reth.va()) << " rkey=" << hex(p.reth.rkey())
      << " dmalen=" << p.reth.dma_len();
  }
  if (p.has(wire::ExtHdr::kAtomicEth)) {
    o << " va=" << hex(p.atomic_eth.va()) << " rkey=" << hex(p.atomic_eth.rkey())
      << " swap_add=" << hex(p.atomic_eth.swap_add()) << " compare=" << hex(p.atomic_eth.compare());
  }
  if (p.has(wire::ExtHdr::kAeth)) o << " " << aeth_text(p.aeth);
  if (p.has(wire::ExtHdr::kAtomicAckEth)) {
    o << " orig=" << hex(p.atomic_ack_eth.orig_remote_data());
  }
  if (p.has(wire::ExtHdr::kImmDt)) o << " imm=" << hex(p.immdt.imm());
  if (p.has(wire::ExtHdr::kIeth)) o << " inv=" << hex(p.ieth.rkey());
  if (p.has(wire::ExtHdr::kSrEth)) {
    o << " rsn=" << hex(p.sr_eth.rsn()) << " off=" << hex(p.sr_eth.offset());
  }
  if (p.has(wire::ExtHdr::kSackEth)) {
    const wire::SrSackEthHdr& h = p.sack_eth;
    o << " trigger=" << hex(h.trigger_psn()) << (h.dup() ? " dup" : "") << " sack=";
    bool any = false;
    for (std::uint32_t i = 0; i < wire::SrSackEthHdr::kBitmapBits; ++i) {
      if (!h.bit(i)) continue;
      o << (any ? "," : "") << hex((p.bth.psn() + 1 + i) & 0xffffff);
      any = true;
    }
    if (!any) o << "none";
    if (h.ece())
      o << " ce=" << hex((p.bth.psn() + static_cast<std::uint32_t>(h.ce_offset())) & 0xffffff);
  }
  const bool ext = p.info != nullptr && p.info->transport == wire::Transport::kExt;
  if (ext) homa_text(o, p);
  if (p.info != nullptr && p.info->payload && !ext) o << " len=" << p.payload.size();
  o << " dscp=" << unsigned{p.dscp()};
  return o.str();
}

std::string wc_text(const Cqe& c) {
  std::ostringstream o;
  o << "wr=" << c.wr_id << " status=" << status_name(c.status);
  if (c.status == 0) {
    o << " opcode=" << wc_op_name(c.opcode) << " byte_len=" << c.byte_len;
    if ((c.wc_flags & wc_flag::kWithImm) != 0) o << " imm=" << hex(ntohl(c.ex.imm_data));
    if ((c.wc_flags & wc_flag::kWithInv) != 0) o << " inv=" << hex(c.ex.invalidate_rkey);
    o << " flags=" << hex(c.wc_flags);
    if (c.src_qp != 0) o << " src_qp=" << hex(c.src_qp);
  }
  o << " qp_num=" << hex(c.qp_num);
  return o.str();
}

}  // namespace uroce::transport::conformance
