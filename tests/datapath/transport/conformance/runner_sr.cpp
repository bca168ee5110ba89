// Selective repeat in the runner (docs/lossy.md; transport/rc_sr.h): the
// word `sr` on an rc qp line attaches RcSr as the engine does once the
// peer answered the handshake (the responder's window at the expected PSN,
// the requester numbering RSNs from 0 at its next WQE). A recv line's
// SRETH takes rsn= and off=; its SACKETH takes trigger= (default the
// packet's PSN), dup, sack=P,P,... (the PSNs held, absolute; `none`) and
// ce=P (the CE-marked PSN: ECE set). A send line checks the same fields
// when it names them.
#include <algorithm>

#include "tests/datapath/transport/conformance/names.h"
#include "tests/datapath/transport/conformance/runner_internal.h"

namespace uroce::transport::conformance::detail {

namespace {

// The PSNs sack= names, in ascending order of distance from `from`.
std::vector<std::uint32_t> sack_psns(const Line& l, const std::string& v) {
  std::vector<std::uint32_t> out;
  if (v == "none") return out;
  for (const std::string& s : split_commas(v)) {
    const auto p = parse_number(s);
    if (!p || *p > 0xffffff) fail(l, "bad PSN '" + s + "' in sack= (24 bits, or none)");
    out.push_back(static_cast<std::uint32_t>(*p));
  }
  return out;
}

std::string psn_list(const std::vector<std::uint32_t>& v) {
  if (v.empty()) return "none";
  std::string r;
  for (const std::uint32_t p : v) r += (r.empty() ? "" : ",") + hex(p);
  return r;
}

}  // namespace

void Runner::sr_setup(const Line& l) {
  if (!l.has_word("sr")) return;
  if (type_ != QpType::kRc) fail(l, "sr applies to an rc QP only");
  if (homa_ != nullptr) fail(l, "give sr or homa, not both");
  sr_ = std::make_unique<RcSr>();
  rc_->qp().set_sr(sr_.get());
  rc_->qp().sr_tx_start();
}

void Runner::sr_recv_headers(const Line& l, wire::PacketSpec& s) const {
  const wire::OpcodeInfo& info = wire::opcode_info(s.opcode);
  if (info.has(wire::ExtHdr::kSrEth)) {
    const std::uint64_t rsn = num(l, "rsn", 0);
    const std::uint64_t off = num(l, "off", 0);
    if (rsn > 0xffffff) fail(l, "rsn= takes 24 bits");
    if (off > 0xffffffff) fail(l, "off= takes 32 bits");
    s.sr_eth =
        wire::SrEthHdr::make(static_cast<std::uint32_t>(rsn), static_cast<std::uint32_t>(off));
  }
  if (!info.has(wire::ExtHdr::kSackEth)) return;
  const std::uint64_t trigger = num(l, "trigger", s.psn);
  if (trigger > 0xffffff) fail(l, "trigger= takes 24 bits");
  wire::SrSackEthHdr h =
      wire::SrSackEthHdr::make(l.has_word("dup") ? wire::SrSackEthHdr::kFlagDup : 0,
                               static_cast<std::uint32_t>(trigger), kSrWindow);
  const Psn base(s.psn);
  if (const std::string* v = l.find("sack")) {
    for (const std::uint32_t p : sack_psns(l, *v)) {
      const std::uint32_t i = Psn::forward(base + 1, Psn(p));
      if (i >= kSrWindow) fail(l, "sack= PSN " + hex(p) + " is not within 256 after psn + 1");
      h.set_bit(i);
    }
  }
  if (const std::string* v = l.find("ce")) {
    const auto p = parse_number(*v);
    if (!p || *p > 0xffffff) fail(l, "bad ce= (a 24-bit PSN)");
    const std::int32_t d = Psn::diff(Psn(static_cast<std::uint32_t>(*p)), base);
    if (d < INT16_MIN || d > INT16_MAX) fail(l, "ce= lies too far from psn= for 16 bits");
    h.set_ce(static_cast<std::int16_t>(d));
  }
  s.sack_eth = h;
}

void Runner::check_sr_fields(
    const Line& l, const wire::ParsedPacket& p,
    const std::function<void(const std::string&, const std::string&)>& mismatch) const {
  const wire::OpcodeInfo& info = *p.info;
  if (info.has(wire::ExtHdr::kSrEth)) {
    if (const auto v = num_opt(l, "rsn"); v && p.sr_eth.rsn() != *v) mismatch("rsn", hex(*v));
    if (const auto v = num_opt(l, "off"); v && p.sr_eth.offset() != *v) mismatch("off", hex(*v));
  }
  if (!info.has(wire::ExtHdr::kSackEth)) return;
  const wire::SrSackEthHdr& h = p.sack_eth;
  if (const auto v = num_opt(l, "trigger"); v && h.trigger_psn() != *v) {
    mismatch("trigger", hex(*v));
  }
  if (l.has_word("dup") && !h.dup()) mismatch("dup", "set");
  if (l.has_word("nodup") && h.dup()) mismatch("dup", "clear");
  if (const std::string* v = l.find("sack")) {
    std::vector<std::uint32_t> want = sack_psns(l, *v);
    std::vector<std::uint32_t> got;
    const Psn base(p.bth.psn());
    for (std::uint32_t i = 0; i < wire::SrSackEthHdr::kBitmapBits; ++i) {
      if (h.bit(i)) got.push_back((base + 1 + i).value());
    }
    auto dist = [&](std::uint32_t x) { return Psn::forward(base, Psn(x)); };
    std::sort(want.begin(), want.end(), [&](auto a, auto b) { return dist(a) < dist(b); });
    if (got != want) mismatch("sack", psn_list(want) + " (held: " + psn_list(got) + ")");
  }
  if (const std::string* v = l.find("ce")) {
    const auto want = parse_number(*v);
    if (!want) fail(l, "bad ce= (a 24-bit PSN)");
    const Psn got = Psn(p.bth.psn()) + static_cast<std::uint32_t>(h.ce_offset());
    if (!h.ece() || got.value() != *want) mismatch("ce", hex(*want));
  }
  if (l.has_word("noce") && h.ece()) mismatch("ce", "none (ECE clear)");
}

}  // namespace uroce::transport::conformance::detail
