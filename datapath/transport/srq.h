// Shared Receive Queue (IBTA Vol1 10.2.9; behaviour as Linux rxe_srq.c and
// get_srq_wqe in rxe_resp.c).
//
// Receive WRs posted to an SRQ are taken, oldest first, by whichever QP
// attached to it (RC, UC or UD: the QP's config names the SRQ) next needs
// one. A QP takes a WR when a message that consumes one starts and holds it
// in its own one-entry receive queue until the message completes (or the QP
// flushes it in ERR), so a half-received SEND keeps its buffer while other
// QPs go on taking WRs. An empty SRQ is what an empty RQ is: RNR NAK for RC,
// a counted drop for UD and UC.
//
// srq_limit: modify(kSrqLimit) arms it with a non-zero value (0 disarms).
// When a take() leaves fewer WRs than the limit, one SRQ_LIMIT_REACHED event
// is queued (events(), async_event.h) and the limit disarms (reads back 0)
// until the application sets it again; arming below the current count does
// not raise at once (rxe: only get_srq_wqe checks). modify(kSrqMaxWr) resizes
// the queue (control path; it is the only place that allocates), keeping the
// posted WRs in order.
//
// Threading: owned by the engine lcore of the QPs attached to it; not
// thread-safe.
#pragma once

#include <cstdint>

#include "datapath/base/counter_fields.h"
#include "datapath/transport/async_event.h"
#include "datapath/transport/mr_table.h"
#include "datapath/transport/recv_refill.h"
#include "datapath/transport/wr.h"
#include "datapath/transport/wr_queue.h"

namespace uroce::transport {

// ibv_srq_attr_mask values.
namespace srq_attr {
inline constexpr std::uint32_t kMaxWr = 1u << 0;
inline constexpr std::uint32_t kLimit = 1u << 1;
}  // namespace srq_attr

// Device limit on SRQ depth (ibv_query_device max_srq_wr; rxe's value).
inline constexpr std::uint32_t kMaxSrqWr = 1u << 15;

struct SrqConfig {
  std::uint32_t srq_num = 0;
  PdHandle pd = 0;
  std::uint32_t max_wr = 64;
  std::uint32_t max_sge = kMaxSge;
  std::uint32_t srq_limit = 0;
  // WRs posted to the SRQ's ring that the owner has not posted here yet
  // (recv_refill.h): take() calls it when the SRQ is empty.
  RecvRefill refill{};
};

// ibv_srq_attr.
struct SrqAttr {
  std::uint32_t max_wr = 0;
  std::uint32_t max_sge = 0;
  std::uint32_t srq_limit = 0;
};

struct SrqCounters {
  std::uint64_t posted = 0;
  std::uint64_t taken = 0;
  std::uint64_t empty = 0;  // take() found no WR (an RNR NAK or a drop)
  std::uint64_t limit_events = 0;
  std::uint64_t given_back = 0;
  std::uint64_t lost_full = 0;
};

inline constexpr counters::FieldList<SrqCounters, 6> kSrqCounterFields{{
    {"posted", &SrqCounters::posted, "receive WRs posted to the SRQ"},
    {"taken", &SrqCounters::taken, "receive WRs taken by a QP"},
    {"empty", &SrqCounters::empty, "take() found no WR (an RNR NAK or a drop)"},
    {"limit_events", &SrqCounters::limit_events, "SRQ_LIMIT_REACHED events raised"},
    {"given_back", &SrqCounters::given_back,
     "receive WRs a DC target context had taken and not used, back in the SRQ when it closed"},
    {"lost_full", &SrqCounters::lost_full,
     "receive WRs a closing DC target context could not give back: the SRQ was full again"},
}};
static_assert(counters::covers(kSrqCounterFields));
constexpr const auto& counter_fields(const SrqCounters&) { return kSrqCounterFields; }

class Srq {
 public:
  explicit Srq(const SrqConfig& cfg);
  Srq(const Srq&) = delete;
  Srq& operator=(const Srq&) = delete;

  std::uint32_t srq_num() const { return cfg_.srq_num; }
  PdHandle pd() const { return cfg_.pd; }

  // ibv_post_srq_recv for one WR: 0, EINVAL (more SGEs than max_sge) or
  // ENOMEM (full).
  int post_recv(const RecvWr& wr);
  // ibv_modify_srq: 0 or EINVAL (unknown mask bit; max_wr 0, over
  // kMaxSrqWr, below the WRs posted or below an armed limit; a limit over
  // max_wr).
  int modify(std::uint32_t mask, const SrqAttr& attr);
  // ibv_query_srq: srq_limit reads 0 once the limit event fired.
  SrqAttr query() const;

  // Data path: moves the oldest WR into `rq` (a QP's receive queue, whose
  // slots hold max_sge() SGEs); false when the SRQ is empty even after the
  // config's refill, or `rq` is full.
  bool take(WrQueue<QueuedRecvWr>& rq);
  // Control of a DC target context that closes (dct_qp.h): the WRs it took
  // and did not use go back, to the tail (an SRQ's WRs are taken in no
  // order the application may rely on across QPs); those that find the SRQ
  // full again are counted lost_full. `rq` is empty afterwards.
  void give_back(WrQueue<QueuedRecvWr>& rq);
  std::uint32_t size() const { return q_.size(); }
  std::uint32_t max_sge() const { return cfg_.max_sge; }

  PendingEvents& events() { return events_; }
  const PendingEvents& events() const { return events_; }
  const SrqCounters& counters() const { return ctr_; }

 private:
  SrqConfig cfg_;
  WrQueue<QueuedRecvWr> q_;
  std::uint32_t limit_ = 0;
  PendingEvents events_{};
  SrqCounters ctr_{};
};

// Makes sure a QP's own RQ has a receive WR at its head: with an SRQ the
// RQ holds at most the one WR taken for the message in progress, and an
// empty RQ takes the SRQ's oldest (Srq::take refills the SRQ when it is
// empty); without one, an empty RQ is refilled by `refill` (recv_refill.h)
// once. False when there is still none (RNR / drop). A non-empty RQ costs
// one comparison.
inline bool ensure_recv_wr(WrQueue<QueuedRecvWr>& rq, Srq* srq, const RecvRefill& refill) {
  if (!rq.empty()) [[likely]]
    return true;
  if (srq != nullptr) return srq->take(rq);
  refill();
  return !rq.empty();
}

}  // namespace uroce::transport
