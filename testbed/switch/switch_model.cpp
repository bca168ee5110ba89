#include "testbed/switch/switch_model.h"

#include <algorithm>

namespace uroce::testbed {

std::string_view switch_config_error_name(SwitchConfigError e) {
  switch (e) {
    case SwitchConfigError::kOk: return "Ok";
    case SwitchConfigError::kBadBuffer: return "BadBuffer";
    case SwitchConfigError::kZeroMaxQuanta: return "ZeroMaxQuanta";
    case SwitchConfigError::kBadWatchdog: return "BadWatchdog";
    case SwitchConfigError::kBadEcnThresholds: return "BadEcnThresholds";
    case SwitchConfigError::kBadEcnProbability: return "BadEcnProbability";
  }
  return "Unknown";
}

std::string_view switch_rx_name(SwitchRx r) {
  switch (r) {
    case SwitchRx::kForwarded: return "forwarded";
    case SwitchRx::kDropBadInput: return "bad_input";
    case SwitchRx::kDropNoRoute: return "no_route";
    case SwitchRx::kDropTtlExpired: return "ttl_expired";
    case SwitchRx::kDropWatchdog: return "watchdog";
    case SwitchRx::kDropLossyFull: return "lossy_full";
    case SwitchRx::kDropHeadroomFull: return "headroom_full";
  }
  return "unknown";
}

namespace {

constexpr std::uint32_t kPpm = 1'000'000;

pfc::PauseGateConfig gate_config(const SwitchConfig& cfg, std::size_t port) {
  pfc::PauseGateConfig g;
  g.pfc_enable = cfg.buffer.pfc_enable;
  g.link_bps = cfg.ports[port].link_bps;
  g.max_quanta = cfg.max_quanta;
  return g;
}

}  // namespace

SwitchConfigError SwitchModel::check(const SwitchConfig& cfg) {
  if (SharedBuffer::check(cfg.buffer, cfg.ports) != SharedBufferConfigError::kOk) {
    return SwitchConfigError::kBadBuffer;
  }
  if (cfg.max_quanta == 0) return SwitchConfigError::kZeroMaxQuanta;
  if (cfg.watchdog &&
      pfc::StormWatchdog::check(cfg.watchdog_cfg) != pfc::StormWatchdogConfigError::kOk) {
    return SwitchConfigError::kBadWatchdog;
  }
  if (cfg.ecn.kmin_bytes > cfg.ecn.kmax_bytes) return SwitchConfigError::kBadEcnThresholds;
  if (cfg.ecn.pmax_ppm > kPpm) return SwitchConfigError::kBadEcnProbability;
  return SwitchConfigError::kOk;
}

SwitchModel::SwitchModel(const SwitchConfig& cfg)
    : cfg_(cfg),
      buffer_(cfg.buffer, cfg.ports),
      routes_(cfg.num_destinations),
      // Derived, not drawn: ECN's draws stay where they were.
      salt_(ecmp_mix(cfg.seed ^ 0x5eed5a17ull)),
      held_(cfg.ports.size() * cfg.ports.size() * pfc::kNumPriorities, 0),
      rng_(cfg.seed) {
  ports_.reserve(cfg.ports.size());
  for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
    ports_.emplace_back(gate_config(cfg, i), cfg.watchdog_cfg);
  }
}

bool SwitchModel::set_route(std::uint16_t dst, std::uint16_t port) {
  return set_route_group(dst, std::span<const std::uint16_t>(&port, 1));
}

bool SwitchModel::set_route_group(std::uint16_t dst, std::span<const std::uint16_t> ports) {
  if (dst >= routes_.size() || ports.empty() || ports.size() > kMaxRoutePorts) return false;
  for (const std::uint16_t p : ports) {
    if (p >= ports_.size()) return false;
  }
  RouteGroup& g = routes_[dst];
  std::copy(ports.begin(), ports.end(), g.ports.begin());
  g.n = static_cast<std::uint8_t>(ports.size());
  return true;
}

void SwitchModel::clear_route(std::uint16_t dst) {
  if (dst < routes_.size()) routes_[dst].n = 0;
}

int SwitchModel::route(std::uint16_t dst) const {
  return dst < routes_.size() && routes_[dst].n > 0 ? routes_[dst].ports[0] : -1;
}

