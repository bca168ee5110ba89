// Names and one-line descriptions the conformance scripts use (README.md):
// opcodes (the IBTA names in lower case, with short forms), completion
// statuses and opcodes, QP states and NAK codes, and packets and
// completions printed the way a script line would write them, for failure
// messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "datapath/transport/async_event.h"
#include "datapath/transport/cqe.h"
#include "datapath/transport/qp_attr.h"
#include "datapath/wire/aeth.h"
#include "datapath/wire/dc_aeth.h"
#include "datapath/wire/parser.h"

namespace uroce::transport::conformance {

std::string hex(std::uint64_t v);
std::string lower(std::string_view s);
// "DropQkey" -> "drop_qkey".
std::string snake(std::string_view camel);

// "rc_send_only", "RC_RDMA_WRITE_FIRST", and the short forms rc_ack,
// rc_atomic_ack, rc_write_*, uc_write_*, rc_read_*, *_imm, *_inv (and
// their DC mirrors dc_ack, dc_atomic_ack, dc_write_*, dc_read_*); uroce's
// extension packets as homa_grant, homa_cutoffs, homa_mlen.
std::optional<std::uint8_t> opcode_by_name(std::string_view name);

struct NamedStatus {
  std::string_view name;
  WcStatus st;
};
inline constexpr NamedStatus kStatuses[] = {
    {"success", WcStatus::kSuccess},
    {"loc_len_err", WcStatus::kLocLenErr},
    {"loc_qp_op_err", WcStatus::kLocQpOpErr},
    {"loc_prot_err", WcStatus::kLocProtErr},
    {"wr_flush_err", WcStatus::kWrFlushErr},
    {"bad_resp_err", WcStatus::kBadRespErr},
    {"loc_access_err", WcStatus::kLocAccessErr},
    {"rem_inv_req_err", WcStatus::kRemInvReqErr},
    {"rem_access_err", WcStatus::kRemAccessErr},
    {"rem_op_err", WcStatus::kRemOpErr},
    {"retry_exc_err", WcStatus::kRetryExcErr},
    {"rnr_retry_exc_err", WcStatus::kRnrRetryExcErr},
    {"rem_abort_err", WcStatus::kRemAbortErr},
    {"fatal_err", WcStatus::kFatalErr},
    {"resp_timeout_err", WcStatus::kRespTimeoutErr},
    {"general_err", WcStatus::kGeneralErr},
};
std::string status_name(std::uint32_t s);

struct NamedWcOp {
  std::string_view name;
  WcOpcode op;
};
inline constexpr NamedWcOp kWcOps[] = {
    {"send", WcOpcode::kSend},          {"rdma_write", WcOpcode::kRdmaWrite},
    {"rdma_read", WcOpcode::kRdmaRead}, {"comp_swap", WcOpcode::kCompSwap},
    {"fetch_add", WcOpcode::kFetchAdd}, {"local_inv", WcOpcode::kLocalInv},
    {"recv", WcOpcode::kRecv},          {"recv_rdma_with_imm", WcOpcode::kRecvRdmaWithImm},
};
std::string wc_op_name(std::uint32_t o);

struct NamedState {
  std::string_view name;
  QpState st;
};
inline constexpr NamedState kStates[] = {
    {"reset", QpState::kReset}, {"init", QpState::kInit}, {"rtr", QpState::kRtr},
    {"rts", QpState::kRts},     {"sqd", QpState::kSqd},   {"sqe", QpState::kSqe},
    {"err", QpState::kErr},
};
std::string state_name(QpState s);

struct NamedNak {
  std::string_view name;
  wire::NakCode code;
};
inline constexpr NamedNak kNaks[] = {
    {"seq", wire::NakCode::kPsnSeqError},          {"inv", wire::NakCode::kInvalidRequest},
    {"access", wire::NakCode::kRemoteAccessError}, {"op", wire::NakCode::kRemoteOpError},
    {"inv_rd", wire::NakCode::kInvalidRdRequest},
};

struct NamedEvent {
  std::string_view name;
  AsyncEventType type;
};
// The QP events a QP under test can raise (IBV_EVENT_* in lower case,
// without the prefix).
inline constexpr NamedEvent kEvents[] = {
    {"cq_err", AsyncEventType::kCqErr},
    {"qp_fatal", AsyncEventType::kQpFatal},
    {"qp_req_err", AsyncEventType::kQpReqErr},
    {"qp_access_err", AsyncEventType::kQpAccessErr},
    {"comm_est", AsyncEventType::kCommEst},
    {"sq_drained", AsyncEventType::kSqDrained},
    {"qp_last_wqe_reached", AsyncEventType::kQpLastWqeReached},
};
std::string event_name(AsyncEventType t);

struct NamedDcStatus {
  std::string_view name;
  wire::DcStatus st;
};
// DCAETH statuses (wire/dc_aeth.h) in scripts.
inline constexpr NamedDcStatus kDcStatuses[] = {
    {"ok", wire::DcStatus::kOk},
    {"gone", wire::DcStatus::kGone},
    {"unknown", wire::DcStatus::kUnknown},
    {"busy", wire::DcStatus::kBusy},
    {"key_violation", wire::DcStatus::kKeyViolation},
};
std::string dc_status_text(std::uint8_t raw);

// "ack credits=31 msn=1", "nak=rnr timer=12 msn=0", "nak=seq msn=0".
std::string aeth_text(const wire::AethHdr& a);
// An opcode's name in scripts: the IBTA name in lower case; uroce's
// extension packets without their "uroce_" prefix (homa_mlen).
std::string packet_name(const wire::OpcodeInfo& info);
// A packet as a `send` line would write it.
std::string packet_text(const wire::ParsedPacket& p);
// A completion as a `wc` line would write it.
std::string wc_text(const Cqe& c);

}  // namespace uroce::transport::conformance
