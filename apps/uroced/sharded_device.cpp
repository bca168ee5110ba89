#include "apps/uroced/sharded_device.h"

#include <algorithm>
#include <cassert>
#include <tuple>

#include "datapath/base/counter_fields.h"

namespace uroce::daemon {

namespace {

template <std::size_t N>
void add_each(std::array<std::uint64_t, N>& to, const std::array<std::uint64_t, N>& from) {
  for (std::size_t i = 0; i < N; ++i) to[i] += from[i];
}

}  // namespace

void add_snapshot(DeviceSnapshot& to, const DeviceSnapshot& from) {
  engine::VnicCounters& c = to.counters;
  counters::add(c, from.counters);
  add_each(c.parse_error, from.counters.parse_error);
  add_each(c.wqe_error, from.counters.wqe_error);
  counters::add(c.cq, from.counters.cq);
  counters::add(c.comp, from.counters.comp);
  std::apply(
      [&](auto&... mine) {
        std::apply([&](const auto&... theirs) { (counters::add(mine, theirs), ...); }, from.policy);
      },
      to.policy);
  counters::add(to.arp, from.arp);
  add_each(to.arp.drops, from.arp.drops);
  to.qps += from.qps;
  to.cqs += from.cqs;
  to.srqs += from.srqs;
  to.ahs += from.ahs;
  to.mrs += from.mrs;
  to.qp_status.insert(to.qp_status.end(), from.qp_status.begin(), from.qp_status.end());
  if (from.has_port_tx) {
    to.has_port_tx = true;
    counters::add(to.port_tx, from.port_tx);
  }
  if (from.has_port_rx) {
    to.has_port_rx = true;
    counters::add(to.port_rx, from.port_rx);
  }
  if (from.has_homa) {
    to.has_homa = true;
    counters::add(to.homa.grants, from.homa.grants);
    to.homa.tracked += from.homa.tracked;
    to.homa.outstanding += from.homa.outstanding;
  }
  if (from.has_dc_pool) {
    to.has_dc_pool = true;
    counters::add(to.dc_pool.counters, from.dc_pool.counters);
    to.dc_pool.open += from.dc_pool.open;
    to.dc_pool.capacity += from.dc_pool.capacity;
    to.dc_pool.bytes += from.dc_pool.bytes;
  }
  to.stages.insert(to.stages.end(), from.stages.begin(), from.stages.end());
  counters::add(to.mw, from.mw);
  add_each(to.mw.bind_refused, from.mw.bind_refused);
  add_each(to.mw.inv_refused, from.mw.inv_refused);
}

ShardedDevice::ShardedDevice(std::vector<Device*> shards, std::uint32_t index,
                             std::string port_name)
    : PortedDevice(index, std::move(port_name)),
      shards_(std::move(shards)),
      clients_(shards_.size(), 0) {
  assert(shards_.size() >= 2);
}

Device& ShardedDevice::place_client() {
  std::lock_guard<std::mutex> lk(mu_);
  const auto least = std::min_element(clients_.begin(), clients_.end());
  ++*least;
  return *shards_[static_cast<std::size_t>(least - clients_.begin())];
}

void ShardedDevice::leave_client(Device& placed) {
  std::lock_guard<std::mutex> lk(mu_);
  const auto it = std::find(shards_.begin(), shards_.end(), &placed);
  assert(it != shards_.end());
  std::uint32_t& n = clients_[static_cast<std::size_t>(it - shards_.begin())];
  assert(n != 0);
  --n;
}

void ShardedDevice::snapshot(bool with_qps, DeviceSnapshot* out) {
  std::vector<std::uint32_t> clients;
  {
    std::lock_guard<std::mutex> lk(mu_);
    clients = clients_;
  }
  DeviceSnapshot part;
  for (std::size_t i = 0; i < shards_.size(); ++i) {
    DeviceSnapshot& s = i == 0 ? *out : part;
    s = DeviceSnapshot{};
    shards_[i]->snapshot(with_qps, &s);
    out->shards.push_back({.clients = clients[i],
                           .qps = s.qps,
                           .queue_frames = s.port_rx.frames,
                           .rx_frames = s.counters.rx_frames,
                           .tx_frames = s.counters.tx_frames,
                           .rx_handoff = s.counters.rx_handoff,
                           .handed_in = s.port_rx.handed_in});
    if (i != 0) add_snapshot(*out, part);
  }
}

void ShardedDevice::drain_pfc_events(std::vector<pfc::PfcEvent>* out) {
  for (Device* s : shards_) s->drain_pfc_events(out);
}

int ShardedDevice::set_tx_classes(const sched::TrafficClassConfig& classes) {
  for (Device* s : shards_) {
    if (const int rc = s->set_tx_classes(classes); rc != 0) return rc;
  }
  return 0;
}

}  // namespace uroce::daemon
