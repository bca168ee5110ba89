// ClientSession (client_session.h): the handlers of CQs, QPs, SRQs and AHs,
// which place the shared rings in the client's arena and tell the client
// where they are (and their doorbells).
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "apps/uroced/client_session.h"
#include "apps/uroced/device_attr.h"
#include "apps/uroced/qp_attr_convert.h"
#include "apps/uroced/qp_create_check.h"
#include "apps/uroced/session_checks.h"
#include "datapath/base/page_touch.h"
#include "datapath/engine/event_fd.h"
#include "datapath/shm/rxe_layout.h"

namespace uroce::daemon {

using namespace session;

// A ring of `geo` with `extra` bytes after it, placed in the arena and
// initialised (the extent is zero-filled: ring_arena.h).
namespace {

int place_ring(RingArena& arena, const shm::RingGeometry& geo, std::size_t extra,
               ArenaExtent* region, engine::RingMem* ring) {
  if (int rc = arena.alloc(geo.bytes() + extra, region); rc != 0) return rc;
  if (shm::ring_init(region->addr, geo.bytes(), geo) != shm::RingError::kOk) {
    arena.release(*region);
    *region = {};
    return EINVAL;
  }
  ring->mem = region->addr;
  ring->bytes = geo.bytes();
  ring->geo = geo;
  return 0;
}

void fill_cq_rep(std::uint32_t handle, const engine::RingMem& ring, const ArenaExtent& region,
                 ctl::CreateCqRep* rep) {
  rep->cq_handle = handle;
  rep->cqe = ring.geo.capacity();
  rep->log2_elem_size = ring.geo.log2_elem_size;
  rep->log2_slots = ring.geo.log2_slots;
  rep->ring_bytes = ring.bytes;
  rep->region_bytes = region.bytes;
  rep->region_offset = region.offset;
}

}  // namespace

int ClientSession::make_cq_region(std::uint32_t cqe, ArenaExtent* region, engine::RingMem* ring,
                                  ctl::CqNotify** notify) {
  shm::RingGeometry geo;
  if (shm::make_geometry(shm::cq_elem_bytes(), cqe, &geo) != shm::RingError::kOk) {
    return EINVAL;
  }
  if (int rc = place_ring(*arena_, geo, ctl::kCqNotifyBytes, region, ring); rc != 0) return rc;
  if (int rc = charge_extent(region); rc != 0) return rc;
  // The engine writes every page of a CQ (CQEs, the notify word), so they
  // would be the daemon's anyway: made now, once charged, not on the first
  // lap round the ring (docs/first-lap.md, "The first lap of the arena's
  // rings"). The provider maps them as it attaches the CQ.
  (void)base::populate_pages(region->addr, region->bytes, base::base_page_bytes());
  *notify = reinterpret_cast<ctl::CqNotify*>(static_cast<std::byte*>(region->addr) + ring->bytes);
  return 0;
}

int ClientSession::make_ring(std::size_t elem_bytes, std::uint32_t depth, ArenaExtent* region,
                             engine::RingMem* ring) {
  shm::RingGeometry geo;
  if (shm::make_geometry(elem_bytes, std::max<std::uint32_t>(depth, 1), &geo) !=
      shm::RingError::kOk) {
    return EINVAL;
  }
  if (int rc = place_ring(*arena_, geo, 0, region, ring); rc != 0) return rc;
  return charge_extent(region);
}

// Ring memory is the client's mapped memory as much as a registration's:
// charged to map_bytes while the extent is in use (the doorbell page
// excepted), so a client cannot fill the arena's 64 GiB past its quota.
int ClientSession::charge_extent(ArenaExtent* region) {
  Charge charge(env_.quotas, cred_.uid, Usage{.map_bytes = region->bytes}, &used_);
  if (charge.error() != 0) {
    arena_->release(*region);
    *region = {};
    return charge.error();
  }
  charge.commit();
  return 0;
}

void ClientSession::release_extent(ArenaExtent& e) {
  if (e.valid()) {
    arena_->release(e);
    if (env_.quotas != nullptr) {
      env_.quotas->release(cred_.uid, Usage{.map_bytes = e.bytes}, &used_);
    }
  }
  e = {};
}

int ClientSession::on_create_cq(const ctl::CreateCqReq& r, ctl::CreateCqRep* rep, InFds&, OutFds*) {
  if (r.cqe == 0 || r.cqe > kMaxCqe || r.comp_vector != 0) return EINVAL;
  int channel_fd = -1;
  if (r.channel_handle != ctl::kNoChannel) {
    const auto ch = channels_.find(r.channel_handle);
    if (ch == channels_.end()) return ENOENT;
    channel_fd = ch->second.fd;
  }
  if (cqs_.size() >= dev_->config().max_cqs) return ENOMEM;
  Charge charge(env_.quotas, cred_.uid, Usage{.cqs = 1}, &used_);
  if (charge.error() != 0) return charge.error();
  CqObj cq;
  engine::RingMem ring;
  ctl::CqNotify* notify = nullptr;
  if (int rc = make_cq_region(r.cqe, &cq.region, &ring, &notify); rc != 0) return rc;
  const std::uint32_t h = env_.handles->next();
  engine::CqCreate c;
  c.id = h;
  c.ring = ring;
  c.notify = notify;
  c.channel_fd = channel_fd;
  c.user_handle = r.user_handle;
  c.async_fd = async_fd_;
  if (int rc = shard_->create_cq(c); rc != 0) {
    release_extent(cq.region);
    return rc;
  }
  cq.channel = r.channel_handle;
  cq.user_handle = r.user_handle;
  cq.cqe = ring.geo.capacity();
  fill_cq_rep(h, ring, cq.region, rep);
  cqs_.emplace(h, std::move(cq));
  if (r.channel_handle != ctl::kNoChannel) ++channels_[r.channel_handle].refs;
  charge.commit();
  return 0;
}

// The reply names the new region by its offset, so it carries no fd and a
// client at its descriptor limit resizes like any other (nothing to roll
// back).
int ClientSession::on_resize_cq(const ctl::ResizeCqReq& r, ctl::ResizeCqRep* rep, InFds&, OutFds*) {
  const auto it = cqs_.find(r.cq_handle);
  if (it == cqs_.end()) return ENOENT;
  if (r.cqe == 0 || r.cqe > kMaxCqe) return EINVAL;
  ArenaExtent region;
  engine::RingMem ring;
  ctl::CqNotify* notify = nullptr;
  if (int rc = make_cq_region(r.cqe, &region, &ring, &notify); rc != 0) return rc;
  if (int rc = shard_->resize_cq(r.cq_handle, ring, notify); rc != 0) {
    release_extent(region);
    return rc;
  }
  // The engine produces into the new ring now; the old one can go.
  release_extent(it->second.region);
  it->second.region = region;
  it->second.cqe = ring.geo.capacity();
  fill_cq_rep(r.cq_handle, ring, it->second.region, rep);
  return 0;
}

int ClientSession::on_destroy_cq(const ctl::DestroyCqReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = cqs_.find(r.cq_handle);
  if (it == cqs_.end()) return ENOENT;
  if (it->second.refs != 0) return EBUSY;
  const int rc = shard_->destroy_cq(r.cq_handle);
  if (rc != 0) return rc;
  if (it->second.channel != ctl::kNoChannel) --channels_[it->second.channel].refs;
  release_extent(it->second.region);
  cqs_.erase(it);
  if (env_.quotas != nullptr) env_.quotas->release(cred_.uid, Usage{.cqs = 1}, &used_);
  return 0;
}

// The request's shape first (EINVAL, qp_create_check.h), then the handles
// it uses (ENOENT); a DC QP leaves the CQ it does not use at handle 0, and
// that CQ is neither looked up nor referenced.
int ClientSession::on_create_qp(const ctl::CreateQpReq& r, ctl::CreateQpRep* rep, InFds&, OutFds*) {
  QpShape shape;
  if (int rc = check_create_qp(r, &shape); rc != 0) return rc;
  const auto pd = pds_.find(r.pd_handle);
  const auto scq = shape.send_cq ? cqs_.find(r.send_cq_handle) : cqs_.end();
  const auto rcq = shape.recv_cq ? cqs_.find(r.recv_cq_handle) : cqs_.end();
  if (pd == pds_.end() || (shape.send_cq && scq == cqs_.end()) ||
      (shape.recv_cq && rcq == cqs_.end())) {
    return ENOENT;
  }
  auto srq = srqs_.end();
  if (r.srq_handle != 0) {
    srq = srqs_.find(r.srq_handle);
    if (srq == srqs_.end()) return ENOENT;
  }
  const ibv_qp_cap& cap = r.cap;
  if (qps_.size() >= dev_->config().max_qps) return ENOMEM;
  Charge charge(env_.quotas, cred_.uid, Usage{.qps = 1}, &used_);
  if (charge.error() != 0) return charge.error();
  QpObj q;
  engine::RingMem sq, rq;
  // Both rings go back to the arena unless the QP is made (q.sq/q.rq then
  // belong to qps_).
  struct Undo {
    ClientSession* s;
    QpObj* q;
    bool keep = false;
    ~Undo() {
      if (keep) return;
      s->release_extent(q->sq);
      s->release_extent(q->rq);
    }
  } undo{this, &q};
  if (shape.sq) {
    if (int rc = make_ring(shm::sq_elem_bytes(cap.max_send_sge, cap.max_inline_data),
                           cap.max_send_wr, &q.sq, &sq);
        rc != 0) {
      return rc;
    }
  }
  if (shape.rq) {
    if (int rc = make_ring(shm::rq_elem_bytes(cap.max_recv_sge), cap.max_recv_wr, &q.rq, &rq);
        rc != 0) {
      return rc;
    }
  }
  // Granted: what the rings hold (power-of-two rounding may exceed the ask),
  // within the transport's limits; 0 for a queue the QP does not have.
  ibv_qp_cap g{};
  if (shape.sq) {
    const std::uint32_t sq_tail = sq.geo.elem_size() - shm::kSendWqeFlexOffset;
    g.max_send_wr = sq.geo.capacity();
    g.max_send_sge = std::min<std::uint32_t>(kMaxSge, sq_tail / shm::kRxeSgeBytes);
    g.max_inline_data = std::min<std::uint32_t>(kMaxInline, sq_tail);
  }
  if (shape.rq) {
    g.max_recv_wr = rq.geo.capacity();
    g.max_recv_sge =
        std::min<std::uint32_t>(kMaxSge,
                                (rq.geo.elem_size() - shm::kRecvWqeFlexOffset) / shm::kRxeSgeBytes);
  }
  std::uint32_t qpn = 0;
  if (int rc = shard_->alloc_qpn(&qpn); rc != 0) return rc;
  const std::uint32_t h = env_.handles->next();
  engine::QpCreate c;
  c.id = h;
  c.client = id_;
  c.type = shape.type;
  c.qpn = qpn;
  c.pd = r.pd_handle;
  c.send_cq = shape.send_cq ? r.send_cq_handle : 0;
  c.recv_cq = shape.recv_cq ? r.recv_cq_handle : 0;
  c.srq = r.srq_handle;
  c.dct_key = shape.dct_key;
  c.dci_log_streams = shape.dci_log_streams;
  c.dci_log_errored = shape.dci_log_errored;
  c.max_send_wr = g.max_send_wr;
  c.max_recv_wr = g.max_recv_wr;
  c.max_send_sge = g.max_send_sge;
  c.max_recv_sge = g.max_recv_sge;
  c.max_inline = g.max_inline_data;
  c.sq_sig_all = r.sq_sig_all != 0;
  c.sq = sq;
  c.rq = rq;
  c.user_handle = r.user_handle;
  c.async_fd = async_fd_;
  if (int rc = shard_->create_qp(c); rc != 0) return rc;
  if (int rc = shard_->qp_doorbells(h, &rep->sq_doorbell, &rep->rq_doorbell); rc != 0) {
    shard_->destroy_qp(h);
    return rc;
  }
  q.pd = r.pd_handle;
  q.send_cq = c.send_cq;
  q.recv_cq = c.recv_cq;
  q.srq = r.srq_handle;
  q.qpn = qpn;
  q.type = r.qp_type;
  q.dc = transport::is_dc(shape.type);
  q.cap = g;
  q.sq_sig_all = r.sq_sig_all != 0;
  ++pd->second.refs;
  if (shape.send_cq) ++scq->second.refs;
  if (shape.recv_cq) ++rcq->second.refs;
  if (srq != srqs_.end()) ++srq->second.refs;
  charge.commit();
  rep->qp_handle = h;
  rep->qpn = qpn;
  rep->cap = g;
  if (shape.sq) {
    rep->sq_log2_elem_size = sq.geo.log2_elem_size;
    rep->sq_log2_slots = sq.geo.log2_slots;
    rep->sq_bytes = sq.bytes;
    rep->sq_offset = q.sq.offset;
  }
  if (shape.rq) {
    rep->rq_log2_elem_size = rq.geo.log2_elem_size;
    rep->rq_log2_slots = rq.geo.log2_slots;
    rep->rq_bytes = rq.bytes;
    rep->rq_offset = q.rq.offset;
  }
  qps_.emplace(h, q);
  undo.keep = true;
  return 0;
}

int ClientSession::resolve_mac(const transport::PathAddr& av, wire::MacAddr* mac) {
  // Blocking is fine: this is the client's own thread; the engine keeps
  // running and sends the ARP requests or neighbour solicitations.
  const TimeNs start = steady_now();
  for (;;) {
    if (av.ipv6 ? dev_->resolve6(av.route6.dst, mac) : dev_->resolve(av.dip, mac)) return 0;
    if (steady_now() - start >= env_.resolve.timeout) return EHOSTUNREACH;
    std::this_thread::sleep_for(std::chrono::nanoseconds(env_.resolve.interval));
  }
}

// IBV_QP_RATE_LIMIT (attr.rate_limit, kbps) is applied as SetQpSched's rate
// with the default burst and packet size, after the rest of the modify.
int ClientSession::on_modify_qp(const ctl::ModifyQpReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = qps_.find(r.qp_handle);
  if (it == qps_.end()) return ENOENT;
  const bool rate = (r.attr_mask & IBV_QP_RATE_LIMIT) != 0;
  engine::QpSched sched;
  if (rate) {
    ctl::SetQpSchedReq s{};
    s.flags = ctl::kSchedRate;
    s.rate_kbps = r.attr.rate_limit;
    if (int rc = sched_from_req(s, &sched); rc != 0) return rc;
  }
  engine::QpModify m;
  m.mask = r.attr_mask & ~static_cast<std::uint32_t>(IBV_QP_RATE_LIMIT);
  if (int rc = values_from_ibv(m.mask, r.attr, dev_->active_mtu(), kMaxRdAtom, &m.values);
      rc != 0) {
    return rc;
  }
  if (rate && m.mask == 0) return shard_->set_qp_sched(r.qp_handle, sched);
  if ((r.attr_mask & transport::qp_attr::kAv) != 0 && it->second.dc) {
    if (int rc = dc_av_from_ibv(r.attr.ah_attr, dev_->config().pfc, &m.values.av); rc != 0) {
      return rc;
    }
  } else if ((r.attr_mask & transport::qp_attr::kAv) != 0) {
    if (int rc = av_from_ibv(r.attr.ah_attr, dev_->config().pfc, gid_table(dev_->config()),
                             &m.values.av);
        rc != 0) {
      return rc;
    }
    if (int rc = resolve_mac(m.values.av, &m.values.av.dmac); rc != 0) return rc;
  }
  // To INIT: the provider made its SQ's and RQ's pages as it attached them
  // (it writes them, so they are charged to it); the engine reads them
  // through the daemon's mapping, which maps them now rather than on the
  // first lap round the rings. Held pages only: where the client made
  // none, the holes stay holes, not daemon memory.
  if ((r.attr_mask & IBV_QP_STATE) != 0 && r.attr.qp_state == IBV_QPS_INIT) {
    for (const ArenaExtent* e : {&it->second.sq, &it->second.rq}) {
      if (e->valid()) (void)base::touch_pages(e->addr, e->bytes, base::base_page_bytes());
    }
  }
  if (int rc = shard_->modify_qp(r.qp_handle, m); rc != 0 || !rate) return rc;
  return shard_->set_qp_sched(r.qp_handle, sched);
}

int ClientSession::on_set_qp_sched(const ctl::SetQpSchedReq& r, ctl::NoReply*, InFds&, OutFds*) {
  if (qps_.find(r.qp_handle) == qps_.end()) return ENOENT;
  engine::QpSched s;
  if (int rc = sched_from_req(r, &s); rc != 0) return rc;
  return shard_->set_qp_sched(r.qp_handle, s);
}

int ClientSession::on_query_qp(const ctl::QueryQpReq& r, ctl::QueryQpRep* rep, InFds&, OutFds*) {
  const auto it = qps_.find(r.qp_handle);
  if (it == qps_.end()) return ENOENT;
  engine::QpQuery q;
  if (int rc = shard_->query_qp(r.qp_handle, &q); rc != 0) return rc;
  ibv_from_query(q, gid_table(dev_->config()), &rep->attr);
  rep->attr.cap = it->second.cap;
  rep->cap = it->second.cap;
  rep->sq_sig_all = it->second.sq_sig_all ? 1 : 0;
  return 0;
}

void ClientSession::wait_sends(const std::function<std::uint32_t()>& left) {
  const TimeNs start = steady_now();
  TimeNs progress_at = start;
  std::uint32_t fewest = left();
  std::chrono::microseconds nap{20};
  while (fewest != 0) {
    const TimeNs now = steady_now();
    if (now - progress_at >= kSendStallWait || now - start >= kSendDrainCap) return;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds{1000});
    const std::uint32_t n = left();
    if (n < fewest) {
      fewest = n;
      progress_at = steady_now();
    }
  }
}