std::span<const std::uint16_t> SwitchModel::route_group(std::uint16_t dst) const {
  if (dst >= routes_.size()) return {};
  return {routes_[dst].ports.data(), routes_[dst].n};
}

int SwitchModel::egress_for(const SwitchPacket& p) const {
  if (p.dst >= routes_.size()) return -1;
  const RouteGroup& g = routes_[p.dst];
  if (g.n <= 1) return g.n == 0 ? -1 : g.ports[0];
  const std::uint32_t first = ecmp_member(p.entropy, salt_, g.n);
  if (!cfg_.adaptive) return g.ports[first];
  // Least-queued member for this priority; scanning from the hashed one
  // makes a tie go where hashing would have sent it.
  const std::uint8_t prio = p.prio & 7;
  std::uint16_t best = g.ports[first];
  for (std::uint32_t i = 1; i < g.n; ++i) {
    const std::uint16_t cand = g.ports[(first + i) % g.n];
    if (ports_[cand].egress_bytes[prio] < ports_[best].egress_bytes[prio]) best = cand;
  }
  return best;
}

SwitchRx SwitchModel::count_rx(SwitchRx r, std::uint32_t bytes) {
  const auto i = static_cast<std::size_t>(r);
  ++c_.rx_packets_by[i];
  c_.rx_bytes_by[i] += bytes;
  return r;
}

bool SwitchModel::ecn_mark(std::uint16_t port, std::uint8_t prio) {
  const EcnConfig& e = cfg_.ecn;
  const std::uint64_t q = ports_[port].egress_bytes[prio];
  if (q <= e.kmin_bytes) return false;
  if (q >= e.kmax_bytes) return true;
  // kmin < q < kmax here, so the span is > 0.
  const std::uint64_t p =
      std::uint64_t{e.pmax_ppm} * (q - e.kmin_bytes) / (e.kmax_bytes - e.kmin_bytes);
  return rng_.below(kPpm) < p;
}

SwitchRx SwitchModel::on_packet(std::uint16_t in_port, SwitchPacket p, TimeNs now) {
  ++c_.rx_packets;
  c_.rx_bytes += p.bytes;
  if (in_port >= ports_.size() || p.prio >= pfc::kNumPriorities) {
    return count_rx(SwitchRx::kDropBadInput, p.bytes);
  }
  const int out = egress_for(p);
  if (out < 0) return count_rx(SwitchRx::kDropNoRoute, p.bytes);
  if (p.ttl <= 1) return count_rx(SwitchRx::kDropTtlExpired, p.bytes);
  --p.ttl;
  const auto op = static_cast<std::uint16_t>(out);
  Port& pt = ports_[op];
  if (pt.gate.override_of(p.prio) == pfc::GateOverride::kDropTraffic) {
    ++pt.c[p.prio].wd_refused_packets;
    pt.c[p.prio].wd_refused_bytes += p.bytes;
    return count_rx(SwitchRx::kDropWatchdog, p.bytes);
  }
  CtrlSink sink{this};
  const BufferAdmit a = buffer_.on_rx(in_port, p.prio, p.bytes, now, sink);
  if (a == BufferAdmit::kDropLossyFull) return count_rx(SwitchRx::kDropLossyFull, p.bytes);
  if (a == BufferAdmit::kDropHeadroomFull) {
    return count_rx(SwitchRx::kDropHeadroomFull, p.bytes);
  }
  if (a == BufferAdmit::kDropBadQueue) return count_rx(SwitchRx::kDropBadInput, p.bytes);
  if (p.ecn != kEcnNotEct && ((cfg_.ecn.enable >> p.prio) & 1) != 0 && ecn_mark(op, p.prio)) {
    if (p.ecn != kEcnCe) ++pt.c[p.prio].ecn_marked;
    p.ecn = kEcnCe;
  }
  p.in_port = in_port;
  if (pt.egress[p.prio].empty()) pt.progress_at[p.prio] = now;
  pt.egress_bytes[p.prio] += p.bytes;
  pt.c[p.prio].peak_bytes = std::max(pt.c[p.prio].peak_bytes, pt.egress_bytes[p.prio]);
  ++pt.c[p.prio].enqueued;
  ++held_[held_index(in_port, op, p.prio)];
  pt.egress[p.prio].push(p);
  kicks_ |= std::uint64_t{1} << op;
  return count_rx(SwitchRx::kForwarded, p.bytes);
}

