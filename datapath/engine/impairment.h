// Loss injection per device: a lossy wire on purpose, so a test can make a
// device drop RoCEv2 frames it sends or receives and watch the transports
// recover (retransmission, go-back-N, timeouts).
//
// What is dropped: only RoCEv2 frames (IPv4, UDP destination port 4791)
// that cross the device's port. ARP, MAC Control (PAUSE / PFC) and anything
// else pass untouched, and so do frames a QP sends to a QP of the same
// device (the loopback queue is not a wire). TX drops happen where the frame
// would be committed to the port (the QP counts it as sent, as a frame lost
// on the wire); RX drops happen before the frame is looked at.
//
// Per direction two independent rules, either of which drops:
//   every N : the Nth, 2Nth, ... RoCEv2 frame of that direction (0 = off);
//   rate P  : each RoCEv2 frame with probability P (0 = off, 1 = all), from
//             a splitmix64 stream seeded from `seed` (one stream per
//             direction), so a given seed and traffic give the same drops.
// The random stream advances once per RoCEv2 frame of the direction while
// its rate is non-zero, whatever the every-N rule decided.
// A cap per direction (max N, 0 = none) ends the direction's drops after its
// Nth: the traffic after it crosses a clean wire. A test whose programs end
// without a last handshake (ibv_rc_pingpong exits on its last completion and
// destroys its QP) needs that: the last ACK of the exchange lost once its
// receiver is gone is never answered, on any pair of stacks.
//
// Threading: engine lcore only. No allocation, no floating point per frame
// (the rate is turned into a 64-bit threshold at construction).
#pragma once

#include <cstdint>
#include <span>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/ipv4.h"
#include "datapath/wire/udp.h"

namespace uroce::engine {

struct ImpairConfig {
  std::uint32_t drop_tx_every = 0;  // drop every Nth RoCEv2 frame sent; 0 = off
  std::uint32_t drop_rx_every = 0;  // drop every Nth RoCEv2 frame received; 0 = off
  double drop_tx_rate = 0;          // fraction of RoCEv2 frames sent dropped, 0..1
  double drop_rx_rate = 0;          // fraction of RoCEv2 frames received dropped, 0..1
  std::uint64_t drop_seed = 0;      // seed of the two random streams
  std::uint32_t drop_tx_max = 0;    // at most this many frames sent dropped; 0 = no cap
  std::uint32_t drop_rx_max = 0;    // at most this many frames received dropped; 0 = no cap

  bool active() const {
    return drop_tx_every != 0 || drop_rx_every != 0 || drop_tx_rate > 0 || drop_rx_rate > 0;
  }
  // nullptr, or the name of the first field out of range (a rate outside
  // [0, 1] or NaN).
  const char* first_bad_field() const {
    if (!(drop_tx_rate >= 0 && drop_tx_rate <= 1)) return "drop_tx_rate";
    if (!(drop_rx_rate >= 0 && drop_rx_rate <= 1)) return "drop_rx_rate";
    return nullptr;
  }
};

// True when `f` is an IPv4/UDP frame to the RoCEv2 port (headers present;
// nothing else is checked).
inline bool is_roce_v2_frame(std::span<const std::uint8_t> f) {
  constexpr std::size_t kEth = wire::EthHdr::kSize;
  if (f.size() < kEth + wire::Ipv4Hdr::kSize + wire::UdpHdr::kSize) return false;
  if (wire::load_be16(f.data() + 12) != wire::kEtherTypeIpv4) return false;
  const std::uint8_t vihl = f[kEth];
  const std::size_t ihl = static_cast<std::size_t>(vihl & 0x0f) * 4;
  if ((vihl >> 4) != 4 || ihl < wire::Ipv4Hdr::kSize) return false;
  if (f[kEth + 9] != wire::kIpProtoUdp) return false;
  if (f.size() < kEth + ihl + wire::UdpHdr::kSize) return false;
  return wire::load_be16(f.data() + kEth + ihl + 2) == wire::kRoceV2Port;
}

// One direction's drop rule.
class DropRule {
 public:
  DropRule() = default;
  DropRule(std::uint32_t every, double rate, std::uint64_t seed, std::uint32_t max = 0)
      : every_(every),
        max_(max),
        threshold_(rate_threshold(rate)),
        always_(rate >= 1),
        state_(seed) {}

  // Called once per RoCEv2 frame of this direction: drop it?
  bool drop() {
    bool d = always_;
    if (every_ != 0 && ++seen_ == every_) {
      seen_ = 0;
      d = true;
    }
    if (threshold_ != 0 && next() < threshold_) d = true;
    if (!d || max_ == 0) return d;
    if (dropped_ == max_) return false;
    ++dropped_;
    return true;
  }
  bool active() const { return every_ != 0 || threshold_ != 0 || always_; }

 private:
  // rate x 2^64, for rate in [0, 1); a frame drops when a uniform 64-bit
  // draw is below it.
  static std::uint64_t rate_threshold(double rate) {
    if (!(rate > 0) || rate >= 1) return 0;
    return static_cast<std::uint64_t>(rate * 18446744073709551616.0);
  }
  // splitmix64.
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  std::uint32_t every_ = 0;
  std::uint32_t seen_ = 0;     // RoCEv2 frames since the last every-N drop
  std::uint32_t max_ = 0;      // 0 = no cap
  std::uint32_t dropped_ = 0;  // counted only while max_ != 0
  std::uint64_t threshold_ = 0;
  bool always_ = false;
  std::uint64_t state_ = 0;
};

// Both directions of one device. The config must have passed
// first_bad_field() (a rate outside [0, 1] is clamped).
class Impairment {
 public:
  Impairment() = default;
  explicit Impairment(const ImpairConfig& c)
      : tx_(c.drop_tx_every, c.drop_tx_rate, c.drop_seed, c.drop_tx_max),
        // A different stream for RX, so one seed does not make the two
        // directions drop in lock step.
        rx_(c.drop_rx_every, c.drop_rx_rate, c.drop_seed ^ 0x5bd1e9955bd1e995ull, c.drop_rx_max) {}

  // Should this frame, about to be committed to the port, be dropped?
  bool drop_tx(std::span<const std::uint8_t> f) {
    return tx_.active() && is_roce_v2_frame(f) && tx_.drop();
  }
  // Should this frame, just received from the port, be dropped?
  bool drop_rx(std::span<const std::uint8_t> f) {
    return rx_.active() && is_roce_v2_frame(f) && rx_.drop();
  }

 private:
  DropRule tx_;
  DropRule rx_;
};

}  // namespace uroce::engine
