// Incast bursts beside a [workload]'s Poisson messages (issue 33, must-show
// 2; IRN's incast experiment): at start_ns and every every_ns after it, one
// receiver drawn uniformly from the hosts and `senders` distinct others,
// drawn uniformly, each get one message of `bytes` to that receiver, all
// arriving at the same instant. A burst's request completion time runs from
// that instant to the last of its messages received
// (message_workload.h).
//
// Deterministic: receivers and senders come from one stream derived from
// the seed, so they do not depend on the Poisson traffic beside them.
// Single-threaded; next() does not allocate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datapath/base/rng.h"
#include "datapath/base/time.h"

namespace uroce::testbed {

struct IncastSpec {
  std::uint32_t hosts = 0;    // of the workload
  std::uint32_t senders = 0;  // per burst: 1 .. hosts - 1
  std::uint64_t bytes = 0;    // each sender's message: 1 .. 2^31
  TimeNs every_ns = 0;        // > 0
  TimeNs start_ns = 0;
  std::uint64_t seed = 1;

  // The bytes one burst brings its receiver.
  std::uint64_t burst_bytes() const { return std::uint64_t{senders} * bytes; }
};

struct IncastBurst {
  TimeNs time_ns = 0;
  std::uint32_t dst = 0;
  std::vector<std::uint32_t> srcs;  // `senders` distinct hosts, none dst
};

class IncastArrivals {
 public:
  // "" if the spec is usable, else the first problem, as
  // "incast_senders: 16 is not below the workload's 16 hosts".
  static std::string check(const IncastSpec& spec);

  // Precondition: check(spec) is "".
  explicit IncastArrivals(const IncastSpec& spec);

  TimeNs next_time() const { return next_ns_; }
  // The burst at next_time(), then the schedule moves on; valid until the
  // next call.
  const IncastBurst& next();

  const IncastSpec& spec() const { return spec_; }

 private:
  IncastSpec spec_;
  TimeNs next_ns_;
  SeededRng rng_;
  std::vector<std::uint32_t> pool_;  // the hosts but the receiver, shuffled in part
  IncastBurst burst_;
};

}  // namespace uroce::testbed
