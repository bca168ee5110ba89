// A switch's shared packet buffer with per-ingress-queue accounting and
// dynamic-threshold PFC (the switch-side counterpart of IngressAccounting,
// which models one endpoint port with a buffer of its own). Each port's
// XOFF / refresh / XON state and frames are the endpoint's
// (pfc/pause_assertion.h), as are the threshold and the configuration
// rules; what is the switch's own is the split of one buffer between ports
// into shared space and headroom, and the XOFF and XON conditions below.
//
// Every packet the switch holds is charged to its ingress queue (in_port,
// priority) until it leaves the switch. The buffer is split once, at
// construction:
//   headroom  headroom_bytes reserved per (port, lossless priority), for
//             what is still in flight after an XOFF;
//   shared    buffer_bytes - ports x E x headroom_bytes (E = number of
//             PFC-enabled priorities), used by every queue.
// With S = shared bytes in use over the whole switch, every queue sees the
// same dynamic threshold
//   T = floor(alpha_num x max(shared - S, 0) / alpha_den)
// ("alpha x (buffer - occupied)"). Per queue, with s its shared bytes and h
// its headroom bytes:
//   admission  s + len <= T and S + len <= shared  -> charged to shared;
//              else lossless and h + len <= headroom_bytes -> headroom;
//              else dropped (kDropHeadroomFull for lossless: the upstream
//              sent past our XOFF by more than the headroom;
//              kDropLossyFull for lossy priorities).
//   XOFF       lossless and (h > 0 or (s > 0 and s >= T));
//   XON        h == 0 and (s == 0 or s + xon_offset_bytes <= T).
// Release (the packet left on its egress port, or was dropped there) takes
// from the queue's headroom first, then from shared: headroom drains first.
// Because T moves with S, every change re-evaluates every lossless queue of
// every port (a ports x 8 loop): one queue filling can pause another port.
//
// PFC frames: when a queue crosses XOFF a frame pausing its priority for
// xoff_quanta goes to that queue's port (toward the upstream neighbour);
// while it stays paused it is refreshed once refresh_percent of the pause
// time has passed; XON sends zero quanta at once. One frame per port per
// evaluation carries every priority of that port that changes. If the sink
// has no room the state is kept and poll() retries.
//
// Single-threaded; allocation only at construction.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "datapath/base/time.h"
#include "datapath/wire/addr.h"
#include "datapath/wire/pfc.h"
#include "pfc/pause_assertion.h"
#include "pfc/priority_map.h"
#include "pfc/sinks.h"

