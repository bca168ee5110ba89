#include "datapath/transport/srq.h"

#include <algorithm>
#include <cerrno>

namespace uroce::transport {

namespace {

std::uint32_t clamp_depth(std::uint32_t n) { return std::clamp<std::uint32_t>(n, 1, kMaxSrqWr); }

}  // namespace

Srq::Srq(const SrqConfig& cfg)
    : cfg_(cfg),
      q_(clamp_depth(cfg.max_wr), std::min(cfg.max_sge, kMaxSge)),
      limit_(cfg.srq_limit) {
  cfg_.max_wr = q_.capacity();
  cfg_.max_sge = q_.sges_per_slot();
  if (limit_ > cfg_.max_wr) limit_ = 0;
}

int Srq::post_recv(const RecvWr& wr) {
  if (wr.num_sge > cfg_.max_sge) return EINVAL;
  QueuedRecvWr* slot = q_.push_slot();
  if (slot == nullptr) return ENOMEM;
  assign_used(slot, wr);
  ++ctr_.posted;
  return 0;
}

int Srq::modify(std::uint32_t mask, const SrqAttr& a) {
  if ((mask & ~(srq_attr::kMaxWr | srq_attr::kLimit)) != 0) return EINVAL;
  const std::uint32_t max_wr = (mask & srq_attr::kMaxWr) != 0 ? a.max_wr : cfg_.max_wr;
  const std::uint32_t limit = (mask & srq_attr::kLimit) != 0 ? a.srq_limit : limit_;
  if (max_wr == 0 || max_wr > kMaxSrqWr || max_wr < q_.size()) return EINVAL;
  if (limit > max_wr) return EINVAL;
  if ((mask & srq_attr::kMaxWr) != 0 && max_wr != q_.capacity()) {
    WrQueue<QueuedRecvWr> bigger(max_wr, cfg_.max_sge);
    for (std::uint32_t i = q_.head(); i != q_.tail(); ++i)
      assign_used(bigger.push_slot(), q_.at(i));
    q_ = std::move(bigger);
    cfg_.max_wr = max_wr;
  }
  limit_ = limit;
  return 0;
}

SrqAttr Srq::query() const { return {cfg_.max_wr, cfg_.max_sge, limit_}; }

bool Srq::take(WrQueue<QueuedRecvWr>& rq) {
  if (q_.empty()) {
    cfg_.refill();
    if (q_.empty()) {
      ++ctr_.empty;
      return false;
    }
  }
  QueuedRecvWr* slot = rq.push_slot();
  if (slot == nullptr) return false;
  assign_used(slot, q_.front());
  q_.pop();
  ++ctr_.taken;
  if (limit_ != 0 && q_.size() < limit_) {
    limit_ = 0;
    ++ctr_.limit_events;
    events_.raise(
        {AsyncEventType::kSrqLimitReached, EventElement::kSrq, CqRole::kNone, cfg_.srq_num});
  }
  return true;
}

void Srq::give_back(WrQueue<QueuedRecvWr>& rq) {
  while (!rq.empty()) {
    QueuedRecvWr* slot = q_.push_slot();
    if (slot == nullptr) {
      ++ctr_.lost_full;
    } else {
      assign_used(slot, rq.front());
      ++ctr_.given_back;
    }
    rq.pop();
  }
}

}  // namespace uroce::transport
