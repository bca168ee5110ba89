#include "datapath/port/capture_tap.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "datapath/port/eth_port.h"
#include "tests/datapath/port/eal_once.h"

namespace uroce::port {
namespace {

// A crossed net_ring pair (A, B) in this process; the tap goes on A. The
// ring between them holds kRing - 1 frames, so a burst larger than that is
// partly refused, as a full TX queue refuses it.
class CaptureTapFixture : public ::testing::Test {
 protected:
  static constexpr unsigned kRing = 16;

  static void SetUpTestSuite() { ASSERT_EQ(test::start_eal_once(), ""); }

  void SetUp() override {
    const std::string name = "ctap" + std::to_string(seq_++);
    std::uint16_t a = 0, b = 0;
    ASSERT_EQ(create_ring_pair(name, &a, &b, kRing, 1), 0);
    PortConfig cfg;
    cfg.mbufs = 511;
    cfg.rx_desc = 64;
    cfg.tx_desc = 64;
    std::string err;
    ASSERT_EQ(pa_.open_port_id(a, cfg, &err), 0) << err;
    ASSERT_EQ(pb_.open_port_id(b, cfg, &err), 0) << err;
  }

  CaptureTapConfig tap_config(std::uint32_t snaplen = 0, std::uint32_t ring = 256) {
    return {.port_id = pa_.port_id(),
            .queues = 1,
            .snaplen = snaplen,
            .max_frame = pa_.max_frame(),
            .ring_size = ring};
  }

  // A frame of `len` bytes from `p`'s pool, byte i = (seed + i) & 0xff.
  static rte_mbuf* frame(EthPort& p, std::uint16_t len, std::uint8_t seed) {
    rte_mbuf* m = rte_pktmbuf_alloc(p.pool());
    auto* d = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, len));
    for (std::uint16_t i = 0; i < len; ++i) d[i] = static_cast<std::uint8_t>(seed + i);
    return m;
  }

  // Sends n frames from `from` in one burst; returns how many it took (the
  // rest are freed).
  static std::uint16_t send(EthPort& from, unsigned n, std::uint16_t len, std::uint8_t seed) {
    std::vector<rte_mbuf*> m(n);
    for (unsigned i = 0; i < n; ++i) m[i] = frame(from, len, static_cast<std::uint8_t>(seed + i));
    const std::uint16_t sent = from.tx_burst(m.data(), static_cast<std::uint16_t>(n));
    for (unsigned i = sent; i < n; ++i) rte_pktmbuf_free(m[i]);
    return sent;
  }

  // Receives and frees everything waiting on `at`.
  static unsigned drain(EthPort& at) {
    unsigned total = 0;
    rte_mbuf* m[32];
    std::uint16_t n = 0;
    while ((n = at.rx_burst(m, 32)) != 0) {
      rte_pktmbuf_free_bulk(m, n);
      total += n;
    }
    return total;
  }

  static std::vector<rte_mbuf*> take_all(CaptureTap& tap) {
    std::vector<rte_mbuf*> out;
    rte_mbuf* m[32];
    unsigned n = 0;
    while ((n = tap.take(m, 32)) != 0) out.insert(out.end(), m, m + n);
    return out;
  }

  static void free_all(std::vector<rte_mbuf*>& v) {
    for (rte_mbuf* m : v) rte_pktmbuf_free(m);
    v.clear();
  }

  EthPort pa_, pb_;
  static inline int seq_ = 0;
};

using CaptureTap_Attach = CaptureTapFixture;
using CaptureTap_Tx = CaptureTapFixture;
using CaptureTap_Snaplen = CaptureTapFixture;
using CaptureTap_Ring = CaptureTapFixture;
using CaptureTap_Detach = CaptureTapFixture;

