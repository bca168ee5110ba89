#include "testbed/rc_flow.h"

#include <cstring>

#include "datapath/base/rng.h"

namespace uroce::testbed {

namespace {
constexpr std::uint32_t kWcSuccess = static_cast<std::uint32_t>(transport::WcStatus::kSuccess);
}  // namespace

RcFlow::RcFlow(const RcFlowConfig& cfg, RcDriver& src, RcDriver& dst)
    : cfg_(cfg),
      src_(src),
      dst_(dst),
      src_buf_(cfg.size_bytes),
      dst_buf_(cfg.size_bytes),
      post_ns_(cfg.window),
      wc_(cfg.window + 1) {
  SeededRng rng(cfg.pattern_seed);
  for (std::uint8_t& b : src_buf_) b = static_cast<std::uint8_t>(rng.next_u64());
  st_.mct_ns.reserve(cfg.count);
}

int RcFlow::setup() {
  // Completions: the source's at most `window` sends; the receiver's at
  // most `window` receives (one per outstanding SEND).
  const std::uint32_t depth = cfg_.window;
  if (int rc = src_.reg_mr(src_buf_.data(), src_buf_.size(), &src_key_, &src_iova_); rc != 0) {
    return rc;
  }
  if (int rc = dst_.reg_mr(dst_buf_.data(), dst_buf_.size(), &dst_key_, &dst_iova_); rc != 0) {
    return rc;
  }
  if (int rc = src_.create_cq(depth, &src_cq_); rc != 0) return rc;
  if (int rc = dst_.create_cq(depth, &dst_cq_); rc != 0) return rc;
  if (int rc = src_.create_qp(src_cq_, depth, &src_qp_); rc != 0) return rc;
  if (int rc = dst_.create_qp(dst_cq_, depth, &dst_qp_); rc != 0) return rc;
  RcConnect fwd = cfg_.path;
  fwd.dest_qpn = dst_.qpn(dst_qp_);
  fwd.sq_psn = cfg_.src_psn;
  fwd.rq_psn = cfg_.dst_psn;
  RcConnect back = cfg_.path;
  back.dmac = cfg_.src_mac;
  back.dip = cfg_.src_ip;
  back.dest_qpn = src_.qpn(src_qp_);
  back.sq_psn = cfg_.dst_psn;
  back.rq_psn = cfg_.src_psn;
  if (int rc = src_.connect(src_qp_, fwd); rc != 0) return rc;
  if (int rc = dst_.connect(dst_qp_, back); rc != 0) return rc;
  if (cfg_.op == RcOp::kSend) {
    const std::uint64_t addr = dst_iova_;
    for (std::uint32_t i = 0; i < cfg_.window; ++i) {
      if (int rc = dst_.post_recv(dst_qp_, i, addr, cfg_.size_bytes, dst_key_); rc != 0) {
        return rc;
      }
    }
  }
  return 0;
}

bool RcFlow::post_more(TimeNs now) {
  bool posted = false;
  while (st_.posted < cfg_.count && st_.posted - (st_.completed + st_.errors) < cfg_.window) {
    RcSend wr;
    wr.wr_id = st_.posted;
    wr.opcode = cfg_.op == RcOp::kSend ? IB_UVERBS_WR_SEND : IB_UVERBS_WR_RDMA_WRITE;
    wr.addr = src_iova_;
    wr.length = cfg_.size_bytes;
    wr.lkey = src_key_;
    wr.remote_addr = dst_iova_;
    wr.rkey = dst_key_;
    if (src_.post_send(src_qp_, wr) != 0) break;
    if (st_.posted == 0) st_.first_post_ns = now;
    post_ns_[st_.posted % cfg_.window] = now;
    ++st_.posted;
    posted = true;
  }
  return posted;
}

bool RcFlow::start(TimeNs now) {
  started_ = true;
  return post_more(now);
}

bool RcFlow::service_src(TimeNs now) {
  for (;;) {
    const std::uint32_t n = src_.poll_cq(src_cq_, wc_);
    for (std::uint32_t i = 0; i < n; ++i) {
      const ib_uverbs_wc& w = wc_[i];
      if (w.status != kWcSuccess) {
        if (st_.errors == 0) st_.first_error = w.status;
        ++st_.errors;
        continue;
      }
      ++st_.completed;
      st_.bytes += cfg_.size_bytes;
      st_.last_completion_ns = now;
      st_.mct_ns.push_back(now - post_ns_[w.wr_id % cfg_.window]);
    }
    if (n < wc_.size()) break;
  }
  return started_ && post_more(now);
}

bool RcFlow::service_dst(TimeNs now) {
  (void)now;
  bool posted = false;
  const std::uint64_t addr = dst_iova_;
  for (;;) {
    const std::uint32_t n = dst_.poll_cq(dst_cq_, wc_);
    for (std::uint32_t i = 0; i < n; ++i) {
      const ib_uverbs_wc& w = wc_[i];
      if (w.status == kWcSuccess && w.byte_len == cfg_.size_bytes &&
          std::memcmp(dst_buf_.data(), src_buf_.data(), cfg_.size_bytes) == 0) {
        ++st_.recv_completed;
        st_.recv_bytes += w.byte_len;
      } else {
        ++st_.payload_mismatch;
      }
      if (w.status == kWcSuccess &&
          dst_.post_recv(dst_qp_, w.wr_id, addr, cfg_.size_bytes, dst_key_) == 0) {
        posted = true;
      }
    }
    if (n < wc_.size()) break;
  }
  return posted;
}

void RcFlow::finish() {
  if (cfg_.op != RcOp::kWrite || st_.completed == 0) return;
  if (std::memcmp(dst_buf_.data(), src_buf_.data(), cfg_.size_bytes) != 0) {
    ++st_.payload_mismatch;
  }
}

}  // namespace uroce::testbed
