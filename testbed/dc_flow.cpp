#include "testbed/dc_flow.h"

#include <algorithm>
#include <cstring>

#include "datapath/base/rng.h"

namespace uroce::testbed {

namespace {

constexpr std::uint32_t kWcSuccess = static_cast<std::uint32_t>(transport::WcStatus::kSuccess);
// The immediate: the message index in the low 20 bits, the WRITE's region
// slot above it (window <= 1024: 10 bits).
constexpr std::uint32_t kIndexBits = 20;
constexpr std::uint32_t kIndexMask = (1u << kIndexBits) - 1;
constexpr std::uint8_t kSeenSource = 1;
constexpr std::uint8_t kSeenTarget = 2;

}  // namespace

DcFlow::DcFlow(const DcFlowConfig& cfg, RcDriver& src, const std::vector<DcFlowTarget>& targets)
    : cfg_(cfg),
      src_(src),
      pattern_(cfg.size_bytes),
      src_buf_(std::size_t{cfg.size_bytes} * cfg.window),
      scratch_(cfg.size_bytes),
      post_ns_(cfg.count),
      src_slot_(cfg.count),
      dst_slot_(cfg.count),
      seen_(cfg.count),
      wc_(cfg.window + 1) {
  SeededRng rng(cfg.pattern_seed);
  for (std::uint8_t& b : pattern_) b = static_cast<std::uint8_t>(rng.next_u64());
  for (std::uint32_t k = 0; k < targets.size(); ++k) {
    auto t = std::make_unique<Target>();
    t->end = targets[k];
    t->index = k;
    t->buf.resize(src_buf_.size());
    t->app.flow = this;
    t->app.target = t.get();
    // Lowest slot first: the same slots in every run.
    for (std::uint32_t s = cfg.window; s-- > 0;) t->free_slots.push_back(s);
    targets_.push_back(std::move(t));
  }
  for (std::uint32_t s = cfg.window; s-- > 0;) src_free_.push_back(s);
  src_app_.flow = this;
  st_.mct_ns.reserve(cfg.count);
  st_.delivery_ns.reserve(cfg.count);
}

int DcFlow::setup() {
  const std::uint32_t w = cfg_.window;
  if (int rc = src_.reg_mr(src_buf_.data(), src_buf_.size(), &src_key_, &src_iova_); rc != 0) {
    return rc;
  }
  if (int rc = src_.create_cq(w, &src_cq_); rc != 0) return rc;
  DciConnect d;
  d.mtu = cfg_.mtu;
  d.sq_psn = cfg_.src_psn;
  d.timeout = cfg_.timeout;
  if (int rc = src_.create_dci(src_cq_, w, cfg_.log_streams, d, &dci_); rc != 0) return rc;
  for (const auto& tp : targets_) {
    Target& t = *tp;
    RcDriver& td = *t.end.driver;
    if (int rc = td.reg_mr(t.buf.data(), t.buf.size(), &t.key, &t.iova); rc != 0) return rc;
    if (int rc = td.create_cq(w, &t.cq); rc != 0) return rc;
    if (int rc = td.create_srq(w, &t.srq); rc != 0) return rc;
    if (int rc = td.create_dct(t.cq, t.srq, cfg_.key, cfg_.mtu, cfg_.dscp, 1, &t.dct); rc != 0) {
      return rc;
    }
    t.dctn = td.qpn(t.dct);
    if (int rc = src_.create_ah(t.end.mac, t.end.ip, cfg_.dscp, cfg_.ttl, &t.ah); rc != 0) {
      return rc;
    }
    for (std::uint32_t s = 0; s < w; ++s) {
      const std::uint64_t addr = t.iova + std::uint64_t{s} * cfg_.size_bytes;
      if (int rc = td.post_srq_recv(t.srq, s, addr, cfg_.size_bytes, t.key); rc != 0) return rc;
    }
  }
  return 0;
}

void DcFlow::fill(std::uint64_t i, std::uint8_t* out) const {
  // The pattern with every 8-byte word XORed with a per-message value, so
  // no two messages share a word at the same place.
  const std::uint64_t mix = (i + 1) * 0x9E3779B97F4A7C15ull;
  const std::size_t n = cfg_.size_bytes;
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    std::uint64_t v = 0;
    std::memcpy(&v, pattern_.data() + k, 8);
    v ^= mix;
    std::memcpy(out + k, &v, 8);
  }
  for (; k < n; ++k) out[k] = static_cast<std::uint8_t>(pattern_[k] ^ (mix >> (8 * (k % 8))));
}

bool DcFlow::matches(std::uint64_t i, const std::uint8_t* got) {
  fill(i, scratch_.data());
  return std::memcmp(scratch_.data(), got, cfg_.size_bytes) == 0;
}

