#include "bench/rtt_histogram.h"

#include <algorithm>
#include <cmath>

namespace uroce::bench {

RttHistogram::RttHistogram() : buckets_(kMaxTrackedNs / kBucketNs, 0) {}

void RttHistogram::clear() {
  std::fill(buckets_.begin(), buckets_.end(), 0);
  overflow_ = 0;
  count_ = 0;
  sum_ns_ = 0;
  min_ns_ = UINT64_MAX;
  max_ns_ = 0;
}

double RttHistogram::quantile_ns(double q) const {
  if (count_ == 0) return 0.0;
  q = std::clamp(q, 0.0, 1.0);
  const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(
                                                   std::ceil(q * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen >= rank) {
      const double mid = static_cast<double>(b * kBucketNs) + kBucketNs / 2.0;
      return std::clamp(mid, static_cast<double>(min_ns_), static_cast<double>(max_ns_));
    }
  }
  return static_cast<double>(max_ns_);
}

}  // namespace uroce::bench
