// Queue pairs (RC, UC, UD, and the DC types DCI and DCT of
// uroce_dv_create_qp, docs/dc.md): a verbs_qp (ibv_qp, and ibv_qp_ex when the
// application asked for the ibv_wr_* API) over the SQ and RQ rings uroced
// creates. post_send / post_recv / ibv_wr_* write WQEs straight into the
// rings (shm/wqe_write.h), publish them with a store-release of the
// producer index and ring the ring's doorbell in the connection's doorbell
// page (shm/doorbell.h): no system call; the engine visits rung rings.
//
// Locking (as rxe): sq_lock serialises application threads on the SQ,
// including a whole ibv_wr_start..complete/abort sequence; rq_lock on the
// RQ. Control verbs go through the context's CtlClient.
//
// Limits used for validation are what the daemon granted, capped by what
// the ring's slots can physically hold.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <span>

#include "datapath/shm/ring.h"
#include "verbs-provider/context.h"
#include "verbs-provider/driver_abi.h"
#include "verbs-provider/include/infiniband/uroce_dv.h"
#include "verbs-provider/object_registry.h"

namespace uroce::provider {

struct UroceQp;

// The uroce_dv_qp_ex of a QP (uroce_dv_qp_ex_from_ibv_qp_ex) and the way
// back to its QP: `pub` first, so a uroce_dv_qp_ex* is a DvQpEx*.
struct DvQpEx {
  uroce_dv_qp_ex pub;
  UroceQp* qp = nullptr;
};

// A QP's DC type and attributes (uroce_dv_create_qp), or none.
struct DcInit {
  std::uint32_t type = ctl::kDcNone;  // ctl::kDcNone, kDcDct, kDcDci
  std::uint64_t dct_key = 0;          // DCT
  std::uint8_t log_streams = 0;       // DCI
  std::uint8_t log_errored = 0;       // DCI
};

struct UroceQp {
  verbs_abi::verbs_qp vqp;  // first: libibverbs converts by address
  ContextState* st = nullptr;
  std::uint32_t handle = 0;
  ibv_qp_type type = IBV_QPT_RC;  // IBV_QPT_DRIVER for DC
  // ctl::kDcNone, kDcDct or kDcDci; a DCI's WRs name streams 0 ..
  // 2^dci_log_streams - 1.
  std::uint32_t dc_type = ctl::kDcNone;
  std::uint8_t dci_log_streams = 0;

  // The doorbells of the two rings (CreateQpRep), rung after each publish.
  std::uint32_t sq_doorbell = 0;
  std::uint32_t rq_doorbell = 0;

  pthread_spinlock_t sq_lock;
  bool has_sq = false;  // false for a DCT (it only responds)
  shm::SqProducer sq;   // rings in the context's arena
  std::uint32_t max_send_sge = 0;
  std::uint32_t max_inline = 0;

  pthread_spinlock_t rq_lock;
  bool has_rq = false;  // false with an SRQ and on DC QPs
  shm::RqProducer rq;
  std::uint32_t max_recv_sge = 0;

  // ibv_wr_* state, under sq_lock between wr_start and wr_complete/abort:
  // WQEs built so far (slots past the producer index), the free slots seen
  // at wr_start, and the first error (then nothing is published).
  std::uint32_t wr_built = 0;
  std::uint32_t wr_free = 0;
  int wr_err = 0;
  // A DCI's WQE built last has no target yet (the next builder or
  // wr_complete fails the batch if it still has none).
  bool wr_need_target = false;

  DvQpEx dv;
  EventTarget target;
};

inline UroceQp* to_uqp(ibv_qp* qp) { return reinterpret_cast<UroceQp*>(qp); }
inline UroceQp* to_uqp(ibv_qp_ex* qp) { return reinterpret_cast<UroceQp*>(qp); }
inline UroceQp* to_uqp(uroce_dv_qp_ex* dv) { return reinterpret_cast<DvQpEx*>(dv)->qp; }
inline bool is_dc(const UroceQp& qp) { return qp.dc_type != ctl::kDcNone; }

// create_qp_ex (ops.h) for any type: `dc` none for RC, UC and UD, or a DC
// type with qp_type IBV_QPT_DRIVER (uroce_dv_create_qp's rules, uroce_dv.h;
// EINVAL when they do not hold).
ibv_qp* create_qp_dc(ibv_context* ctx, ibv_qp_init_attr_ex* attr, const DcInit& dc) noexcept;

// Send opcodes each QP type executes (the engine's rule, wqe_copy.h). `op`
// is the raw value the application stored (any integer, not necessarily a
// valid ibv_wr_opcode).
bool send_opcode_allowed(ibv_qp_type type, std::uint32_t op);
// The opcode of `wr` as an integer, read without assuming it is a valid
// enumerator.
std::uint32_t raw_opcode(const ibv_send_wr& wr);
// The IBV_QP_EX_WITH_* flags create_qp_ex accepts for `type`.
std::uint64_t supported_send_ops(ibv_qp_type type);

// qp_post.cpp. Checks one send WR against the QP as rxe's post_send does:
// opcode valid for the QP type, known send flags, num_sge <= max_send_sge,
// inline payload <= max_inline, atomics with >= 8 bytes at an 8-aligned
// address, UD sends with a uroce AH. Returns 0 with *flags the send flags to
// write (IBV_SEND_INLINE dropped on opcodes without outgoing payload, where
// verbs defines it as meaningless), or EINVAL.
int validate_send_wr(const UroceQp& qp, const ibv_send_wr& wr, std::uint32_t* flags);
// Writes a validated WR into `slot` (one SQ element). Returns 0 or EINVAL.
int build_send_wqe(const UroceQp& qp, const ibv_send_wr& wr, std::uint32_t flags,
                   std::span<std::byte> slot);

// qp_ex.cpp: installs the ibv_wr_* functions for `send_ops_flags`.
void install_qp_ex_ops(UroceQp* qp, std::uint64_t send_ops_flags);
// qp_ex.cpp: fills qp->dv (every QP has one; its setters fail the batch
// with EINVAL on a QP that is not a DCI).
void install_dv_ops(UroceQp* qp);

// dv_qp.cpp: the uroce_dv_* calls behind dv.cpp, which has already checked
// that the context (or QP) is a uroce one and the pointers are not null.
ibv_qp* dv_create_qp(ibv_context* ctx, ibv_qp_init_attr_ex* attr,
                     const uroce_dv_qp_init_attr* dv) noexcept;
int dv_query_device(const ctl::HelloRep& hello, uroce_dv_context* attrs) noexcept;

// Whether the last state libibverbs recorded lets the SQ / RQ take work
// (post_send needs RTS or later; post_recv anything but RESET).
bool sq_accepts(const ibv_qp& qp);
bool rq_accepts(const ibv_qp& qp);

}  // namespace uroce::provider
