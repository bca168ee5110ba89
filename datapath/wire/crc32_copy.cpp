#include "datapath/wire/crc32_copy.h"

#include <immintrin.h>
#include <isa-l/crc.h>

#include <array>
#include <cstring>

namespace uroce::wire {

namespace {

// The reflected polynomial, for the byte table of the tail.
constexpr std::uint32_t kPolyReflected = 0xedb88320u;

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? (c >> 1) ^ kPolyReflected : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<std::uint32_t, 256> kTable = make_table();

// Fewer than 16 bytes (the tail after the blocks, the pad): a table lookup
// a byte costs less than a call into ISA-L. `raw` is the CRC register (the
// zlib value inverted).
std::uint32_t tail_raw(std::uint32_t raw, const std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) raw = kTable[(raw ^ p[i]) & 0xff] ^ (raw >> 8);
  return raw;
}

#define UROCE_CLMUL [[gnu::target("pclmul,avx"), gnu::always_inline]] inline

// One 16-byte block of the source, stored to the destination: the one load
// serves the copy and the CRC.
UROCE_CLMUL __m128i copy_block(std::uint8_t* dst, const std::uint8_t* src, std::size_t off) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + off));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + off), v);
  return v;
}

// x folded forward over the distance k stands for, plus the next block.
UROCE_CLMUL __m128i fold(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
                                     _mm_clmulepi64_si128(x, k, 0x11)),
                       next);
}

// The 128-bit remainder reduced to the 32-bit CRC register: to 64 bits by
// k5, then by Barrett reduction.
UROCE_CLMUL std::uint32_t reduce(__m128i x1) {
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
  const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
  const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
  // 128 -> 64 bits.
  const __m128i lo32 = _mm_setr_epi32(~0, 0, ~0, 0);
  __m128i x2 = _mm_clmulepi64_si128(x1, k3k4, 0x10);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
  x2 = _mm_srli_si128(x1, 4);
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, lo32), k5k0, 0x00), x2);
  // Barrett reduction to 32 bits.
  x2 = _mm_clmulepi64_si128(_mm_and_si128(x1, lo32), poly, 0x10);
  x2 = _mm_clmulepi64_si128(_mm_and_si128(x2, lo32), poly, 0x00);
  x1 = _mm_xor_si128(x1, x2);
  return static_cast<std::uint32_t>(_mm_extract_epi32(x1, 1));
}

// Copies n bytes (n >= 16, a multiple of 16) from src to dst and folds them
// into the CRC register `raw`. From 128 bytes on, eight 128-bit
// accumulators fold 128 bytes a round (k1 and k2 as the paper defines them,
// for a distance of 1024 bits instead of its 512: x^1056 and x^992 mod P).
// They are then folded into one (x^128 mod P, k3 and k4), which takes the
// remaining blocks; last, the 128 bits are reduced to 64 (k5) and by
// Barrett reduction to the 32-bit register. All constants are the
// bit-reflected ones. Eight accumulators rather than the paper's four: the
// loop's counter and branch are paid once per 128 bytes instead of 64.
// Compiled for AVX so that the three-operand VEX forms spare the register
// copies the two-operand SSE forms need.
[[gnu::target("pclmul,avx")]] std::uint32_t fold_blocks(std::uint32_t raw, std::uint8_t* dst,
                                                        const std::uint8_t* src, std::size_t n) {
  const __m128i k1k2_8 = _mm_set_epi64x(0x014a7fe880, 0x01e88ef372);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
  std::size_t off = 16;
  __m128i x1 = _mm_xor_si128(copy_block(dst, src, 0), _mm_cvtsi32_si128(static_cast<int>(raw)));
  if (n >= 128) {
    // Eight named accumulators, not an array: GCC keeps these in registers.
    __m128i x2 = copy_block(dst, src, 16);
    __m128i x3 = copy_block(dst, src, 32);
    __m128i x4 = copy_block(dst, src, 48);
    __m128i x5 = copy_block(dst, src, 64);
    __m128i x6 = copy_block(dst, src, 80);
    __m128i x7 = copy_block(dst, src, 96);
    __m128i x8 = copy_block(dst, src, 112);
    for (off = 128; n - off >= 128; off += 128) {
      x1 = fold(x1, k1k2_8, copy_block(dst, src, off));
      x2 = fold(x2, k1k2_8, copy_block(dst, src, off + 16));
      x3 = fold(x3, k1k2_8, copy_block(dst, src, off + 32));
      x4 = fold(x4, k1k2_8, copy_block(dst, src, off + 48));
      x5 = fold(x5, k1k2_8, copy_block(dst, src, off + 64));
      x6 = fold(x6, k1k2_8, copy_block(dst, src, off + 80));
      x7 = fold(x7, k1k2_8, copy_block(dst, src, off + 96));
      x8 = fold(x8, k1k2_8, copy_block(dst, src, off + 112));
    }
    x1 = fold(x1, k3k4, x2);
    x1 = fold(x1, k3k4, x3);
    x1 = fold(x1, k3k4, x4);
    x1 = fold(x1, k3k4, x5);
    x1 = fold(x1, k3k4, x6);
    x1 = fold(x1, k3k4, x7);
    x1 = fold(x1, k3k4, x8);
  }
  for (; off < n; off += 16) x1 = fold(x1, k3k4, copy_block(dst, src, off));

  return reduce(x1);
}

