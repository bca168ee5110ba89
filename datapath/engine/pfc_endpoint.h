// PFC and TTL at one device (a Vnic): the pfc/ state machines (PriorityMap,
// IngressAccounting, PauseGate, StormWatchdog, TtlMonitor) wired to the
// frames the engine receives and sends. docs/pfc.md, "In the engine".
//
// Which priorities: `enable` (bit p = priority p is lossless). The same mask
// turns on both halves for p, as on an RNIC port: we pause the peer for p
// and we obey the peer's pauses for p. Default 0 (PFC off): no staging, no
// frames generated, received PFC frames parsed and counted (disabled_rx)
// but obeyed for no priority. TTL monitoring is on by default.
//
// RX (Vnic phase 1):
//   - a MAC Control frame (EtherType 0x8808) is consumed here: parsed by the
//     gate; a malformed one is counted by reason (gate parse counters);
//   - an IPv4 frame whose DSCP maps to a lossless priority is copied into
//     that priority's staging queue and accounted (IngressAccounting::on_rx,
//     which may send XOFF); the engine processes staged frames later with
//     a per-iteration budget (drain), and on_processed() releases their
//     bytes (which may send XON). Everything else goes straight on.
//   - a frame that arrives for a priority we hold paused counts as
//     rx_while_paused (the peer's in-flight bytes, or a peer not obeying).
// TX (Vnic pump and commit):
//   - the pump skips an RC/UC QP whose priority (from its DSCP) is paused;
//   - any other frame of a paused priority (ACKs, read responses, UD sends,
//     retransmissions built in the timer phase) is copied into that
//     priority's hold queue and sent by release() once the gate opens; a
//     frame of a priority with held frames queues behind them, so order is
//     kept. A stormed priority with action drop drops its frames (counted).
// Storm watchdog and ingress refreshes run from poll(), once per iteration.
// Events (storms, loop signals) go into a fixed ring that the control
// thread drains between iterations (Engine::call) and logs.
//
// Memory: everything is allocated at construction (staging and hold queues
// only for enabled priorities; the TTL tables). Per packet: no allocation,
// no lock, no virtual call. Engine lcore only.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "datapath/engine/loopback_queue.h"
#include "datapath/wire/addr.h"
#include "datapath/wire/byteorder.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/ipv4.h"
#include "datapath/wire/parser.h"
#include "datapath/wire/pfc.h"
#include "pfc/events.h"
#include "pfc/ingress_accounting.h"
#include "pfc/pause_gate.h"
#include "pfc/priority_map.h"
#include "pfc/sinks.h"
#include "pfc/storm_watchdog.h"
#include "pfc/ttl_monitor.h"

namespace uroce::engine {

inline constexpr std::uint8_t kNumPfcPrio = pfc::kNumPriorities;

struct PfcEndpointConfig {
  std::uint8_t enable = 0;  // bit p: priority p lossless (generate and obey PFC)
  // The port's speed, for quanta <-> ns in both directions. 0: not known
  // yet (the daemon fills it from the port or the configuration).
  std::uint64_t link_bps = 0;
  pfc::PriorityMap map{};
  // Thresholds and frames; src_mac, pfc_enable and link_bps are taken from
  // the fields above and the device.
  pfc::IngressConfig ingress = default_ingress();
  std::uint16_t max_quanta = 0xffff;  // received quanta above it are clamped
  bool storm_watchdog = true;
  pfc::StormWatchdogConfig storm{};
  bool ttl_monitor = true;
  // tx_ttl is the TTL of every RoCEv2 packet the device sends; own_mac and
  // own_ip are the device's.
  pfc::TtlMonitorConfig ttl{};
  std::uint32_t stage_slots = 512;  // frames staged per lossless priority
  std::uint32_t rx_budget = 64;     // staged frames processed per iteration
  std::uint32_t hold_slots = 64;    // frames held per paused priority

