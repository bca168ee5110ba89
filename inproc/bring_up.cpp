#include "inproc/bring_up.h"

namespace uroce::inproc {

namespace qa = transport::qp_attr;

namespace {

// Each step carries the values of the steps before it, as one
// ibv_qp_attr does across an application's calls; the mask says which
// the engine reads.
void step(BringUp& b, std::uint32_t mask, const transport::QpAttrValues& v) {
  b.steps[b.count].mask = mask;
  b.steps[b.count].values = v;
  ++b.count;
}

// RTS of a QP that initiates (RC, DCI): its first PSN, and how long and how
// often it retries with how many reads outstanding.
constexpr std::uint32_t kInitiatorRts =
    qa::kState | qa::kSqPsn | qa::kTimeout | qa::kRetryCnt | qa::kRnrRetry | qa::kMaxQpRdAtomic;

template <class Attrs>
void to_rts(BringUp& b, transport::QpAttrValues& v, const Attrs& a, std::uint32_t mask) {
  v.qp_state = transport::QpState::kRts;
  v.sq_psn = a.sq_psn;
  v.timeout = a.timeout;
  v.retry_cnt = a.retry_cnt;
  v.rnr_retry = a.rnr_retry;
  v.max_rd_atomic = a.max_rd_atomic;
  step(b, mask, v);
}

}  // namespace

BringUp connected_bring_up(const ConnectAttrs& a) {
  const bool rc = a.type == transport::QpType::kRc;
  BringUp b;
  transport::QpAttrValues v;
  v.qp_state = transport::QpState::kInit;
  v.qp_access_flags = a.access;
  step(b, qa::kState | qa::kPkeyIndex | qa::kPort | qa::kAccessFlags, v);
  v.qp_state = transport::QpState::kRtr;
  v.av = a.av;
  v.path_mtu = a.mtu;
  v.dest_qp_num = a.dest_qpn;
  v.rq_psn = a.rq_psn;
  v.max_dest_rd_atomic = a.max_dest_rd_atomic;
  v.min_rnr_timer = a.min_rnr_timer;
  std::uint32_t rtr = qa::kState | qa::kAv | qa::kPathMtu | qa::kDestQpn | qa::kRqPsn;
  if (rc) rtr |= qa::kMaxDestRdAtomic | qa::kMinRnrTimer;
  step(b, rtr, v);
  to_rts(b, v, a, rc ? kInitiatorRts : qa::kState | qa::kSqPsn);
  return b;
}

BringUp ud_bring_up(const UdAttrs& a) {
  BringUp b;
  transport::QpAttrValues v;
  v.qp_state = transport::QpState::kInit;
  v.qkey = a.qkey;
  step(b, qa::kState | qa::kPkeyIndex | qa::kPort | qa::kQkey, v);
  v.qp_state = transport::QpState::kRtr;
  step(b, qa::kState, v);
  v.qp_state = transport::QpState::kRts;
  v.sq_psn = a.sq_psn;
  step(b, qa::kState | qa::kSqPsn, v);
  return b;
}

BringUp dci_bring_up(const DciAttrs& a) {
  BringUp b;
  transport::QpAttrValues v;
  v.qp_state = transport::QpState::kInit;
  step(b, qa::kState | qa::kPkeyIndex | qa::kPort, v);
  v.qp_state = transport::QpState::kRtr;
  v.path_mtu = a.mtu;
  step(b, qa::kState | qa::kPathMtu, v);
  to_rts(b, v, a, kInitiatorRts);
  return b;
}

BringUp dct_bring_up(const DctAttrs& a) {
  BringUp b;
  transport::QpAttrValues v;
  v.qp_state = transport::QpState::kInit;
  v.qp_access_flags = a.access;
  step(b, qa::kState | qa::kPkeyIndex | qa::kPort | qa::kAccessFlags, v);
  v.qp_state = transport::QpState::kRtr;
  v.min_rnr_timer = a.min_rnr_timer;
  v.av.dscp = a.dscp;
  v.path_mtu = a.mtu;
  step(b, qa::kState | qa::kMinRnrTimer | qa::kAv | qa::kPathMtu, v);
  return b;
}

}  // namespace uroce::inproc