#define UROCE_CLMUL512 \
  [[gnu::target("avx512f,avx512vl,vpclmulqdq,pclmul,avx"), gnu::always_inline]] inline

UROCE_CLMUL512 __m512i copy_wide(std::uint8_t* dst, const std::uint8_t* src, std::size_t off) {
  const __m512i v = _mm512_loadu_si512(src + off);
  _mm512_storeu_si512(dst + off, v);
  return v;
}

// fold() on four 128-bit lanes at once; the three-way XOR in one ternary
// logic instruction.
UROCE_CLMUL512 __m512i fold_wide(__m512i x, __m512i k, __m512i next) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                   _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96);
}

// x folded forward over the distance k stands for, without a next block.
UROCE_CLMUL __m128i fold_lane(__m128i x, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

// fold_blocks with 512-bit VPCLMULQDQ, for CPUs that have it: n >= 256
// bytes, a multiple of 16. Four 512-bit accumulators (sixteen 128-bit
// lanes) fold 256 bytes a round (a distance of 2048 bits: x^2080 and
// x^2016 mod P); they are folded into one (512 bits), which takes the
// remaining 64-byte blocks; its four lanes are folded into one 128-bit
// value (distances 384, 256 and 128 bits), which takes the remaining
// 16-byte blocks and is reduced as in fold_blocks. A quarter of the
// instructions a byte of the 128-bit form, at the same rate per
// instruction: this is what ISA-L's crc32_gzip_refl runs on these CPUs.
// Valgrind does not emulate AVX-512, so callgrind counts fold_blocks.
[[gnu::target("avx512f,avx512vl,vpclmulqdq,pclmul,avx")]] std::uint32_t fold_blocks_wide(
    std::uint32_t raw, std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  const __m512i k2048 = _mm512_set_epi64(0x01322d1430, 0x011542778a, 0x01322d1430, 0x011542778a,
                                         0x01322d1430, 0x011542778a, 0x01322d1430, 0x011542778a);
  const __m512i k512 = _mm512_set_epi64(0x01c6e41596, 0x0154442bd4, 0x01c6e41596, 0x0154442bd4,
                                        0x01c6e41596, 0x0154442bd4, 0x01c6e41596, 0x0154442bd4);
  const __m128i k384 = _mm_set_epi64x(0x0174359406, 0x003db1ecdc);
  const __m128i k256 = _mm_set_epi64x(0x015a546366, 0x00f1da05aa);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
  __m512i z0 = _mm512_xor_si512(copy_wide(dst, src, 0),
                                _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(raw))));
  __m512i z1 = copy_wide(dst, src, 64);
  __m512i z2 = copy_wide(dst, src, 128);
  __m512i z3 = copy_wide(dst, src, 192);
  std::size_t off = 256;
  for (; n - off >= 256; off += 256) {
    z0 = fold_wide(z0, k2048, copy_wide(dst, src, off));
    z1 = fold_wide(z1, k2048, copy_wide(dst, src, off + 64));
    z2 = fold_wide(z2, k2048, copy_wide(dst, src, off + 128));
    z3 = fold_wide(z3, k2048, copy_wide(dst, src, off + 192));
  }
  z0 = fold_wide(z0, k512, z1);
  z0 = fold_wide(z0, k512, z2);
  z0 = fold_wide(z0, k512, z3);
  for (; n - off >= 64; off += 64) z0 = fold_wide(z0, k512, copy_wide(dst, src, off));
  // The lowest lane holds the oldest bytes: folded furthest. Taken apart
  // through memory: GCC 12 warns of an uninitialised value inside
  // _mm512_extracti32x4_epi32 (its PR 105593), and the build treats
  // warnings as errors.
  alignas(64) __m128i lane[4];
  _mm512_store_si512(lane, z0);
  __m128i x1 = _mm_xor_si128(fold_lane(lane[0], k384), fold_lane(lane[1], k256));
  x1 = _mm_xor_si128(x1, fold_lane(lane[2], k3k4));
  x1 = _mm_xor_si128(x1, lane[3]);
  for (; off < n; off += 16) x1 = fold(x1, k3k4, copy_block(dst, src, off));
  return reduce(x1);
}

