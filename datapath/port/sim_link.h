// A simulated full-duplex link between endpoints 0 and 1, for transport tests
// and the one-machine testbed. It carries plain byte frames (no DPDK, no EAL)
// and neither reads a clock nor does I/O: every call takes `now`, and a
// simulator jumps its VirtualClock to next_arrival(). With the same config,
// seed and call sequence, a run delivers the same bytes at the same instants
// (DESIGN: Determinism).
//
// Model of one direction (frames sent by endpoint e, received by 1 - e):
//   send(now) -> FIFO transmit queue -> wire (serialisation at bandwidth)
//             -> propagation delay -> impairments -> arrival heap -> receive
// A frame is in the transmit queue from send() until its last bit has left
// (its departure time). start = max(now, previous departure); departure =
// start + (len + overhead) * 8 / bandwidth, rounded up to a whole ns;
// arrival = departure + propagation (+ the reorder hold if chosen).
//
// Per frame, decisions are taken in this fixed order, each with its own draw
// from the direction's SeededRng, so a given seed replays exactly:
//   oversize? -> queue full? -> pool slot? -> (occupies the wire) -> loss
//   -> corruption (one random bit) -> reorder hold -> duplication.
// A lost frame still occupies the queue and the wire (it is lost on the
// wire). A duplicate is a copy of the delivered frame (corruption included)
// with the same arrival time and the next sequence number, so it arrives
// right after the original.
//
// Storage: frames are copied into a FramePool allocated at construction; the
// arrival heaps and transmit queues are preallocated too. send()/receive()
// never allocate (the optional pcap tap does buffered file I/O).
//
// Single-threaded: one simulation loop owns the link.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/base/rng.h"
#include "datapath/base/time.h"
#include "datapath/port/frame_pool.h"
#include "datapath/port/pcap_writer.h"

namespace uroce::port {

inline constexpr unsigned kSimEndpoints = 2;
inline constexpr std::uint32_t kSimMaxFrameBytes = 9216;

// One direction's properties. All probabilities are per frame in [0, 1].
struct SimDirectionConfig {
  // Line rate in bits/s; 0 means infinite (no serialisation delay, no queue).
  std::uint64_t bandwidth_bps = 0;
  // Bytes added to each frame's wire time only, e.g. 20 for Ethernet's
  // preamble + SFD + inter-frame gap. Not counted in the queue limit.
  std::uint32_t overhead_bytes = 0;
  TimeNs propagation_ns = 0;
  // Transmit queue bound (frames waiting plus the one being serialised).
  // A frame that would exceed either limit is tail-dropped. queue_frames is
  // clamped to >= 1; queue_bytes = 0 means no byte limit.
  std::uint32_t queue_frames = 1024;
  std::uint64_t queue_bytes = 0;
  double loss = 0.0;
  double duplicate = 0.0;
  double corrupt = 0.0;
  // Probability that a frame is held back by reorder_hold_ns extra, so frames
  // sent after it can overtake it.
  double reorder = 0.0;
  TimeNs reorder_hold_ns = 10 * kNsPerUs;
  // Probability that an ECN-capable IPv4 frame (ECT(0) or ECT(1)) arrives
  // marked CE, as from a congested switch queue (RFC 3168); the IPv4
  // header checksum is rewritten (the ICRC masks the TOS byte).
  double ce_mark = 0.0;
};

struct SimLinkConfig {
  // dir[e] describes frames sent by endpoint e.
  std::array<SimDirectionConfig, kSimEndpoints> dir{};
  // Frames in flight on both directions together (queued, on the wire,
  // propagating or waiting to be received) are bounded by this pool.
  std::uint32_t pool_frames = 4096;
  std::uint32_t slot_bytes = kSimMaxFrameBytes;
  std::uint64_t seed = 1;

