// Which QP state transitions are legal and which attributes each one
// requires and allows, per QP type (IBTA Vol1 10.3.1 and table 91 "QP State
// Transition Properties"; Linux's ib_modify_qp_is_ok and hence rxe apply the
// same table). The DC QPs (docs/dc.md) have a table of their own: a DCT
// goes RESET -> INIT -> RTR, a DCI RESET -> INIT -> RTR -> RTS, and both
// reach RESET and ERR from any state, as the IBTA types do.
//
// check_modify is a pure function: the provider and daemon call it before
// applying an ibv_modify_qp, and a violation is EINVAL, as with rxe.
#pragma once

#include <cstdint>

#include "datapath/transport/qp_attr.h"

namespace uroce::transport {

struct ModifyRule {
  bool valid = false;
  std::uint32_t required = 0;  // beyond kState
  std::uint32_t optional = 0;
};

// The rule for cur -> next for a QP of `type`.
ModifyRule modify_rule(QpType type, QpState cur, QpState next);

// 0 when `mask` (with attr.qp_state = `next` when mask has kState; otherwise
// the QP stays in `cur`) is a legal modification of a `type` QP in state
// `cur`; EINVAL when the transition is illegal, a required attribute is
// missing, or an attribute outside required | optional is present.
int check_modify(QpType type, QpState cur, QpState next, std::uint32_t mask);

}  // namespace uroce::transport