Crc32CopyCpu detect() {
  // Run during static initialisation, possibly before libgcc has filled in
  // the CPU model that __builtin_cpu_supports reads.
  __builtin_cpu_init();
  Crc32CopyCpu cpu;
  cpu.clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("avx");
  cpu.clmul512 = cpu.clmul && __builtin_cpu_supports("avx512f") &&
                 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq");
  return cpu;
}

// Zero-initialised before detect() runs: a crc32_copy from another
// translation unit's static initialiser that comes first sees no features
// and takes kIsal, which every CPU runs.
const Crc32CopyCpu kCpu = detect();

// The copy and CRC by `path`. Inlined into crc32_copy, where the path comes
// from crc32_copy_select: the per-call cost is the two tests of the CPU's
// features and n that the selection makes.
[[gnu::always_inline]] inline std::uint32_t copy_by(Crc32CopyPath path, std::uint32_t crc,
                                                    std::uint8_t* dst, const std::uint8_t* src,
                                                    std::size_t n) {
  if (path == Crc32CopyPath::kIsal) {
    // An empty piece may come with null pointers, which memcpy must not see.
    if (n == 0) return crc;
    std::memcpy(dst, src, n);
    return crc32_gzip_refl(crc, src, n);
  }
  std::uint32_t raw = ~crc;
  const std::size_t blocks = n & ~std::size_t{15};
  // fold_blocks_wide needs 256 bytes of blocks; on the selected path
  // (n >= kCrc32CopyFuseMin) kFold512 always has them.
  if (path == Crc32CopyPath::kFold512 && blocks >= 256) {
    raw = fold_blocks_wide(raw, dst, src, blocks);
  } else if (blocks != 0) {
    raw = fold_blocks(raw, dst, src, blocks);
  }
  const std::size_t rest = n - blocks;
  if (rest != 0) {
    std::memcpy(dst + blocks, src + blocks, rest);
    raw = tail_raw(raw, src + blocks, rest);
  }
  return ~raw;
}

}  // namespace

std::uint32_t crc32_copy(std::uint32_t crc, std::uint8_t* dst, const std::uint8_t* src,
                         std::size_t n) {
  return copy_by(crc32_copy_select(kCpu, n), crc, dst, src, n);
}

Crc32CopyCpu crc32_copy_cpu() { return kCpu; }

bool crc32_copy_runs(Crc32CopyPath path) {
  switch (path) {
    case Crc32CopyPath::kIsal: return true;
    case Crc32CopyPath::kFold128: return kCpu.clmul;
    case Crc32CopyPath::kFold512: return kCpu.clmul512;
  }
  return false;
}

std::uint32_t crc32_copy_by(Crc32CopyPath path, std::uint32_t crc, std::uint8_t* dst,
                            const std::uint8_t* src, std::size_t n) {
  return copy_by(path, crc, dst, src, n);
}

}  // namespace uroce::wire
