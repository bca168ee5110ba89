// What the pfc/ state machines may emit, as compile-time interfaces
// (concepts) so the engine, tests and the testbed plug in their own sinks
// with no virtual call per packet.
//
//   FrameSink  room for one outgoing frame, built in place, then committed;
//              the same shape as transport::TxSink, so one engine sink
//              serves both. An empty span means no buffer now: the state
//              machine keeps its state and retries on its next poll.
//   EventSink  one loggable event (storm detected, loop signal, ...).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/base/time.h"
#include "pfc/events.h"

namespace uroce::pfc {

// What a poll()-driven machine's next_deadline() returns when nothing is
// scheduled.
inline constexpr TimeNs kNoDeadline = ~TimeNs{0};

template <class T>
concept FrameSink = requires(T t, std::size_t n) {
  { t.tx_alloc(n) } -> std::same_as<std::span<std::uint8_t>>;
  { t.tx_commit(n) } -> std::same_as<void>;
};

template <class T>
concept EventSink = requires(T t, const PfcEvent& e) {
  { t.event(e) } -> std::same_as<void>;
};

// Discards events; for callers that read counters only.
struct NullEventSink {
  void event(const PfcEvent&) {}
};

}  // namespace uroce::pfc