  // An endpoint's buffer is what it lets a peer have in flight unprocessed:
  // smaller than a switch's.
  static pfc::IngressConfig default_ingress() {
    pfc::IngressConfig c;
    c.buffer_bytes = 512u << 10;
    c.headroom_bytes = 64u << 10;
    c.xoff_bytes = 128u << 10;
    c.xon_bytes = 64u << 10;
    c.xon_offset_bytes = 16u << 10;
    return c;
  }
};

// Per priority, what the engine adds to the pfc/ counters.
struct PfcEnginePrioCounters {
  std::uint64_t staged = 0;           // frames staged (accounted)
  std::uint64_t processed = 0;        // staged frames handed on
  std::uint64_t stage_full = 0;       // dropped: staging queue full
  std::uint64_t admit_drops = 0;      // dropped: IngressAccounting refused
  std::uint64_t rx_while_paused = 0;  // frames arriving while we pause the peer
  std::uint64_t tx_held = 0;          // frames put in the hold queue
  std::uint64_t tx_released = 0;      // held frames sent once the gate opened
  std::uint64_t tx_hold_full = 0;     // dropped: hold queue full
  std::uint64_t tx_storm_drops = 0;   // dropped: stormed with action drop
  std::uint64_t pump_skips = 0;       // QP turns skipped: priority paused
};

inline constexpr counters::FieldList<PfcEnginePrioCounters, 10> kPfcEnginePrioCounterFields{{
    {"staged", &PfcEnginePrioCounters::staged, "frames staged (accounted)"},
    {"processed", &PfcEnginePrioCounters::processed, "staged frames handed on"},
    {"stage_full", &PfcEnginePrioCounters::stage_full, "dropped: staging queue full"},
    {"admit_drops", &PfcEnginePrioCounters::admit_drops, "dropped: IngressAccounting refused"},
    {"rx_while_paused", &PfcEnginePrioCounters::rx_while_paused,
     "frames arriving while we pause the peer"},
    {"tx_held", &PfcEnginePrioCounters::tx_held, "frames put in the hold queue"},
    {"tx_released", &PfcEnginePrioCounters::tx_released, "held frames sent once the gate opened"},
    {"tx_hold_full", &PfcEnginePrioCounters::tx_hold_full, "dropped: hold queue full"},
    {"tx_storm_drops", &PfcEnginePrioCounters::tx_storm_drops, "dropped: stormed with action drop"},
    {"pump_skips", &PfcEnginePrioCounters::pump_skips, "QP turns skipped: priority paused"},
}};
static_assert(counters::covers(kPfcEnginePrioCounterFields));
constexpr const auto& counter_fields(const PfcEnginePrioCounters&) {
  return kPfcEnginePrioCounterFields;
}

struct PfcEngineCounters {
  std::array<PfcEnginePrioCounters, kNumPfcPrio> prio{};
  std::uint64_t mac_control_rx = 0;  // EtherType 0x8808 frames consumed
  std::uint64_t pfc_tx = 0;          // PFC frames we sent
  std::uint64_t pfc_tx_no_buffer = 0;
  std::uint64_t events_lost = 0;  // event ring full (filled in status())
};

inline constexpr counters::FieldList<PfcEngineCounters, 4> kPfcEngineCounterFields{{
    {"mac_control_rx", &PfcEngineCounters::mac_control_rx, "EtherType 0x8808 frames consumed"},
    {"pfc_tx", &PfcEngineCounters::pfc_tx, "PFC frames we sent"},
    {"pfc_tx_no_buffer", &PfcEngineCounters::pfc_tx_no_buffer, "PFC frames not sent: no TX buffer"},
    {"events_lost", &PfcEngineCounters::events_lost, "event ring full (filled in status())"},
}};
static_assert(counters::covers(kPfcEngineCounterFields, &PfcEngineCounters::prio));
constexpr const auto& counter_fields(const PfcEngineCounters&) { return kPfcEngineCounterFields; }

// A copy of everything, for status (control path).
struct PfcStatus {
  std::uint8_t enable = 0;
  std::uint64_t link_bps = 0;
  std::uint8_t tx_ttl = 0;
  pfc::IngressCounters ingress{};
  pfc::PauseGateCounters gate{};
  std::array<pfc::StormPrioCounters, kNumPfcPrio> storm{};
  pfc::TtlCounters ttl{};
  PfcEngineCounters engine{};
  std::array<TimeNs, kNumPfcPrio> paused_ns{};    // the peer held us
  std::array<TimeNs, kNumPfcPrio> asserted_ns{};  // we held the peer
  std::array<TimeNs, kNumPfcPrio> stormed_ns{};
  std::array<bool, kNumPfcPrio> stormed{};
  std::array<bool, kNumPfcPrio> peer_paused{};  // at the time of the snapshot
  std::array<bool, kNumPfcPrio> asserted{};
  std::array<std::uint64_t, kNumPfcPrio> occupied{};
  std::array<std::uint32_t, kNumPfcPrio> held{};
};

// The fixed ring the engine records events in; the control thread drains it
// through Engine::call. A full ring drops the newest event (counted).
class PfcEventRing {
 public:
  static constexpr std::uint32_t kSlots = 64;
  void event(const pfc::PfcEvent& e) {
    if (count_ == kSlots) {
      ++lost_;
      return;
    }
    ev_[(head_ + count_) % kSlots] = e;
    ++count_;
  }
  void drain(std::vector<pfc::PfcEvent>* out) {
    for (; count_ != 0; --count_, head_ = (head_ + 1) % kSlots) out->push_back(ev_[head_]);
  }
  std::uint32_t size() const { return count_; }
  std::uint64_t lost() const { return lost_; }

