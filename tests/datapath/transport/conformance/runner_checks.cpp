// The runner's expectations other than packets: completions, QP state,
// counters and memory.
#include "tests/datapath/transport/conformance/runner_internal.h"

#include <arpa/inet.h>

#include <cstring>

#include "datapath/wire/eth.h"
#include "datapath/wire/ipv4.h"
#include "tests/datapath/transport/conformance/names.h"

namespace uroce::transport::conformance::detail {

void Runner::cmd_wc(const Line& l) {
  const std::string& q = l.words[0];
  if (q != "sq" && q != "rq") fail(l, "wc takes sq or rq");
  VecCq& cq = q == "sq" ? s_.scq : s_.rcq;
  std::size_t& seen = q == "sq" ? scq_seen_ : rcq_seen_;
  const std::vector<TimeNs>& times = q == "sq" ? scq_t_ : rcq_t_;
  if (seen >= cq.wc.size()) {
    fail(l, "expected a completion on the " + q + " CQ, there is none (now " + format_time(now_) +
                ")");
  }
  const std::size_t idx = seen++;
  const Cqe& c = cq.wc[idx];
  const std::string got =
      "got wc " + q + " " + wc_text(c) + " (at " + format_time(times[idx]) + ")";
  auto mismatch = [&](std::string_view field, const std::string& want) {
    fail(l, "completion field " + std::string(field) + ": expected " + want + ", " + got);
  };
  if (const auto wr = num_opt(l, "wr"); wr && c.wr_id != *wr) {
    mismatch("wr", std::to_string(*wr));
  }
  if (const std::string* st = l.find("status")) {
    bool known = false;
    for (const NamedStatus& n : kStatuses) {
      if (n.name == *st) {
        known = true;
        if (c.status != static_cast<std::uint32_t>(n.st)) mismatch("status", *st);
      }
    }
    if (!known) fail(l, "unknown status '" + *st + "'");
  }
  if (const std::string* op = l.find("opcode")) {
    bool known = false;
    for (const NamedWcOp& n : kWcOps) {
      if (n.name == *op) {
        known = true;
        if (c.opcode != static_cast<std::uint32_t>(n.op)) mismatch("opcode", *op);
      }
    }
    if (!known) fail(l, "unknown wc opcode '" + *op + "'");
  }
  if (const auto v = num_opt(l, "byte_len"); v && c.byte_len != *v) {
    mismatch("byte_len", std::to_string(*v));
  }
  if (const auto v = num_opt(l, "imm"); v && ntohl(c.ex.imm_data) != *v) {
    mismatch("imm", hex(*v));
  }
  if (const std::string* v = l.find("inv")) {
    const std::uint32_t k = key_value(l, "inv", *v);
    if (c.ex.invalidate_rkey != k) mismatch("inv", hex(k));
  }
  if (const std::string* f = l.find("flags")) {
    std::uint32_t want = 0;
    std::size_t pos = 0;
    while (pos <= f->size()) {
      std::size_t comma = f->find(',', pos);
      if (comma == std::string::npos) comma = f->size();
      const std::string t = f->substr(pos, comma - pos);
      if (t == "grh") want |= wc_flag::kGrh;
      else if (t == "with_imm") want |= wc_flag::kWithImm;
      else if (t == "with_inv") want |= wc_flag::kWithInv;
      else if (t != "none") fail(l, "bad flag '" + t + "' (grh, with_imm, with_inv, none)");
      pos = comma + 1;
    }
    if (c.wc_flags != want) mismatch("flags", *f);
  }
  if (const auto v = num_opt(l, "src_qp"); v && c.src_qp != *v) mismatch("src_qp", hex(*v));
  const std::uint64_t qpn = num(l, "qp_num", qpn_);
  if (c.qp_num != qpn) mismatch("qp_num", hex(qpn));
  check_time(l, times[idx], "completion");
}

void Runner::cmd_state(const Line& l) {
  const QpState want = state_value(l, l.words[0]);
  if (const auto st = num_opt(l, "stream")) {
    // One DCI stream's lane (docs/dc.md, "Errors": a stream fails alone).
    if (qp_->streams() == 0) fail(l, "stream= is for DCI QPs");
    if (*st >= qp_->streams())
      fail(l, "the DCI has " + std::to_string(qp_->streams()) + " streams");
    const auto i = static_cast<std::uint32_t>(*st);
    if (qp_->stream_state(i) != want) {
      fail(l, "stream " + std::to_string(i) + " state: expected " + l.words[0] + ", got " +
                  state_name(qp_->stream_state(i)));
    }
    if (const auto v = num_opt(l, "next_psn"); v && qp_->stream_next_psn(i) != *v) {
      fail(l, "stream " + std::to_string(i) + " next_psn: expected " + hex(*v) + ", got " +
                  hex(qp_->stream_next_psn(i)));
    }
    if (l.find("epsn") != nullptr) fail(l, "a DCI stream has no expected PSN");
    return;
  }
  if (qp_->state() != want) {
    fail(l, "QP state: expected " + l.words[0] + ", got " + state_name(qp_->state()));
  }
  if (const auto v = num_opt(l, "next_psn"); v && qp_->next_psn() != *v) {
    fail(l, "next_psn: expected " + hex(*v) + ", got " + hex(qp_->next_psn()));
  }
  if (const auto v = num_opt(l, "epsn")) {
    const auto e = qp_->expected_psn();
    if (!e) fail(l, "a UD or DC QP has no expected PSN");
    if (*e != *v) fail(l, "epsn: expected " + hex(*v) + ", got " + hex(*e));
  }
}

void Runner::cmd_event(const Line& l) {
  const std::string& want = l.words[0];
  bool known = false;
  for (const NamedEvent& n : kEvents) known = known || n.name == want;
  if (!known) fail(l, "unknown event '" + want + "'");
  if (events_seen_ >= events_.events.size()) {
    fail(l, "expected event " + want + ", the QP raised none (now " + format_time(now_) + ")");
  }
  const std::size_t idx = events_seen_++;
  const AsyncEvent& e = events_.events[idx];
  const std::string got = "got " + event_name(e.type) + " (at " + format_time(event_t_[idx]) + ")";
  if (event_name(e.type) != want) fail(l, "event: expected " + want + ", " + got);
  if (e.element != EventElement::kQp || e.id != qpn_) {
    fail(l, "event " + want + " names element " + std::to_string(static_cast<int>(e.element)) +
                " id " + hex(e.id) + ", not the QP " + hex(qpn_));
  }
  check_time(l, event_t_[idx], "event " + want);
}

void Runner::cmd_counter(const Line& l) {
  if (l.kv.empty()) fail(l, "counter needs NAME=VALUE");
  for (const auto& [k, v] : l.kv) {
    const auto actual = qp_->counter(k);
    if (!actual) fail(l, "unknown counter '" + k + "'; known:" + qp_->counter_names());
    const auto want = parse_number(v);
    if (!want) fail(l, "bad number " + k + "=" + v);
    if (*actual != *want) {
      fail(l, "counter " + k + ": expected " + std::to_string(*want) + ", got " +
                  std::to_string(*actual));
    }
  }
}

void Runner::cmd_expect_mem(const Line& l) {
  Region& r = region(l, l.words[0]);
  const std::uint64_t off = num(l, "off", 0);
  std::vector<std::uint8_t> want;
  if (l.has_word("zero")) {
    want.assign(num_req(l, "len"), 0);
  } else if (const auto u = num_opt(l, "u64")) {
    want.resize(8);
    std::memcpy(want.data(), &*u, 8);
  } else if (auto p = payload(l)) {
    want = std::move(*p);
  } else {
    fail(l, "expect_mem needs zero len=, u64=, bytes= or len=/seed=");
  }
  if (off > r.mem.size() || want.size() > r.mem.size() - off) fail(l, "outside the region");
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (r.mem[off + i] != want[i]) {
      std::string msg = "memory " + r.name + "+" + std::to_string(off + i) + ": expected " +
                        hex(want[i]) + ", got " + hex(r.mem[off + i]);
      if (want.size() == 8 && l.find("u64") != nullptr) {
        std::uint64_t got = 0;
        std::memcpy(&got, r.mem.data() + off, 8);
        msg += " (u64 " + hex(got) + ")";
      }
      fail(l, msg);
    }
  }
}

void Runner::cmd_expect_grh(const Line& l) {
  Region& r = region(l, l.words[0]);
  const std::uint64_t off = num(l, "off", 0);
  if (last_injected_.empty()) fail(l, "no packet was injected yet");
  if (off > r.mem.size() || r.mem.size() - off < kUdGrhSize) fail(l, "outside the region");
  std::uint8_t want[kUdGrhSize] = {};
  std::memcpy(want + kUdGrhSize - wire::Ipv4Hdr::kSize, last_injected_.data() + wire::EthHdr::kSize,
              wire::Ipv4Hdr::kSize);
  for (std::size_t i = 0; i < kUdGrhSize; ++i) {
    if (r.mem[off + i] != want[i]) {
      fail(l, "GRH byte " + std::to_string(i) + ": expected " + hex(want[i]) + ", got " +
                  hex(r.mem[off + i]) +
                  " (20 zero bytes, then the IPv4 header of the last packet received)");
    }
  }
}

}  // namespace uroce::transport::conformance::detail
