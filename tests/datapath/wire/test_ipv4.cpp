#include "datapath/wire/ipv4.h"

#include <gtest/gtest.h>

#include <random>

namespace uroce::wire {
namespace {

// RFC 1071 the way it is written: ten 16-bit words, the checksum's skipped,
// end-around carries until none is left.
std::uint16_t rfc1071(const Ipv4Hdr& h) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < Ipv4Hdr::kSize; i += 2) {
    if (i != 10) sum += static_cast<std::uint32_t>(h.raw[i] << 8 | h.raw[i + 1]);
  }
  while ((sum >> 16) != 0) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

TEST(Ipv4HdrComputeChecksum, MatchesSixteenBitSumOnRandomHeaders) {
  std::mt19937 rng(20);
  for (int i = 0; i < 20000; ++i) {
    Ipv4Hdr h;
    for (auto& b : h.raw) b = static_cast<std::uint8_t>(i < 10 ? 0xff * (i & 1) : rng());
    EXPECT_EQ(h.compute_checksum(), rfc1071(h));
    h.fill_checksum();
    EXPECT_TRUE(h.checksum_ok());
  }
}

TEST(Ipv4HdrFoldOnesComplement, FoldsTheLargestSums) {
  EXPECT_EQ(Ipv4Hdr::fold_ones_complement(0), 0);
  EXPECT_EQ(Ipv4Hdr::fold_ones_complement(0xffff), 0xffff);
  EXPECT_EQ(Ipv4Hdr::fold_ones_complement(0x10000), 1);
  // Five 32-bit words of all ones: 5 * (2^32 - 1) = 5 * 0xffff * 0x10001.
  EXPECT_EQ(Ipv4Hdr::fold_ones_complement(5 * 0xffffffffull), 0xffff);
}

}  // namespace
}  // namespace uroce::wire
