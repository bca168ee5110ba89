#include "apps/uroce-ctl/pcapng_blocks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace uroce::ctl_tool {
namespace {

// A little builder of pcapng blocks, in this machine's byte order or the
// other one.
class Stream {
 public:
  explicit Stream(bool swap = false) : swap_(swap) {}
  Stream& section() {
    return block(PcapngBlocks::kSectionHeader,
                 {word(0x1A2B3C4D), word(1), word(0xffffffff), word(0xffffffff)});
  }
  Stream& interface() { return block(1, {word(1), word(0)}); }
  Stream& packet(std::uint32_t data_words) {
    std::vector<std::vector<std::uint8_t>> body = {word(0), word(0), word(0), word(4 * data_words),
                                                   word(4 * data_words)};
    for (std::uint32_t i = 0; i < data_words; ++i) body.push_back(word(0xdeadbeef));
    return block(PcapngBlocks::kEnhancedPacket, body);
  }
  // A statistics block with isb_ifrecv and isb_ifdrop.
  Stream& stats(std::uint64_t recv, std::uint64_t drop) {
    return block(PcapngBlocks::kInterfaceStats,
                 {word(0), word(0), word(0), option(4, recv), option(5, drop), word(0)});
  }
  const std::vector<std::uint8_t>& bytes() const { return b_; }

 private:
  std::vector<std::uint8_t> word(std::uint32_t v) const {
    if (swap_) v = __builtin_bswap32(v);
    std::vector<std::uint8_t> w(4);
    std::memcpy(w.data(), &v, 4);
    return w;
  }
  std::vector<std::uint8_t> option(std::uint16_t code, std::uint64_t v) const {
    std::uint16_t h[2] = {code, 8};
    if (swap_) {
      h[0] = __builtin_bswap16(h[0]);
      h[1] = __builtin_bswap16(h[1]);
      v = __builtin_bswap64(v);
    }
    std::vector<std::uint8_t> o(12);
    std::memcpy(o.data(), h, 4);
    std::memcpy(o.data() + 4, &v, 8);
    return o;
  }
  Stream& block(std::uint32_t type, const std::vector<std::vector<std::uint8_t>>& body) {
    std::uint32_t len = 12;
    for (const auto& p : body) len += static_cast<std::uint32_t>(p.size());
    auto put = [&](const std::vector<std::uint8_t>& p) { b_.insert(b_.end(), p.begin(), p.end()); };
    put(word(type));
    put(word(len));
    for (const auto& p : body) put(p);
    put(word(len));
    return *this;
  }
  bool swap_;
  std::vector<std::uint8_t> b_;
};

TEST(PcapngBlocks_Feed, CountsPacketsAndReadsTheDropCount) {
  Stream s;
  s.section().interface().packet(3).packet(10).packet(1).stats(3, 7);
  PcapngBlocks p;
  p.feed(s.bytes());
  EXPECT_EQ(p.error(), "");
  EXPECT_EQ(p.packets(), 3u);
  ASSERT_TRUE(p.dropped().has_value());
  EXPECT_EQ(*p.dropped(), 7u);
  EXPECT_TRUE(p.between_blocks());
}

TEST(PcapngBlocks_Feed, OneByteAtATimeGivesTheSame) {
  Stream s;
  s.section().interface().packet(5).stats(1, 2).packet(2);
  PcapngBlocks p;
  for (std::uint8_t b : s.bytes()) p.feed(std::span<const std::uint8_t>(&b, 1));
  EXPECT_EQ(p.error(), "");
  EXPECT_EQ(p.packets(), 2u);
  EXPECT_EQ(p.dropped().value_or(99), 2u);
  EXPECT_TRUE(p.between_blocks());
}

TEST(PcapngBlocks_Feed, TheOtherByteOrder) {
  Stream s(true);
  s.section().interface().packet(4).packet(4).stats(2, 5);
  PcapngBlocks p;
  p.feed(s.bytes());
  EXPECT_EQ(p.error(), "");
  EXPECT_EQ(p.packets(), 2u);
  EXPECT_EQ(p.dropped().value_or(99), 5u);
}

TEST(PcapngBlocks_Feed, NoStatisticsBlockNoDropCount) {
  Stream s;
  s.section().packet(1);
  PcapngBlocks p;
  p.feed(s.bytes());
  EXPECT_EQ(p.packets(), 1u);
  EXPECT_FALSE(p.dropped().has_value());
}

TEST(PcapngBlocks_Feed, StreamCutInsideABlock) {
  Stream s;
  s.section().packet(8);
  PcapngBlocks p;
  p.feed(std::span<const std::uint8_t>(s.bytes().data(), s.bytes().size() - 5));
  EXPECT_EQ(p.error(), "");
  EXPECT_FALSE(p.between_blocks());
}

TEST(PcapngBlocks_Feed, NotPcapng) {
  // A classic pcap file header.
  const std::uint8_t pcap[24] = {0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0};
  PcapngBlocks p;
  p.feed(pcap);
  EXPECT_EQ(p.error(), "not a pcapng stream (it does not start with a section header)");
}

TEST(PcapngBlocks_Feed, BadByteOrderMagic) {
  Stream s;
  s.section();
  std::vector<std::uint8_t> b = s.bytes();
  b[8] ^= 0xff;
  PcapngBlocks p;
  p.feed(b);
  EXPECT_EQ(p.error(), "not a pcapng stream (bad byte-order magic)");
}

TEST(PcapngBlocks_Feed, BadBlockLength) {
  Stream s;
  s.section().packet(1);
  std::vector<std::uint8_t> b = s.bytes();
  const std::size_t second = b.size() - (12 + 20 + 4);  // the packet block's start
  const std::uint32_t len = 13;
  std::memcpy(b.data() + second + 4, &len, 4);
  PcapngBlocks p;
  p.feed(b);
  EXPECT_EQ(p.error(), "bad pcapng block length 13");
}

}  // namespace
}  // namespace uroce::ctl_tool
