// What a capture (capture_tap.h) counts, apart from the tap so that status
// code and uroce-ctl can hold it without DPDK's headers.
#pragma once

#include <cstdint>

#include "datapath/base/counter_fields.h"

namespace uroce::port {

struct CaptureCounters {
  // Copies taken; those the ring had no room for are also in ring_full.
  std::uint64_t rx_frames = 0;  // received frames copied
  std::uint64_t tx_frames = 0;  // sent frames copied (each once, however often offered)
  std::uint64_t ring_full = 0;  // copies dropped: the capture's ring was full
  std::uint64_t no_mbuf = 0;    // frames not copied: the capture's pool was empty
};

inline constexpr counters::FieldList<CaptureCounters, 4> kCaptureCounterFields{{
    {"rx_frames", &CaptureCounters::rx_frames,
     "received frames copied (those then dropped included)"},
    {"tx_frames", &CaptureCounters::tx_frames,
     "sent frames copied, each once however often offered (those then dropped included)"},
    {"ring_full", &CaptureCounters::ring_full, "copies dropped: the capture's ring was full"},
    {"no_mbuf", &CaptureCounters::no_mbuf, "frames not copied: the capture's pool was empty"},
}};
static_assert(counters::covers(kCaptureCounterFields));
constexpr const auto& counter_fields(const CaptureCounters&) { return kCaptureCounterFields; }

}  // namespace uroce::port
