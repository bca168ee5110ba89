// The port of a real-engine host, as engine::Vnic sees a port ("PortIo":
// begin, rx_burst, tx, tx_room, flush), over the testbed's frame store
// instead of a wire.
//
// RX: the simulator queues the store slots of frames that reached the host
// (deliver()); rx_burst hands up to kBurst of them to the engine, oldest
// first, and releases their slots.
// TX: the engine builds each frame in one buffer of the port's own; at
// tx_commit the frame is copied into the store and its slot appended to the
// outbox, which the simulator drains after the poll (take_outbox) and turns
// into records (frame_record.h) for the host's TX queues.
// Back-pressure: before a poll the simulator sets the room the host's TX
// queues have (set_room); tx_room() reports what is left of it, so the
// engine's pump stops when the host is paused or its link is busy, and
// frames wait in the QPs (as on a NIC whose TX ring is full). Frames the
// engine commits with no room left (ACKs and ARP built in the RX phase,
// which does not check room) still go to the outbox; the host's queues have
// slack for them (engine_host.h).
//
// Single-threaded: the simulation's thread.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "datapath/base/time.h"
#include "testbed/frame_store.h"
#include "testbed/switch/packet_fifo.h"

namespace uroce::testbed {

struct EnginePortCounters {
  std::uint64_t rx_frames = 0;     // handed to the engine
  std::uint64_t tx_frames = 0;     // committed by the engine
  std::uint64_t tx_oversize = 0;   // tx_alloc larger than kMaxFrame: refused
  std::uint64_t tx_over_room = 0;  // committed with no room left
};

class EnginePortIo {
 public:
  static constexpr std::uint16_t kBurst = 32;
  // A RoCEv2 frame with a 4096-byte MTU is at most 4160 bytes
  // (wire::kPathMtuOverhead) plus the Ethernet header; ARP frames are 60.
  static constexpr std::size_t kMaxFrame = 9000 + 14;

  class Tx {
   public:
    explicit Tx(EnginePortIo& p) : p_(p), buf_(kMaxFrame) {}
    std::span<std::uint8_t> tx_alloc(std::size_t n) {
      if (n > buf_.size()) {
        ++p_.ctr_.tx_oversize;
        return {};
      }
      return {buf_.data(), n};
    }
    void tx_commit(std::size_t n) {
      ++p_.ctr_.tx_frames;
      if (p_.room_ == 0) {
        ++p_.ctr_.tx_over_room;
      } else {
        --p_.room_;
      }
      p_.outbox_.push_back(p_.store_.put({buf_.data(), n}));
    }

   private:
    EnginePortIo& p_;
    std::vector<std::uint8_t> buf_;
  };

  // `store` must outlive the port.
  explicit EnginePortIo(FrameStore& store) : store_(store), tx_(*this) {}
  EnginePortIo(const EnginePortIo&) = delete;
  EnginePortIo& operator=(const EnginePortIo&) = delete;

  // ---- The simulator's side ----
  // A frame (its store slot) reached the host; the port owns the slot now.
  void deliver(std::uint32_t slot) { rxq_.push(slot); }
  std::size_t rx_pending() const { return rxq_.size(); }
  void set_room(std::uint32_t frames) { room_ = frames; }
  // True once the engine has used all the room it was given.
  bool out_of_room() const { return room_ == 0; }
  // The slots committed since the last call, in order; the caller owns them.
  std::vector<std::uint32_t>& outbox() { return outbox_; }

  // ---- The engine's side (PortIo) ----
  void begin(TimeNs now) { now_ = now; }
  template <class Fn>
  std::uint16_t rx_burst(Fn&& fn) {
    std::uint16_t n = 0;
    while (n < kBurst && !rxq_.empty()) {
      const std::uint32_t slot = rxq_.pop();
      const std::span<std::uint8_t> f = store_.get(slot);
      fn(std::span<const std::uint8_t>(f.data(), f.size()));
      store_.release(slot);
      ++ctr_.rx_frames;
      ++n;
    }
    return n;
  }
  Tx& tx() { return tx_; }
  std::uint16_t tx_room() const {
    return static_cast<std::uint16_t>(room_ < kBurst ? room_ : kBurst);
  }
  // Frames are copied at commit: nothing to flush.
  std::uint16_t flush() { return 0; }

  const EnginePortCounters& counters() const { return ctr_; }
  TimeNs now() const { return now_; }

 private:
  FrameStore& store_;
  Tx tx_;
  PacketFifo<std::uint32_t> rxq_;
  std::vector<std::uint32_t> outbox_;
  std::uint32_t room_ = 0;
  TimeNs now_ = 0;
  EnginePortCounters ctr_{};
};

}  // namespace uroce::testbed