  static SimLinkConfig symmetric(const SimDirectionConfig& d, std::uint64_t seed = 1) {
    SimLinkConfig c;
    c.dir = {d, d};
    c.seed = seed;
    return c;
  }
};

enum class SimSendResult : std::uint8_t {
  kQueued,                // will arrive (possibly corrupted/duplicated)
  kDroppedLoss,           // occupied the wire, then lost
  kDroppedQueueFull,      // tail drop at the transmit queue
  kDroppedPoolExhausted,  // no free frame slot
  kDroppedOversize,       // longer than a pool slot
  kBadEndpoint,           // endpoint not 0 or 1; nothing counted
};

// Counters of one direction. Invariant, at any instant:
//   sent_frames + duplicated == delivered_frames + drop_loss
//     + drop_queue_full + drop_pool_exhausted + drop_oversize + in flight
// (a duplicate that finds no free slot counts in duplicated and in
// drop_pool_exhausted).
struct SimDirectionCounters {
  std::uint64_t sent_frames = 0;  // every send() with a valid endpoint
  std::uint64_t sent_bytes = 0;
  std::uint64_t delivered_frames = 0;  // duplicates included
  std::uint64_t delivered_bytes = 0;
  std::uint64_t drop_loss = 0;
  std::uint64_t drop_queue_full = 0;
  std::uint64_t drop_pool_exhausted = 0;
  std::uint64_t drop_oversize = 0;
  std::uint64_t duplicated = 0;
  std::uint64_t reordered = 0;  // frames held back (whether or not overtaken)
  std::uint64_t corrupted = 0;
  std::uint64_t ce_marked = 0;  // ECN-capable frames marked CE
};

inline constexpr counters::FieldList<SimDirectionCounters, 12> kSimDirectionCounterFields{{
    {"sent_frames", &SimDirectionCounters::sent_frames, "every send() with a valid endpoint"},
    {"sent_bytes", &SimDirectionCounters::sent_bytes, "bytes of the frames sent"},
    {"delivered_frames", &SimDirectionCounters::delivered_frames, "duplicates included"},
    {"delivered_bytes", &SimDirectionCounters::delivered_bytes, "bytes of the frames delivered"},
    {"drop_loss", &SimDirectionCounters::drop_loss, "frames dropped by the configured loss"},
    {"drop_queue_full", &SimDirectionCounters::drop_queue_full,
     "frames dropped: the link queue was full"},
    {"drop_pool_exhausted", &SimDirectionCounters::drop_pool_exhausted,
     "frames dropped: no free frame slot"},
    {"drop_oversize", &SimDirectionCounters::drop_oversize, "frames dropped: larger than a slot"},
    {"duplicated", &SimDirectionCounters::duplicated,
     "frames delivered twice by the configured duplication"},
    {"reordered", &SimDirectionCounters::reordered, "frames held back (whether or not overtaken)"},
    {"corrupted", &SimDirectionCounters::corrupted,
     "frames corrupted by the configured corruption"},
    {"ce_marked", &SimDirectionCounters::ce_marked, "ECN-capable frames marked CE"},
}};
static_assert(counters::covers(kSimDirectionCounterFields));
constexpr const auto& counter_fields(const SimDirectionCounters&) {
  return kSimDirectionCounterFields;
}

// A frame handed to the receiver. `frame` points into the link's pool and is
// valid only until the frame is popped.
struct SimDelivery {
  std::span<const std::uint8_t> frame;
  TimeNs arrival = 0;
  // Per-direction sequence number taken at send(); orders equal arrivals.
  std::uint64_t seq = 0;
};

class SimLink {
 public:
  explicit SimLink(const SimLinkConfig& cfg);
  SimLink(const SimLink&) = delete;
  SimLink& operator=(const SimLink&) = delete;

  // Sends `frame` from `endpoint` toward the other endpoint at `now`.
  SimSendResult send(unsigned endpoint, std::span<const std::uint8_t> frame, TimeNs now);

  // The earliest frame that has arrived at `endpoint` by `now` (arrival time,
  // then sequence number), without removing it; nullopt if none.
  std::optional<SimDelivery> peek(unsigned endpoint, TimeNs now) const;
  // Removes the frame peek() returned: counts it, writes it to the pcap tap
  // of its direction, frees its slot. No-op if nothing has arrived by `now`.
  void pop(unsigned endpoint, TimeNs now);

  // Hands every frame that has arrived at `endpoint` by `now`, up to `max`,
  // to fn(const SimDelivery&) in arrival order; returns how many. The frame
  // bytes are valid only during the call.
  template <class Fn>
  std::size_t receive(unsigned endpoint, TimeNs now, Fn&& fn, std::size_t max = SIZE_MAX) {
    std::size_t n = 0;
    while (n < max) {
      const std::optional<SimDelivery> d = peek(endpoint, now);
      if (!d) break;
      fn(*d);
      pop(endpoint, now);
      ++n;
    }
    return n;
  }

