#include "testbed/engine_host.h"

namespace uroce::testbed {

namespace {

engine::VnicConfig vnic_config(const EngineHostConfig& c) {
  engine::VnicConfig v;
  v.name = c.name;
  v.mac = c.mac;
  v.ip = c.ip;
  v.eth_mtu = c.eth_mtu;
  v.max_qps = c.max_qps;
  v.max_cqs = c.max_qps;
  v.max_srqs = c.max_srqs;
  v.max_mrs = 2 * c.max_qps;
  v.max_ahs = c.max_ahs;
  v.dc_contexts = c.dc_contexts;
  v.dc_records_log2 = c.dc_records_log2;
  v.dc_stale_ms = c.dc_stale_ms;
  v.impair.drop_rx_rate = c.drop_rx_rate;
  v.impair.drop_seed = c.drop_seed;
  if (c.pfc_enable != 0) {
    v.pfc.enable = c.pfc_enable;
    v.pfc.link_bps = c.link_bps;
    v.pfc.rx_budget = c.pfc_rx_budget;
  }
  v.dcqcn.enabled = c.dcqcn;
  v.dcqcn.cnp_interval_ns = c.cnp_interval_ns;
  v.dcqcn.rp.line_rate_bps = c.link_bps;
  v.sched = c.sched;
  v.port_limit.limit_bytes = c.tx_limit_bytes;
  v.port_limit.link_bps = c.link_bps;
  v.port_limit.overhead_bytes = c.link_overhead_bytes;
  v.homa = c.homa;
  v.lossy = c.lossy;
  v.lossy_qps = c.lossy_qps;
  v.spray_paths = c.spray_paths;
  v.spray_ecn = c.spray_ecn;
  v.lossy_cap = c.lossy_cap;
  return v;
}

}  // namespace

EngineHost::EngineHost(const EngineHostConfig& cfg, FrameStore& store)
    : cfg_(cfg),
      port_(store),
      vnic_(std::make_unique<EngineVnic>(vnic_config(cfg), port_)),
      driver_(std::make_unique<RcDriver>(*vnic_)) {}

// The driver goes first: it destroys its QPs and CQs in the Vnic.
EngineHost::~EngineHost() { driver_.reset(); }

bool EngineHost::service(TimeNs now, std::uint32_t room) {
  ++services_;
  port_.set_room(room);
  const std::uint32_t max_polls = cfg_.poll_ns == 0 ? kMaxPolls : 1;
  for (std::uint32_t i = 0; i < max_polls; ++i) {
    ++polls_;
    busy_until_ = now + cfg_.poll_ns;
    const std::uint32_t work = vnic_->poll(now);
    bool posted = false;
    for (const Endpoint& e : eps_) {
      posted = (e.source ? e.flow->service_src(now) : e.flow->service_dst(now)) || posted;
    }
    for (EngineApp* a : apps_) posted = a->service(now) || posted;
    if (work == 0 && !posted) return false;
  }
  return true;
}

TimeNs EngineHost::next_deadline() const { return vnic_->next_deadline(); }

}  // namespace uroce::testbed
