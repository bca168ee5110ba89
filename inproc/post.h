// Posting and polling for in-process drivers of a Vnic: what the provider
// does on ibv_post_send, ibv_post_recv and ibv_poll_cq, on rings the driver
// shares with the engine (datapath/shm: the WQE writer, the producers and
// consumer, the doorbell page). A post writes the WQE, publishes it and
// rings the ring's doorbell; nothing runs in the engine until its next
// poll. Header-only and inline: the benchmarks post inside their measured
// loops.
//
// Every post returns 0, EAGAIN when the ring has no free slot, or EINVAL
// when the writer refuses the WQE (nothing is published then). `bells` may
// be null: a ring not bound to a client's doorbell page is published only
// (the engine finds it when it next looks at the ring).
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/shm/doorbell.h"
#include "datapath/shm/ring.h"
#include "datapath/shm/wqe_write.h"

namespace uroce::inproc {

// A send WQE's fixed part `f`, then its SGEs (none when `sges` is empty)
// and, on a DCI, its target `dc`; published and rung on doorbell `db`.
inline int post_send(shm::SqProducer& sq, shm::DoorbellRinger* bells, std::uint32_t db,
                     const shm::SendWqeFields& f, std::span<const shm::WqeSge> sges,
                     std::uint32_t max_sge, const shm::WqeDcAddr* dc = nullptr) {
  if (sq.free_slots() == 0) return EAGAIN;
  const std::span<std::byte> slot{sq.slot_bytes(), sq.elem_size()};
  if (shm::write_send_fixed(slot, f) != shm::WqeWriteError::kOk) return EINVAL;
  if (!sges.empty() && shm::set_send_sges(slot, sges, max_sge) != shm::WqeWriteError::kOk) {
    return EINVAL;
  }
  if (dc != nullptr && shm::set_send_dc(slot, *dc) != shm::WqeWriteError::kOk) return EINVAL;
  sq.publish();
  if (bells != nullptr) bells->ring(db);
  return 0;
}

// Writes a receive WQE into the `n`th free slot of `rq` without publishing
// it (a batch publishes its slots with one publish(count) and one ring).
inline int write_recv(shm::RqProducer& rq, std::uint32_t n, std::uint64_t wr_id,
                      std::span<const shm::WqeSge> sges, std::uint32_t max_sge) {
  if (rq.free_slots() <= n) return EAGAIN;
  return shm::write_recv_wqe({rq.slot_bytes(n), rq.elem_size()}, wr_id, sges, max_sge) ==
                 shm::WqeWriteError::kOk
             ? 0
             : EINVAL;
}

// Publishes `count` written receive WQEs and rings `db` (none: nothing).
inline void publish_recvs(shm::RqProducer& rq, shm::DoorbellRinger* bells, std::uint32_t db,
                          std::uint32_t count) {
  if (count == 0) return;
  rq.publish(count);
  if (bells != nullptr) bells->ring(db);
}

// One receive WQE into a QP's RQ or an SRQ, published and rung on `db`.
inline int post_recv(shm::RqProducer& rq, shm::DoorbellRinger* bells, std::uint32_t db,
                     std::uint64_t wr_id, std::span<const shm::WqeSge> sges,
                     std::uint32_t max_sge) {
  if (int rc = write_recv(rq, 0, wr_id, sges, max_sge); rc != 0) return rc;
  publish_recvs(rq, bells, db, 1);
  return 0;
}

// Pops up to out.size() completions; returns how many.
inline std::uint32_t poll_cq(shm::CqConsumer& cq, std::span<ib_uverbs_wc> out) {
  std::uint32_t n = 0;
  while (n < out.size() && cq.try_pop(&out[n])) ++n;
  return n;
}

}  // namespace uroce::inproc
