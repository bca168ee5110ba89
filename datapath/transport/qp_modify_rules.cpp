#include "datapath/transport/qp_modify_rules.h"

#include <cerrno>

namespace uroce::transport {

namespace {

using namespace qp_attr;

// One entry per QP type: {UD, UC, RC}.
struct PerType {
  std::uint32_t ud, uc, rc;
};

std::uint32_t pick(const PerType& p, QpType t) {
  switch (t) {
    case QpType::kUd: return p.ud;
    case QpType::kUc: return p.uc;
    case QpType::kRc: return p.rc;
    case QpType::kDci:
    case QpType::kDct: break;  // dc_rule's, never this table's
  }
  return 0;
}

ModifyRule rule(QpType t, const PerType& req, const PerType& opt) {
  return ModifyRule{true, pick(req, t), pick(opt, t)};
}

constexpr PerType kNone{0, 0, 0};

// The DC QPs' transitions (docs/dc.md, "The interface"), other than to
// RESET and ERR: a DCT goes RESET -> INIT -> RTR and has no RTS (it only
// responds); a DCI goes RESET -> INIT -> RTR -> RTS, and names no
// destination on the way (each WR names its own): its AV is optional at RTR
// and gives only the path's traffic class and hop limit. No other
// transition (INIT -> INIT, RTS -> RTS, SQD) is defined for them.
ModifyRule dc_rule(QpType t, QpState cur, QpState next) {
  const bool dct = t == QpType::kDct;
  if (cur == QpState::kReset && next == QpState::kInit)
    return {true, dct ? kPkeyIndex | kPort | kAccessFlags : kPkeyIndex | kPort, 0};
  if (cur == QpState::kInit && next == QpState::kRtr)
    return dct ? ModifyRule{true, kMinRnrTimer | kAv | kPathMtu, 0}
               : ModifyRule{true, kPathMtu, kAv};
  if (cur == QpState::kRtr && next == QpState::kRts && !dct)
    return {true, kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic, 0};
  return {};
}

}  // namespace

ModifyRule modify_rule(QpType t, QpState cur, QpState next) {
  // Any state may go to RESET or ERR with no other attribute.
  if (next == QpState::kReset || next == QpState::kErr) return {true, 0, 0};
  if (is_dc(t)) return dc_rule(t, cur, next);

  switch (cur) {
    case QpState::kReset:
      if (next == QpState::kInit)
        return rule(t,
                    {kPkeyIndex | kPort | kQkey, kPkeyIndex | kPort | kAccessFlags,
                     kPkeyIndex | kPort | kAccessFlags},
                    kNone);
      break;
    case QpState::kInit:
      if (next == QpState::kInit)
        return rule(t, kNone,
                    {kPkeyIndex | kPort | kQkey, kPkeyIndex | kPort | kAccessFlags,
                     kPkeyIndex | kPort | kAccessFlags});
      if (next == QpState::kRtr)
        return rule(t,
                    {0, kAv | kPathMtu | kDestQpn | kRqPsn,
                     kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer},
                    {kPkeyIndex | kQkey, kAltPath | kAccessFlags | kPkeyIndex,
                     kAltPath | kAccessFlags | kPkeyIndex});
      break;
    case QpState::kRtr:
      if (next == QpState::kRts)
        return rule(t, {kSqPsn, kSqPsn, kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic},
                    {kCurState | kQkey, kCurState | kAltPath | kAccessFlags | kPathMigState,
                     kCurState | kAltPath | kAccessFlags | kMinRnrTimer | kPathMigState});
      break;
    case QpState::kRts:
      if (next == QpState::kRts)
        return rule(t, kNone,
                    {kCurState | kQkey, kCurState | kAccessFlags | kAltPath | kPathMigState,
                     kCurState | kAccessFlags | kAltPath | kPathMigState | kMinRnrTimer});
      if (next == QpState::kSqd)
        return rule(t, kNone, {kEnSqdAsyncNotify, kEnSqdAsyncNotify, kEnSqdAsyncNotify});
      break;
    case QpState::kSqd:
      if (next == QpState::kRts)
        return rule(t, kNone,
                    {kCurState | kQkey, kCurState | kAltPath | kAccessFlags | kPathMigState,
                     kCurState | kAltPath | kAccessFlags | kMinRnrTimer | kPathMigState});
      if (next == QpState::kSqd)
        return rule(t, kNone,
                    {kPkeyIndex | kQkey, kAv | kAltPath | kAccessFlags | kPkeyIndex | kPathMigState,
                     kPort | kAv | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic |
                         kMaxDestRdAtomic | kAltPath | kAccessFlags | kPkeyIndex | kMinRnrTimer |
                         kPathMigState});
      break;
    case QpState::kSqe:
      // RC has no SQE state: a send error on RC moves the QP to ERR.
      if (next == QpState::kRts && t != QpType::kRc)
        return rule(t, kNone, {kCurState | kQkey, kCurState | kAccessFlags, 0});
      break;
    case QpState::kErr: break;
  }
  return {};
}

int check_modify(QpType type, QpState cur, QpState next, std::uint32_t mask) {
  if ((mask & kState) == 0) next = cur;
  const ModifyRule r = modify_rule(type, cur, next);
  if (!r.valid) return EINVAL;
  const std::uint32_t attrs = mask & ~kState;
  if ((attrs & r.required) != r.required) return EINVAL;
  if ((attrs & ~(r.required | r.optional)) != 0) return EINVAL;
  return 0;
}

}  // namespace uroce::transport
