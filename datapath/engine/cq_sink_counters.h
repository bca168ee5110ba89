// What a CQ's sink (cq_ring_sink.h) counts, with its field list: apart from
// the sink so that the device's counters (vnic_types.h) hold it without the
// ring code.
#pragma once

#include <cstdint>

#include "datapath/base/counter_fields.h"

namespace uroce::engine {

struct CqSinkCounters {
  std::uint64_t cqes = 0;  // completions written
  // of those, of work whose data came from the peer (transport::carries_peer_data)
  std::uint64_t cqes_peer_data = 0;
  std::uint64_t overflow = 0;     // completions refused: ring full
  std::uint64_t comp_events = 0;  // event records handed to the batch
  // completions that left a solicited-only arming in place
  std::uint64_t unsolicited = 0;
};

inline constexpr counters::FieldList<CqSinkCounters, 5> kCqSinkCounterFields{{
    {"cqes", &CqSinkCounters::cqes, "completions written"},
    {"cqes_peer_data", &CqSinkCounters::cqes_peer_data,
     "of those, receives and READ or atomic responses"},
    {"overflow", &CqSinkCounters::overflow, "completions refused: ring full"},
    {"comp_events", &CqSinkCounters::comp_events, "event records handed to the batch"},
    {"unsolicited", &CqSinkCounters::unsolicited,
     "completions that left a solicited-only arming in place"},
}};
static_assert(counters::covers(kCqSinkCounterFields));
constexpr const auto& counter_fields(const CqSinkCounters&) { return kCqSinkCounterFields; }

}  // namespace uroce::engine