bool DcFlow::post_more(TimeNs now) {
  bool posted = false;
  const std::uint64_t streams = std::uint64_t{1} << cfg_.log_streams;
  while (st_.posted < cfg_.count && !src_free_.empty()) {
    const std::uint64_t i = st_.posted;
    Target& t = *targets_[i % targets_.size()];
    const std::uint32_t slot = src_free_.back();
    std::uint32_t remote = 0;
    if (cfg_.op == DcOp::kWrite) remote = t.free_slots.back();
    std::uint8_t* mem = src_buf_.data() + std::size_t{slot} * cfg_.size_bytes;
    fill(i, mem);
    RcSend wr;
    wr.wr_id = i;
    wr.opcode =
        cfg_.op == DcOp::kSend ? IB_UVERBS_WR_SEND_WITH_IMM : IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
    wr.addr = src_iova_ + std::uint64_t{slot} * cfg_.size_bytes;
    wr.length = cfg_.size_bytes;
    wr.lkey = src_key_;
    wr.remote_addr = t.iova + std::uint64_t{remote} * cfg_.size_bytes;
    wr.rkey = t.key;
    wr.imm = static_cast<std::uint32_t>(i) | remote << kIndexBits;
    const DcTarget to{t.ah, t.dctn, cfg_.key, static_cast<std::uint16_t>(i % streams)};
    if (src_.post_dc_send(dci_, wr, to) != 0) break;
    src_free_.pop_back();
    if (cfg_.op == DcOp::kWrite) t.free_slots.pop_back();
    src_slot_[i] = static_cast<std::uint16_t>(slot);
    dst_slot_[i] = static_cast<std::uint16_t>(remote);
    if (st_.posted == 0) st_.first_post_ns = now;
    post_ns_[i] = now;
    ++st_.posted;
    posted = true;
  }
  return posted;
}

bool DcFlow::start(TimeNs now) {
  started_ = true;
  return post_more(now);
}

bool DcFlow::service_src(TimeNs now) {
  for (;;) {
    const std::uint32_t n = src_.poll_cq(src_cq_, wc_);
    for (std::uint32_t k = 0; k < n; ++k) {
      const ib_uverbs_wc& w = wc_[k];
      const std::uint64_t i = w.wr_id;
      if (i >= cfg_.count || (seen_[i] & kSeenSource) != 0) {
        ++st_.duplicate_completions;
        continue;
      }
      seen_[i] |= kSeenSource;
      src_free_.push_back(src_slot_[i]);
      if (cfg_.op == DcOp::kWrite) {
        targets_[i % targets_.size()]->free_slots.push_back(dst_slot_[i]);
      }
      if (w.status != kWcSuccess) {
        if (st_.errors == 0) st_.first_error = w.status;
        ++st_.errors;
        continue;
      }
      ++st_.completed;
      st_.bytes += cfg_.size_bytes;
      st_.last_completion_ns = now;
      st_.mct_ns.push_back(now - post_ns_[i]);
    }
    if (n < wc_.size()) break;
  }
  return started_ && post_more(now);
}

bool DcFlow::service_target(Target& t, TimeNs now) {
  bool posted = false;
  RcDriver& td = *t.end.driver;
  for (;;) {
    const std::uint32_t n = td.poll_cq(t.cq, wc_);
    for (std::uint32_t k = 0; k < n; ++k) {
      const ib_uverbs_wc& w = wc_[k];
      const std::uint32_t recv_slot = static_cast<std::uint32_t>(w.wr_id);
      const std::uint64_t addr = t.iova + std::uint64_t{recv_slot} * cfg_.size_bytes;
      if (w.status != kWcSuccess) {
        ++t.st.recv_errors;
        continue;
      }
      // The receive goes back at once: a message's bytes are checked below,
      // before anything else can land in its slot.
      posted = td.post_srq_recv(t.srq, w.wr_id, addr, cfg_.size_bytes, t.key) == 0 || posted;
      const std::uint32_t imm = w.ex.imm_data;
      const std::uint64_t i = imm & kIndexMask;
      const std::uint32_t slot = cfg_.op == DcOp::kWrite ? imm >> kIndexBits : recv_slot;
      if (i >= cfg_.count || i % targets_.size() != t.index) {
        ++t.st.misdirected;
        continue;
      }
      if ((seen_[i] & kSeenTarget) != 0) {
        ++t.st.duplicates;
        continue;
      }
      seen_[i] |= kSeenTarget;
      if (slot >= cfg_.window || w.byte_len != cfg_.size_bytes ||
          !matches(i, t.buf.data() + std::size_t{slot} * cfg_.size_bytes)) {
        ++t.st.payload_mismatch;
        continue;
      }
      ++t.st.recv_completed;
      st_.delivery_ns.push_back(now - post_ns_[i]);
    }
    if (n < wc_.size()) break;
  }
  if (const transport::DcTargetPool* p = td.vnic().dc_pool(); p != nullptr) {
    t.st.contexts_peak = std::max(t.st.contexts_peak, p->table().size());
  }
  return posted;
}

}  // namespace uroce::testbed
