#include "datapath/wire/crc32_copy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <span>
#include <vector>

#include "datapath/wire/icrc.h"

namespace uroce::wire {
namespace {

// CRC-32 one bit at a time, the definition itself (reflected polynomial,
// zlib's chaining: the register is the inverted value): shares no code or
// table with crc32_copy or ISA-L, so it checks both.
std::uint32_t crc32_bitwise(std::uint32_t crc, const std::uint8_t* p, std::size_t n) {
  std::uint32_t raw = ~crc;
  for (std::size_t i = 0; i < n; ++i) {
    raw ^= p[i];
    for (int k = 0; k < 8; ++k) raw = (raw & 1) != 0 ? (raw >> 1) ^ 0xedb88320u : raw >> 1;
  }
  return ~raw;
}

// Every length to 1,100 (all tails, every count of blocks below the 512-bit
// folding's 256 bytes and a few rounds of it, 255/256/257), then each
// multiple of 16 to 4,608 (two 4 KiB payloads' worth of 64- and 256-byte
// rounds) and its neighbours, then a jumbo frame's payload and a 16 KiB one.
std::vector<std::size_t> lengths() {
  std::vector<std::size_t> out;
  for (std::size_t n = 0; n <= 1100; ++n) out.push_back(n);
  for (std::size_t n = 1104; n <= 4608; n += 16) {
    out.push_back(n - 1);
    out.push_back(n);
    out.push_back(n + 1);
  }
  for (std::size_t n : {8999, 9000, 9001, 16383, 16384, 16399}) out.push_back(n);
  return out;
}

// (source, destination) offsets from a 64-byte boundary: both aligned, each
// misaligned alone, and misaligned differently from each other.
constexpr std::pair<std::size_t, std::size_t> kOffsets[] = {{0, 0}, {1, 0}, {0, 7}, {13, 35}};

// The destination's bytes around the copy, which must stay untouched.
constexpr std::size_t kGuard = 64;
constexpr std::uint8_t kGuardByte = 0xa5;

using CopyFn = std::uint32_t (*)(std::uint32_t, std::uint8_t*, const std::uint8_t*, std::size_t);

// Runs `copy` over every length and offset pair with a starting CRC of 0 or
// an arbitrary one, and checks the CRC against the bitwise reference and
// ISA-L's, the copied bytes, and the bytes either side of the copy.
void check_copies(CopyFn copy) {
  const std::vector<std::size_t> ns = lengths();
  const std::size_t max_n = ns.back();
  std::mt19937 rng(2024);
  std::vector<std::uint8_t> src_buf(max_n + 128);
  for (auto& b : src_buf) b = static_cast<std::uint8_t>(rng());
  std::vector<std::uint8_t> dst_buf(max_n + 128 + 2 * kGuard);
  // The first 64-byte boundary in each buffer.
  const auto aligned = [](std::uint8_t* p) {
    return p + (64 - reinterpret_cast<std::uintptr_t>(p) % 64) % 64;
  };
  std::uint8_t* const src0 = aligned(src_buf.data());
  std::uint8_t* const dst0 = aligned(dst_buf.data() + kGuard);
  for (const auto& [so, dof] : kOffsets) {
    for (std::size_t n : ns) {
      const std::uint8_t* const src = src0 + so;
      std::uint8_t* const dst = dst0 + dof;
      std::fill(dst - kGuard, dst + n + kGuard, kGuardByte);
      const std::uint32_t seed = n % 2 == 0 ? 0 : static_cast<std::uint32_t>(rng());
      const std::uint32_t want = crc32_bitwise(seed, src, n);
      ASSERT_EQ(crc32_zlib(seed, std::span<const std::uint8_t>(src, n)), want) << n;
      EXPECT_EQ(copy(seed, dst, src, n), want) << n << " bytes, offsets " << so << "/" << dof;
      EXPECT_TRUE(std::equal(src, src + n, dst)) << n << " bytes, offsets " << so << "/" << dof;
      const auto guard_ok = [](const std::uint8_t* p) {
        return std::all_of(p, p + kGuard, [](std::uint8_t b) { return b == kGuardByte; });
      };
      EXPECT_TRUE(guard_ok(dst - kGuard)) << "written before the copy: " << n;
      EXPECT_TRUE(guard_ok(dst + n)) << "written past the copy: " << n;
    }
  }
}

TEST(Crc32CopySelect, CpuWithoutPclmulTakesIsalForEveryLength) {
  // Features that need PCLMULQDQ reported without it do not take a folding
  // path either.
  for (bool clmul512 : {false, true}) {
    for (std::size_t n : lengths()) {
      EXPECT_EQ(crc32_copy_select({false, clmul512}, n), Crc32CopyPath::kIsal) << n;
    }
  }
}

TEST(Crc32CopySelect, ShortCopiesTakeIsalOnEveryCpu) {
  for (const Crc32CopyCpu cpu : {Crc32CopyCpu{true, false}, Crc32CopyCpu{true, true}}) {
    for (std::size_t n = 0; n < kCrc32CopyFuseMin; ++n) {
      EXPECT_EQ(crc32_copy_select(cpu, n), Crc32CopyPath::kIsal) << n;
    }
  }
}

TEST(Crc32CopySelect, PclmulWithoutAvx512TakesFold128FromFuseMin) {
  EXPECT_EQ(kCrc32CopyFuseMin, 256u);
  for (std::size_t n : {256, 257, 4096, 9000}) {
    EXPECT_EQ(crc32_copy_select({true, false}, n), Crc32CopyPath::kFold128) << n;
  }
}

TEST(Crc32CopySelect, Vpclmul512TakesFold512FromFuseMin) {
  EXPECT_EQ(crc32_copy_select({true, true}, 255), Crc32CopyPath::kIsal);
  for (std::size_t n : {256, 257, 4096, 9000}) {
    EXPECT_EQ(crc32_copy_select({true, true}, n), Crc32CopyPath::kFold512) << n;
  }
}

TEST(Crc32CopyCpu, MatchesWhatTheCpuReports) {
  // Whatever this CPU has: the detection must agree with it, so that the
  // selection tested above is fed the truth.
  const Crc32CopyCpu cpu = crc32_copy_cpu();
  const bool clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("avx");
  EXPECT_EQ(cpu.clmul, clmul);
  EXPECT_EQ(cpu.clmul512, clmul && __builtin_cpu_supports("avx512f") &&
                              __builtin_cpu_supports("avx512vl") &&
                              __builtin_cpu_supports("vpclmulqdq"));
}

TEST(Crc32CopyRuns, IsalAlwaysFoldingsAsDetected) {
  const Crc32CopyCpu cpu = crc32_copy_cpu();
  EXPECT_TRUE(crc32_copy_runs(Crc32CopyPath::kIsal));
  EXPECT_EQ(crc32_copy_runs(Crc32CopyPath::kFold128), cpu.clmul);
  EXPECT_EQ(crc32_copy_runs(Crc32CopyPath::kFold512), cpu.clmul512);
}

// crc32_copy on whichever path this CPU selects for each length.
TEST(Crc32Copy, CopiesAndMatchesReferenceCrcOnTheSelectedPath) { check_copies(crc32_copy); }

TEST(Crc32Copy, ChainsOverPiecesLikeOneCall) {
  std::mt19937 rng(3);
  std::vector<std::uint8_t> src(5000);
  for (auto& b : src) b = static_cast<std::uint8_t>(rng());
  const std::uint32_t whole = crc32_bitwise(0, src.data(), src.size());
  std::vector<std::uint8_t> dst(src.size());
  for (int i = 0; i < 100; ++i) {
    std::fill(dst.begin(), dst.end(), 0);
    std::uint32_t crc = 0;
    std::size_t at = 0;
    while (at < src.size()) {
      // Pieces either side of kCrc32CopyFuseMin, so paths alternate.
      const std::size_t n = std::min<std::size_t>(rng() % 700, src.size() - at);
      crc = crc32_copy(crc, dst.data() + at, src.data() + at, n);
      at += n;
    }
    EXPECT_EQ(crc, whole);
    EXPECT_EQ(dst, src);
  }
}

// Each path on every length, whichever crc32_copy would choose: the folding
// paths below kCrc32CopyFuseMin too (their short forms, which the selection
// skips today but which must still be right).
template <Crc32CopyPath kPath>
std::uint32_t copy_by(std::uint32_t crc, std::uint8_t* dst, const std::uint8_t* src,
                      std::size_t n) {
  return crc32_copy_by(kPath, crc, dst, src, n);
}

TEST(Crc32CopyBy, IsalPathMatchesReference) { check_copies(copy_by<Crc32CopyPath::kIsal>); }

TEST(Crc32CopyBy, Fold128PathMatchesReference) {
  if (!crc32_copy_runs(Crc32CopyPath::kFold128)) GTEST_SKIP() << "no PCLMULQDQ and AVX";
  check_copies(copy_by<Crc32CopyPath::kFold128>);
}

TEST(Crc32CopyBy, Fold512PathMatchesReference) {
  if (!crc32_copy_runs(Crc32CopyPath::kFold512)) {
    GTEST_SKIP() << "no AVX-512F, AVX-512VL and VPCLMULQDQ";
  }
  check_copies(copy_by<Crc32CopyPath::kFold512>);
}

}  // namespace
}  // namespace uroce::wire
