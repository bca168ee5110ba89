#include "datapath/port/eth_port.h"

#include <gtest/gtest.h>

namespace uroce::port {
namespace {

TEST(PeerReadsTxInPlace, MemifZeroCopyClientOnly) {
  EXPECT_TRUE(peer_reads_tx_in_place("net_memif0", "role=client,zero-copy=yes,socket=/tmp/a"));
  EXPECT_TRUE(peer_reads_tx_in_place("net_memif1", "socket=/tmp/a,zero-copy=yes,role=client"));
  EXPECT_TRUE(peer_reads_tx_in_place("net_memif0", "role=slave,zero-copy=yes"));
  // The PMD's default role is server, which copies.
  EXPECT_FALSE(peer_reads_tx_in_place("net_memif0", "zero-copy=yes"));
  EXPECT_FALSE(peer_reads_tx_in_place("net_memif0", "role=client,socket=/tmp/a"));
  EXPECT_FALSE(peer_reads_tx_in_place("net_memif0", "role=client,zero-copy=no"));
  EXPECT_FALSE(peer_reads_tx_in_place("net_memif0", "role=server,zero-copy=yes"));
  EXPECT_FALSE(peer_reads_tx_in_place("net_memif0", "role=client,zero-copy=yesplease"));
  EXPECT_FALSE(peer_reads_tx_in_place("net_af_packet0", "iface=veth0,zero-copy=yes"));
  EXPECT_FALSE(peer_reads_tx_in_place("0000:03:00.0", ""));
  EXPECT_FALSE(peer_reads_tx_in_place("ring:p0", ""));
}

}  // namespace
}  // namespace uroce::port