 private:
  std::array<pfc::PfcEvent, kSlots> ev_{};
  std::uint32_t head_ = 0;
  std::uint32_t count_ = 0;
  std::uint64_t lost_ = 0;
};

class PfcEndpoint {
 public:
  enum class Stage : std::uint8_t { kNotStaged, kStaged, kDropped };
  enum class Hold : std::uint8_t { kSend, kHeld, kDropped };

  // `mac`/`ip` are the device's; `slot_bytes` the largest frame. The config
  // must have passed the pfc/ checks (the daemon's loader runs them) with
  // link_bps set; a link_bps of 0 is taken as 100 Gb/s.
  PfcEndpoint(const PfcEndpointConfig& c, const wire::MacAddr& mac, wire::Ipv4Addr ip,
              std::uint32_t slot_bytes)
      : cfg_(c),
        ingress_(ingress_config(c, mac)),
        gate_(gate_config(c)),
        storm_(c.storm),
        ttl_(ttl_config(c, mac, ip)) {
    for (std::uint8_t p = 0; p < kNumPfcPrio; ++p) {
      if (lossless(p)) {
        stage_[p] = std::make_unique<LoopbackQueue>(c.stage_slots, slot_bytes);
        hold_[p] = std::make_unique<LoopbackQueue>(c.hold_slots, slot_bytes);
      }
    }
  }

  const PfcEndpointConfig& config() const { return cfg_; }
  bool staging() const { return cfg_.enable != 0; }
  bool lossless(std::uint8_t p) const { return ((cfg_.enable >> p) & 1) != 0; }
  std::uint8_t tx_ttl() const { return cfg_.ttl.tx_ttl; }

  // Once per iteration: due XOFF refreshes (and a frame that found no TX
  // buffer), then the storm watchdog.
  template <pfc::FrameSink Tx>
  void poll(TimeNs now, Tx& tx) {
    if (cfg_.enable == 0) return;
    ingress_.poll(now, tx);
    if (cfg_.storm_watchdog) storm_.poll(now, gate_, events_);
  }

  // True when `f` is a MAC Control frame (consumed here, valid or not).
  bool on_mac_control(std::span<const std::uint8_t> f, TimeNs now) {
    if (f.size() < wire::EthHdr::kSize ||
        wire::load_be16(f.data() + 12) != wire::kEtherTypeMacControl) {
      return false;
    }
    ++ctr_.mac_control_rx;
    gate_.on_frame(f, now);
    return true;
  }

  // The priority of an IPv4 frame from its DSCP, of an IPv6 frame from the
  // DSCP in its traffic class (the same mapping); false for anything else.
  bool rx_priority(std::span<const std::uint8_t> f, std::uint8_t* prio) const {
    constexpr std::size_t kIp = wire::EthHdr::kSize;
    if (f.size() < kIp + wire::Ipv4Hdr::kSize) return false;
    const std::uint16_t type = wire::load_be16(f.data() + 12);
    std::uint8_t dscp = 0;
    if (type == wire::kEtherTypeIpv4) {
      dscp = static_cast<std::uint8_t>(f[kIp + 1] >> 2);
    } else if (type == wire::kEtherTypeIpv6) {
      // Traffic class = low nibble of byte 0, high nibble of byte 1.
      dscp = static_cast<std::uint8_t>((f[kIp] & 0x0f) << 2 | f[kIp + 1] >> 6);
    } else {
      return false;
    }
    *prio = cfg_.map.priority_of_dscp(dscp);
    return true;
  }

  // A frame in one buffer.
  template <pfc::FrameSink Tx>
  Stage stage(std::span<const std::uint8_t> f, TimeNs now, Tx& tx) {
    return stage(f, {}, now, tx);
  }
  // A frame from the port (a chained one: `f` and `tail`): staged, as one
  // buffer, when its priority is lossless.
  template <pfc::FrameSink Tx>
  Stage stage(std::span<const std::uint8_t> f, wire::FrameTail tail, TimeNs now, Tx& tx) {
    std::uint8_t p = 0;
    if (!rx_priority(f, &p) || !lossless(p)) return Stage::kNotStaged;
    PfcEnginePrioCounters& c = ctr_.prio[p];
    if (ingress_.asserted(p)) ++c.rx_while_paused;
    LoopbackQueue& q = *stage_[p];
    if (q.size() == cfg_.stage_slots) {
      ++c.stage_full;
      return Stage::kDropped;
    }
    const auto bytes = static_cast<std::uint32_t>(f.size() + wire::tail_bytes(tail));
    if (ingress_.on_rx(p, bytes, now, tx) != pfc::RxAdmit::kAccepted) {
      ++c.admit_drops;
      return Stage::kDropped;
    }
    q.push(f, tail);
    ++c.staged;
    ++staged_total_;
    return Stage::kStaged;
  }

