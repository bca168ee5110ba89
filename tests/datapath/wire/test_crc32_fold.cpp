#include "datapath/wire/crc32_fold.h"

#include <gtest/gtest.h>

#include <random>
#include <span>
#include <vector>

#include "datapath/wire/icrc.h"

namespace uroce::wire {
namespace {

// ISA-L's crc32_gzip_refl (crc32_zlib) is the reference: the folding must
// give its value for every length (whole blocks, tails, both), start offset
// and starting CRC, in place and fused with the copy.
std::vector<std::uint8_t> random_bytes(std::mt19937& rng, std::size_t n) {
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

TEST(Crc32Fold, MatchesZlibCrcForEveryLengthUpTo300) {
  std::mt19937 rng(17);
  const std::vector<std::uint8_t> data = random_bytes(rng, 320);
  for (std::size_t n = 0; n <= 300; ++n) {
    for (std::size_t off : {0, 1, 7}) {
      const std::uint32_t seed = n % 3 == 0 ? 0 : static_cast<std::uint32_t>(rng());
      const std::span<const std::uint8_t> s(data.data() + off, n);
      EXPECT_EQ(crc32_fold(seed, s.data(), n), crc32_zlib(seed, s)) << n << " at " << off;
    }
  }
}

TEST(Crc32Fold, MatchesZlibCrcOnLargeRandomPieces) {
  std::mt19937 rng(4791);
  for (int i = 0; i < 200; ++i) {
    const std::size_t n = rng() % 9000;
    const std::vector<std::uint8_t> data = random_bytes(rng, n);
    const std::uint32_t seed = static_cast<std::uint32_t>(rng());
    EXPECT_EQ(crc32_fold(seed, data.data(), n), crc32_zlib(seed, data)) << n;
  }
}

TEST(Crc32Fold, ChainsOverPiecesLikeOneCall) {
  std::mt19937 rng(3);
  const std::vector<std::uint8_t> data = random_bytes(rng, 4200);
  const std::uint32_t whole = crc32_zlib(0, data);
  for (int i = 0; i < 100; ++i) {
    std::uint32_t crc = 0;
    std::size_t at = 0;
    while (at < data.size()) {
      const std::size_t n = std::min<std::size_t>(rng() % 700, data.size() - at);
      crc = crc32_fold(crc, data.data() + at, n);
      at += n;
    }
    EXPECT_EQ(crc, whole);
  }
}

TEST(Crc32Copy, CopiesAndMatchesZlibCrc) {
  std::mt19937 rng(99);
  for (int i = 0; i < 300; ++i) {
    const std::size_t n = i < 100 ? static_cast<std::size_t>(i) : rng() % 5000;
    const std::vector<std::uint8_t> src = random_bytes(rng, n + 3);
    std::vector<std::uint8_t> dst(n + 8, 0xa5);
    const std::size_t so = rng() % 4;
    const std::size_t d_off = rng() % 5;
    const std::uint32_t seed = static_cast<std::uint32_t>(rng());
    const std::span<const std::uint8_t> s(src.data() + so, std::min(n, src.size() - so));
    const std::uint32_t got = crc32_copy(seed, dst.data() + d_off, s.data(), s.size());
    EXPECT_EQ(got, crc32_zlib(seed, s)) << n;
    EXPECT_TRUE(std::equal(s.begin(), s.end(), dst.begin() + static_cast<long>(d_off))) << n;
    // Nothing written past the copy.
    for (std::size_t k = d_off + s.size(); k < dst.size(); ++k) EXPECT_EQ(dst[k], 0xa5) << n;
    for (std::size_t k = 0; k < d_off; ++k) EXPECT_EQ(dst[k], 0xa5) << n;
  }
}

TEST(Crc32FoldAccelerated, TrueOnThisProjectsMachines) {
  // The benchmark machines have PCLMULQDQ and AVX (FACTS.md); a false here
  // means the figures measure the ISA-L fallback.
  if (!__builtin_cpu_supports("pclmul")) GTEST_SKIP() << "no PCLMULQDQ";
  EXPECT_TRUE(crc32_fold_accelerated());
}

}  // namespace
}  // namespace uroce::wire
