#include "datapath/transport/dct_qp.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

#include "datapath/transport/qp_modify_rules.h"

namespace uroce::transport {

namespace {

// What every context is made with: one receive WR slot with the most SGEs
// an SRQ may give (its WRs move in one at a time), and the most READ/atomic
// resources a DCT may ask for, so opening one allocates nothing.
RcQpConfig context_config(const LocalPort& local, bool sr) {
  RcQpConfig c;
  c.local = local;
  c.max_send_wr = 1;
  c.max_recv_wr = sr ? kDcSrRecvSlots : 1;
  c.max_send_sge = 1;
  c.max_recv_sge = kMaxSge;
  c.max_inline = 0;
  return c;
}

}  // namespace

DcTargetPool::DcTargetPool(const DcTargetLimits& limits, MrTable& mrs, const LocalPort& local,
                           bool sr, const DcSprayConfig& spray)
    : table_(limits), local_(local), sr_(sr), spray_(spray) {
  const RcQpConfig c = context_config(local, sr);
  ctx_.reserve(limits.contexts);
  for (std::uint32_t i = 0; i < limits.contexts; ++i) {
    auto x = std::make_unique<DcContext>(c, mrs);
    x->core.dc = &x->lane;
    x->lane.initiator = false;
    x->resp.set_rd_atomic_limit(c.max_dest_rd_atomic);
    if (sr) {
      x->sr = std::make_unique<RcSr>();
      x->sr->bind_counters();
      x->lane.spray = &spray_;
    }
    ctx_.push_back(std::move(x));
  }
}

std::size_t DcTargetPool::memory_bytes() const {
  // The contexts' own heap parts (receive slot, READ/atomic resources) are
  // not counted here; docs/dc.md gives the measured total per context.
  return table_.memory_bytes() +
         ctx_.capacity() * (sizeof(void*) + sizeof(DcContext) + (sr_ ? sizeof(RcSr) : 0));
}

DctQp::DctQp(const RcQpConfig& cfg, std::uint64_t key, DcTargetPool& pool)
    : cfg_(cfg), key_(key), pool_(pool), ev_(cfg.qpn) {}

DctQp::~DctQp() {
  // Every context this DCT holds goes back to the pool, retired (its
  // initiators' late packets are answered from the records).
  for (std::uint32_t c = 0; c < pool_.table().capacity(); ++c) {
    DcContext& x = pool_.ctx(c);
    if (x.dct == this) {
      close_context(c);
      pool_.table().release(c);
    }
  }
}

int DctQp::modify(std::uint32_t mask, const QpAttrValues& a) {
  using namespace qp_attr;
  if (int rc = check_modify_values(QpType::kDct, state_, mask, a); rc != 0) return rc;
  if ((mask & kMinRnrTimer) != 0 && a.min_rnr_timer > 31) return EINVAL;
  if ((mask & kAccessFlags) != 0) attr_.qp_access_flags = a.qp_access_flags;
  if ((mask & kPkeyIndex) != 0) attr_.pkey_index = a.pkey_index;
  if ((mask & kPort) != 0) attr_.port_num = a.port_num;
  if ((mask & kAv) != 0) attr_.av = a.av;
  if ((mask & kPathMtu) != 0) attr_.path_mtu = a.path_mtu;
  if ((mask & kMinRnrTimer) != 0) attr_.min_rnr_timer = a.min_rnr_timer;
  if ((mask & kState) != 0) {
    if (a.qp_state != QpState::kRtr) {
      // Out of RTR the DCT serves no one: its contexts go.
      for (std::uint32_t c = 0; c < pool_.table().capacity(); ++c) {
        if (pool_.ctx(c).dct == this) {
          close_context(c);
          pool_.table().release(c);
        }
      }
    }
    if (a.qp_state == QpState::kReset) {
      key_event_raised_ = false;
      ev_.reset();
    }
    state_ = a.qp_state;
  }
  return 0;
}

QpAttrValues DctQp::query() const {
  QpAttrValues v = attr_;
  v.qp_state = v.cur_qp_state = state_;
  return v;
}

RcCounters DctQp::rc_counters() const {
  RcCounters sum = retired_;
  for (std::uint32_t c = 0; c < pool_.table().capacity(); ++c) {
    const DcContext& x = const_cast<DcTargetPool&>(pool_).ctx(c);
    if (x.dct == this) counters::add(sum, x.core.ctr);
  }
  return sum;
}

RcSrCounters DctQp::sr_counters() const {
  RcSrCounters sum = retired_sr_;
  for (std::uint32_t c = 0; c < pool_.table().capacity(); ++c) {
    const DcContext& x = const_cast<DcTargetPool&>(pool_).ctx(c);
    if (x.dct == this && x.core.sr != nullptr) counters::add(sum, x.core.sr->ctr);
  }
  return sum;
}

DcIdentity DctQp::identity_of(const wire::ParsedPacket& pkt) {
  DcIdentity id;
  if (pkt.ipv6) {
    const wire::Ipv6Addr a = pkt.ip6.src();
    std::memcpy(id.src.data(), a.b.data(), 16);
  } else {
    id.src[10] = 0xff;
    id.src[11] = 0xff;
    const std::uint32_t v = pkt.ip.src().v;
    id.src[12] = static_cast<std::uint8_t>(v >> 24);
    id.src[13] = static_cast<std::uint8_t>(v >> 16);
    id.src[14] = static_cast<std::uint8_t>(v >> 8);
    id.src[15] = static_cast<std::uint8_t>(v);
  }
  id.dci_qpn = pkt.dc_eth.dci_qpn();
  id.lane = pkt.dc_eth.lane();
  return id;
}

void DctQp::open_context(std::uint32_t c, const wire::ParsedPacket& pkt) {
  DcContext& x = pool_.ctx(c);
  RcCore& k = x.core;
  k.cfg.qpn = cfg_.qpn;
  k.cfg.pd = cfg_.pd;
  k.cfg.srq = cfg_.srq;
  k.cfg.tuning = cfg_.tuning;
  k.state = QpState::kRts;
  k.attr = attr_;
  // Replies go back where the request came from, with the DCT's traffic
  // class and hop limit.
  PathAddr& av = k.attr.av;
  av.dmac = pkt.eth.src();
  av.ipv6 = pkt.ipv6;
  if (pkt.ipv6) {
    av.route6 = wire::Ipv6Route{pkt.ip6.dst(), pkt.ip6.src(), 0};
  } else {
    av.dip = pkt.ip.src();
  }
  av.ecn = 0;
  k.attr.dest_qp_num = pkt.dc_eth.dci_qpn();
  k.src_port = rxe_udp_src_port(cfg_.qpn);
  k.ctr = RcCounters{};
  k.ev.reset();
  x.lane.lane = pkt.dc_eth.lane();
  x.lane.conn = pkt.dc_eth.conn();
  x.resp.rq().clear();
  x.resp.reset(Psn(pkt.dc_eth.first_psn()));
  x.resp.set_rd_atomic_limit(attr_.max_dest_rd_atomic != 0 ? attr_.max_dest_rd_atomic
                                                           : cfg_.max_dest_rd_atomic);
  // Selective repeat from the opening request on, when it asks (dc_sr.h):
  // an empty window at the connection's first PSN.
  k.sr = nullptr;
  if (pkt.info->sr && x.sr != nullptr) {
    k.sr = x.sr.get();
    x.sr->ctr = RcSrCounters{};
    x.sr->rx.reset(Psn(pkt.dc_eth.first_psn()));
    // Its answers rotate over the DCT's port's paths (dc_spray.h).
    x.lane.spray->begin(x.sr->spray, k.src_port, pkt.ipv6);
  }
  x.dct = this;
  ++open_;
}

void DctQp::close_context(std::uint32_t c) {
  DcContext& x = pool_.ctx(c);
  if (x.dct != this) return;
  counters::add(retired_, x.core.ctr);
  if (x.core.sr != nullptr) counters::add(retired_sr_, x.core.sr->ctr);
  // Receive WRs taken from the SRQ and not used (a message cut short by a
  // stale retirement, or taken ahead for selective repeat's placement)
  // are the application's: back to the SRQ.
  if (cfg_.srq != nullptr) cfg_.srq->give_back(x.resp.rq());
  ready_remove(c);
  x.dct = nullptr;
  --open_;
}

void DctQp::after_context(std::uint32_t c) {
  DcContext& x = pool_.ctx(c);
  const bool owes = x.resp.has_output();
  if (DcTargetPool::failed(x) && !owes) [[unlikely]] {
    retire_failed(c);
    return;
  }
  pool_.table().settle(c, DcTargetPool::quiescent(x), x.resp.epsn().value());
  if (owes) ready_push(c);
}

void DctQp::retire_failed(std::uint32_t c) {
  DcContext& x = pool_.ctx(c);
  assert(!x.resp.has_output());
  pool_.table().retire_failed(c, x.resp.epsn().value());
  close_context(c);
}

void DctQp::ready_push(std::uint32_t c) {
  DcContext& x = pool_.ctx(c);
  if (x.ready) return;
  x.ready = true;
  x.ready_prev = ready_tail_;
  x.ready_next = DcTargetTable::kNone;
  if (ready_tail_ != DcTargetTable::kNone) {
    pool_.ctx(ready_tail_).ready_next = c;
  } else {
    ready_head_ = c;
  }
  ready_tail_ = c;
}

void DctQp::ready_remove(std::uint32_t c) {
  DcContext& x = pool_.ctx(c);
  if (!x.ready) return;
  if (x.ready_prev != DcTargetTable::kNone) {
    pool_.ctx(x.ready_prev).ready_next = x.ready_next;
  } else {
    ready_head_ = x.ready_next;
  }
  if (x.ready_next != DcTargetTable::kNone) {
    pool_.ctx(x.ready_next).ready_prev = x.ready_prev;
  } else {
    ready_tail_ = x.ready_prev;
  }
  x.ready = false;
  x.ready_prev = x.ready_next = DcTargetTable::kNone;
}

}  // namespace uroce::transport