// A UD QP's queued sends go out first (Vnic::ud_sends_queued); what
// wait_sends leaves is discarded with the QP.
int ClientSession::on_destroy_qp(const ctl::DestroyQpReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = qps_.find(r.qp_handle);
  if (it == qps_.end()) return ENOENT;
  if (!it->second.mcast.empty()) return EBUSY;
  if (it->second.type == IBV_QPT_UD) {
    wait_sends([&] { return shard_->ud_sends_queued(r.qp_handle); });
  }
  const int rc = shard_->destroy_qp(r.qp_handle);
  if (rc != 0) return rc;
  QpObj& q = it->second;
  --pds_[q.pd].refs;
  if (q.send_cq != 0) --cqs_[q.send_cq].refs;  // 0: a DCT's
  if (q.recv_cq != 0) --cqs_[q.recv_cq].refs;  // 0: a DCI's
  if (q.srq != 0) --srqs_[q.srq].refs;
  release_extent(q.sq);
  release_extent(q.rq);
  qps_.erase(it);
  if (env_.quotas != nullptr) env_.quotas->release(cred_.uid, Usage{.qps = 1}, &used_);
  return 0;
}

int ClientSession::on_create_srq(const ctl::CreateSrqReq& r, ctl::CreateSrqRep* rep, InFds&,
                                 OutFds*) {
  const auto pd = pds_.find(r.pd_handle);
  if (pd == pds_.end()) return ENOENT;
  const ibv_srq_attr& a = r.attr;
  if (a.max_wr == 0 || a.max_wr > kMaxSrqWr || a.max_sge == 0 || a.max_sge > kMaxSge ||
      a.srq_limit > a.max_wr) {
    return EINVAL;
  }
  if (srqs_.size() >= dev_->config().max_srqs) return ENOMEM;
  SrqObj s;
  engine::RingMem ring;
  if (int rc = make_ring(shm::rq_elem_bytes(a.max_sge), a.max_wr, &s.region, &ring); rc != 0) {
    return rc;
  }
  transport::SrqAttr granted{ring.geo.capacity(),
                             std::min<std::uint32_t>(kMaxSge, (ring.geo.elem_size() -
                                                               shm::kRecvWqeFlexOffset) /
                                                                  shm::kRxeSgeBytes),
                             a.srq_limit};
  const std::uint32_t h = env_.handles->next();
  engine::SrqCreate c;
  c.id = h;
  c.srq_num = h;
  c.pd = r.pd_handle;
  c.max_wr = granted.max_wr;
  c.max_sge = granted.max_sge;
  c.srq_limit = granted.srq_limit;
  c.ring = ring;
  c.user_handle = r.user_handle;
  c.client = id_;
  c.async_fd = async_fd_;
  if (int rc = shard_->create_srq(c); rc != 0) {
    release_extent(s.region);
    return rc;
  }
  if (int rc = shard_->srq_doorbell(h, &rep->doorbell); rc != 0) {
    shard_->destroy_srq(h);
    release_extent(s.region);
    return rc;
  }
  s.pd = r.pd_handle;
  s.attr = granted;
  ++pd->second.refs;
  rep->srq_handle = h;
  rep->srq_num = h;
  rep->attr = ibv_from_srq_attr(granted);
  rep->log2_elem_size = ring.geo.log2_elem_size;
  rep->log2_slots = ring.geo.log2_slots;
  rep->rq_bytes = ring.bytes;
  rep->rq_offset = s.region.offset;
  srqs_.emplace(h, s);
  return 0;
}