  // Hands at most rx_budget staged frames to fn(span) (priorities in turn,
  // one frame each, starting one further every call), releasing each one's
  // bytes once fn returned. Returns how many.
  template <pfc::FrameSink Tx, class Fn>
  std::uint32_t drain(TimeNs now, Tx& tx, Fn&& fn) {
    std::uint32_t done = 0;
    while (done < cfg_.rx_budget && staged_total_ != 0) {
      for (std::uint8_t i = 0; i < kNumPfcPrio && done < cfg_.rx_budget; ++i) {
        const auto p = static_cast<std::uint8_t>((next_ + i) & 7);
        if (!stage_[p] || stage_[p]->empty()) continue;
        const std::span<const std::uint8_t> f = stage_[p]->front();
        const auto bytes = static_cast<std::uint32_t>(f.size());
        fn(f);
        stage_[p]->pop();
        --staged_total_;
        ++ctr_.prio[p].processed;
        ingress_.on_processed(p, bytes, now, tx);
        ++done;
      }
    }
    next_ = static_cast<std::uint8_t>((next_ + 1) & 7);
    return done;
  }
  std::uint32_t staged() const { return staged_total_; }

  // TTL loop signals of a received RoCEv2 packet (from the port only).
  // The TTL monitor keys peers by IPv4 address: IPv6 frames are not watched.
  void on_roce_rx(const wire::ParsedPacket& pkt, TimeNs now) {
    if (cfg_.ttl_monitor && !pkt.ipv6) ttl_.on_rx(pkt, now, events_);
  }

  // May the pump serve a connected QP sending with `dscp`? (A stormed
  // priority with action drop is served; its frames drop at commit.)
  bool tx_paused_dscp(std::uint8_t dscp, TimeNs now) {
    const std::uint8_t p = cfg_.map.priority_of_dscp(dscp & 0x3f);
    if (gate_.override_of(p) != pfc::GateOverride::kNone || !gate_.peer_paused(p, now)) {
      return false;
    }
    ++ctr_.prio[p].pump_skips;
    return true;
  }

  // A frame about to be committed to the port: send it, or it has been
  // held (copied) or dropped here.
  Hold on_tx(std::span<const std::uint8_t> f, TimeNs now) {
    std::uint8_t p = 0;
    if (cfg_.enable == 0 || !rx_priority(f, &p) || !lossless(p)) return Hold::kSend;
    const pfc::TxVerdict v = gate_.tx_verdict(p, now);
    if (v == pfc::TxVerdict::kDrop) {
      ++ctr_.prio[p].tx_storm_drops;
      return Hold::kDropped;
    }
    LoopbackQueue& h = *hold_[p];
    if (v == pfc::TxVerdict::kSend && h.empty()) return Hold::kSend;
    if (!h.push(f)) {
      ++ctr_.prio[p].tx_hold_full;
      return Hold::kDropped;
    }
    ++ctr_.prio[p].tx_held;
    ++held_total_;
    return Hold::kHeld;
  }

  // Sends the held frames of every priority whose gate is open (drops them
  // if it stormed with action drop), while the sink has buffers.
  template <pfc::FrameSink Tx>
  std::uint32_t release(TimeNs now, Tx& tx) {
    if (held_total_ == 0) return 0;
    std::uint32_t sent = 0;
    for (std::uint8_t p = 0; p < kNumPfcPrio; ++p) {
      if (!hold_[p]) continue;
      LoopbackQueue& h = *hold_[p];
      while (!h.empty()) {
        const pfc::TxVerdict v = gate_.tx_verdict(p, now);
        if (v == pfc::TxVerdict::kWait) break;
        if (v == pfc::TxVerdict::kSend) {
          const std::span<const std::uint8_t> f = h.front();
          const std::span<std::uint8_t> b = tx.tx_alloc(f.size());
          if (b.size() < f.size()) return sent;
          std::memcpy(b.data(), f.data(), f.size());
          tx.tx_commit(f.size());
          ++ctr_.prio[p].tx_released;
          ++sent;
        } else {
          ++ctr_.prio[p].tx_storm_drops;
        }
        h.pop();
        --held_total_;
      }
    }
    return sent;
  }
  std::uint32_t held() const { return held_total_; }

