// Seeded randomness for everything that must replay: the simulated link, the
// soak tests, the testbed. std::mt19937_64's output sequence is fixed by the
// C++ standard, but the std:: distributions are implementation-defined, so the
// few conversions we need are written here to keep runs identical across
// standard libraries.
#pragma once

#include <cstdint>
#include <random>

namespace uroce {

class SeededRng {
 public:
  explicit SeededRng(std::uint64_t seed) : gen_(seed) {}

  std::uint64_t next_u64() { return gen_(); }

  // Uniform in [0, 1) with 53 random bits.
  double next_unit() { return static_cast<double>(gen_() >> 11) * (1.0 / 9007199254740992.0); }

  // True with probability p (p <= 0 never, p >= 1 always).
  bool chance(double p) {
    if (p <= 0.0) return false;
    if (p >= 1.0) return true;
    return next_unit() < p;
  }

  // Uniform in [0, n) for n > 0 (Lemire's multiply-shift; bias < n / 2^64).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(gen_()) * n) >> 64);
  }

 private:
  std::mt19937_64 gen_;
};

}  // namespace uroce