TEST_F(CaptureTap_Attach, CopiesEachDirectionOnItsQueue) {
  CaptureTap tap;
  std::string err;
  ASSERT_EQ(tap.open(tap_config(), &err), 0) << err;
  ASSERT_EQ(tap.attach(&err), 0) << err;
  ASSERT_EQ(send(pa_, 5, 100, 10), 5);
  EXPECT_EQ(drain(pb_), 5u);  // B is not tapped
  ASSERT_EQ(send(pb_, 3, 200, 50), 3);
  EXPECT_EQ(drain(pa_), 3u);
  std::vector<rte_mbuf*> got = take_all(tap);
  ASSERT_EQ(got.size(), 8u);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const bool sent = i < 5;
    const FrameMeta& m = CaptureTap::meta(got[i]);
    EXPECT_EQ(m.direction, sent ? 2 : 1) << i;
    EXPECT_EQ(m.queue, 0) << i;
    EXPECT_EQ(m.orig_len, sent ? 100u : 200u) << i;
    EXPECT_NE(m.tsc, 0u);
    const std::uint8_t seed =
        sent ? static_cast<std::uint8_t>(10 + i) : static_cast<std::uint8_t>(50 + i - 5);
    ASSERT_EQ(rte_pktmbuf_pkt_len(got[i]), m.orig_len);
    const auto* d = rte_pktmbuf_mtod(got[i], const std::uint8_t*);
    for (std::uint32_t k = 0; k < m.orig_len; ++k) {
      ASSERT_EQ(d[k], static_cast<std::uint8_t>(seed + k)) << "frame " << i << " byte " << k;
    }
  }
  const CaptureCounters c = tap.counters();
  EXPECT_EQ(c.tx_frames, 5u);
  EXPECT_EQ(c.rx_frames, 3u);
  EXPECT_EQ(c.ring_full + c.no_mbuf, 0u);
  free_all(got);
  tap.detach();
  tap.release();
}

TEST_F(CaptureTap_Tx, FrameOfferedAgainIsCopiedOnce) {
  CaptureTap tap;
  std::string err;
  ASSERT_EQ(tap.open(tap_config(), &err), 0) << err;
  ASSERT_EQ(tap.attach(&err), 0) << err;
  // 20 frames into a ring with room for 15: five refused and kept, as the
  // engine's TX sink keeps them, then offered again once B drained.
  std::vector<rte_mbuf*> m(20);
  for (unsigned i = 0; i < 20; ++i) m[i] = frame(pa_, 64, static_cast<std::uint8_t>(i));
  const std::uint16_t first = pa_.tx_burst(m.data(), 20);
  ASSERT_EQ(first, kRing - 1);
  EXPECT_EQ(drain(pb_), kRing - 1);
  const std::uint16_t again =
      pa_.tx_burst(m.data() + first, static_cast<std::uint16_t>(20 - first));
  ASSERT_EQ(again, 20 - first);
  EXPECT_EQ(drain(pb_), 20u - first);
  std::vector<rte_mbuf*> got = take_all(tap);
  EXPECT_EQ(got.size(), 20u);
  EXPECT_EQ(tap.counters().tx_frames, 20u);
  // In the order of their first offering.
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(rte_pktmbuf_mtod(got[i], const std::uint8_t*)[0], static_cast<std::uint8_t>(i));
  }
  // A reused mbuf starts unmarked: the next frame in it is copied.
  ASSERT_EQ(send(pa_, 1, 64, 99), 1);
  EXPECT_EQ(drain(pb_), 1u);
  EXPECT_EQ(tap.counters().tx_frames, 21u);
  std::vector<rte_mbuf*> more = take_all(tap);
  EXPECT_EQ(more.size(), 1u);
  free_all(got);
  free_all(more);
  tap.detach();
  tap.release();
}

TEST_F(CaptureTap_Snaplen, CutsTheCopyAndKeepsTheOriginalLength) {
  CaptureTap tap;
  std::string err;
  ASSERT_EQ(tap.open(tap_config(64), &err), 0) << err;
  EXPECT_EQ(tap.snaplen(), 64u);
  ASSERT_EQ(tap.attach(&err), 0) << err;
  ASSERT_EQ(send(pb_, 1, 300, 7), 1);
  ASSERT_EQ(send(pb_, 1, 40, 7), 1);
  EXPECT_EQ(drain(pa_), 2u);
  std::vector<rte_mbuf*> got = take_all(tap);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(rte_pktmbuf_pkt_len(got[0]), 64u);
  EXPECT_EQ(CaptureTap::meta(got[0]).orig_len, 300u);
  EXPECT_EQ(rte_pktmbuf_pkt_len(got[1]), 40u);
  EXPECT_EQ(CaptureTap::meta(got[1]).orig_len, 40u);
  free_all(got);
  tap.detach();
  tap.release();
}

