#include "datapath/port/capture_writer.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "datapath/port/eth_port.h"
#include "tests/datapath/port/eal_once.h"

namespace uroce::port {
namespace {

// One pcapng block as this test reads it back (host byte order: the
// writer's, on the same machine).
struct Block {
  std::uint32_t type = 0;
  std::vector<std::uint8_t> bytes;  // the whole block
  std::uint32_t u32(std::size_t at) const {
    std::uint32_t v = 0;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  }
};

std::vector<Block> blocks_of(const std::vector<std::uint8_t>& s) {
  std::vector<Block> out;
  std::size_t at = 0;
  while (at + 12 <= s.size()) {
    Block b;
    std::memcpy(&b.type, s.data() + at, 4);
    std::uint32_t len = 0;
    std::memcpy(&len, s.data() + at + 4, 4);
    if (len < 12 || at + len > s.size()) break;
    b.bytes.assign(s.begin() + static_cast<long>(at), s.begin() + static_cast<long>(at + len));
    out.push_back(std::move(b));
    at += len;
  }
  EXPECT_EQ(at, s.size()) << "the stream ends inside a block";
  return out;
}

std::vector<std::uint8_t> read_all(int fd) {
  std::vector<std::uint8_t> s;
  std::uint8_t buf[4096];
  ssize_t n = 0;
  while ((n = read(fd, buf, sizeof(buf))) > 0) s.insert(s.end(), buf, buf + n);
  return s;
}

constexpr std::uint32_t kShb = 0x0A0D0D0A, kIdb = 1, kEpb = 6, kIsb = 5;

class CaptureWriterFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_EQ(test::start_eal_once(), "");
    // A write to a closed reader must fail with EPIPE, as in uroced.
    signal(SIGPIPE, SIG_IGN);
  }

  void SetUp() override {
    const std::string name = "cwr" + std::to_string(seq_++);
    std::uint16_t a = 0, b = 0;
    ASSERT_EQ(create_ring_pair(name, &a, &b, 256, 1), 0);
    PortConfig cfg;
    cfg.mbufs = 511;
    cfg.rx_desc = 64;
    cfg.tx_desc = 64;
    std::string err;
    ASSERT_EQ(pa_.open_port_id(a, cfg, &err), 0) << err;
    ASSERT_EQ(pb_.open_port_id(b, cfg, &err), 0) << err;
    ASSERT_EQ(tap_.open({.port_id = a,
                         .queues = 1,
                         .snaplen = snaplen_,
                         .max_frame = pa_.max_frame(),
                         .ring_size = 256},
                        &err),
              0)
        << err;
    ASSERT_EQ(tap_.attach(&err), 0) << err;
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv_), 0);
  }

  void TearDown() override {
    tap_.detach();
    tap_.release();
    if (sv_[0] >= 0) close(sv_[0]);
  }

  // n frames of `len` bytes from A (sent) and as many from B (received).
  void traffic(unsigned n, std::uint16_t len) {
    for (EthPort* from : {&pa_, &pb_}) {
      std::vector<rte_mbuf*> m(n);
      for (unsigned i = 0; i < n; ++i) {
        m[i] = rte_pktmbuf_alloc(from->pool());
        std::memset(rte_pktmbuf_append(m[i], len), 0xab, len);
      }
      ASSERT_EQ(from->tx_burst(m.data(), static_cast<std::uint16_t>(n)), n);
      EthPort* to = from == &pa_ ? &pb_ : &pa_;
      rte_mbuf* r[64];
      const std::uint16_t got = to->rx_burst(r, 64);
      ASSERT_EQ(got, n);
      rte_pktmbuf_free_bulk(r, got);
    }
  }

  EthPort pa_, pb_;
  CaptureTap tap_;
  std::uint32_t snaplen_ = 0;
  int sv_[2] = {-1, -1};
  static inline int seq_ = 0;
};

using CaptureWriter_WriteSome = CaptureWriterFixture;
using CaptureWriter_Finish = CaptureWriterFixture;

