#include "datapath/wire/payload.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace uroce::wire {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes iota_bytes(std::size_t n) {
  Bytes b(n);
  std::iota(b.begin(), b.end(), std::uint8_t{1});
  return b;
}

// Cuts `b` into a head of `head` bytes and tail segments of `seg` bytes.
struct Chain {
  std::span<const std::uint8_t> head;
  std::vector<std::span<const std::uint8_t>> tail;
};
Chain cut(const Bytes& b, std::size_t head, std::size_t seg) {
  Chain c;
  c.head = cut_frame(b, head, seg, c.tail);
  return c;
}

TEST(Payload_Contiguous, IsItsSpan) {
  const Bytes b = iota_bytes(10);
  const Payload p{std::span<const std::uint8_t>(b)};
  EXPECT_EQ(p.size(), 10u);
  EXPECT_TRUE(p.contiguous());
  EXPECT_EQ(p.data(), b.data());
  EXPECT_EQ(p.head().size(), 10u);
  EXPECT_EQ(Bytes(p.begin(), p.end()), b);
}

TEST(Payload_Default, IsEmptyAndContiguous) {
  const Payload p;
  EXPECT_TRUE(p.empty());
  EXPECT_TRUE(p.contiguous());
}

TEST(TailBytes_Sum, AddsEverySegment) {
  const Bytes b = iota_bytes(100);
  const Chain c = cut(b, 10, 7);
  EXPECT_EQ(tail_bytes(c.tail), 90u);
  EXPECT_EQ(tail_bytes({}), 0u);
}

TEST(Payload_Chained, CopyOutEveryRangeMatchesTheBytes) {
  const Bytes b = iota_bytes(61);
  for (std::size_t seg : {1u, 2u, 3u, 7u, 16u, 60u}) {
    const Chain c = cut(b, 5, seg);
    const Payload p(c.head, c.tail, b.size());
    EXPECT_FALSE(p.contiguous());
    for (std::size_t from = 0; from <= b.size(); ++from) {
      for (std::size_t n = 0; from + n <= b.size(); n += 5) {
        Bytes out(n, 0);
        p.copy_out(from, out.data(), n);
        EXPECT_EQ(out, Bytes(b.begin() + from, b.begin() + from + n))
            << "seg " << seg << " from " << from << " n " << n;
      }
    }
    for (std::size_t i = 0; i < b.size(); ++i) EXPECT_EQ(p[i], b[i]);
  }
}

TEST(Payload_Chained, StopsAtItsSizeBeforeTheTailEnds) {
  // The pad and ICRC follow the payload in the last segment.
  const Bytes b = iota_bytes(40);
  const Chain c = cut(b, 8, 16);
  const Payload p(c.head, c.tail, 30);
  std::size_t seen = 0;
  p.for_each_piece(0, p.size(), [&](std::span<const std::uint8_t> s) { seen += s.size(); });
  EXPECT_EQ(seen, 30u);
  Bytes out(30);
  p.copy_out(0, out.data(), 30);
  EXPECT_EQ(out, Bytes(b.begin(), b.begin() + 30));
}

TEST(CutFrame_Segments, HeadThenSegmentsOfTheBufferSize) {
  const Bytes b = iota_bytes(25);
  std::vector<std::span<const std::uint8_t>> tail{{b.data(), 1}};  // cleared first
  const std::span<const std::uint8_t> head = cut_frame(b, 10, 7, tail);
  EXPECT_EQ(head.data(), b.data());
  EXPECT_EQ(head.size(), 10u);
  ASSERT_EQ(tail.size(), 3u);  // 7 7 1
  EXPECT_EQ(tail[0].data(), b.data() + 10);
  EXPECT_EQ(tail[1].size(), 7u);
  EXPECT_EQ(tail[2].size(), 1u);
  EXPECT_EQ(tail[2][0], b[24]);
  EXPECT_EQ(cut_frame(b, 25, 7, tail).size(), 25u);
  EXPECT_TRUE(tail.empty());
}

TEST(ForEachPiece_Range, PiecesFollowTheSegments) {
  const Bytes b = iota_bytes(20);
  const Chain c = cut(b, 6, 5);  // 6 | 5 5 4
  std::vector<std::size_t> sizes;
  for_each_piece(c.head, c.tail, 4, 12,
                 [&](std::span<const std::uint8_t> s) { sizes.push_back(s.size()); });
  EXPECT_EQ(sizes, (std::vector<std::size_t>{2, 5, 5}));
}

}  // namespace
}  // namespace uroce::wire
