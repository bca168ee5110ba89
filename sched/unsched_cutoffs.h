// The unscheduled priorities of the Homa-like scheduler (issue 15;
// docs/homa.md). A sender sends a message's first unsched_bytes at a
// priority the receiver chose by the message's length: shorter messages
// higher. The receiver picks the cutoffs from the lengths it has seen, so
// that each of the U unscheduled levels carries about the same number of
// unscheduled bytes (Homa's rule), and publishes them to its peers.
//
// SizeHistogram counts message lengths in exponential buckets (four per
// octave, from 64 bytes to 1 GiB: bucket b holds lengths up to
// bucket_bound(b)); age() halves every count so the distribution follows
// the workload. compute_cutoffs() walks the buckets from the shortest and
// closes level j once the unscheduled bytes so far reach (j + 1) / U of
// the total; a message of length L then goes to the first level whose
// cutoff is >= L (level 0, the shortest messages, is the highest
// priority). Pure; no allocation after construction.
//
// One departure from Homa's rule: messages longer than unsched_bytes (the
// scheduled ones) send their unscheduled bytes at the lowest level, and
// the levels above divide the bytes of the messages that fit in
// unsched_bytes. Dividing every unscheduled byte equally puts, where long
// messages carry most of them (W4, W5), the first unsched_bytes of long
// messages in the top level beside the short messages, which then wait
// behind those bursts (docs/homa-testbed.md: W4 at 80 %, the shortest
// messages' p99 5.6 with Homa's rule, 2.0 with this one).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "datapath/wire/homa_cutoffs.h"

namespace uroce::sched::homa {

inline constexpr std::uint32_t kMaxLevels = wire::HomaCutoffsHdr::kMaxLevels;
inline constexpr std::uint32_t kSizeBuckets = 97;  // 64 B .. 1 GiB, 4 per octave

// The largest length bucket `b` holds: 64 x 2^(b/4), rounded down.
inline std::uint64_t bucket_bound(std::uint32_t b) {
  return static_cast<std::uint64_t>(64.0 * std::exp2(static_cast<double>(b) / 4.0));
}

class SizeHistogram {
 public:
  SizeHistogram() {
    for (std::uint32_t b = 0; b < kSizeBuckets; ++b) bounds_[b] = bucket_bound(b);
  }
  void add(std::uint64_t length, std::uint64_t count = 1) { counts_[bucket(length)] += count; }
  void age() {
    for (auto& c : counts_) c /= 2;
  }
  std::uint32_t bucket(std::uint64_t length) const {
    std::uint32_t lo = 0, hi = kSizeBuckets - 1;
    while (lo < hi) {  // the first bound >= length (the last bucket takes the rest)
      const std::uint32_t mid = (lo + hi) / 2;
      if (bounds_[mid] >= length) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  }
  std::uint64_t count(std::uint32_t b) const { return counts_[b]; }
  std::uint64_t bound(std::uint32_t b) const { return bounds_[b]; }

 private:
  std::array<std::uint64_t, kSizeBuckets> bounds_{};
  std::array<std::uint64_t, kSizeBuckets> counts_{};
};

// The result is what a CUTOFFS header carries (wire/homa_cutoffs.h).
using Cutoffs = wire::HomaCutoffs;

inline Cutoffs compute_cutoffs(const SizeHistogram& h, std::uint64_t unsched_bytes,
                               std::uint32_t levels) {
  Cutoffs c;
  c.levels = levels == 0 ? 1 : (levels > kMaxLevels ? kMaxLevels : levels);
  c.max_length.fill(UINT64_MAX);
  // Scheduled messages seen: the lowest level is theirs, the others share
  // the messages that fit (see above).
  bool scheduled = false;
  for (std::uint32_t b = 0; b < kSizeBuckets; ++b) {
    if (h.count(b) != 0 && h.bound(b) > unsched_bytes) scheduled = true;
  }
  const std::uint32_t shared = scheduled && c.levels > 1 ? c.levels - 1 : c.levels;
  // Each message of bucket b sends at most min(bound, unsched_bytes)
  // unscheduled bytes (the bucket's bound stands for its lengths).
  auto counted = [&](std::uint32_t b) {
    if (shared != c.levels && h.bound(b) > unsched_bytes) return 0.0;
    return static_cast<double>(std::min(h.bound(b), unsched_bytes)) *
           static_cast<double>(h.count(b));
  };
  double total = 0;
  for (std::uint32_t b = 0; b < kSizeBuckets; ++b) total += counted(b);
  if (shared != c.levels) {
    for (std::uint32_t j = 0; j + 1 < c.levels; ++j) c.max_length[j] = unsched_bytes;
  }
  if (total <= 0) return c;
  double sum = 0;
  std::uint32_t j = 0;
  for (std::uint32_t b = 0; b < kSizeBuckets && j + 1 < shared; ++b) {
    sum += counted(b);
    while (j + 1 < shared && sum >= total * (j + 1) / shared) {
      c.max_length[j] = std::min(h.bound(b), c.max_length[j]);
      ++j;
    }
  }
  return c;
}

}  // namespace uroce::sched::homa
