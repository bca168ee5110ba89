// Shared receive queues: a verbs_srq over the RQ ring uroced creates;
// post_srq_recv writes receive WQEs into it under `lock` (no system call).
// user_handle is the ibv_srq*, named by SRQ_LIMIT_REACHED / SRQ_ERR.
#pragma once

#include <pthread.h>

#include <cstdint>

#include "datapath/shm/ring.h"
#include "verbs-provider/context.h"
#include "verbs-provider/driver_abi.h"
#include "verbs-provider/object_registry.h"

namespace uroce::provider {

struct UroceSrq {
  verbs_abi::verbs_srq vsrq;  // first: libibverbs converts by address
  ContextState* st = nullptr;
  std::uint32_t handle = 0;
  pthread_spinlock_t lock;
  shm::RqProducer ring;        // in the context's arena
  std::uint32_t doorbell = 0;  // CreateSrqRep's, rung after each publish
  std::uint32_t max_sge = 0;
  EventTarget target;
};

inline UroceSrq* to_usrq(ibv_srq* srq) { return reinterpret_cast<UroceSrq*>(srq); }

// Posts a chain of receive WRs into `ring` (the caller holds its lock):
// stops at the first bad one (*bad = it) with EINVAL (too many SGEs) or
// ENOMEM (ring full); the WRs before it are published and doorbell `db`
// rung. Shared by post_recv and post_srq_recv.
int post_recv_chain(shm::RqProducer* ring, std::uint32_t max_sge, shm::DoorbellRinger* bells,
                    std::uint32_t db, ibv_recv_wr* wr, ibv_recv_wr** bad);

}  // namespace uroce::provider
