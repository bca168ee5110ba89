// The Simulator's [[dc_flow]]s (simulator.h): the engine hosts' limits they
// need, the flows' setup from the scenario and the seed, and their start.
#include <algorithm>
#include <bit>

#include "testbed/dc_flow.h"
#include "testbed/engine_host.h"
#include "testbed/simulator.h"

namespace uroce::testbed {

namespace {

// Beside simulator.cpp's purposes 1..4.
constexpr std::uint64_t kPurposeDcFlow = 5;
constexpr std::uint64_t kPurposeEngineLoss = 6;

}  // namespace

void Simulator::dc_host_limits(std::uint32_t h, EngineHostConfig* c) const {
  const HostSpec& hs = sc_.hosts[h];
  c->dc_contexts = hs.engine_dc_contexts;
  c->dc_records_log2 = hs.engine_dc_records_log2;
  c->dc_stale_ms = hs.engine_dc_stale_ms;
  c->drop_rx_rate = hs.engine_drop_rx_rate;
  c->drop_seed = derive_seed(seed_, kPurposeEngineLoss, h);
  std::uint32_t qps = 0;
  std::uint32_t ahs = 0;
  std::uint32_t srqs = 0;
  for (std::size_t f = 0; f < topo_.dc_flows.size(); ++f) {
    if (!sc_.dc_flows[f].enabled) continue;
    const ResolvedDcFlow& r = topo_.dc_flows[f];
    if (r.src == h) {
      ++qps;
      ahs += static_cast<std::uint32_t>(r.targets.size());
    }
    for (const std::uint16_t t : r.targets) {
      if (t != h) continue;
      ++qps;
      ++srqs;
    }
  }
  c->max_qps += qps;
  c->max_ahs = std::max<std::uint32_t>(ahs, 1);
  c->max_srqs = std::max<std::uint32_t>(srqs, 1);
}

void Simulator::setup_dc_flows() {
  dc_setup_.assign(sc_.dc_flows.size(), 0);
  dc_flows_.resize(sc_.dc_flows.size());
  for (std::size_t f = 0; f < sc_.dc_flows.size(); ++f) {
    const DcFlowSpec& ds = sc_.dc_flows[f];
    const ResolvedDcFlow& r = topo_.dc_flows[f];
    if (!ds.enabled) {
      dc_setup_[f] = kRcFlowDisabled;
      continue;
    }
    DcFlowConfig c;
    c.op = ds.write ? DcOp::kWrite : DcOp::kSend;
    c.size_bytes = ds.size_bytes;
    c.count = ds.count;
    c.window = ds.window;
    c.log_streams = static_cast<std::uint8_t>(std::countr_zero(ds.streams));
    c.start_ns = ds.start_ns;
    // resolve() accepted only a path MTU that fits every host with DC's
    // headers.
    c.mtu = *wire::path_mtu_from_bytes(ds.mtu);
    c.dscp = prio_map_.tx_dscp_of_sl(ds.sl);
    c.ttl = ds.ttl;
    c.timeout = ds.timeout;
    // The DCI's first PSN, the DCTs' key and the payload from the seed.
    const std::uint64_t s = derive_seed(seed_, kPurposeDcFlow, f);
    c.src_psn = static_cast<std::uint32_t>(s) & 0xffffff;
    c.key = derive_seed(seed_, kPurposeDcFlow, f + 0x8000);
    c.pattern_seed = s >> 24;
    std::vector<DcFlowTarget> ts;
    for (const std::uint16_t t : r.targets) {
      ts.push_back({&engines_[t]->driver(), topo_.macs[t], topo_.ips[t]});
    }
    dc_flows_[f] = std::make_unique<DcFlow>(c, engines_[r.src]->driver(), ts);
    dc_setup_[f] = dc_flows_[f]->setup();
    if (dc_setup_[f] != 0) continue;
    engines_[r.src]->add_app(dc_flows_[f]->source_app());
    for (std::uint32_t k = 0; k < r.targets.size(); ++k) {
      engines_[r.targets[k]]->add_app(dc_flows_[f]->target_app(k));
    }
  }
}

void Simulator::dc_flow_start(std::uint32_t f) {
  dc_flows_[f]->start(now_);
  engine_service(topo_.dc_flows[f].src);
}

}  // namespace uroce::testbed
