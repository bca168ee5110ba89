#include "pfc/priority_map.h"

namespace uroce::pfc {

std::string_view priority_map_error_name(PriorityMapError e) {
  switch (e) {
    case PriorityMapError::kOk: return "Ok";
    case PriorityMapError::kBadServiceLevel: return "BadServiceLevel";
    case PriorityMapError::kBadDscp: return "BadDscp";
    case PriorityMapError::kBadPriority: return "BadPriority";
  }
  return "Unknown";
}

PriorityMap::PriorityMap() {
  for (std::uint8_t s = 0; s < kNumServiceLevels; ++s) sl_prio_[s] = s % kNumPriorities;
  for (std::uint8_t d = 0; d < kNumDscp; ++d) dscp_prio_[d] = d / 8;
  for (std::uint8_t p = 0; p < kNumPriorities; ++p)
    prio_dscp_[p] = static_cast<std::uint8_t>(p * 8);
}

PriorityMapError PriorityMap::set_sl_priority(unsigned sl, unsigned prio) {
  if (sl >= kNumServiceLevels) return PriorityMapError::kBadServiceLevel;
  if (prio >= kNumPriorities) return PriorityMapError::kBadPriority;
  sl_prio_[sl] = static_cast<std::uint8_t>(prio);
  return PriorityMapError::kOk;
}

PriorityMapError PriorityMap::set_dscp_priority(unsigned dscp, unsigned prio) {
  if (dscp >= kNumDscp) return PriorityMapError::kBadDscp;
  if (prio >= kNumPriorities) return PriorityMapError::kBadPriority;
  dscp_prio_[dscp] = static_cast<std::uint8_t>(prio);
  return PriorityMapError::kOk;
}

PriorityMapError PriorityMap::set_priority_dscp(unsigned prio, unsigned dscp) {
  if (prio >= kNumPriorities) return PriorityMapError::kBadPriority;
  if (dscp >= kNumDscp) return PriorityMapError::kBadDscp;
  prio_dscp_[prio] = static_cast<std::uint8_t>(dscp);
  return PriorityMapError::kOk;
}

int PriorityMap::first_inconsistent_priority() const {
  for (std::uint8_t p = 0; p < kNumPriorities; ++p) {
    if (dscp_prio_[prio_dscp_[p]] != p) return p;
  }
  return -1;
}

}  // namespace uroce::pfc