TEST_F(CaptureTap_Snaplen, ZeroOrMoreThanTheLargestFrameKeepsWholeFrames) {
  CaptureTap whole, big;
  std::string err;
  ASSERT_EQ(whole.open(tap_config(0), &err), 0) << err;
  EXPECT_EQ(whole.snaplen(), pa_.max_frame());
  ASSERT_EQ(big.open(tap_config(1'000'000), &err), 0) << err;
  EXPECT_EQ(big.snaplen(), pa_.max_frame());
}

TEST_F(CaptureTap_Ring, NobodyTakingDropsAndCountsWithoutBlocking) {
  CaptureTap tap;
  std::string err;
  ASSERT_EQ(tap.open(tap_config(0, 16), &err), 0) << err;
  ASSERT_EQ(tap.attach(&err), 0) << err;
  unsigned offered = 0;
  for (int round = 0; round < 4; ++round) {
    offered += send(pb_, 10, 80, 0);
    drain(pa_);
  }
  ASSERT_EQ(offered, 40u);
  const CaptureCounters c = tap.counters();
  std::vector<rte_mbuf*> got = take_all(tap);
  // Every received frame is either copied or counted as not copied, and
  // every copy either waits in the ring or is counted dropped.
  EXPECT_EQ(c.rx_frames + c.no_mbuf, offered);
  EXPECT_EQ(c.rx_frames - c.ring_full, got.size());
  EXPECT_LE(got.size(), 15u);
  EXPECT_GT(c.ring_full + c.no_mbuf, 0u);
  free_all(got);
  tap.detach();
  tap.release();
}

TEST_F(CaptureTap_Detach, NoCopyAfterwardsAndAnotherTapMayFollow) {
  CaptureTap tap;
  std::string err;
  ASSERT_EQ(tap.open(tap_config(), &err), 0) << err;
  ASSERT_EQ(tap.attach(&err), 0) << err;
  ASSERT_EQ(send(pa_, 2, 64, 0), 2);
  drain(pb_);
  tap.detach();
  // This thread runs the port's bursts: no callback is in flight here.
  ASSERT_EQ(send(pa_, 2, 64, 0), 2);
  ASSERT_EQ(send(pb_, 2, 64, 0), 2);
  drain(pa_);
  drain(pb_);
  EXPECT_EQ(tap.counters().tx_frames, 2u);
  EXPECT_EQ(tap.counters().rx_frames, 0u);
  // The copies still queued are freed with the rest.
  tap.release();
  CaptureTap next;
  ASSERT_EQ(next.open(tap_config(), &err), 0) << err;
  ASSERT_EQ(next.attach(&err), 0) << err;
  ASSERT_EQ(send(pa_, 3, 64, 0), 3);
  drain(pb_);
  EXPECT_EQ(next.counters().tx_frames, 3u);
  std::vector<rte_mbuf*> got = take_all(next);
  EXPECT_EQ(got.size(), 3u);
  free_all(got);
  next.detach();
  next.release();
}

TEST(CaptureRingSize_Snaplen, ByMemoryBudgetPowerOfTwoBounded) {
  // 9000-byte MTU frames: ~9.3 KB a copy, 40 MiB hold 4,096 of them.
  EXPECT_EQ(capture_ring_size(0, 9022), 4096u);
  EXPECT_EQ(capture_ring_size(1'000'000, 9022), 4096u);
  // 1500-byte MTU: 16,384.
  EXPECT_EQ(capture_ring_size(0, 1522), 16384u);
  // Headers only: as deep as allowed.
  EXPECT_EQ(capture_ring_size(128, 9022), kMaxCaptureRing);
  // Never below the floor, even for frames larger than any port has.
  EXPECT_EQ(capture_ring_size(0, 60000), kMinCaptureRing);
}

}  // namespace
}  // namespace uroce::port
