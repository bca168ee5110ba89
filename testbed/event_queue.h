// The testbed's event queue: a binary min-heap ordered by (time, sequence).
// The sequence number is taken at push, so events due at the same
// nanosecond run in the order they were scheduled, and a run is a pure
// function of the scenario and the seed (no pointer or hash order anywhere).
//
// Single-threaded: one simulation owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "datapath/base/time.h"

namespace uroce::testbed {

enum class EventKind : std::uint8_t {
  kArrival = 0,     // a = link direction, b = in-flight slot: last bit arrived
  kTxDone,          // a = link direction: its wire is free again
  kWake,            // a = link direction: a pause of its sender may have lapsed
  kSwitchPoll,      // a = switch: buffer refreshes, watchdog
  kHostPoll,        // a = host: ingress-accounting refreshes
  kHostRxDone,      // a = host: the packet at the head of its RX queue is consumed
  kSourceTick,      // a = flow: the next packet is due
  kRouteChange,     // a = route change index
  kPfcInject,       // a = injection index
  kSample,          // time-series sample
  kDeadlockCheck,   // wait-for graph check
  kEnginePoll,      // a = engine host: run its engine (engine_host.h)
  kRcFlowStart,     // a = rc flow: its source posts the first window
  kMessageArrival,  // the [workload]'s next message arrives (message_workload.h)
  kDcFlowStart,     // a = dc flow: its DCI posts the first window
  kLinkChange,      // a = link change index
  kReconverge,      // a = link change index: the routes follow it
};

struct Event {
  TimeNs at = 0;
  std::uint64_t seq = 0;
  EventKind kind = EventKind::kArrival;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
};

class EventQueue {
 public:
  void push(TimeNs at, EventKind kind, std::uint32_t a = 0, std::uint32_t b = 0);
  // Precondition: !empty().
  Event pop();
  const Event& top() const { return heap_.front(); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  std::uint64_t pushed() const { return next_seq_; }

 private:
  static bool before(const Event& x, const Event& y) {
    return x.at != y.at ? x.at < y.at : x.seq < y.seq;
  }

  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace uroce::testbed
