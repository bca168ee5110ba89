#include "testbed/incast.h"

#include <cassert>
#include <utility>

#include "testbed/simulator.h"

namespace uroce::testbed {
namespace {

// derive_seed purpose of the bursts' stream (15xx: the workloads').
constexpr std::uint64_t kPurposeIncast = 1504;

}  // namespace

std::string IncastArrivals::check(const IncastSpec& s) {
  if (s.senders == 0) return "incast_senders: must be >= 1";
  if (s.senders >= s.hosts) {
    return "incast_senders: " + std::to_string(s.senders) + " is not below the workload's " +
           std::to_string(s.hosts) + " hosts";
  }
  if (s.bytes == 0 || s.bytes > std::uint64_t{1} << 31) {
    return "incast_bytes: " + std::to_string(s.bytes) + " is not in 1 .. 2147483648";
  }
  if (s.burst_bytes() > std::uint64_t{1} << 32) {
    return "incast_bytes: " + std::to_string(s.senders) + " senders x " + std::to_string(s.bytes) +
           " bytes is above 4 GiB a burst";
  }
  if (s.every_ns == 0) return "incast_every_us: must be > 0";
  return {};
}

IncastArrivals::IncastArrivals(const IncastSpec& spec)
    : spec_(spec), next_ns_(spec.start_ns), rng_(derive_seed(spec.seed, kPurposeIncast, 0)) {
  assert(check(spec).empty());
  pool_.reserve(spec.hosts);
  burst_.srcs.resize(spec.senders);
}

const IncastBurst& IncastArrivals::next() {
  burst_.time_ns = next_ns_;
  burst_.dst = static_cast<std::uint32_t>(rng_.below(spec_.hosts));
  pool_.clear();
  for (std::uint32_t h = 0; h < spec_.hosts; ++h) {
    if (h != burst_.dst) pool_.push_back(h);
  }
  // The first `senders` steps of a Fisher-Yates shuffle: a uniform choice
  // of distinct senders.
  for (std::uint32_t i = 0; i < spec_.senders; ++i) {
    const auto j = i + static_cast<std::uint32_t>(rng_.below(pool_.size() - i));
    std::swap(pool_[i], pool_[j]);
    burst_.srcs[i] = pool_[i];
  }
  next_ns_ += spec_.every_ns;
  return burst_;
}

}  // namespace uroce::testbed
