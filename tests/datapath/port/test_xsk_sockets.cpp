// xsk_sockets.h: which sockets of the process are AF_XDP ones, and the mode
// a port's new sockets run in.
#include "datapath/port/xsk_sockets.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#ifndef AF_XDP
#define AF_XDP 44
#endif

namespace uroce::port {
namespace {

TEST(XskMode, OnlyTheNewSocketsCount) {
  XskSockets before{{3, 4}, {4}};
  XskSockets after{{3, 4, 9}, {4}};
  EXPECT_EQ(xsk_mode(before, after), "copy");
  after.zero_copy.insert(9);
  EXPECT_EQ(xsk_mode(before, after), "zero-copy");
  after.all.insert(10);
  EXPECT_EQ(xsk_mode(before, after), "mixed");
  EXPECT_EQ(xsk_mode(after, after), "none");
}

TEST(XskSockets_Process, FindsAnAfXdpSocketAndNoOther) {
  const XskSockets none = xsk_sockets();
  const int other = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(other, 0);
  const int xsk = socket(AF_XDP, SOCK_RAW, 0);
  if (xsk < 0) {
    close(other);
    GTEST_SKIP() << "no AF_XDP socket here (errno " << errno << "): needs CAP_NET_RAW";
  }
  const XskSockets now = xsk_sockets();
  EXPECT_EQ(now.all.count(xsk), 1u);
  EXPECT_EQ(now.all.count(other), 0u);
  EXPECT_EQ(now.zero_copy.count(xsk), 0u);  // unbound: no zero-copy
  EXPECT_EQ(xsk_mode(none, now), "copy");
  close(xsk);
  close(other);
  EXPECT_EQ(xsk_sockets().all.count(xsk), 0u);
}

TEST(XskNewSockets, OnlyThoseNotThereBefore) {
  EXPECT_EQ(xsk_new_sockets(XskSockets{{3, 4}, {}}, XskSockets{{3, 4, 9, 12}, {12}}),
            (std::vector<int>{9, 12}));
  EXPECT_TRUE(xsk_new_sockets(XskSockets{{3}, {}}, XskSockets{{3}, {}}).empty());
}

TEST(XskStatistics_Process, ZeroFromAFreshSocketNothingFromAnotherFd) {
  const int other = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(other, 0);
  const XdpStats none = xsk_statistics({other, -1});
  EXPECT_EQ(none.rx_dropped + none.rx_invalid_descs + none.tx_invalid_descs + none.rx_ring_full +
                none.rx_fill_ring_empty_descs + none.tx_ring_empty_descs,
            0u);
  close(other);
  const int xsk = socket(AF_XDP, SOCK_RAW, 0);
  if (xsk < 0) GTEST_SKIP() << "no AF_XDP socket here (errno " << errno << "): needs CAP_NET_RAW";
  const XdpStats fresh = xsk_statistics({xsk});
  EXPECT_EQ(fresh.tx_invalid_descs, 0u);
  EXPECT_EQ(fresh.rx_dropped, 0u);
  close(xsk);
}

}  // namespace
}  // namespace uroce::port
