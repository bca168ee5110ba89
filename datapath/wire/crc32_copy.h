// A copy fused with CRC-32 as zlib computes it (the IEEE 802.3 polynomial,
// reflected, initial value and final XOR all ones), which ISA-L does not
// offer: by carry-less multiplication folding (Gopal et al., "Fast CRC
// Computation for Generic Polynomials Using PCLMULQDQ Instruction", Intel,
// 2009), each 16-byte block is loaded once, stored to the destination and
// folded into the CRC, so a payload gathered into a frame is checksummed
// while it passes through the registers instead of in a second pass (4 KiB:
// 87 ns against 123 for memcpy and ISA-L, docs/benchmarks.md). The CRC in
// place is ISA-L's crc32_gzip_refl (crc32_zlib in icrc.h); the ICRC (icrc.h)
// is built on both.
#pragma once

#include <cstddef>
#include <cstdint>

namespace uroce::wire {

// Copies n bytes from src to dst (which must not overlap) and returns the
// CRC-32 of those bytes, continuing from `crc`: like zlib's crc32(), `crc`
// is the value returned for the bytes before (0 to start), so calls chain.
// Takes crc32_copy_select(crc32_copy_cpu(), n)'s path.
std::uint32_t crc32_copy(std::uint32_t crc, std::uint8_t* dst, const std::uint8_t* src,
                         std::size_t n);

// The ways crc32_copy can go. All give the same CRC and copy.
enum class Crc32CopyPath : std::uint8_t {
  kIsal,     // memcpy, then ISA-L's crc32_gzip_refl: any CPU
  kFold128,  // whole 16-byte blocks folded by PCLMULQDQ on 128-bit registers,
             // the last n % 16 bytes through a table: needs PCLMULQDQ and AVX
  kFold512,  // kFold128, but 512-bit VPCLMULQDQ folds the blocks when there are
             // 256 bytes of them or more (as ISA-L's crc32_gzip_refl does on
             // such CPUs): needs AVX-512F, AVX-512VL and VPCLMULQDQ as well
};

// The CPU features the paths need, as detected (crc32_copy_cpu) or supposed
// (tests of crc32_copy_select). Invariant of a detected one: clmul512
// implies clmul.
struct Crc32CopyCpu {
  bool clmul = false;     // PCLMULQDQ and AVX: kFold128 runs
  bool clmul512 = false;  // and AVX-512F, AVX-512VL, VPCLMULQDQ: kFold512 runs
};

// Below this many bytes the folding waits on each multiplication's latency
// (120 B: 37 ns against 23 for memcpy and ISA-L), so a copy and ISA-L's CRC
// are cheaper; from here on the single pass wins (1 KiB: 28 against 42 ns).
inline constexpr std::size_t kCrc32CopyFuseMin = 256;

// The path crc32_copy takes for n bytes on a CPU with `cpu`'s features: the
// widest folding it has from kCrc32CopyFuseMin bytes on, else kIsal. A CPU
// without PCLMULQDQ and AVX takes kIsal whatever else it reports.
constexpr Crc32CopyPath crc32_copy_select(Crc32CopyCpu cpu, std::size_t n) {
  if (!cpu.clmul || n < kCrc32CopyFuseMin) return Crc32CopyPath::kIsal;
  return cpu.clmul512 ? Crc32CopyPath::kFold512 : Crc32CopyPath::kFold128;
}

// This CPU's features, detected once during static initialisation.
Crc32CopyCpu crc32_copy_cpu();

// Whether this CPU can run `path` (kIsal: always).
bool crc32_copy_runs(Crc32CopyPath path);

// crc32_copy by `path` whatever n is, for tests that check each path on
// every length. `path` must be one this CPU runs (crc32_copy_runs): the
// folding paths' instructions fault on a CPU without them.
std::uint32_t crc32_copy_by(Crc32CopyPath path, std::uint32_t crc, std::uint8_t* dst,
                            const std::uint8_t* src, std::size_t n);

}  // namespace uroce::wire