  // PFC frames we generate pass through this sink adapter's owner; it
  // counts them here.
  void count_pfc_tx(bool ok) { ok ? ++ctr_.pfc_tx : ++ctr_.pfc_tx_no_buffer; }

  // For a caller on a virtual clock: the earliest instant at which a poll
  // has PFC work that no new input brings: `now` while staged frames wait
  // for their budget; else the earliest of an XOFF refresh (or a PFC frame
  // that found no buffer), the end of a pause we obey (served QPs and held
  // frames go on then) and a storm watchdog transition; pfc::kNoDeadline
  // when none.
  TimeNs next_deadline(TimeNs now) const {
    if (cfg_.enable == 0) return pfc::kNoDeadline;
    if (staged_total_ != 0) return now;
    TimeNs t = ingress_.next_deadline();
    for (std::uint8_t p = 0; p < kNumPfcPrio; ++p) {
      if (gate_.peer_paused(p, now) && gate_.resume_at(p) < t) t = gate_.resume_at(p);
    }
    if (cfg_.storm_watchdog) t = std::min(t, storm_.next_deadline(gate_, now));
    return t;
  }

  // Control path.
  void drain_events(std::vector<pfc::PfcEvent>* out) { events_.drain(out); }
  PfcStatus status(TimeNs now) const {
    PfcStatus s;
    s.enable = cfg_.enable;
    s.link_bps = gate_.config().link_bps;
    s.tx_ttl = cfg_.ttl.tx_ttl;
    s.ingress = ingress_.counters();
    s.gate = gate_.counters();
    s.storm = storm_.counters();
    s.ttl = ttl_.counters();
    s.engine = ctr_;
    s.engine.events_lost = events_.lost();
    for (std::uint8_t p = 0; p < kNumPfcPrio; ++p) {
      s.paused_ns[p] = gate_.paused_ns(p, now);
      s.asserted_ns[p] = ingress_.asserted_ns(p, now);
      s.stormed_ns[p] = storm_.stormed_ns(p, now);
      s.stormed[p] = storm_.stormed(p);
      s.peer_paused[p] = gate_.peer_paused(p, now);
      s.asserted[p] = ingress_.asserted(p);
      s.occupied[p] = ingress_.occupied(p);
      s.held[p] = hold_[p] ? hold_[p]->size() : 0;
    }
    return s;
  }
  const PfcEngineCounters& counters() const { return ctr_; }
  const pfc::PauseGate& gate() const { return gate_; }
  const pfc::IngressAccounting& ingress() const { return ingress_; }
  const pfc::TtlMonitor& ttl() const { return ttl_; }

 private:
  static std::uint64_t bps(const PfcEndpointConfig& c) {
    return c.link_bps != 0 ? c.link_bps : 100'000'000'000ull;
  }
  static pfc::IngressConfig ingress_config(const PfcEndpointConfig& c, const wire::MacAddr& mac) {
    pfc::IngressConfig i = c.ingress;
    i.src_mac = mac;
    i.pfc_enable = c.enable;
    i.link_bps = bps(c);
    return i;
  }
  static pfc::PauseGateConfig gate_config(const PfcEndpointConfig& c) {
    pfc::PauseGateConfig g;
    g.pfc_enable = c.enable;
    g.link_bps = bps(c);
    g.max_quanta = c.max_quanta;
    return g;
  }
  static pfc::TtlMonitorConfig ttl_config(const PfcEndpointConfig& c, const wire::MacAddr& mac,
                                          wire::Ipv4Addr ip) {
    pfc::TtlMonitorConfig t = c.ttl;
    t.own_mac = mac;
    t.own_ip = ip;
    return t;
  }

  PfcEndpointConfig cfg_;
  pfc::IngressAccounting ingress_;
  pfc::PauseGate gate_;
  pfc::StormWatchdog storm_;
  pfc::TtlMonitor ttl_;
  PfcEventRing events_{};
  std::array<std::unique_ptr<LoopbackQueue>, kNumPfcPrio> stage_{};
  std::array<std::unique_ptr<LoopbackQueue>, kNumPfcPrio> hold_{};
  std::uint32_t staged_total_ = 0;
  std::uint32_t held_total_ = 0;
  std::uint8_t next_ = 0;  // first priority the next drain looks at
  PfcEngineCounters ctr_{};
};

}  // namespace uroce::engine
