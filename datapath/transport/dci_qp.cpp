#include "datapath/transport/dci_qp.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "datapath/transport/qp_modify_rules.h"

namespace uroce::transport {

namespace {

// A lane is an RcQp, whose transitions ask for what an RC connection needs
// (access flags at INIT; the AV, destination, PSNs and responder limits at
// RTR). A DCI has none of it (docs/dc.md): the lane gets neutral values,
// and its AV and destination follow each connection (RcRequester::dc_connect).
std::uint32_t lane_mask(std::uint32_t mask, QpState cur, const QpAttrValues& a) {
  using namespace qp_attr;
  if ((mask & kState) == 0) return mask;
  if (cur == QpState::kReset && a.qp_state == QpState::kInit) return mask | kAccessFlags;
  if (cur == QpState::kInit && a.qp_state == QpState::kRtr) {
    return mask | kAv | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer;
  }
  return mask;
}

}  // namespace

DciQp::DciQp(const DciQpConfig& cfg, MrTable& mrs, DcConnClock& clock)
    : cfg_(cfg), spray_(cfg.spray) {
  const std::uint32_t n = 1u << cfg.log_streams;
  lanes_.reserve(n);
  RcQpConfig rc = cfg.rc;
  // No receive queue; a responder that never gets a request.
  rc.max_recv_wr = 1;
  rc.max_recv_sge = 1;
  rc.max_dest_rd_atomic = 0;
  rc.srq = nullptr;
  for (std::uint32_t i = 0; i < n; ++i) {
    Lane l;
    l.dc = std::make_unique<DcLane>();
    l.dc->initiator = true;
    l.dc->lane = static_cast<std::uint16_t>(i);
    l.dc->clock = &clock;
    l.qp = std::make_unique<RcQp>(rc, mrs);
    l.qp->set_dc(l.dc.get());
    if (cfg.sr) {
      l.sr = std::make_unique<RcSr>();
      l.sr->bind_counters();
      l.sr->cap = cfg.sr_cap;
      l.dc->sr = l.sr.get();
      l.dc->sr_declined = &declined_;
      l.dc->sr_eth_mtu = cfg.sr_eth_mtu;
      l.dc->spray = &spray_;
    }
    lanes_.push_back(std::move(l));
  }
}

int DciQp::modify(std::uint32_t mask, const QpAttrValues& a) {
  if (int rc = check_modify_values(QpType::kDci, state_, mask, a); rc != 0) return rc;
  QpAttrValues la = a;
  la.av = PathAddr{};
  la.qp_access_flags = 0;
  la.dest_qp_num = 0;
  la.rq_psn = 0;
  la.max_dest_rd_atomic = 0;
  la.min_rnr_timer = 0;
  const std::uint32_t lm = lane_mask(mask, state_, a);
  for (Lane& l : lanes_) {
    if (int rc = l.qp->modify(lm, la); rc != 0) return rc;
    const QpState next = (mask & qp_attr::kState) != 0 ? a.qp_state : state_;
    if (next == QpState::kReset) {
      l.dc->stream.reset();
      l.dc->sr_peer_valid = false;
    }
  }
  using namespace qp_attr;
  if ((mask & kPkeyIndex) != 0) attr_.pkey_index = a.pkey_index;
  if ((mask & kPort) != 0) attr_.port_num = a.port_num;
  if ((mask & kPathMtu) != 0) attr_.path_mtu = a.path_mtu;
  if ((mask & kTimeout) != 0) attr_.timeout = a.timeout;
  if ((mask & kRetryCnt) != 0) attr_.retry_cnt = a.retry_cnt;
  if ((mask & kRnrRetry) != 0) attr_.rnr_retry = a.rnr_retry;
  if ((mask & kSqPsn) != 0) attr_.sq_psn = a.sq_psn;
  if ((mask & kMaxQpRdAtomic) != 0) attr_.max_rd_atomic = a.max_rd_atomic;
  if ((mask & kState) != 0) state_ = a.qp_state;
  return 0;
}

QpAttrValues DciQp::query() const {
  QpAttrValues v = attr_;
  v.qp_state = v.cur_qp_state = state_;
  return v;
}

int DciQp::post_send(const SendWr& wr) {
  if (wr.ud.dc_stream >= lanes_.size()) return EINVAL;
  Lane& l = lanes_[wr.ud.dc_stream];
  const int rc = l.qp->post_send(wr);
  if (rc == 0) l.idle_since = 0;
  return rc;
}

bool DciQp::has_output() const {
  return std::any_of(lanes_.begin(), lanes_.end(),
                     [](const Lane& l) { return l.qp->has_output(); });
}

TimeNs DciQp::timer_deadline() const {
  TimeNs d = 0;
  for (const Lane& l : lanes_) {
    const TimeNs closing = l.dc->closing.active ? l.dc->closing.deadline : 0;
    for (const TimeNs t : {l.qp->timer_deadline(), idle_deadline(l), closing}) {
      if (t != 0 && (d == 0 || t < d)) d = t;
    }
  }
  return d;
}

std::uint32_t DciQp::send_queue_depth() const {
  std::uint32_t n = 0;
  for (const Lane& l : lanes_) n += l.qp->send_queue_depth();
  return n;
}

bool DciQp::has_events() const {
  return std::any_of(lanes_.begin(), lanes_.end(),
                     [](const Lane& l) { return l.qp->has_events(); });
}

RcCounters DciQp::rc_counters() const {
  // RcCounters is a block of uint64 counters: summed as such.
  static_assert(sizeof(RcCounters) % sizeof(std::uint64_t) == 0);
  constexpr std::size_t kN = sizeof(RcCounters) / sizeof(std::uint64_t);
  std::uint64_t sum[kN] = {};
  for (const Lane& l : lanes_) {
    std::uint64_t c[kN];
    std::memcpy(c, &l.qp->counters(), sizeof c);
    for (std::size_t i = 0; i < kN; ++i) sum[i] += c[i];
  }
  RcCounters out;
  std::memcpy(&out, sum, sizeof out);
  return out;
}

RcSrCounters DciQp::sr_counters() const {
  RcSrCounters sum{};
  for (const Lane& l : lanes_) {
    if (l.sr != nullptr) counters::add(sum, l.sr->ctr);
  }
  return sum;
}

void DciQp::restart_lane(Lane& l) {
  using namespace qp_attr;
  QpAttrValues a = attr_;
  a.av = PathAddr{};
  a.qp_state = QpState::kReset;
  // The stream goes on from its next PSN (RESET forgets it), so that
  // nothing of the failed connection can be taken for the next one's.
  const Psn next = l.qp->next_psn();
  l.qp->modify(kState, a);
  l.dc->stream.reset();
  l.dc->closing = DcClosing{};
  const QpState target = state_;
  QpState cur = QpState::kReset;
  if (target == QpState::kReset) return;
  a.qp_state = QpState::kInit;
  l.qp->modify(kState | kPkeyIndex | kPort | kAccessFlags, a);
  cur = QpState::kInit;
  if (target == QpState::kInit) return;
  a.qp_state = QpState::kRtr;
  l.qp->modify(lane_mask(kState | kPathMtu, cur, a), a);
  cur = QpState::kRtr;
  if (target == QpState::kRtr) return;
  a.qp_state = QpState::kRts;
  a.sq_psn = next.value();
  l.qp->modify(kState | kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic, a);
}

}  // namespace uroce::transport
