#include "testbed/rc_driver.h"

#include <cstdlib>
#include <cstring>

#include "datapath/ctl/protocol.h"
#include "datapath/shm/wqe_write.h"
#include "inproc/bring_up.h"
#include "inproc/post.h"

namespace uroce::testbed {

void RcDriver::AlignedFree::operator()(std::byte* p) const { std::free(p); }

RcDriver::RcDriver(EngineVnic& v) : v_(v) {
  const shm::DoorbellGeometry& g = v_.doorbell_geometry();
  const std::size_t bytes =
      (g.bytes() + shm::kDoorbellAlign - 1) / shm::kDoorbellAlign * shm::kDoorbellAlign;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(shm::kDoorbellAlign, bytes));
  if (p == nullptr) std::abort();
  std::memset(p, 0, bytes);
  page_.reset(p);
  // Both only fail on a page shorter or less aligned than the geometry,
  // which the allocation above rules out.
  if (bells_.attach(p, bytes, g) != shm::DoorbellError::kOk ||
      v_.open_client(kClient, p, bytes) != 0) {
    std::abort();
  }
}

RcDriver::~RcDriver() {
  // The engine drops its pointers into the rings and the page before they
  // are freed.
  for (const auto& q : qps_) v_.destroy_qp(q->id);
  for (const auto& r : srqs_) v_.destroy_srq(r->id);
  for (const auto& c : cqs_) v_.destroy_cq(c->id);
  for (const engine::ObjId a : ahs_) v_.destroy_ah(a);
  for (const std::uint32_t k : mr_keys_) v_.dereg_mr(k);
  v_.close_client(kClient);
}

int RcDriver::ring(std::size_t elem, std::uint32_t depth, std::size_t extra, Mem* mem,
                   shm::RingGeometry* geo) {
  if (shm::make_geometry(elem, depth, geo) != shm::RingError::kOk) return EINVAL;
  std::size_t bytes = geo->bytes() + extra;
  bytes = (bytes + shm::kRingAlign - 1) / shm::kRingAlign * shm::kRingAlign;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(shm::kRingAlign, bytes));
  if (p == nullptr) return ENOMEM;
  std::memset(p, 0, bytes);
  mem->reset(p);
  return shm::ring_init(p, geo->bytes(), *geo) == shm::RingError::kOk ? 0 : EINVAL;
}

int RcDriver::reg_mr(std::uint8_t* mem, std::size_t len, std::uint32_t* key, std::uint64_t* iova) {
  engine::MrCreate m;
  m.desc = {kPd, next_iova_, len, transport::access::kLocalWrite | transport::access::kRemoteAny,
            mem};
  int err = 0;
  *key = v_.reg_mr(m, &err);
  if (err != 0) return err;
  *iova = next_iova_;
  next_iova_ += (len + 4095) / 4096 * 4096 + 4096;
  mr_keys_.push_back(*key);
  return 0;
}

int RcDriver::create_cq(std::uint32_t depth, std::uint32_t* cq) {
  auto c = std::make_unique<Cq>();
  if (int rc = ring(shm::cq_elem_bytes(), depth, ctl::kCqNotifyBytes, &c->mem, &c->geo); rc != 0) {
    return rc;
  }
  if (c->cons.attach(c->mem.get(), c->geo.bytes(), c->geo) != shm::RingError::kOk) return EINVAL;
  c->id = next_id_++;
  engine::CqCreate cc;
  cc.id = c->id;
  cc.ring = engine::RingMem{c->mem.get(), c->geo.bytes(), c->geo};
  cc.notify = reinterpret_cast<ctl::CqNotify*>(c->mem.get() + c->geo.bytes());
  cc.user_handle = c->id;
  if (int rc = v_.create_cq(cc); rc != 0) return rc;
  *cq = static_cast<std::uint32_t>(cqs_.size());
  cqs_.push_back(std::move(c));
  return 0;
}

int RcDriver::create_qp(std::uint32_t cq, std::uint32_t depth, std::uint32_t* qp) {
  if (cq >= cqs_.size()) return EINVAL;
  auto q = std::make_unique<Qp>();
  if (int rc = ring(shm::sq_elem_bytes(kMaxSge, kMaxInline), depth, 0, &q->sq_mem, &q->sq_geo);
      rc != 0) {
    return rc;
  }
  if (int rc = ring(shm::rq_elem_bytes(kMaxSge), depth, 0, &q->rq_mem, &q->rq_geo); rc != 0) {
    return rc;
  }
  if (q->sq.attach(q->sq_mem.get(), q->sq_geo.bytes(), q->sq_geo) != shm::RingError::kOk ||
      q->rq.attach(q->rq_mem.get(), q->rq_geo.bytes(), q->rq_geo) != shm::RingError::kOk) {
    return EINVAL;
  }
  engine::QpCreate c;
  c.type = transport::QpType::kRc;
  c.send_cq = cqs_[cq]->id;
  c.recv_cq = cqs_[cq]->id;
  c.max_send_wr = depth;
  c.max_recv_wr = depth;
  c.max_send_sge = kMaxSge;
  c.max_recv_sge = kMaxSge;
  c.max_inline = kMaxInline;
  c.sq = engine::RingMem{q->sq_mem.get(), q->sq_geo.bytes(), q->sq_geo};
  c.rq = engine::RingMem{q->rq_mem.get(), q->rq_geo.bytes(), q->rq_geo};
  return add_qp(std::move(q), c, qp);
}

