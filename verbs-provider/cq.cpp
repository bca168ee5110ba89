#include "verbs-provider/cq.h"

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "verbs-provider/ops.h"

namespace uroce::provider {

static_assert(sizeof(ibv_wc) == sizeof(ib_uverbs_wc),
              "CQ ring entries are handed to the application as they are");
static_assert(offsetof(ibv_wc, wr_id) == offsetof(ib_uverbs_wc, wr_id) &&
              offsetof(ibv_wc, status) == offsetof(ib_uverbs_wc, status) &&
              offsetof(ibv_wc, opcode) == offsetof(ib_uverbs_wc, opcode) &&
              offsetof(ibv_wc, byte_len) == offsetof(ib_uverbs_wc, byte_len) &&
              offsetof(ibv_wc, imm_data) == offsetof(ib_uverbs_wc, ex) &&
              offsetof(ibv_wc, qp_num) == offsetof(ib_uverbs_wc, qp_num) &&
              offsetof(ibv_wc, src_qp) == offsetof(ib_uverbs_wc, src_qp) &&
              offsetof(ibv_wc, wc_flags) == offsetof(ib_uverbs_wc, wc_flags) &&
              offsetof(ibv_wc, pkey_index) == offsetof(ib_uverbs_wc, pkey_index) &&
              offsetof(ibv_wc, slid) == offsetof(ib_uverbs_wc, slid) &&
              offsetof(ibv_wc, sl) == offsetof(ib_uverbs_wc, sl) &&
              offsetof(ibv_wc, dlid_path_bits) == offsetof(ib_uverbs_wc, dlid_path_bits));

int attach_cq_region(ContextState* st, const ctl::CreateCqRep& rep, shm::CqConsumer* ring,
                     ctl::CqNotify** notify) {
  shm::RingGeometry g;
  g.log2_elem_size = rep.log2_elem_size;
  g.log2_slots = rep.log2_slots;
  if (!g.valid() || g.bytes() > rep.ring_bytes || rep.ring_bytes % alignof(ctl::CqNotify) != 0 ||
      rep.ring_bytes > rep.region_bytes ||
      rep.region_bytes - rep.ring_bytes < ctl::kCqNotifyBytes || rep.cqe > g.capacity()) {
    return EPROTO;
  }
  void* mem = nullptr;
  if (int rc = locate_in_arena(st, rep.region_offset, rep.region_bytes, &mem); rc != 0) return rc;
  shm::CqConsumer attached;
  if (attached.attach(mem, rep.ring_bytes, g) != shm::RingError::kOk) return EPROTO;
  *notify = reinterpret_cast<ctl::CqNotify*>(static_cast<std::byte*>(mem) + rep.ring_bytes);
  *ring = attached;
  return 0;
}

UroceCq* create_cq_common(ibv_context* ctx, int cqe, ibv_comp_channel* channel, int comp_vector) {
  ContextState* st = state_of(ctx);
  if (cqe < 1 || (st->hello.device.max_cqe > 0 && cqe > st->hello.device.max_cqe) ||
      comp_vector < 0 || comp_vector >= ctx->num_comp_vectors) {
    errno = EINVAL;
    return nullptr;
  }
  if (st->dead()) {
    errno = EIO;
    return nullptr;
  }
  std::uint32_t channel_handle = ctl::kNoChannel;
  if (channel != nullptr) {
    if (channel->context != ctx) {
      errno = EINVAL;
      return nullptr;
    }
    const int rc = st->channels.handle_for(&st->ctl, channel, &channel_handle);
    if (rc != 0) {
      errno = rc;
      return nullptr;
    }
  }
  UroceCq* cq = make_object<UroceCq>();
  if (cq == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  ctl::CreateCqReq req{};
  req.cqe = static_cast<std::uint32_t>(cqe);
  req.channel_handle = channel_handle;
  req.user_handle = reinterpret_cast<std::uintptr_t>(&cq->vcq.cq);
  req.comp_vector = static_cast<std::uint32_t>(comp_vector);
  ctl::CreateCqRep rep{};
  int rc = st->ctl.call<ctl::Op::kCreateCq>(req, &rep);
  if (rc == 0) {
    rc = attach_cq_region(st, rep, &cq->ring, &cq->notify);
    if (rc != 0) {
      ctl::DestroyCqReq d{};
      d.cq_handle = rep.cq_handle;
      st->ctl.call<ctl::Op::kDestroyCq>(d, nullptr);
    }
  }
  if (rc != 0) {
    free_object(cq);
    errno = rc;
    return nullptr;
  }
  pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
  cq->st = st;
  cq->handle = rep.cq_handle;
  // context, channel, cq_context, the event counters, mutex and cond are
  // set by libibverbs (verbs_init_cq) once we return.
  cq->vcq.cq.handle = rep.cq_handle;
  cq->vcq.cq.cqe = static_cast<int>(rep.cqe);
  cq->target.element = &cq->vcq.cq;
  st->objects.add(&cq->target);
  return cq;
}

ibv_cq* create_cq(ibv_context* ctx, int cqe, ibv_comp_channel* channel, int comp_vector) noexcept {
  UroceCq* cq = create_cq_common(ctx, cqe, channel, comp_vector);
  return cq == nullptr ? nullptr : &cq->vcq.cq;
}

int destroy_cq(ibv_cq* ibcq) noexcept {
  UroceCq* cq = to_ucq(ibcq);
  ContextState* st = cq->st;
  ctl::DestroyCqReq req{};
  req.cq_handle = cq->handle;
  const int rc = destroy_status(st->ctl.call<ctl::Op::kDestroyCq>(req, nullptr));
  if (rc != 0) return rc;
  st->objects.remove(&cq->target);
  // As the kernel does: return only once every event handed out is acked.
  wait_events_acked(&ibcq->mutex, &ibcq->cond, &ibcq->comp_events_completed, cq->comp_reported);
  wait_events_acked(&ibcq->mutex, &ibcq->cond, &ibcq->async_events_completed, cq->target.reported);
  pthread_spin_destroy(&cq->lock);
  free_object(cq);
  return 0;
}

int resize_cq(ibv_cq* ibcq, int cqe) noexcept {
  UroceCq* cq = to_ucq(ibcq);
  ContextState* st = cq->st;
  if (cqe < 1 || (st->hello.device.max_cqe > 0 && cqe > st->hello.device.max_cqe)) return EINVAL;
  // Held across the exchange: nobody may poll the old ring after the daemon
  // starts moving its completions into the new one.
  pthread_spin_lock(&cq->lock);
  // As rxe: the new size must hold what has not been polled yet.
  if (static_cast<std::uint32_t>(cqe) < cq->ring.ready()) {
    pthread_spin_unlock(&cq->lock);
    return EINVAL;
  }
  ctl::ResizeCqReq req{};
  req.cq_handle = cq->handle;
  req.cqe = static_cast<std::uint32_t>(cqe);
  ctl::ResizeCqRep rep{};
  int rc = st->ctl.call<ctl::Op::kResizeCq>(req, &rep);
  if (rc == 0) {
    shm::CqConsumer ring;
    ctl::CqNotify* notify = nullptr;
    rc = attach_cq_region(st, rep, &ring, &notify);
    if (rc == 0) {
      cq->ring = ring;
      cq->notify = notify;
      ibcq->cqe = static_cast<int>(rep.cqe);
    }
  }
  pthread_spin_unlock(&cq->lock);
  return rc;
}

std::uint32_t cq_clean(UroceCq* cq, std::uint32_t qpn) {
  pthread_spin_lock(&cq->lock);
  // Walk from the newest unpolled entry to the oldest, moving each survivor
  // toward the newer end by the number removed so far; then hand the freed
  // oldest slots back. Entries the engine adds meanwhile lie past `n` and are
  // not touched.
  const std::uint32_t n = cq->ring.ready();
  std::uint32_t removed = 0;
  for (std::uint32_t k = n; k-- > 0;) {
    const std::span<std::byte> e = cq->ring.element_mut(k);
    std::uint32_t qp_num;
    std::memcpy(&qp_num, e.data() + offsetof(ib_uverbs_wc, qp_num), sizeof(qp_num));
    if (qp_num == qpn) {
      ++removed;
    } else if (removed != 0) {
      std::memcpy(cq->ring.element_mut(k + removed).data(), e.data(), sizeof(ib_uverbs_wc));
    }
  }
  if (removed != 0) cq->ring.release(removed);
  pthread_spin_unlock(&cq->lock);
  return removed;
}

int poll_cq(ibv_cq* ibcq, int ne, ibv_wc* wc) noexcept {
  UroceCq* cq = to_ucq(ibcq);
  if (ne <= 0) return 0;
  // Embedded mode: the application's polls drive the engine (the peer's
  // message or the ACK may be waiting in the port).
  cq->st->drive();
  pthread_spin_lock(&cq->lock);
  const std::uint32_t ready = cq->ring.ready();
  const std::uint32_t n =
      ready < static_cast<std::uint32_t>(ne) ? ready : static_cast<std::uint32_t>(ne);
  for (std::uint32_t i = 0; i < n; ++i) std::memcpy(&wc[i], cq->ring.slot(i), sizeof(ibv_wc));
  if (n != 0) cq->ring.release(n);
  pthread_spin_unlock(&cq->lock);
  // An empty ring of a dead daemon stays empty: report the error rather
  // than let the application spin on it forever. Negative is all verbs(3)
  // promises; -EIO and errno EIO say why to readers of either (pyverbs
  // reports the negated return value).
  if (n == 0) {
    if (cq->st->dead()) {
      errno = EIO;
      return -EIO;
    }
    cq->st->empty_poll();
  } else {
    cq->st->found_poll();
  }
  return static_cast<int>(n);
}

int req_notify_cq(ibv_cq* ibcq, int solicited_only) noexcept {
  UroceCq* cq = to_ucq(ibcq);
  if (cq->st->dead()) {
    errno = EIO;  // the return value is the errno too, as libibverbs documents it
    return EIO;
  }
  // The application may sleep on the CQ's events next: in embedded mode the
  // engine's progress thread must make them (context.h).
  cq->st->app_idle();
  std::atomic_ref<std::uint32_t> armed(cq->notify->armed);
  // "Next completion" wins over "next solicited", as in rxe.
  const std::uint32_t want = solicited_only != 0 ? ctl::kCqArmedSolicited : ctl::kCqArmedNext;
  if (want == ctl::kCqArmedSolicited &&
      armed.load(std::memory_order_relaxed) == ctl::kCqArmedNext) {
    return 0;
  }
  // A full fence after the arming store, not just release: the application
  // polls next, and its load of the producer index must not be reordered
  // before this store (x86 reorders a store with a later load). Otherwise the
  // engine could publish a CQE, read "disarmed", and the poll miss that CQE:
  // both sides would wait for the other (a lost event). The engine needs the
  // matching fence between publishing a CQE and reading the word.
  armed.store(want, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return 0;
}

void cq_event(ibv_cq* ibcq) noexcept {
  to_ucq(ibcq)->comp_reported.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace uroce::provider
