#include "datapath/port/memif_args.h"

#include <gtest/gtest.h>

namespace uroce::port {
namespace {

TEST(ParseMemifArgs, PmdDefaultsForWhatIsLeftOut) {
  const auto m = parse_memif_args("net_memif0", "");
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->client);
  EXPECT_FALSE(m->zero_copy);
  EXPECT_EQ(m->socket, "/run/memif.sock");
  EXPECT_TRUE(m->socket_abstract);
}

TEST(ParseMemifArgs, ReadsEveryKeyAndSkipsTheRest) {
  const auto m =
      parse_memif_args("net_memif3",
                       "id=0,role=client,bare,zero-copy=yes,socket=/tmp/m.sock,socket-abstract=no");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->client);
  EXPECT_TRUE(m->zero_copy);
  EXPECT_EQ(m->socket, "/tmp/m.sock");
  EXPECT_FALSE(m->socket_abstract);
  EXPECT_TRUE(parse_memif_args("net_memif0", "role=slave")->client);
  EXPECT_FALSE(parse_memif_args("net_memif0", "role=server")->client);
  EXPECT_FALSE(parse_memif_args("net_memif0", "zero-copy=no")->zero_copy);
}

TEST(ParseMemifArgs, OtherDevicesHaveNone) {
  EXPECT_FALSE(parse_memif_args("net_af_packet0", "role=client,zero-copy=yes"));
  EXPECT_FALSE(parse_memif_args("0000:03:00.0", ""));
}

}  // namespace
}  // namespace uroce::port
