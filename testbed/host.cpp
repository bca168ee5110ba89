#include "testbed/host.h"

#include <algorithm>

namespace uroce::testbed {

namespace {

pfc::PauseGateConfig gate_config(const HostConfig& cfg) {
  pfc::PauseGateConfig g;
  g.pfc_enable = cfg.pfc_enable;
  g.link_bps = cfg.link_bps;
  g.max_quanta = cfg.max_quanta;
  return g;
}

// The ingress accounting is only used with a finite receive rate; an
// unlimited receiver gets the (valid) defaults so the member can exist.
pfc::IngressConfig ingress_config(const HostConfig& cfg) {
  return cfg.rx_bps != 0 ? cfg.ingress : pfc::IngressConfig{};
}

}  // namespace

std::string Host::check(const HostConfig& cfg) {
  const pfc::PauseGateConfigError g = pfc::PauseGate::check(gate_config(cfg));
  if (g != pfc::PauseGateConfigError::kOk) {
    return "pause gate: " + std::string(pfc::pause_gate_config_error_name(g));
  }
  if (cfg.rx_bps != 0) {
    const pfc::IngressConfigError e = pfc::IngressAccounting::check(cfg.ingress);
    if (e != pfc::IngressConfigError::kOk) {
      return "receive buffer: " + std::string(pfc::ingress_config_error_name(e));
    }
  }
  const pfc::TtlMonitorConfigError t = pfc::TtlMonitor::check(cfg.ttl);
  if (t != pfc::TtlMonitorConfigError::kOk) {
    return "TTL monitor: " + std::string(pfc::ttl_monitor_config_error_name(t));
  }
  if (cfg.tx_queue_packets == 0) return "tx_queue_packets: must be > 0";
  return {};
}

Host::Host(const HostConfig& cfg)
    : cfg_(cfg),
      gate_(gate_config(cfg)),
      ingress_(ingress_config(cfg)),
      ttl_(cfg.ttl),
      rx_server_(cfg.rx_bps != 0 ? cfg.rx_bps : 1, 0, 0) {}

bool Host::offer(const SwitchPacket& p) {
  // The single FIFO of tx_fifo is txq_[0]; the packet keeps its priority.
  auto& q = txq_[cfg_.tx_fifo ? 0 : p.prio & 7];
  if (q.size() >= cfg_.tx_queue_packets) {
    ++c_.tx_refused;
    return false;
  }
  q.push(p);
  kick_ = true;
  return true;
}

std::size_t Host::tx_queued() const {
  std::size_t n = 0;
  for (const auto& q : txq_) n += q.size();
  return n;
}

SwitchTx Host::dequeue(TimeNs now) {
  SwitchTx tx;
  if (!ctrl_.empty()) {
    tx.kind = SwitchTx::Kind::kControl;
    tx.ctrl = ctrl_.pop();
    ++c_.tx_pfc_frames;
    return tx;
  }
  // tx_fifo: txq_[0] only, gated by its head's priority.
  const int top = cfg_.tx_fifo ? 0 : pfc::kNumPriorities - 1;
  for (int pr = top; pr >= 0; --pr) {
    auto& q = txq_[static_cast<std::size_t>(pr)];
    if (q.empty()) continue;
    const std::uint8_t prio = cfg_.tx_fifo ? q.front().prio & 7 : static_cast<std::uint8_t>(pr);
    // No watchdog on hosts: the verdict is send or wait.
    if (gate_.tx_verdict(prio, now) == pfc::TxVerdict::kWait) {
      if (gate_.resume_at(prio) < tx.wake_at) tx.wake_at = gate_.resume_at(prio);
      continue;
    }
    tx.kind = SwitchTx::Kind::kData;
    tx.pkt = q.pop();
    tx.wake_at = pfc::kNoDeadline;
    ++c_.tx_packets;
    c_.tx_bytes += tx.pkt.bytes;
    return tx;
  }
  return tx;
}

wire::PfcParseError Host::on_control(std::span<const std::uint8_t> frame, TimeNs now) {
  ++c_.rx_pfc_frames;
  kick_ = true;
  return gate_.on_frame(frame, now);
}

bool Host::offer_control(std::span<const std::uint8_t> frame) {
  ControlFrame c;
  if (frame.size() > c.bytes.size()) return false;
  std::copy(frame.begin(), frame.end(), c.bytes.begin());
  c.len = static_cast<std::uint8_t>(frame.size());
  ctrl_.push(c);
  kick_ = true;
  return true;
}

Host::Rx Host::on_packet(const SwitchPacket& p, TimeNs now) {
  if (!rx_limited()) return Rx::kConsumed;
  CtrlSink sink{this};
  if (ingress_.on_rx(p.prio, p.bytes, now, sink) != pfc::RxAdmit::kAccepted) {
    ++c_.rx_dropped;
    return Rx::kDropped;
  }
  rxq_.push(p);
  return Rx::kQueued;
}

TimeNs Host::start_rx(TimeNs now) {
  if (rx_busy_ || rxq_.empty()) return pfc::kNoDeadline;
  rx_busy_ = true;
  return rx_server_.start(rxq_.front().bytes, false, now);
}

SwitchPacket Host::finish_rx(TimeNs now) {
  rx_busy_ = false;
  const SwitchPacket p = rxq_.pop();
  CtrlSink sink{this};
  ingress_.on_processed(p.prio, p.bytes, now, sink);
  return p;
}

void Host::consumed(const SwitchPacket& p, const pfc::RxTtlInfo& ttl, TimeNs now) {
  ++c_.rx_packets;
  c_.rx_bytes += p.bytes;
  EventLog log{this};
  ttl_.on_rx(ttl, now, log);
}

void Host::poll(TimeNs now) {
  if (!rx_limited()) return;
  CtrlSink sink{this};
  ingress_.poll(now, sink);
}

TimeNs Host::next_deadline() const {
  return rx_limited() ? ingress_.next_deadline() : pfc::kNoDeadline;
}

}  // namespace uroce::testbed