wire::PfcParseError SwitchModel::on_control(std::uint16_t port, std::span<const std::uint8_t> frame,
                                            TimeNs now) {
  ++c_.pfc_rx;
  if (port >= ports_.size()) {
    ++c_.pfc_rx_bad_port;
    return wire::PfcParseError::kTruncated;
  }
  const wire::PfcParseError e = ports_[port].gate.on_frame(frame, now);
  // A resume may have opened a gate; a pause changes nothing to send.
  kicks_ |= std::uint64_t{1} << port;
  return e;
}

SwitchPacket SwitchModel::take(std::uint16_t port, std::uint8_t prio, TimeNs now) {
  Port& pt = ports_[port];
  SwitchPacket p = pt.egress[prio].pop();
  pt.egress_bytes[prio] -= p.bytes;
  pt.progress_at[prio] = now;
  --held_[held_index(p.in_port, port, prio)];
  CtrlSink sink{this};
  buffer_.on_release(p.in_port, prio, p.bytes, now, sink);
  return p;
}

void SwitchModel::flush(std::uint16_t port, std::uint8_t prio, TimeNs now) {
  Port& pt = ports_[port];
  while (!pt.egress[prio].empty()) {
    const SwitchPacket p = take(port, prio, now);
    ++pt.c[prio].wd_flushed_packets;
    pt.c[prio].wd_flushed_bytes += p.bytes;
  }
}

SwitchTx SwitchModel::dequeue(std::uint16_t port, TimeNs now) {
  SwitchTx tx;
  if (port >= ports_.size()) return tx;
  Port& pt = ports_[port];
  if (!pt.ctrl.empty()) {
    tx.kind = SwitchTx::Kind::kControl;
    tx.ctrl = pt.ctrl.pop();
    return tx;
  }
  const std::uint8_t blocked = pt.gate.blocked_mask(now);
  for (int pr = pfc::kNumPriorities - 1; pr >= 0; --pr) {
    const auto prio = static_cast<std::uint8_t>(pr);
    if (pt.egress[prio].empty()) continue;
    if (pt.gate.override_of(prio) == pfc::GateOverride::kDropTraffic) {
      flush(port, prio, now);
      continue;
    }
    if (((blocked >> prio) & 1) != 0) {
      if (pt.gate.resume_at(prio) < tx.wake_at) tx.wake_at = pt.gate.resume_at(prio);
      continue;
    }
    tx.kind = SwitchTx::Kind::kData;
    tx.pkt = take(port, prio, now);
    ++pt.c[prio].sent_packets;
    pt.c[prio].sent_bytes += tx.pkt.bytes;
    tx.wake_at = pfc::kNoDeadline;
    return tx;
  }
  // A flush above may have queued XON frames on this very port.
  if (!pt.ctrl.empty()) {
    tx.kind = SwitchTx::Kind::kControl;
    tx.ctrl = pt.ctrl.pop();
    tx.wake_at = pfc::kNoDeadline;
  }
  return tx;
}

std::uint8_t SwitchModel::stormed_mask(const Port& pt) {
  std::uint8_t m = 0;
  for (std::uint8_t p = 0; p < pfc::kNumPriorities; ++p) {
    if (pt.watchdog.stormed(p)) m = static_cast<std::uint8_t>(m | (1u << p));
  }
  return m;
}

void SwitchModel::on_storm_change(std::uint16_t port, std::uint8_t newly_stormed, TimeNs now) {
  if (cfg_.watchdog_cfg.action == pfc::StormAction::kDrop) {
    for (std::uint8_t p = 0; p < pfc::kNumPriorities; ++p) {
      if (((newly_stormed >> p) & 1) != 0) flush(port, p, now);
    }
  }
  kicks_ |= std::uint64_t{1} << port;
}

TimeNs SwitchModel::next_deadline(TimeNs now) const {
  TimeNs d = buffer_.next_deadline();
  if (!cfg_.watchdog) return d;
  for (const Port& pt : ports_) {
    const TimeNs w = pt.watchdog.next_deadline(pt.gate, now);
    if (w < d) d = w;
  }
  return d;
}

bool SwitchModel::paused(std::uint16_t port, std::uint8_t prio, TimeNs now) const {
  const pfc::PauseGate& g = ports_[port].gate;
  return g.override_of(prio) == pfc::GateOverride::kNone && g.peer_paused(prio, now);
}

}  // namespace uroce::testbed
