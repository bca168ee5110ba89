// The runner's part for the Homa-like scheduler (docs/homa.md): an RC QP
// with its sender state (transport/rc_homa.h) attached, and the runner
// doing what the engine does around it (datapath/policy/homa.h):
//   - a GRANT from the peer reaches the QP through RcQp::homa_grant, and
//     one that allowed more bytes gets the QP served;
//   - a CUTOFFS from the peer becomes the sender's copy of its levels;
//   - after the QP's timer ran, the MLEN a grant timeout asked for is sent
//     (homa_announce), as its own control packet at the top priority.
// What the engine's receiver half does (MLEN in, grants out, the
// scheduler) is not here: the QP under test is the sender, and the scripted
// peer plays the receiver.
#include <algorithm>

#include "datapath/transport/qp_common.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/homa_cutoffs.h"
#include "datapath/wire/homa_grant.h"
#include "datapath/wire/homa_mlen.h"
#include "tests/datapath/transport/conformance/names.h"
#include "tests/datapath/transport/conformance/runner_internal.h"

namespace uroce::transport::conformance::detail {

std::vector<std::string> split_commas(const std::string& v) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= v.size()) {
    std::size_t comma = v.find(',', pos);
    if (comma == std::string::npos) comma = v.size();
    out.push_back(v.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

// The qp line's `homa` and its keys. The defaults are the engine's
// (sched/homa_settings.h): 8 priorities, the device's PFC map p -> DSCP 8p,
// and a peer whose cutoffs are not known yet (one level, any length, at
// our own top priority), as homa_reset() leaves a newly attached QP.
void Runner::homa_setup(const Line& l) {
  const bool on = l.has_word("homa");
  for (const char* k : {"unsched", "grant_timeout", "max_timeouts", "prios", "dscp_map"}) {
    if (!on && l.find(k) != nullptr) fail(l, std::string(k) + "= goes with the word homa");
  }
  if (!on) return;
  auto h = std::make_unique<RcHomaTx>();
  transport::GrantGateConfig& g = h->gate_cfg;
  const std::uint64_t unsched = num(l, "unsched", g.unsched_bytes);
  // As sched/homa_settings.h validates it: a gate that allowed nothing
  // would hold a message's first packet.
  if (unsched == 0 || unsched > UINT32_MAX) fail(l, "unsched= takes 1 .. 2^32-1 bytes");
  g.unsched_bytes = static_cast<std::uint32_t>(unsched);
  if (const std::string* t = l.find("grant_timeout")) {
    const auto ns = parse_time(*t);
    if (!ns || *ns == 0) fail(l, "bad grant_timeout=" + *t + " (a time above 0, e.g. 4ms)");
    g.grant_timeout_ns = *ns;
  }
  const std::uint64_t max_timeouts = num(l, "max_timeouts", g.max_timeouts);
  if (max_timeouts == 0 || max_timeouts > 1000) fail(l, "max_timeouts= takes 1..1000");
  g.max_timeouts = static_cast<std::uint32_t>(max_timeouts);
  const std::uint64_t prios = num(l, "prios", 8);
  if (prios == 0 || prios > 8) fail(l, "prios= takes 1..8");
  const auto top = static_cast<std::uint8_t>(prios - 1);
  for (std::uint8_t p = 0; p < 8; ++p) h->dscp[p] = static_cast<std::uint8_t>(8 * p);
  if (const std::string* m = l.find("dscp_map")) {
    const std::vector<std::string> v = split_commas(*m);
    if (v.size() != 8) fail(l, "dscp_map= takes 8 DSCPs, of priorities 0..7");
    for (std::size_t p = 0; p < 8; ++p) {
      const auto d = parse_number(v[p]);
      if (!d || *d > 63) fail(l, "bad DSCP '" + v[p] + "' in dscp_map= (0..63)");
      h->dscp[p] = static_cast<std::uint8_t>(*d);
    }
  }
  h->ctl_dscp = h->dscp[top];
  h->peer.cutoffs.levels = 1;
  h->peer.cutoffs.max_length.fill(UINT64_MAX);
  h->peer.top_priority = top;
  rc_->qp().set_homa(h.get());
  rc_->serve_like_engine();
  homa_ = std::move(h);
}

// The extension header a recv line builds, where a payload would be.
std::vector<std::uint8_t> Runner::homa_header(const Line& l, std::uint8_t opcode) const {
  switch (opcode) {
    case wire::op::kHomaGrant: {
      const std::uint64_t prio = num(l, "prio", 0);
      if (prio > 0xff) fail(l, "prio= takes 0..255 (the sender uses its low 3 bits)");
      // The generation the sender holds: a newer one would make the engine
      // ask for the peer's cutoffs, which these scripts do not play.
      const std::uint32_t gen = homa_ ? homa_->peer.generation : 0;
      const wire::HomaGrantHdr g =
          wire::HomaGrantHdr::make(num_req(l, "offset"), static_cast<std::uint8_t>(prio), 0, gen);
      return {std::begin(g.raw), std::end(g.raw)};
    }
    case wire::op::kHomaCutoffs: {
      const std::string* c = l.find("cutoffs");
      if (c == nullptr) fail(l, "recv homa_cutoffs needs cutoffs= (e.g. 1000,8000,any)");
      const std::vector<std::string> v = split_commas(*c);
      if (v.size() > wire::HomaCutoffsHdr::kMaxLevels) fail(l, "at most 8 levels in cutoffs=");
      wire::HomaCutoffsHdr h;
      const std::uint64_t gen = num(l, "generation", 1);
      if (gen > UINT32_MAX) fail(l, "generation= takes 32 bits");
      h.set_generation(static_cast<std::uint32_t>(gen));
      h.set_levels(static_cast<std::uint8_t>(v.size()));
      const std::uint64_t top = num(l, "top", 7);
      if (top > 7) fail(l, "top= takes 0..7");
      h.set_top_priority(static_cast<std::uint8_t>(top));
      for (std::size_t j = 0; j < v.size(); ++j) {
        const auto n = v[j] == "any"
                           ? std::optional<std::uint64_t>(wire::HomaCutoffsHdr::kAnyLength)
                           : parse_number(v[j]);
        if (!n || *n > UINT32_MAX) fail(l, "bad length '" + v[j] + "' in cutoffs=");
        h.set_max_length(static_cast<std::uint32_t>(j), static_cast<std::uint32_t>(*n));
      }
      if (!h.valid()) {
        fail(l,
             "cutoffs the engine would drop: increasing lengths, the last 'any', top= at "
             "least the levels - 1 and at most 7");
      }
      return {std::begin(h.raw), std::end(h.raw)};
    }
    default: {
      const std::uint64_t len = num_req(l, "length");
      const wire::HomaMlenHdr m =
          wire::HomaMlenHdr::make(static_cast<std::uint32_t>(len),
                                  static_cast<std::uint32_t>(num(l, "unsched", len)));
      return {std::begin(m.raw), std::end(m.raw)};
    }
  }
}

// An extension packet for a QP with the scheduler attached: taken here, as
// the engine's RX hook takes it before the transport (homa_control). False:
// the scheduler is off, and the transport gets it (and drops it, drop_not_rc).
bool Runner::homa_deliver(const Line& l, const wire::ParsedPacket& p) {
  if (!homa_ || p.info->transport != wire::Transport::kExt) return false;
  if (p.bth.opcode() == wire::op::kHomaMlen) {
    fail(l, "the QP under test is a Homa sender: the runner does not play the receiver's half");
  }
  const QpState st = qp_->state();
  const LocalPort local{kLocalMac, kLocalIp, {}, {}};
  // Another QP's (the engine's demux would not bring it here), or what no
  // connected peer could have sent (the engine drops it: homa_rx_bad).
  if (p.bth.dest_qp() != qpn_ || st == QpState::kReset || st == QpState::kInit ||
      !from_peer(p, attr_.av, local)) {
    stamp();
    return true;
  }
  if (p.bth.opcode() == wire::op::kHomaGrant) {
    const wire::HomaGrantHdr g = wire::HomaGrantHdr::read(p.payload.data());
    // Only a grant that allowed more activates the QP in the engine; any
    // other leaves it as it was (idle while it waits for a grant).
    if (rc_->qp().homa_grant(p.bth.psn(), g.offset(), g.priority() & 7, now_)) {
      after_event(now_, true);
    } else {
      stamp();
    }
    return true;
  }
  const wire::HomaCutoffsHdr c = wire::HomaCutoffsHdr::read(p.payload.data());
  transport::PeerCutoffs& pc = homa_->peer;
  pc.generation = c.generation();
  pc.top_priority = c.top_priority();
  pc.cutoffs.levels = c.levels();
  for (std::uint32_t j = 0; j < wire::HomaCutoffsHdr::kMaxLevels; ++j) {
    const std::uint32_t m = c.max_length(j);
    pc.cutoffs.max_length[j] =
        m == wire::HomaCutoffsHdr::kAnyLength || j >= c.levels() ? UINT64_MAX : std::uint64_t{m};
  }
  stamp();
  return true;
}

// After the QP's timer ran: the MLEN a grant timeout asked for, built as
// the engine's homa_announce/homa_send build it (its own control packet,
// at the top priority, not ECN-capable, PSN the message's first).
void Runner::homa_announce() {
  if (!homa_ || !homa_->announce) return;
  homa_->announce = false;
  const std::uint64_t len = homa_->gate.length();
  const wire::HomaMlenHdr m =
      wire::HomaMlenHdr::make(static_cast<std::uint32_t>(len),
                              static_cast<std::uint32_t>(
                                  std::min<std::uint64_t>(homa_->gate_cfg.unsched_bytes, len)));
  wire::PacketSpec s;
  s.eth_src = kLocalMac;
  s.eth_dst = attr_.av.dmac;
  s.ip_src = kLocalIp;
  s.ip_dst = attr_.av.dip;
  s.dscp = homa_->ctl_dscp;
  s.ecn = wire::kEcnNotEct;
  s.ttl = attr_.av.ttl;
  s.udp_src = rxe_connected_udp_src_port(0, qpn_, attr_.dest_qp_num);
  s.opcode = wire::op::kHomaMlen;
  s.dest_qp = attr_.dest_qp_num;
  s.psn = homa_->gate.psn() & 0xFFFFFFu;
  s.payload = {m.raw, sizeof m.raw};
  const std::span<std::uint8_t> b = s_.tx.tx_alloc(wire::roce_frame_size(s));
  const int n = wire::build_roce(s, b);
  if (n < 0) throw Failure{0, "the runner could not build the MLEN of a grant timeout"};
  s_.tx.tx_commit(static_cast<std::size_t>(n));
  ++homa_->ctr.mlen;
}

// The fields of an MLEN the QP sent (send homa_mlen length= unsched=).
void Runner::check_homa_fields(
    const Line& l, const wire::ParsedPacket& p,
    const std::function<void(const std::string&, const std::string&)>& mismatch) const {
  if (p.bth.opcode() != wire::op::kHomaMlen) return;
  if (p.payload.size() < wire::HomaMlenHdr::kSize) {
    mismatch("mlen header", std::to_string(wire::HomaMlenHdr::kSize) + " bytes");
    return;
  }
  const wire::HomaMlenHdr m = wire::HomaMlenHdr::read(p.payload.data());
  if (const auto v = num_opt(l, "length"); v && m.length() != *v) {
    mismatch("length", std::to_string(*v));
  }
  if (const auto v = num_opt(l, "unsched"); v && m.unscheduled() != *v) {
    mismatch("unsched", std::to_string(*v));
  }
}

}  // namespace uroce::transport::conformance::detail
