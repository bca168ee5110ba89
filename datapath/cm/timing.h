// IBTA CM timing (Vol.1 section 12.7.34 and 12.7.35): a timeout field t (5
// bits) stands for 4.096 us * 2^t; a sender waits one such interval for an
// answer and retransmits at most Max CM Retries times.
#pragma once

#include <cstdint>

#include "datapath/base/time.h"

namespace uroce::cm {

// The rdma_cm defaults (what librdmacm programs get from the kernel):
// response timeout 20 (4.3 s), 15 retries.
inline constexpr std::uint8_t kDefaultResponseTimeout = 20;
inline constexpr std::uint8_t kDefaultMaxRetries = 15;
// How long a disconnected connection keeps its Communication ID to answer
// a late DREQ (the timewait state, 12.9.9): one response timeout.
inline constexpr std::uint8_t kTimewaitTimeout = kDefaultResponseTimeout;

// 4.096 us * 2^t in ns; t is clamped to 31 (the field's width).
inline TimeNs cm_timeout_ns(std::uint8_t t) {
  const unsigned e = t > 31 ? 31 : t;
  return (TimeNs{4096} << e);
}

}  // namespace uroce::cm