int RcDriver::add_qp(std::unique_ptr<Qp> q, engine::QpCreate& c, std::uint32_t* qp) {
  if (int rc = v_.alloc_qpn(&q->qpn); rc != 0) return rc;
  q->id = next_id_++;
  c.id = q->id;
  c.client = kClient;
  c.qpn = q->qpn;
  c.pd = kPd;
  c.user_handle = q->id;
  if (int rc = v_.create_qp(c); rc != 0) return rc;
  if (int rc = v_.qp_doorbells(q->id, &q->sq_db, &q->rq_db); rc != 0) return rc;
  *qp = static_cast<std::uint32_t>(qps_.size());
  qps_.push_back(std::move(q));
  return 0;
}

std::uint32_t RcDriver::qpn(std::uint32_t qp) const { return qps_[qp]->qpn; }

int RcDriver::connect(std::uint32_t qp, const RcConnect& c) {
  if (qp >= qps_.size()) return EINVAL;
  inproc::ConnectAttrs a;
  a.av.dmac = c.dmac;
  a.av.dip = c.dip;
  a.av.dscp = c.dscp;
  a.av.ttl = c.ttl;
  a.mtu = c.mtu;
  a.dest_qpn = c.dest_qpn;
  a.sq_psn = c.sq_psn;
  a.rq_psn = c.rq_psn;
  a.timeout = c.timeout;
  a.retry_cnt = c.retry_cnt;
  a.rnr_retry = c.rnr_retry;
  a.min_rnr_timer = c.min_rnr_timer;
  return inproc::bring_up(v_, qps_[qp]->id, inproc::connected_bring_up(a));
}

int RcDriver::post_send(std::uint32_t qp, const RcSend& wr) {
  if (qp >= qps_.size()) return EINVAL;
  return write_send(*qps_[qp], wr, nullptr);
}

int RcDriver::write_send(Qp& q, const RcSend& wr, const DcTarget* t) {
  if (q.sq_mem == nullptr) return EINVAL;
  shm::SendWqeFields f;
  f.wr_id = wr.wr_id;
  f.opcode = wr.opcode;
  f.send_flags = wr.signaled ? transport::send_flag::kSignaled : 0;
  f.remote_addr = wr.remote_addr;
  f.rkey = wr.rkey;
  f.imm_or_inv = wr.imm;
  const shm::WqeSge sge{wr.addr, wr.length, wr.lkey};
  const std::span<const shm::WqeSge> sges(&sge, wr.length != 0 ? 1 : 0);
  if (t == nullptr) return inproc::post_send(q.sq, &bells_, q.sq_db, f, sges, kMaxSge);
  const shm::WqeDcAddr dc{t->ah, t->dctn, t->key, t->stream};
  return inproc::post_send(q.sq, &bells_, q.sq_db, f, sges, kMaxSge, &dc);
}

int RcDriver::post_recv(std::uint32_t qp, std::uint64_t wr_id, std::uint64_t addr,
                        std::uint32_t length, std::uint32_t lkey) {
  if (qp >= qps_.size()) return EINVAL;
  Qp& q = *qps_[qp];
  if (q.rq_mem == nullptr) return EINVAL;
  return write_recv(q.rq, q.rq_db, wr_id, addr, length, lkey);
}

int RcDriver::write_recv(shm::RqProducer& rq, std::uint32_t db, std::uint64_t wr_id,
                         std::uint64_t addr, std::uint32_t length, std::uint32_t lkey) {
  const shm::WqeSge sge{addr, length, lkey};
  return inproc::post_recv(rq, &bells_, db, wr_id, std::span<const shm::WqeSge>(&sge, 1), kMaxSge);
}

std::uint32_t RcDriver::sq_room(std::uint32_t qp) const { return qps_[qp]->sq.free_slots(); }

std::uint32_t RcDriver::poll_cq(std::uint32_t cq, std::span<ib_uverbs_wc> out) {
  return inproc::poll_cq(cqs_[cq]->cons, out);
}

int RcDriver::status(std::uint32_t qp, engine::QpStatus* out) const {
  if (qp >= qps_.size()) return EINVAL;
  std::vector<engine::QpStatus> all;
  v_.qp_status(&all);
  for (const engine::QpStatus& s : all) {
    if (s.id == qps_[qp]->id) {
      *out = s;
      return 0;
    }
  }
  return ENOENT;
}

}  // namespace uroce::testbed
