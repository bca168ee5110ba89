// The contract between uroced's control plane and its engine: what the
// control thread(s) hand to the engine lcore when a client creates, changes or
// destroys an object, and what the engine exposes for status.
//
// Ownership and threading (the rules every caller follows):
//   - Vnic and Engine state is touched only on the engine lcore. The control
//     plane reaches it with Engine::call(fn), which runs fn on the engine
//     lcore between two iterations and returns when fn has run (the only
//     synchronisation; nothing on the packet path takes a lock).
//   - Shared memory (rings, CQ notify words, MR mappings) is created and
//     mapped by the control plane, which keeps it mapped until the engine has
//     dropped every pointer into it: i.e. until the Engine::call that destroys
//     the object has returned.
//   - fds passed in (comp-channel and async pipes) stay owned by the control
//     plane; the engine only write()s to them, non-blocking, and counts a
//     failed write (never blocks, never closes).
//   - Ids are assigned by the control plane and unique per Vnic while the
//     object lives; 0 is never a valid id.
//
// Everything here returns 0 or a positive errno value (EINVAL, ENOMEM,
// ENOENT, EBUSY, ...) with the same meaning as the verb's errno.
#pragma once

#include <cstddef>
#include <cstdint>

#include "datapath/ctl/protocol.h"
#include "datapath/engine/vnic_types.h"
#include "datapath/shm/ring.h"
#include "datapath/transport/mr_table.h"
#include "datapath/transport/qp_attr.h"
#include "datapath/transport/qp_common.h"
#include "datapath/wire/addr.h"
#include "sched/pacer.h"
#include "sched/traffic_classes.h"

namespace uroce::engine {

// A ring the control plane created (daemon side of shm::Ring*): memory and
// the geometry it was initialised with (shm::ring_init).
struct RingMem {
  void* mem = nullptr;
  std::size_t bytes = 0;
  shm::RingGeometry geo{};
};

struct CqCreate {
  ObjId id = 0;
  RingMem ring;                     // the engine produces ib_uverbs_wc here
  ctl::CqNotify* notify = nullptr;  // arming word (protocol.h), same region
  int channel_fd = -1;              // comp-channel pipe write end, or -1
  std::uint64_t user_handle = 0;    // written in comp events and CQ_ERR
  int async_fd = -1;                // the owning client's async pipe
};

struct SrqCreate {
  ObjId id = 0;
  std::uint32_t client = 0;  // owning connection (doorbell checks)
  std::uint32_t srq_num = 0;
  transport::PdHandle pd = 0;
  std::uint32_t max_wr = 0;
  std::uint32_t max_sge = 0;
  std::uint32_t srq_limit = 0;
  RingMem ring;                   // the engine consumes rxe_recv_wqe here
  std::uint64_t user_handle = 0;  // SRQ_LIMIT_REACHED element
  int async_fd = -1;
};

// A DC QP (docs/dc.md) uses only one side: a DCT has send_cq 0, no SQ
// (sq.mem == nullptr, max_send_* 0) and an SRQ; a DCI has recv_cq 0, no RQ
// (rq.mem == nullptr) and no SRQ. uroced checked all of it
// (apps/uroced/qp_create_check.h). A DCT's DCT number is its qpn.
struct QpCreate {
  ObjId id = 0;
  std::uint32_t client = 0;  // owning connection (AH and CQ checks)
  transport::QpType type = transport::QpType::kRc;
  std::uint32_t qpn = 0;  // chosen by Vnic::alloc_qpn
  transport::PdHandle pd = 0;
  ObjId send_cq = 0;          // 0 for a DCT
  ObjId recv_cq = 0;          // 0 for a DCI
  ObjId srq = 0;              // 0: the QP has its own RQ (or, a DCI, none)
  std::uint64_t dct_key = 0;  // DCT: the access key every request must carry
  // DCI: 2^dci_log_streams streams, per-stream errors when dci_log_errored
  // > 0 (transport::dci_streams_valid holds).
  std::uint8_t dci_log_streams = 0;
  std::uint8_t dci_log_errored = 0;
  std::uint32_t max_send_wr = 0;
  std::uint32_t max_recv_wr = 0;
  std::uint32_t max_send_sge = 0;
  std::uint32_t max_recv_sge = 0;
  std::uint32_t max_inline = 0;
  bool sq_sig_all = false;
  RingMem sq;                     // rxe_send_wqe; mem == nullptr for a DCT
  RingMem rq;                     // rxe_recv_wqe; mem == nullptr with srq or DC
  std::uint64_t user_handle = 0;  // element of QP async events
  int async_fd = -1;
};

// A modify_qp as the engine applies it: the transport's attribute values
// with the address vector already resolved (GID -> IPv4, ARP -> MAC) by the
// control plane, which also validated the GID index.
struct QpModify {
  std::uint32_t mask = 0;  // transport::qp_attr bits (== ibv_qp_attr_mask)
  transport::QpAttrValues values{};
};

// A QP's TX scheduling as ibv_modify_qp_rate_limit, IBV_QP_RATE_LIMIT and
// uroce_dv set it: each part applies only when its flag is set.
struct QpSched {
  bool set_rate = false;
  sched::PaceSpec pace{};  // rate_bps 0: not paced
  bool set_class = false;
  // A class in [0, sched::kNumClasses) pins the QP to it; kClassFromDscp
  // returns it to the class its address vector's DSCP maps to (PFC's
  // priority map), the default.
  std::uint8_t tx_class = 0;
  static constexpr std::uint8_t kClassFromDscp = 0xff;
};

struct AhCreate {
  ObjId id = 0;  // also the WQE's ah_num
  std::uint32_t client = 0;
  transport::PdHandle pd = 0;
  wire::MacAddr dmac{};
  wire::Ipv4Addr dip{};
  std::uint8_t dscp = 0;
  std::uint8_t ttl = 64;
  // RoCEv2 over IPv6 (as transport::PathAddr): to dip6 from the link-local
  // or (global_src) global address; dip unused.
  bool ipv6 = false;
  bool global_src = false;
  wire::Ipv6Addr dip6{};
};

struct MrCreate {
  transport::MrDesc desc;  // host = the daemon's mapping of the bytes
};

}  // namespace uroce::engine