TEST_F(CaptureWriter_WriteSome, EveryFrameBecomesAnEnhancedPacketBlock) {
  CaptureWriter w;
  std::string err;
  const std::uint64_t t0 = utc_now_ns();
  ASSERT_EQ(w.open(sv_[1], tap_, "test 1.0", "a comment", &err), 0) << err;
  traffic(4, 120);
  std::uint64_t taken = 0;
  for (int i = 0; i < 10 && taken < 8; ++i) {
    const CaptureWriter::Step s = w.write_some(tap_, UINT64_MAX);
    ASSERT_EQ(s.err, 0);
    taken += s.taken;
  }
  EXPECT_EQ(taken, 8u);
  EXPECT_EQ(w.written(), 8u);
  tap_.detach();
  w.finish(tap_, 1, 2);  // closes sv_[1]
  const std::uint64_t t1 = utc_now_ns();
  const std::vector<Block> b = blocks_of(read_all(sv_[0]));
  ASSERT_GE(b.size(), 3u);
  EXPECT_EQ(b.front().type, kShb);
  EXPECT_EQ(b.front().u32(8), 0x1A2B3C4Du);
  unsigned idbs = 0, epbs = 0, in = 0, out = 0;
  for (const Block& x : b) {
    if (x.type == kIdb) ++idbs;
    if (x.type != kEpb) continue;
    ++epbs;
    // Each frame's time: its burst's TSC as UTC, between open and finish
    // (1 ms slack for the TSC-to-UTC origin's two readings).
    const std::uint64_t ts = (std::uint64_t{x.u32(12)} << 32) | x.u32(16);
    EXPECT_GE(ts + 1'000'000, t0);
    EXPECT_LE(ts, t1 + 1'000'000);
    EXPECT_EQ(x.u32(20), 120u);  // captured length
    EXPECT_EQ(x.u32(24), 120u);  // original length
    // Options after the 120 data bytes: epb_flags (2) with the direction.
    EXPECT_EQ(x.u32(28 + 120) & 0xffff, 2u);
    const std::uint32_t dir = x.u32(28 + 120 + 4) & 3;
    if (dir == 1) ++in;
    if (dir == 2) ++out;
  }
  EXPECT_GE(idbs, 2u);  // one per ethdev port of the process
  EXPECT_EQ(epbs, 8u);
  EXPECT_EQ(in, 4u);
  EXPECT_EQ(out, 4u);
  EXPECT_EQ(b.back().type, kIsb);
}

TEST_F(CaptureWriter_WriteSome, LimitTakesNoMore) {
  CaptureWriter w;
  std::string err;
  ASSERT_EQ(w.open(sv_[1], tap_, "test", "", &err), 0) << err;
  traffic(3, 64);
  const CaptureWriter::Step s = w.write_some(tap_, 2);
  EXPECT_EQ(s.taken, 2u);
  EXPECT_EQ(w.written(), 2u);
  w.finish(tap_, 0, 0);
}

TEST_F(CaptureWriter_WriteSome, ClosedReaderGivesEpipe) {
  CaptureWriter w;
  std::string err;
  ASSERT_EQ(w.open(sv_[1], tap_, "test", "", &err), 0) << err;
  close(sv_[0]);
  sv_[0] = -1;
  traffic(2, 64);
  const CaptureWriter::Step s = w.write_some(tap_, UINT64_MAX);
  EXPECT_EQ(s.err, EPIPE);
  EXPECT_EQ(w.written(), 0u);
  EXPECT_EQ(w.lost(), 4u);
  w.finish(tap_, 0, 0);
}

class CaptureWriterSnaplen : public CaptureWriterFixture {
 protected:
  CaptureWriterSnaplen() { snaplen_ = 64; }
};
using CaptureWriter_Snaplen = CaptureWriterSnaplen;

TEST_F(CaptureWriter_Snaplen, BlockSaysTheWireLength) {
  CaptureWriter w;
  std::string err;
  ASSERT_EQ(w.open(sv_[1], tap_, "test", "", &err), 0) << err;
  traffic(1, 500);
  EXPECT_EQ(w.write_some(tap_, UINT64_MAX).taken, 2u);
  tap_.detach();
  w.finish(tap_, 0, 0);
  unsigned epbs = 0;
  for (const Block& x : blocks_of(read_all(sv_[0]))) {
    if (x.type != kEpb) continue;
    ++epbs;
    EXPECT_EQ(x.u32(20), 64u);
    EXPECT_EQ(x.u32(24), 500u);
  }
  EXPECT_EQ(epbs, 2u);
}

TEST_F(CaptureWriter_Finish, StatisticsBlockCountsWhatReachedTheCapture) {
  CaptureWriter w;
  std::string err;
  ASSERT_EQ(w.open(sv_[1], tap_, "test", "", &err), 0) << err;
  traffic(5, 64);
  tap_.detach();
  w.finish(tap_, 1000, 2000);
  const std::vector<Block> b = blocks_of(read_all(sv_[0]));
  ASSERT_FALSE(b.empty());
  const Block& isb = b.back();
  ASSERT_EQ(isb.type, kIsb);
  // Options from byte 20: code, length, value; isb_ifrecv (4) and
  // isb_ifdrop (5) hold 8 bytes each.
  std::uint64_t recv = UINT64_MAX, drop = UINT64_MAX;
  for (std::size_t at = 20; at + 4 <= isb.bytes.size() - 4;) {
    const std::uint32_t head = isb.u32(at);
    const std::uint16_t code = head & 0xffff, len = head >> 16;
    if (code == 0) break;
    std::uint64_t v = 0;
    if (len == 8) std::memcpy(&v, isb.bytes.data() + at + 4, 8);
    if (code == 4) recv = v;
    if (code == 5) drop = v;
    at += 4 + ((len + 3u) & ~3u);
  }
  EXPECT_EQ(recv, 10u);
  EXPECT_EQ(drop, 0u);
}

}  // namespace
}  // namespace uroce::port
