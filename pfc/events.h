// Events the pfc/ state machines raise for the log: rare by construction
// (storm transitions) or rate-limited by their producer (loop signals), so
// formatting them is off the per-packet path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "datapath/base/time.h"

namespace uroce::pfc {

enum class PfcEventType : std::uint8_t {
  kStormDetected,  // priority paused continuously for the detection time
  kStormRestored,  // no pause in effect for the restoration time
  kLoopReplay,     // same (source, QPN, PSN) again with a lower TTL
  kOwnPacket,      // a packet with our own source MAC or IP came back
  kTtlOutlier,     // TTL far from the peer's usual one
};
std::string_view pfc_event_name(PfcEventType t);

struct PfcEvent {
  PfcEventType type = PfcEventType::kStormDetected;
  TimeNs at = 0;
  // Storm events: the priority, and when the pause (detected) or the storm
  // (restored) began.
  std::uint8_t prio = 0;
  TimeNs since = 0;
  // Loop events: the packet that raised it.
  std::uint32_t src_ip = 0;  // host order
  std::uint32_t qpn = 0;
  std::uint32_t psn = 0;
  std::uint8_t ttl = 0;
  // kLoopReplay: the earlier TTL; kTtlOutlier: the peer's usual TTL.
  std::uint8_t ref_ttl = 0;
  // Loop events of this type not logged since the previous one.
  std::uint64_t suppressed = 0;
};

// One log line (no trailing newline) into `out`, NUL-terminated and
// truncated to fit; returns the length written without the NUL.
std::size_t format_pfc_event(const PfcEvent& e, std::span<char> out);

}  // namespace uroce::pfc
