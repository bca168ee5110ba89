// Which of the 8 PFC priorities a packet belongs to.
//
// uroce sends untagged frames, so the priority rides in the IPv4 DSCP
// (DESIGN: "No VLAN tag"). Three tables, all configurable:
//   TX:  service level (0..15) -> priority -> DSCP written in the IP header;
//        a QP given a raw traffic class instead uses DSCP = tclass >> 2.
//   RX:  DSCP (0..63) -> priority, for ingress accounting.
// Defaults: SL s -> priority s mod 8; priority p -> DSCP 8p (CS0..CS7);
// DSCP d -> priority d / 8. With them RoCE's customary DSCP 26 lands in
// priority 3 and the CNP's DSCP 48 in priority 6.
//
// Invariant: every entry is in range (priorities < 8, DSCPs < 64); the
// setters refuse anything else, so lookups never index out of bounds.
#pragma once

#include <array>
#include <cassert>
#include <cstdint>
#include <string_view>

namespace uroce::pfc {

inline constexpr std::uint8_t kNumPriorities = 8;
inline constexpr std::uint8_t kNumServiceLevels = 16;
inline constexpr std::uint8_t kNumDscp = 64;

enum class PriorityMapError : std::uint8_t {
  kOk = 0,
  kBadServiceLevel,  // >= 16
  kBadDscp,          // >= 64
  kBadPriority,      // >= 8
};
std::string_view priority_map_error_name(PriorityMapError e);

class PriorityMap {
 public:
  PriorityMap();

  std::uint8_t priority_of_sl(std::uint8_t sl) const {
    assert(sl_prio_[sl & 0x0f] < kNumPriorities);
    return sl_prio_[sl & 0x0f];
  }
  std::uint8_t priority_of_dscp(std::uint8_t dscp) const {
    assert(dscp_prio_[dscp & 0x3f] < kNumPriorities);
    return dscp_prio_[dscp & 0x3f];
  }
  // A GRH/IP traffic class octet: DSCP in the top six bits, ECN below.
  std::uint8_t priority_of_traffic_class(std::uint8_t tclass) const {
    return dscp_prio_[tclass >> 2];
  }
  std::uint8_t dscp_of_priority(std::uint8_t prio) const {
    assert(prio_dscp_[prio & 0x07] < kNumDscp);
    return prio_dscp_[prio & 0x07];
  }
  // DSCP to send for a QP whose address vector names service level `sl`.
  std::uint8_t tx_dscp_of_sl(std::uint8_t sl) const { return dscp_of_priority(priority_of_sl(sl)); }

  PriorityMapError set_sl_priority(unsigned sl, unsigned prio);
  PriorityMapError set_dscp_priority(unsigned dscp, unsigned prio);
  PriorityMapError set_priority_dscp(unsigned prio, unsigned dscp);

  // A priority whose TX DSCP the RX table classifies as another priority
  // (so a peer using the same tables would account it elsewhere), or -1
  // when every priority round-trips.
  int first_inconsistent_priority() const;

 private:
  std::array<std::uint8_t, kNumServiceLevels> sl_prio_{};
  std::array<std::uint8_t, kNumDscp> dscp_prio_{};
  std::array<std::uint8_t, kNumPriorities> prio_dscp_{};
};

}  // namespace uroce::pfc