namespace uroce::testbed {

// Ports a switch model may have (bit masks of ports are 64 bits wide).
inline constexpr std::size_t kMaxSwitchPorts = 64;

struct SharedBufferConfig {
  std::uint64_t buffer_bytes = 12'000'000;
  std::uint64_t headroom_bytes = 64u << 10;  // per (port, lossless priority)
  std::uint8_t pfc_enable = 0x08;            // bit p: priority p is lossless
  std::uint32_t alpha_num = 1;               // alpha = alpha_num / alpha_den
  std::uint32_t alpha_den = 16;
  std::uint64_t xon_offset_bytes = 2048;  // hysteresis below T
  std::uint16_t xoff_quanta = 0xffff;
  std::uint32_t refresh_percent = 50;  // of the pause time, 1..99
};

// One port as the buffer sees it: the rate that times its pauses, and the
// source MAC of the frames it sends.
struct SharedBufferPort {
  std::uint64_t link_bps = 40'000'000'000ull;
  wire::MacAddr mac{};
};

enum class SharedBufferConfigError : std::uint8_t {
  kOk = 0,
  kNoPorts,
  kTooManyPorts,  // more than kMaxSwitchPorts
  kZeroLinkSpeed,
  kZeroQuanta,
  kBadRefreshPercent,      // not in 1..99
  kPauseTooShort,          // a port's refresh interval rounds to 0 ns
  kBadBufferSize,          // 0 or above 1 TiB
  kHeadroomExceedsBuffer,  // ports x E x headroom >= buffer: no shared pool
  kBadAlpha,               // num or den 0, or above 65536
};
std::string_view shared_buffer_config_error_name(SharedBufferConfigError e);

enum class BufferAdmit : std::uint8_t {
  kShared = 0,
  kHeadroom,
  kDropBadQueue,      // port or priority out of range (caller bug)
  kDropLossyFull,     // lossy priority over the threshold or pool full
  kDropHeadroomFull,  // lossless priority, its headroom exhausted
};
inline bool admitted(BufferAdmit a) {
  return a == BufferAdmit::kShared || a == BufferAdmit::kHeadroom;
}

struct BufferQueueCounters {
  std::uint64_t rx_packets = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t headroom_packets = 0;  // admitted into headroom
  std::uint64_t released_bytes = 0;
  std::uint64_t drops_lossy_full = 0;
  std::uint64_t drops_headroom_full = 0;
  std::uint64_t xoff_sent = 0;
  std::uint64_t refresh_sent = 0;
  std::uint64_t xon_sent = 0;
  std::uint64_t refresh_late = 0;  // sent after the previous pause had lapsed
  std::uint64_t peak_shared_bytes = 0;
  std::uint64_t peak_headroom_bytes = 0;
};

struct BufferCounters {
  std::uint64_t frames_sent = 0;
  std::uint64_t tx_no_buffer = 0;
  std::uint64_t bad_queue = 0;
  std::uint64_t release_underflow = 0;  // released more than was held: clamped
  std::uint64_t peak_used_bytes = 0;    // shared + headroom
};

// Where the buffer sends PFC frames: room for one frame on `port`, then
// commit. The same shape as FrameSink with a port.
template <class T>
concept PortFrameSink = requires(T t, std::uint16_t port, std::size_t n) {
  { t.tx_alloc(port, n) } -> std::same_as<std::span<std::uint8_t>>;
  { t.tx_commit(port, n) } -> std::same_as<void>;
};

class SharedBuffer {
 public:
  static SharedBufferConfigError check(const SharedBufferConfig& cfg,
                                       std::span<const SharedBufferPort> ports);

  // Precondition: check(cfg, ports) == kOk.
  SharedBuffer(const SharedBufferConfig& cfg, std::span<const SharedBufferPort> ports);

  template <PortFrameSink Tx>
  BufferAdmit on_rx(std::uint16_t port, std::uint8_t prio, std::uint32_t bytes, TimeNs now,
                    Tx& tx) {
    const BufferAdmit r = admit(port, prio, bytes);
    if (admitted(r)) evaluate(now, tx);
    return r;
  }

  template <PortFrameSink Tx>
  void on_release(std::uint16_t port, std::uint8_t prio, std::uint32_t bytes, TimeNs now, Tx& tx) {
    if (release(port, prio, bytes)) evaluate(now, tx);
  }

  // Sends due refreshes and retries frames a sink had no room for.
  template <PortFrameSink Tx>
  void poll(TimeNs now, Tx& tx) {
    if (now >= next_deadline()) evaluate(now, tx);
  }

  // Earliest time poll() has work: a refresh, or 0 when a frame waits for
  // room; kNoDeadline when nothing is paused.
  TimeNs next_deadline() const;

