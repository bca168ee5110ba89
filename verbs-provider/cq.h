// Completion queues: a verbs_cq (so both ibv_cq and ibv_cq_ex work) over the
// CQ region uroced places in the context's arena: [rxe-layout ring of
// ib_uverbs_wc][CqNotify].
//
// Data path (no system call): the daemon produces CQEs; poll_cq and the
// ibv_cq_ex start/next/end_poll consume them through shm::CqConsumer
// (load-acquire of the producer index, store-release of ours);
// req_notify_cq stores the arming word the engine clears when it writes a
// completion event to the channel pipe, followed by a full fence (see
// req_notify_cq: arm-then-poll against publish-then-check is a Dekker
// pattern, which release/acquire alone does not order).
//
// Locking: `lock` (a spinlock, as rxe) serialises application threads on
// the consumer side, including resize (which swaps the region under it) and
// the whole of an ibv_cq_ex start..end_poll sequence.
//
// Events: user_handle is the ibv_cq* (== the ibv_cq_ex*), which the daemon
// writes into completion-event records and CQ_ERR async events;
// comp_reported / target.reported count what the application was handed,
// and destroy waits for the matching acks.
#pragma once

#include <pthread.h>
#include <rdma/ib_user_verbs.h>

#include <atomic>
#include <cstdint>

#include "datapath/ctl/protocol.h"
#include "datapath/shm/ring.h"
#include "verbs-provider/context.h"
#include "verbs-provider/driver_abi.h"
#include "verbs-provider/object_registry.h"

namespace uroce::provider {

struct UroceCq {
  verbs_abi::verbs_cq vcq;  // first: libibverbs converts by address
  ContextState* st = nullptr;
  pthread_spinlock_t lock;
  std::uint32_t handle = 0;
  shm::CqConsumer ring;  // in the context's arena
  ctl::CqNotify* notify = nullptr;
  std::atomic<std::uint32_t> comp_reported{0};
  EventTarget target;
  // ibv_cq_ex polling: elements taken since start_poll (the current one
  // included), all released by end_poll.
  std::uint32_t ex_taken = 0;
  const ib_uverbs_wc* ex_cur = nullptr;
};

inline UroceCq* to_ucq(ibv_cq* cq) { return reinterpret_cast<UroceCq*>(cq); }
inline UroceCq* to_ucq(ibv_cq_ex* cq) { return reinterpret_cast<UroceCq*>(cq); }

// Removes the unpolled completions of QP `qpn` from the CQ, keeping the
// others in order (as mlx5 does when a QP is reset; the flush completions of
// its old life must not be read as results of its new one). Takes the CQ's
// lock. Returns how many were removed.
std::uint32_t cq_clean(UroceCq* cq, std::uint32_t qpn);

// Finds the region of a CreateCq/ResizeCq reply in the context's arena and
// attaches the consumer. Returns 0 or errno (EPROTO for a reply whose
// geometry does not fit its region, or a region outside the arena).
int attach_cq_region(ContextState* st, const ctl::CreateCqRep& rep, shm::CqConsumer* ring,
                     ctl::CqNotify** notify);

// cq_ex.cpp: installs start/next/end_poll and the read_* functions that
// `wc_flags` asks for.
void install_cq_ex_ops(UroceCq* cq, std::uint64_t wc_flags);
// The IBV_WC_EX_WITH_* flags create_cq_ex accepts (those rxe supports).
std::uint64_t supported_wc_flags();

// Common creation for create_cq and create_cq_ex; null with errno.
UroceCq* create_cq_common(ibv_context* ctx, int cqe, ibv_comp_channel* channel, int comp_vector);

}  // namespace uroce::provider