  // Changes the CE-marking probability of frames `endpoint` sends
  // (SimDirectionConfig::ce_mark) from now on.
  void set_ce_mark(unsigned endpoint, double p) {
    if (endpoint < kSimEndpoints) dir_[endpoint].cfg.ce_mark = p;
  }
  // When the next frame arrives at `endpoint`, or at either endpoint.
  std::optional<TimeNs> next_arrival(unsigned endpoint) const;
  std::optional<TimeNs> next_arrival() const;

  // Frames on their way to `endpoint`: sent by the other end and not yet
  // received (queued, on the wire, propagating or arrived but not popped).
  std::size_t in_flight_to(unsigned endpoint) const;

  // Attaches a capture of the frames received at `endpoint` (nullptr
  // detaches). Frames are written when they are popped, stamped with their
  // arrival time, so the file shows exactly what the receiver saw, in the
  // order it saw it, with virtual timestamps. One writer may be attached to
  // both endpoints; the file then interleaves the two in receive-call order.
  // The writer must outlive the link or be detached first.
  void attach_pcap(unsigned endpoint, PcapWriter* writer);

  // Counters of frames sent by `endpoint` (an invalid endpoint reads
  // endpoint 0's).
  const SimDirectionCounters& counters(unsigned endpoint) const {
    return dir_[endpoint < kSimEndpoints ? endpoint : 0].counters;
  }
  const FramePool& pool() const { return pool_; }
  // pcap write errors (the tap never affects delivery).
  std::uint64_t pcap_errors() const { return pcap_errors_; }

  // Wire time of a frame of `bytes` at `cfg`'s bandwidth (0 if infinite).
  static TimeNs serialisation_ns(const SimDirectionConfig& cfg, std::size_t bytes);

 private:
  struct InFlight {
    TimeNs arrival;
    std::uint64_t seq;
    std::uint32_t slot;
    std::uint32_t len;
  };
  struct Queued {
    TimeNs departure;
    std::uint32_t len;
  };
  // Heap order: the top is the earliest arrival, then lowest seq.
  struct Later {
    bool operator()(const InFlight& a, const InFlight& b) const {
      return a.arrival != b.arrival ? a.arrival > b.arrival : a.seq > b.seq;
    }
  };
  struct Direction {
    SimDirectionConfig cfg;
    SeededRng rng;
    // Min-heap on (arrival, seq); capacity reserved = pool size, and each
    // entry holds a pool slot, so push_back never reallocates.
    std::vector<InFlight> heap;
    // Transmit queue as a ring of departures, capacity cfg.queue_frames.
    std::vector<Queued> txq;
    std::size_t txq_head = 0;
    std::size_t txq_count = 0;
    std::uint64_t txq_bytes = 0;
    TimeNs wire_free_at = 0;
    std::uint64_t next_seq = 0;
    PcapWriter* pcap = nullptr;
    SimDirectionCounters counters;
  };

  // Drops transmit-queue entries whose last bit has left by `now`.
  static void drain_txq(Direction& d, TimeNs now);
  void push_arrival(Direction& d, TimeNs arrival, std::uint32_t slot, std::uint32_t len);

  FramePool pool_;
  std::array<Direction, kSimEndpoints> dir_;
  std::uint64_t pcap_errors_ = 0;
};

// One endpoint of a SimLink with the burst shape of EthPort, so engine code
// written against a port concept can run over the simulated link. Holds a
// reference: the link must outlive it.
class SimPort {
 public:
  static constexpr std::uint16_t kBurst = 32;

  SimPort(SimLink& link, unsigned endpoint) : link_(&link), endpoint_(endpoint) {}

  // Returns true if the link took the frame. A frame lost on the wire counts
  // as taken, as on a real NIC; queue-full, pool-exhausted and oversize
  // frames are refused.
  bool tx(std::span<const std::uint8_t> frame, TimeNs now) {
    const SimSendResult r = link_->send(endpoint_, frame, now);
    return r == SimSendResult::kQueued || r == SimSendResult::kDroppedLoss;
  }
  // Hands up to `max` (at most kBurst) frames arrived by `now` to
  // fn(const SimDelivery&); returns how many.
  template <class Fn>
  std::uint16_t rx_burst(TimeNs now, Fn&& fn, std::uint16_t max = kBurst) {
    return static_cast<std::uint16_t>(
        link_->receive(endpoint_, now, static_cast<Fn&&>(fn), std::min(max, kBurst)));
  }

  unsigned endpoint() const { return endpoint_; }
  SimLink& link() { return *link_; }

 private:
  SimLink* link_;
  unsigned endpoint_;
};

}  // namespace uroce::port
