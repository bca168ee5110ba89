// What a transport state machine may emit, as compile-time interfaces
// (concepts), so the engine, tests and the testbed plug in their own sinks
// with no virtual call per packet.
//
//   TxSink     room for one outgoing frame, built in place (the payload is
//              copied once, from the MR straight into the TX buffer), then
//              committed; an empty span means no buffer now, and the QP
//              retries on its next turn.
//   CqSink     one completion; false when the CQ is full (the QP then reports
//              a CQ overflow as the verbs API requires, never drops silently).
//   TimerSink  "call my on_timer at or after `at`"; a later request for the
//              same QP replaces the earlier one.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/base/time.h"
#include "datapath/transport/cqe.h"

namespace uroce::transport {

template <class T>
concept TxSink = requires(T t, std::size_t n) {
  { t.tx_alloc(n) } -> std::same_as<std::span<std::uint8_t>>;
  { t.tx_commit(n) } -> std::same_as<void>;
};

template <class T>
concept CqSink = requires(T t, const Cqe& c) {
  { t.push(c) } -> std::same_as<bool>;
};

template <class T>
concept TimerSink = requires(T t, std::uint32_t qpn, TimeNs at) {
  { t.arm(qpn, at) } -> std::same_as<void>;
};

}  // namespace uroce::transport