int ClientSession::on_modify_srq(const ctl::ModifySrqReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = srqs_.find(r.srq_handle);
  if (it == srqs_.end()) return ENOENT;
  // The ring is fixed at creation: resizing (IBV_SRQ_MAX_WR) is not
  // supported.
  if (r.attr_mask == 0 || (r.attr_mask & ~static_cast<std::uint32_t>(IBV_SRQ_LIMIT)) != 0) {
    return EINVAL;
  }
  if (r.attr.srq_limit > it->second.attr.max_wr) return EINVAL;
  transport::SrqAttr a = it->second.attr;
  a.srq_limit = r.attr.srq_limit;
  const int rc = shard_->modify_srq(r.srq_handle, r.attr_mask, a);
  if (rc == 0) it->second.attr.srq_limit = a.srq_limit;
  return rc;
}

int ClientSession::on_query_srq(const ctl::QuerySrqReq& r, ctl::QuerySrqRep* rep, InFds&, OutFds*) {
  const auto it = srqs_.find(r.srq_handle);
  if (it == srqs_.end()) return ENOENT;
  transport::SrqAttr a;
  if (int rc = shard_->query_srq(r.srq_handle, &a); rc != 0) return rc;
  rep->attr = ibv_from_srq_attr(a);
  return 0;
}

