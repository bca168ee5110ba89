#include "verbs-provider/srq.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "datapath/shm/rxe_layout.h"
#include "datapath/shm/wqe_write.h"
#include "verbs-provider/ops.h"

namespace uroce::provider {

int post_recv_chain(shm::RqProducer* ring, std::uint32_t max_sge, shm::DoorbellRinger* bells,
                    std::uint32_t db, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  std::uint32_t free = ring->free_slots();
  std::uint32_t built = 0;
  int rc = 0;
  shm::WqeSge sges[32];
  for (; wr != nullptr; wr = wr->next) {
    if (wr->num_sge < 0 || static_cast<std::uint32_t>(wr->num_sge) > max_sge ||
        static_cast<std::size_t>(wr->num_sge) > std::size(sges)) {
      rc = EINVAL;
      break;
    }
    if (built == free) {
      free = ring->free_slots();
      if (built == free) {
        rc = ENOMEM;
        break;
      }
    }
    const std::size_t n =
        shm::to_wqe_sges(wr->sg_list, static_cast<std::size_t>(wr->num_sge), sges);
    const std::span<std::byte> slot{ring->slot_bytes(built), ring->elem_size()};
    if (shm::write_recv_wqe(slot, wr->wr_id, {sges, n}, max_sge) != shm::WqeWriteError::kOk) {
      rc = EINVAL;
      break;
    }
    ++built;
  }
  if (built != 0) {
    ring->publish(built);
    bells->ring(db);
  }
  if (rc != 0) *bad = wr;
  return rc;
}

ibv_srq* create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) noexcept {
  ContextState* st = state_of(pd->context);
  if (st->dead()) {
    errno = EIO;
    return nullptr;
  }
  UroceSrq* srq = make_object<UroceSrq>();
  if (srq == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  ctl::CreateSrqReq req{};
  req.pd_handle = pd->handle;
  req.attr = attr->attr;
  req.user_handle = reinterpret_cast<std::uintptr_t>(&srq->vsrq.srq);
  ctl::CreateSrqRep rep{};
  int rc = st->ctl.call<ctl::Op::kCreateSrq>(req, &rep);
  if (rc == 0) {
    rc = attach_arena_ring(st, rep.rq_offset, rep.rq_bytes, rep.log2_elem_size, rep.log2_slots,
                           shm::kRecvWqeFlexOffset, &srq->ring);
    if (rc != 0) {
      ctl::DestroySrqReq d{};
      d.srq_handle = rep.srq_handle;
      st->ctl.call<ctl::Op::kDestroySrq>(d, nullptr);
    }
  }
  if (rc != 0) {
    free_object(srq);
    errno = rc;
    return nullptr;
  }
  pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
  srq->st = st;
  srq->handle = rep.srq_handle;
  srq->doorbell = rep.doorbell;
  srq->max_sge = std::min(rep.attr.max_sge, shm::recv_sge_room(srq->ring.elem_size()));
  // context, srq_context, pd, events_completed, mutex and cond are set by
  // libibverbs' ibv_create_srq once we return.
  srq->vsrq.srq.handle = rep.srq_handle;
  srq->vsrq.srq_type = IBV_SRQT_BASIC;
  srq->vsrq.srq_num = rep.srq_num;
  attr->attr = rep.attr;
  srq->target.element = &srq->vsrq.srq;
  st->objects.add(&srq->target);
  return &srq->vsrq.srq;
}

int modify_srq(ibv_srq* ibsrq, ibv_srq_attr* attr, int attr_mask) noexcept {
  UroceSrq* srq = to_usrq(ibsrq);
  // Resizing would need a new ring; ModifySrq's reply names none.
  if ((attr_mask & IBV_SRQ_MAX_WR) != 0) return EOPNOTSUPP;
  ctl::ModifySrqReq req{};
  req.srq_handle = srq->handle;
  req.attr_mask = static_cast<std::uint32_t>(attr_mask);
  req.attr = *attr;
  return srq->st->ctl.call<ctl::Op::kModifySrq>(req, nullptr);
}

int query_srq(ibv_srq* ibsrq, ibv_srq_attr* attr) noexcept {
  UroceSrq* srq = to_usrq(ibsrq);
  ctl::QuerySrqReq req{};
  req.srq_handle = srq->handle;
  ctl::QuerySrqRep rep{};
  const int rc = srq->st->ctl.call<ctl::Op::kQuerySrq>(req, &rep);
  if (rc == 0) *attr = rep.attr;
  return rc;
}

int destroy_srq(ibv_srq* ibsrq) noexcept {
  UroceSrq* srq = to_usrq(ibsrq);
  ContextState* st = srq->st;
  ctl::DestroySrqReq req{};
  req.srq_handle = srq->handle;
  const int rc = destroy_status(st->ctl.call<ctl::Op::kDestroySrq>(req, nullptr));
  if (rc != 0) return rc;
  st->objects.remove(&srq->target);
  wait_events_acked(&ibsrq->mutex, &ibsrq->cond, &ibsrq->events_completed, srq->target.reported);
  pthread_spin_destroy(&srq->lock);
  free_object(srq);
  return 0;
}

int post_srq_recv(ibv_srq* ibsrq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) noexcept {
  UroceSrq* srq = to_usrq(ibsrq);
  if (bad_wr == nullptr) return EINVAL;
  *bad_wr = nullptr;
  if (srq->st->dead()) {
    *bad_wr = wr;
    errno = EIO;
    return EIO;
  }
  pthread_spin_lock(&srq->lock);
  const int rc =
      post_recv_chain(&srq->ring, srq->max_sge, &srq->st->bells, srq->doorbell, wr, bad_wr);
  pthread_spin_unlock(&srq->lock);
  return rc;
}

int get_srq_num(ibv_srq* ibsrq, std::uint32_t* srq_num) noexcept {
  *srq_num = to_usrq(ibsrq)->vsrq.srq_num;
  return 0;
}

}  // namespace uroce::provider
