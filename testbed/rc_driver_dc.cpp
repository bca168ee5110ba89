// RcDriver's DC objects (rc_driver.h): what uroce_dv_create_qp and the
// provider's DC WR setters do for an application, in process.
#include "datapath/shm/wqe_write.h"
#include "inproc/bring_up.h"
#include "testbed/rc_driver.h"

namespace uroce::testbed {

int RcDriver::create_srq(std::uint32_t depth, std::uint32_t* srq) {
  auto r = std::make_unique<Srq>();
  if (int rc = ring(shm::rq_elem_bytes(kMaxSge), depth, 0, &r->mem, &r->geo); rc != 0) return rc;
  if (r->rq.attach(r->mem.get(), r->geo.bytes(), r->geo) != shm::RingError::kOk) return EINVAL;
  r->id = next_id_++;
  engine::SrqCreate c;
  c.id = r->id;
  c.client = kClient;
  // Only XRC reads an SRQ's number; each one still gets its own.
  c.srq_num = static_cast<std::uint32_t>(srqs_.size()) + 1;
  c.pd = kPd;
  c.max_wr = depth;
  c.max_sge = kMaxSge;
  c.ring = engine::RingMem{r->mem.get(), r->geo.bytes(), r->geo};
  c.user_handle = r->id;
  if (int rc = v_.create_srq(c); rc != 0) return rc;
  if (int rc = v_.srq_doorbell(r->id, &r->db); rc != 0) return rc;
  *srq = static_cast<std::uint32_t>(srqs_.size());
  srqs_.push_back(std::move(r));
  return 0;
}

int RcDriver::post_srq_recv(std::uint32_t srq, std::uint64_t wr_id, std::uint64_t addr,
                            std::uint32_t length, std::uint32_t lkey) {
  if (srq >= srqs_.size()) return EINVAL;
  Srq& r = *srqs_[srq];
  return write_recv(r.rq, r.db, wr_id, addr, length, lkey);
}

int RcDriver::create_ah(const wire::MacAddr& dmac, wire::Ipv4Addr dip, std::uint8_t dscp,
                        std::uint8_t ttl, std::uint32_t* ah) {
  engine::AhCreate a;
  a.id = next_id_++;
  a.client = kClient;
  a.pd = kPd;
  a.dmac = dmac;
  a.dip = dip;
  a.dscp = dscp;
  a.ttl = ttl;
  if (int rc = v_.create_ah(a); rc != 0) return rc;
  ahs_.push_back(a.id);
  *ah = static_cast<std::uint32_t>(a.id);
  return 0;
}

int RcDriver::create_dci(std::uint32_t cq, std::uint32_t depth, std::uint8_t log_streams,
                         const DciConnect& d, std::uint32_t* qp) {
  if (cq >= cqs_.size()) return EINVAL;
  auto q = std::make_unique<Qp>();
  if (int rc = ring(shm::sq_elem_bytes(kMaxSge, kMaxInline), depth, 0, &q->sq_mem, &q->sq_geo);
      rc != 0) {
    return rc;
  }
  if (q->sq.attach(q->sq_mem.get(), q->sq_geo.bytes(), q->sq_geo) != shm::RingError::kOk) {
    return EINVAL;
  }
  engine::QpCreate c;
  c.type = transport::QpType::kDci;
  c.send_cq = cqs_[cq]->id;
  // Per-stream errors with streams, so one stream's failure does not stop
  // the others (docs/dc.md, "Errors").
  c.dci_log_streams = log_streams;
  c.dci_log_errored = log_streams;
  c.max_send_wr = depth;
  c.max_send_sge = kMaxSge;
  c.max_inline = kMaxInline;
  c.sq = engine::RingMem{q->sq_mem.get(), q->sq_geo.bytes(), q->sq_geo};
  std::uint32_t idx = 0;
  if (int rc = add_qp(std::move(q), c, &idx); rc != 0) return rc;
  inproc::DciAttrs a;
  a.mtu = d.mtu;
  a.sq_psn = d.sq_psn;
  a.timeout = d.timeout;
  a.retry_cnt = d.retry_cnt;
  a.rnr_retry = d.rnr_retry;
  if (int rc = inproc::bring_up(v_, qps_[idx]->id, inproc::dci_bring_up(a)); rc != 0) return rc;
  *qp = idx;
  return 0;
}

int RcDriver::create_dct(std::uint32_t cq, std::uint32_t srq, std::uint64_t key, wire::PathMtu mtu,
                         std::uint8_t dscp, std::uint8_t min_rnr_timer, std::uint32_t* qp) {
  if (cq >= cqs_.size() || srq >= srqs_.size()) return EINVAL;
  engine::QpCreate c;
  c.type = transport::QpType::kDct;
  c.recv_cq = cqs_[cq]->id;
  c.srq = srqs_[srq]->id;
  c.dct_key = key;
  c.max_recv_sge = kMaxSge;
  std::uint32_t idx = 0;
  if (int rc = add_qp(std::make_unique<Qp>(), c, &idx); rc != 0) return rc;
  inproc::DctAttrs a;
  a.mtu = mtu;
  a.dscp = dscp;  // the AV gives only the answers' traffic class (docs/dc.md)
  a.min_rnr_timer = min_rnr_timer;
  if (int rc = inproc::bring_up(v_, qps_[idx]->id, inproc::dct_bring_up(a)); rc != 0) return rc;
  *qp = idx;
  return 0;
}

int RcDriver::post_dc_send(std::uint32_t qp, const RcSend& wr, const DcTarget& t) {
  if (qp >= qps_.size()) return EINVAL;
  return write_send(*qps_[qp], wr, &t);
}

}  // namespace uroce::testbed