int ClientSession::on_destroy_srq(const ctl::DestroySrqReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = srqs_.find(r.srq_handle);
  if (it == srqs_.end()) return ENOENT;
  if (it->second.refs != 0) return EBUSY;
  const int rc = shard_->destroy_srq(r.srq_handle);
  if (rc != 0) return rc;
  --pds_[it->second.pd].refs;
  release_extent(it->second.region);
  srqs_.erase(it);
  return 0;
}

int ClientSession::on_create_ah(const ctl::CreateAhReq& r, ctl::CreateAhRep* rep, InFds&, OutFds*) {
  const auto pd = pds_.find(r.pd_handle);
  if (pd == pds_.end()) return ENOENT;
  transport::PathAddr av;
  if (int rc = av_from_ibv(r.attr, dev_->config().pfc, gid_table(dev_->config()), &av,
                           /*group=*/true);
      rc != 0) {
    return rc;
  }
  if (ahs_.size() >= dev_->config().max_ahs) return ENOMEM;
  // A multicast group's frames go to its mapped MAC (RFC 1112, RFC 2464),
  // not to a neighbour.
  if (av.ipv6 ? av.route6.dst.is_multicast() : av.dip.is_multicast()) {
    av.dmac = av.ipv6 ? av.route6.dst.multicast_mac() : av.dip.multicast_mac();
  } else if (int rc = resolve_mac(av, &av.dmac); rc != 0) {
    return rc;
  }
  engine::AhCreate a;
  a.dmac = av.dmac;
  a.dip = av.dip;
  a.dscp = av.dscp;
  a.ttl = av.ttl;
  a.ipv6 = av.ipv6;
  a.global_src = av.global_src;
  a.dip6 = av.route6.dst;
  const std::uint32_t h = env_.handles->next();
  a.id = h;
  a.client = id_;
  a.pd = r.pd_handle;
  if (int rc = shard_->create_ah(a); rc != 0) return rc;
  ahs_.emplace(h, AhObj{r.pd_handle});
  ++pd->second.refs;
  rep->ah_handle = h;
  return 0;
}

// The sends posted against the AH before this call leave the rings first
// (Vnic::destroy_ah): waiting is fine on the client's own thread, and the
// engine sends them meanwhile. What a QP has not taken when wait_sends
// gives up (its wire paused) completes in error (ah_missing).
int ClientSession::on_destroy_ah(const ctl::DestroyAhReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = ahs_.find(r.ah_handle);
  if (it == ahs_.end()) return ENOENT;
  int rc = EBUSY;
  wait_sends([&] {
    std::uint32_t left = 0;
    rc = shard_->destroy_ah(r.ah_handle, false, &left);
    return rc == EBUSY ? std::max(left, 1u) : 0u;
  });
  if (rc == EBUSY) rc = shard_->destroy_ah(r.ah_handle, true, nullptr);
  if (rc != 0) return rc;
  --pds_[it->second.pd].refs;
  ahs_.erase(it);
  return 0;
}

}  // namespace uroce::daemon
