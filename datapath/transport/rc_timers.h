// The two RC timers' encodings (IBTA Vol1 9.7.6.1.3 and 9.7.5.2.8):
//
//   Local ACK timeout: a QP's `timeout` attribute t in 0..31 means
//     4.096 us * 2^t; t = 0 disables the retransmission timer (infinite).
//   RNR NAK timer: the 5-bit code of an RNR NAK's AETH (and of a QP's
//     min_rnr_timer), table 45: code 0 is the longest delay, 655.36 ms;
//     codes 1..31 grow from 0.01 ms to 491.52 ms.
#pragma once

#include <array>
#include <cstdint>

#include "datapath/base/time.h"

namespace uroce::transport {

// IBTA table 45 in microseconds, indexed by the 5-bit timer code.
inline constexpr std::array<std::uint32_t, 32> kRnrTimerUs = {655360, 10,    20,     30,     40,
                                                              60,     80,    120,    160,    240,
                                                              320,    480,   640,    960,    1280,
                                                              1920,   2560,  3840,   5120,   7680,
                                                              10240,  15360, 20480,  30720,  40960,
                                                              61440,  81920, 122880, 163840, 245760,
                                                              327680, 491520};

// Delay an RNR NAK carrying `code` asks the requester to wait.
constexpr TimeNs rnr_timer_ns(std::uint8_t code) {
  return static_cast<TimeNs>(kRnrTimerUs[code & 0x1f]) * kNsPerUs;
}

// Retransmission timeout for the QP attribute `timeout`; 0 means none.
constexpr TimeNs local_ack_timeout_ns(std::uint8_t timeout) {
  return timeout == 0 ? 0 : TimeNs{4096} << (timeout & 0x1f);
}

}  // namespace uroce::transport
