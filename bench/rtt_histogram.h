// Round-trip times as a fixed-size histogram: 10 ns buckets up to 1 ms, plus
// exact count, min, max and sum. Preallocated at construction so recording a
// sample on the ping-pong path allocates nothing, however long the run.
#pragma once

#include <cstdint>
#include <vector>

namespace uroce::bench {

class RttHistogram {
 public:
  static constexpr std::uint64_t kBucketNs = 10;
  static constexpr std::uint64_t kMaxTrackedNs = 1'000'000;

  RttHistogram();

  void record(std::uint64_t ns) {
    const std::uint64_t b = ns / kBucketNs;
    if (b < buckets_.size()) ++buckets_[b];
    else ++overflow_;
    ++count_;
    sum_ns_ += ns;
    if (ns < min_ns_) min_ns_ = ns;
    if (ns > max_ns_) max_ns_ = ns;
  }
  void clear();

  std::uint64_t count() const { return count_; }
  std::uint64_t min_ns() const { return count_ == 0 ? 0 : min_ns_; }
  std::uint64_t max_ns() const { return max_ns_; }
  double mean_ns() const {
    return count_ == 0 ? 0.0 : static_cast<double>(sum_ns_) / static_cast<double>(count_);
  }
  // The q-quantile (0 < q <= 1) as the midpoint of the bucket holding the
  // ceil(q * count)-th smallest sample, clamped to [min, max]; samples above
  // kMaxTrackedNs report max. 0 when empty.
  double quantile_ns(double q) const;

 private:
  std::vector<std::uint64_t> buckets_;
  std::uint64_t overflow_ = 0;
  std::uint64_t count_ = 0;
  std::uint64_t sum_ns_ = 0;
  std::uint64_t min_ns_ = UINT64_MAX;
  std::uint64_t max_ns_ = 0;
};

}  // namespace uroce::bench
