#include "datapath/ctl/protocol.h"

namespace uroce::ctl {
namespace {

template <Op O>
constexpr std::size_t req_bytes() {
  return sizeof(MsgHeader) + sizeof(typename OpTypes<O>::Req);
}

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::kHello: return "hello";
    case Op::kQueryPort: return "query_port";
    case Op::kAllocPd: return "alloc_pd";
    case Op::kDeallocPd: return "dealloc_pd";
    case Op::kRegMr: return "reg_mr";
    case Op::kDeregMr: return "dereg_mr";
    case Op::kReregMr: return "rereg_mr";
    case Op::kCreateCompChannel: return "create_comp_channel";
    case Op::kDestroyCompChannel: return "destroy_comp_channel";
    case Op::kCreateCq: return "create_cq";
    case Op::kResizeCq: return "resize_cq";
    case Op::kDestroyCq: return "destroy_cq";
    case Op::kCreateQp: return "create_qp";
    case Op::kModifyQp: return "modify_qp";
    case Op::kQueryQp: return "query_qp";
    case Op::kDestroyQp: return "destroy_qp";
    case Op::kCreateSrq: return "create_srq";
    case Op::kModifySrq: return "modify_srq";
    case Op::kQuerySrq: return "query_srq";
    case Op::kDestroySrq: return "destroy_srq";
    case Op::kCreateAh: return "create_ah";
    case Op::kDestroyAh: return "destroy_ah";
    case Op::kStatus: return "status";
    case Op::kCmOpen: return "cm_open";
    case Op::kCmCommand: return "cm_command";
    case Op::kSetQpSched: return "set_qp_sched";
    case Op::kAllocMw: return "alloc_mw";
    case Op::kDeallocMw: return "dealloc_mw";
    case Op::kAttachMcast: return "attach_mcast";
    case Op::kDetachMcast: return "detach_mcast";
    case Op::kCapture: return "capture";
  }
  return "unknown";
}

int request_fd_count(Op op) {
  switch (op) {
    case Op::kHello:
    case Op::kRegMr:  // 0 for MrSource::kProcessMapping
    case Op::kCreateCompChannel:
    case Op::kCapture: return 1;
    default: return 0;  // ReregMr: 1 only with IBV_REREG_MR_CHANGE_TRANSLATION of a memfd
  }
}

std::size_t request_bytes(Op op) {
  switch (op) {
    case Op::kHello: return req_bytes<Op::kHello>();
    case Op::kQueryPort: return req_bytes<Op::kQueryPort>();
    case Op::kAllocPd: return req_bytes<Op::kAllocPd>();
    case Op::kDeallocPd: return req_bytes<Op::kDeallocPd>();
    case Op::kRegMr: return req_bytes<Op::kRegMr>();
    case Op::kDeregMr: return req_bytes<Op::kDeregMr>();
    case Op::kReregMr: return req_bytes<Op::kReregMr>();
    case Op::kCreateCompChannel: return req_bytes<Op::kCreateCompChannel>();
    case Op::kDestroyCompChannel: return req_bytes<Op::kDestroyCompChannel>();
    case Op::kCreateCq: return req_bytes<Op::kCreateCq>();
    case Op::kResizeCq: return req_bytes<Op::kResizeCq>();
    case Op::kDestroyCq: return req_bytes<Op::kDestroyCq>();
    case Op::kCreateQp: return req_bytes<Op::kCreateQp>();
    case Op::kModifyQp: return req_bytes<Op::kModifyQp>();
    case Op::kQueryQp: return req_bytes<Op::kQueryQp>();
    case Op::kDestroyQp: return req_bytes<Op::kDestroyQp>();
    case Op::kCreateSrq: return req_bytes<Op::kCreateSrq>();
    case Op::kModifySrq: return req_bytes<Op::kModifySrq>();
    case Op::kQuerySrq: return req_bytes<Op::kQuerySrq>();
    case Op::kDestroySrq: return req_bytes<Op::kDestroySrq>();
    case Op::kCreateAh: return req_bytes<Op::kCreateAh>();
    case Op::kDestroyAh: return req_bytes<Op::kDestroyAh>();
    case Op::kStatus: return req_bytes<Op::kStatus>();
    case Op::kCmOpen: return req_bytes<Op::kCmOpen>();
    case Op::kCmCommand: return req_bytes<Op::kCmCommand>();
    case Op::kSetQpSched: return req_bytes<Op::kSetQpSched>();
    case Op::kAllocMw: return req_bytes<Op::kAllocMw>();
    case Op::kDeallocMw: return req_bytes<Op::kDeallocMw>();
    case Op::kCapture: return req_bytes<Op::kCapture>();
    case Op::kAttachMcast: return req_bytes<Op::kAttachMcast>();
    case Op::kDetachMcast: return req_bytes<Op::kDetachMcast>();
  }
  return 0;
}

}  // namespace uroce::ctl
