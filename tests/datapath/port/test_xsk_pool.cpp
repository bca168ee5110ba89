// xsk_pool.h: an af_xdp port's mbuf pool lies wholly inside the UMEM that
// net_af_xdp registers for it, where a plain pktmbuf pool does not.
#include "datapath/port/xsk_pool.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/datapath/port/eal_once.h"

namespace uroce::port {
namespace {

// The mbuf count and data room an MTU 3504 af_xdp port asked for before
// (the engine's default pool: a 3,526-byte frame plus the headroom).
constexpr std::uint32_t kMbufs = 8191;
constexpr std::uint32_t kRoom3504 = 3526 + RTE_PKTMBUF_HEADROOM;

class XskPool : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(test::start_eal_once(), ""); }
};

TEST(XskDataRoom, APageUnlessMoreIsAsked) {
  // A 64-byte object header and the 128-byte mbuf leave 3,904 of 4 KiB.
  EXPECT_EQ(xsk_data_room(2048 + RTE_PKTMBUF_HEADROOM, 4096), 4096u - 64 - sizeof(rte_mbuf));
  EXPECT_EQ(xsk_data_room(kRoom3504, 4096), 3904u);
  EXPECT_EQ(xsk_data_room(3904, 4096), 3904u);
  EXPECT_EQ(xsk_data_room(3905, 4096), 3905u);
  EXPECT_EQ(xsk_data_room(9000, 2u << 20), (2u << 20) - 64 - sizeof(rte_mbuf));
}

// The defect this module exists for: a pktmbuf pool of sub-page objects
// (each starts on a fresh page) spreads beyond the UMEM the PMD computes
// from its object size, so some mbufs are outside it.
TEST_F(XskPool, PlainPoolOfSubPageObjectsLiesPartlyOutsideTheUmem) {
  if (getpagesize() != 4096) GTEST_SKIP() << "the figures below assume 4 KiB pages";
  rte_mempool* p = rte_pktmbuf_pool_create("xskp_plain", kMbufs, 256, 0, kRoom3504, SOCKET_ID_ANY);
  ASSERT_NE(p, nullptr);
  const XskUmemFit fit = xsk_umem_fit(p);
  EXPECT_EQ(fit.objects, kMbufs);
  EXPECT_EQ(fit.chunks, 1u);
  EXPECT_FALSE(fit.fits());
  // 3,904-byte objects one to a 4 KiB page: the last 4.7 % are outside.
  EXPECT_EQ(fit.outside, 385u);
  EXPECT_GT(fit.span_bytes, fit.umem_bytes);
  rte_mempool_free(p);
}

TEST_F(XskPool, PoolForMtu3504FitsTheUmemWithPageSizedObjects) {
  std::string err;
  rte_mempool* p = create_xsk_pool("xskp_3504", kMbufs, 256, kRoom3504, SOCKET_ID_ANY, &err);
  ASSERT_NE(p, nullptr) << err;
  const XskUmemFit fit = xsk_umem_fit(p);
  EXPECT_TRUE(fit.fits());
  EXPECT_EQ(fit.objects, kMbufs);
  EXPECT_EQ(fit.outside, 0u);
  EXPECT_EQ(rte_mempool_calc_obj_size(p->elt_size, p->flags, nullptr),
            static_cast<std::uint32_t>(getpagesize()));
  EXPECT_GE(rte_pktmbuf_data_room_size(p), kRoom3504);
  // Every mbuf works as an mbuf: take them all, and give them back.
  std::vector<rte_mbuf*> all(kMbufs);
  ASSERT_EQ(rte_pktmbuf_alloc_bulk(p, all.data(), kMbufs), 0);
  for (rte_mbuf* m : all)
    ASSERT_EQ(rte_pktmbuf_tailroom(m), rte_pktmbuf_data_room_size(p) - RTE_PKTMBUF_HEADROOM);
  rte_pktmbuf_free_bulk(all.data(), kMbufs);
  rte_mempool_free(p);
}

TEST_F(XskPool, SmallFramesStillGetAPagePerMbuf) {
  std::string err;
  rte_mempool* p =
      create_xsk_pool("xskp_1500", 511, 32, 2048 + RTE_PKTMBUF_HEADROOM, SOCKET_ID_ANY, &err);
  ASSERT_NE(p, nullptr) << err;
  EXPECT_TRUE(xsk_umem_fit(p).fits());
  EXPECT_EQ(rte_pktmbuf_data_room_size(p),
            xsk_data_room(2048 + RTE_PKTMBUF_HEADROOM, getpagesize()));
  rte_mempool_free(p);
}

TEST_F(XskPool, DataRoomOver64KiBRefused) {
  std::string err;
  EXPECT_EQ(create_xsk_pool("xskp_big", 511, 32, 70000, SOCKET_ID_ANY, &err), nullptr);
  EXPECT_EQ(err, "an mbuf data room of 70000 B is over 65535");
}

}  // namespace
}  // namespace uroce::port
