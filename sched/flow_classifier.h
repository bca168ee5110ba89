// Isolation "auto" (issue 14): classifies each flow (QP) by what it posts,
// the way Justitia sorts RDMA flows, so that the device can isolate them
// without the application choosing classes:
//   latency     small messages, few outstanding (a ping-pong, an RPC);
//   throughput  small messages, many outstanding (a message-rate stream);
//   bandwidth   large messages (an elephant).
// The engine reports every send WR it takes from a QP's ring (observe():
// the WR's length and the QP's send-queue depth after it), per message,
// never per packet. Each kind has a traffic class (kAutoClass*): latency in
// a strict class, above the weighted classes the other two share by DRR on
// bytes, so a latency flow's next frame leaves at the next round and the
// elephants keep what the latency flow leaves (it uses little).
//
// The rules, on per-flow moving averages (weight 1/4, fixed point x16) of
// the message length and the send-queue depth:
//   - a message of at least large_bytes makes its flow bandwidth at once
//     (an elephant's message never rides the strict class);
//   - a bandwidth flow stays so until its average length falls below
//     large_bytes / 2;
//   - otherwise a flow is latency while its average depth is at most
//     latency_depth and its average length at most latency_bytes (one
//     4 KiB frame: the strict class has no rate cap, so a flow of 60 KiB
//     messages posted one at a time must not get it), throughput once its
//     depth reaches throughput_depth or its length passes latency_bytes, and
//     keeps its kind in between (hysteresis: a flow near a threshold does
//     not flap between classes, each move costing set_class's O(class
//     size));
//   - a flow that has posted nothing is of no kind (kNone) and stays in
//     the bandwidth class: a QP that only answers (ACKs, READ responses of
//     any size) never takes the strict class on its own; its first WR
//     classifies it.
// State: 8 bytes per flow, allocated at construction; observe() is O(1)
// and never allocates. Engine thread only.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/tx_scheduler.h"

namespace uroce::sched {

enum class FlowKind : std::uint8_t { kNone, kLatency, kThroughput, kBandwidth };

// The traffic class each kind is served in (traffic_classes.h); the
// latency class is strict in auto mode.
inline constexpr std::uint8_t kAutoClassLatency = 6;
inline constexpr std::uint8_t kAutoClassThroughput = 3;
inline constexpr std::uint8_t kAutoClassBandwidth = 0;

inline constexpr std::uint8_t auto_class(FlowKind k) {
  switch (k) {
    case FlowKind::kLatency: return kAutoClassLatency;
    case FlowKind::kThroughput: return kAutoClassThroughput;
    case FlowKind::kNone:
    case FlowKind::kBandwidth: return kAutoClassBandwidth;
  }
  return kAutoClassBandwidth;
}

inline constexpr const char* flow_kind_name(FlowKind k) {
  switch (k) {
    case FlowKind::kNone: return "none";
    case FlowKind::kLatency: return "latency";
    case FlowKind::kThroughput: return "throughput";
    case FlowKind::kBandwidth: return "bandwidth";
  }
  return "?";
}

struct FlowClassifierConfig {
  std::uint32_t large_bytes = 65536;
  std::uint32_t latency_bytes = 4096;
  std::uint32_t latency_depth = 2;
  std::uint32_t throughput_depth = 4;
};

class FlowClassifier {
 public:
  explicit FlowClassifier(std::uint32_t capacity, const FlowClassifierConfig& cfg = {})
      : cfg_(cfg), flows_(capacity) {}

  // A send WR of `bytes` was taken from f's ring, leaving `depth` WRs in its
  // send queue (this one included). Returns f's kind after it.
  FlowKind observe(FlowId f, std::uint64_t bytes, std::uint32_t depth) {
    if (f >= flows_.size()) return FlowKind::kBandwidth;
    Flow& s = flows_[f];
    const std::uint32_t len = bytes > kLenCap ? kLenCap : static_cast<std::uint32_t>(bytes);
    const std::uint32_t d = depth > kDepthCap ? kDepthCap : depth;
    FlowKind k = static_cast<FlowKind>(s.kind);
    if (k == FlowKind::kNone) {
      k = FlowKind::kLatency;  // between the depths at first: latency
      s.avg_len = len * kOne;
      s.avg_depth = static_cast<std::uint16_t>(d * kOne);
    } else {
      s.avg_len = s.avg_len - s.avg_len / 4 + len * kOne / 4;
      s.avg_depth = static_cast<std::uint16_t>(s.avg_depth - s.avg_depth / 4 + d * kOne / 4);
    }
    const std::uint64_t large = std::uint64_t{cfg_.large_bytes} * kOne;
    if (len >= cfg_.large_bytes) {
      k = FlowKind::kBandwidth;
    } else if (k == FlowKind::kBandwidth && s.avg_len >= large / 2) {
      // Still an elephant on average.
    } else if (s.avg_len > std::uint64_t{cfg_.latency_bytes} * kOne ||
               s.avg_depth >= cfg_.throughput_depth * kOne) {
      k = FlowKind::kThroughput;
    } else if (s.avg_depth <= cfg_.latency_depth * kOne) {
      k = FlowKind::kLatency;
    } else if (k == FlowKind::kBandwidth) {
      k = FlowKind::kThroughput;  // between the depths, and small now
    }
    s.kind = static_cast<std::uint8_t>(k);
    return k;
  }

  FlowKind kind(FlowId f) const {
    return f < flows_.size() ? static_cast<FlowKind>(flows_[f].kind) : FlowKind::kBandwidth;
  }
  // Forgets f (its QP was destroyed; the slot will be reused).
  void reset(FlowId f) {
    if (f < flows_.size()) flows_[f] = Flow{};
  }
  const FlowClassifierConfig& config() const { return cfg_; }

 private:
  static constexpr std::uint32_t kOne = 16;                 // fixed point of the averages
  static constexpr std::uint32_t kLenCap = (1u << 27) - 1;  // x16 fits 32 bits
  static constexpr std::uint32_t kDepthCap = 4095;          // x16 fits 16 bits
  struct Flow {
    std::uint32_t avg_len = 0;    // bytes x kOne
    std::uint16_t avg_depth = 0;  // WRs x kOne
    std::uint8_t kind = static_cast<std::uint8_t>(FlowKind::kNone);
    std::uint8_t pad = 0;
  };
  static_assert(sizeof(Flow) == 8);

  FlowClassifierConfig cfg_;
  std::vector<Flow> flows_;
};

}  // namespace uroce::sched
