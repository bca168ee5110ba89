// A SimPort (datapath/port/sim_link.h) as the engine loop sees a port
// ("PortIo", vnic.h), so the engine runs unchanged over the simulated
// link in tests, the testbed and the transport benchmark.
//
// TX: SimTxSink builds each frame in one buffer of its own (allocated at
// construction) and hands it to the link at tx_commit, stamped with the
// `now` of the current loop iteration (begin). The link copies it, so there
// is nothing to flush. A frame the link refuses (queue or pool full,
// oversize) is counted and is a loss for the transport, as on a real wire.
//
// RX: each frame as one span, or, after set_rx_buf(n), a frame longer than
// n bytes as a chain of n-byte segments, as a port whose RX buffers are n
// bytes hands it over (eth_port_io.h).
#pragma once

#include <cassert>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "datapath/port/sim_link.h"
#include "datapath/wire/payload.h"

namespace uroce::engine {

struct SimTxCounters {
  std::uint64_t committed = 0;  // frames handed to the link
  std::uint64_t refused = 0;    // of those, refused by the link (lost)
  std::uint64_t oversize = 0;   // tx_alloc: larger than a link frame
};

inline constexpr counters::FieldList<SimTxCounters, 3> kSimTxCounterFields{{
    {"committed", &SimTxCounters::committed, "frames handed to the link"},
    {"refused", &SimTxCounters::refused, "of those, refused by the link (lost)"},
    {"oversize", &SimTxCounters::oversize, "tx_alloc: larger than a link frame"},
}};
static_assert(counters::covers(kSimTxCounterFields));
constexpr const auto& counter_fields(const SimTxCounters&) { return kSimTxCounterFields; }

class SimTxSink {
 public:
  explicit SimTxSink(port::SimPort& port) : port_(port), buf_(port::kSimMaxFrameBytes) {}

  void set_now(TimeNs now) { now_ = now; }

  std::span<std::uint8_t> tx_alloc(std::size_t n) {
    if (n > buf_.size()) {
      ++ctr_.oversize;
      return {};
    }
    return {buf_.data(), n};
  }
  void tx_commit(std::size_t n) {
    ++ctr_.committed;
    if (!port_.tx({buf_.data(), n}, now_)) ++ctr_.refused;
  }

  const SimTxCounters& counters() const { return ctr_; }

 private:
  port::SimPort& port_;
  std::vector<std::uint8_t> buf_;
  TimeNs now_ = 0;
  SimTxCounters ctr_{};
};

class SimPortIo {
 public:
  static constexpr std::uint16_t kBurst = port::SimPort::kBurst;
  using Tx = SimTxSink;

  // `port` (and its link) must outlive this object.
  explicit SimPortIo(port::SimPort& port) : port_(port), tx_(port) {}

  void begin(TimeNs now) {
    now_ = now;
    tx_.set_now(now);
  }

  // Hands every frame arrived by the iteration's `now` (at most kBurst) to
  // fn(std::span<const std::uint8_t>), or a chained one to fn(head, tail)
  // (only to an fn that takes a tail: set_rx_buf is for those); returns
  // how many.
  template <class Fn>
  std::uint16_t rx_burst(Fn&& fn) {
    constexpr bool kTakesTail =
        std::is_invocable_v<Fn&, std::span<const std::uint8_t>, wire::FrameTail>;
    return port_.rx_burst(now_, [&](const port::SimDelivery& d) {
      if constexpr (!kTakesTail) {
        assert(rx_buf_ == 0);
        fn(d.frame);
        return;
      } else {
        if (rx_buf_ == 0 || d.frame.size() <= rx_buf_) [[likely]] {
          fn(d.frame, wire::FrameTail{});
          return;
        }
        ++chained_;
        const std::span<const std::uint8_t> head =
            wire::cut_frame(d.frame, rx_buf_, rx_buf_, segs_);
        fn(head, wire::FrameTail(segs_));
      }
    });
  }
  // Frames longer than `bytes` arrive chained; 0 = every frame whole.
  void set_rx_buf(std::size_t bytes) { rx_buf_ = bytes; }
  // Frames handed on chained.
  std::uint64_t chained() const { return chained_; }

  SimTxSink& tx() { return tx_; }
  // The link copies at commit: there is always room and nothing to flush.
  std::uint16_t tx_room() const { return kBurst; }
  std::uint16_t flush() { return 0; }

 private:
  port::SimPort& port_;
  SimTxSink tx_;
  std::size_t rx_buf_ = 0;
  std::uint64_t chained_ = 0;
  std::vector<std::span<const std::uint8_t>> segs_;
  TimeNs now_ = 0;
};

}  // namespace uroce::engine