  std::size_t num_ports() const { return ports_.size(); }
  // The dynamic XOFF threshold T at this instant.
  std::uint64_t threshold() const;
  std::uint64_t shared_capacity() const { return shared_cap_; }
  std::uint64_t shared_used() const { return shared_used_; }
  std::uint64_t headroom_used() const { return headroom_used_; }
  std::uint64_t used() const { return shared_used_ + headroom_used_; }
  std::uint64_t queue_shared(std::uint16_t port, std::uint8_t prio) const {
    return q(port, prio).shared;
  }
  std::uint64_t queue_headroom(std::uint16_t port, std::uint8_t prio) const {
    return q(port, prio).headroom;
  }
  std::uint64_t queue_bytes(std::uint16_t port, std::uint8_t prio) const {
    return q(port, prio).shared + q(port, prio).headroom;
  }
  // True while the upstream neighbour on `port` has been told to pause.
  bool asserted(std::uint16_t port, std::uint8_t prio) const { return pause_[port].asserted(prio); }
  // Total time (port, prio) has been held paused, up to `now`.
  TimeNs asserted_ns(std::uint16_t port, std::uint8_t prio, TimeNs now) const {
    return pause_[port].asserted_ns(prio, now);
  }
  TimeNs pause_ns(std::uint16_t port) const { return pause_[port].pause_ns(); }
  TimeNs refresh_ns(std::uint16_t port) const { return pause_[port].refresh_ns(); }
  const BufferQueueCounters& counters(std::uint16_t port, std::uint8_t prio) const {
    return q(port, prio).c;
  }
  const BufferCounters& counters() const { return c_; }
  const SharedBufferConfig& config() const { return cfg_; }

 private:
  struct Queue {
    std::uint64_t shared = 0;
    std::uint64_t headroom = 0;
    BufferQueueCounters c;
  };
  // One port's PFC sink, as pfc::PauseAssertion sends through it.
  template <PortFrameSink Tx>
  struct OnPort {
    Tx& tx;
    std::uint16_t port;
    std::span<std::uint8_t> tx_alloc(std::size_t n) { return tx.tx_alloc(port, n); }
    void tx_commit(std::size_t n) { tx.tx_commit(port, n); }
  };

  Queue& q(std::uint16_t port, std::uint8_t prio) {
    return queues_[std::size_t{port} * pfc::kNumPriorities + (prio & 7)];
  }
  const Queue& q(std::uint16_t port, std::uint8_t prio) const {
    return queues_[std::size_t{port} * pfc::kNumPriorities + (prio & 7)];
  }
  BufferAdmit admit(std::uint16_t port, std::uint8_t prio, std::uint32_t bytes);
  bool release(std::uint16_t port, std::uint8_t prio, std::uint32_t bytes);

  // Per port, XOFF for a lossless queue holding headroom, or shared bytes
  // at or over T; XON once it holds no headroom and its shared bytes are
  // none or xon_offset_bytes under T. One frame per port that changes.
  template <PortFrameSink Tx>
  void evaluate(TimeNs now, Tx& tx) {
    retry_ = false;
    const std::uint64_t t = threshold();
    for (std::uint16_t port = 0; port < ports_.size(); ++port) {
      pfc::PausePlan p;
      const auto over_xoff = [&](std::uint8_t prio) {
        const Queue& qu = q(port, prio);
        return qu.headroom > 0 || (qu.shared > 0 && qu.shared >= t);
      };
      const auto at_xon = [&](std::uint8_t prio) {
        const Queue& qu = q(port, prio);
        return qu.headroom == 0 && (qu.shared == 0 || qu.shared + cfg_.xon_offset_bytes <= t);
      };
      if (!pause_[port].plan(now, over_xoff, at_xon, p)) continue;
      OnPort<Tx> sink{tx, port};
      if (!pause_[port].send(p, ports_[port].mac, now, sink,
                             [&](std::uint8_t prio) -> BufferQueueCounters& {
                               return q(port, prio).c;
                             })) {
        ++c_.tx_no_buffer;
        retry_ = true;
        continue;
      }
      ++c_.frames_sent;
    }
  }

  SharedBufferConfig cfg_;
  std::vector<SharedBufferPort> ports_;
  std::vector<pfc::PauseAssertion> pause_;  // one per port
  std::vector<Queue> queues_;               // ports x 8, port-major
  std::uint64_t shared_cap_ = 0;
  std::uint64_t shared_used_ = 0;
  std::uint64_t headroom_used_ = 0;
  bool retry_ = false;
  BufferCounters c_;
};

}  // namespace uroce::testbed
