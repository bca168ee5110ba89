// CRC-32 as zlib computes it (the IEEE 802.3 polynomial, reflected, initial
// value and final XOR all ones), in two forms: over bytes in place (ISA-L's
// crc32_gzip_refl), and fused with a copy, which ISA-L does not offer: by
// carry-less multiplication folding (Gopal et al., "Fast CRC Computation for
// Generic Polynomials Using PCLMULQDQ Instruction", Intel, 2009), each
// 16-byte block is loaded once, stored to the destination and folded into
// the CRC, so a payload gathered into a frame is checksummed while it passes
// through the registers instead of in a second pass (4 KiB: 87 ns against
// 123 for memcpy and ISA-L, docs/benchmarks.md).
//
// Both chain like zlib's crc32(): `crc` is the value returned for the bytes
// before (0 to start). In the fused copy, whole 16-byte blocks go through
// PCLMULQDQ (from 256
// bytes on 512-bit VPCLMULQDQ where the CPU has AVX-512 and it, as ISA-L
// does), the last n % 16 bytes through a table; CPUs without PCLMULQDQ and
// AVX get ISA-L's crc32_gzip_refl (and memcpy) instead. The ICRC (icrc.h)
// is built on these.
#pragma once

#include <cstddef>
#include <cstdint>

namespace uroce::wire {

std::uint32_t crc32_fold(std::uint32_t crc, const std::uint8_t* src, std::size_t n);

// Copies n bytes from src to dst (which must not overlap) and returns the
// CRC-32 of those bytes, continuing from `crc`.
std::uint32_t crc32_copy(std::uint32_t crc, std::uint8_t* dst, const std::uint8_t* src,
                         std::size_t n);

// Whether the folding path runs on this CPU (false: the ISA-L fallback).
bool crc32_fold_accelerated();

}  // namespace uroce::wire
