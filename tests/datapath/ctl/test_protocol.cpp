#include "datapath/ctl/protocol.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

namespace uroce::ctl {
namespace {

TEST(RequestBytes, EveryOpHasHeaderPlusItsRequest) {
  EXPECT_EQ(request_bytes(Op::kHello), sizeof(MsgHeader) + sizeof(HelloReq));
  EXPECT_EQ(request_bytes(Op::kCreateQp), sizeof(MsgHeader) + sizeof(CreateQpReq));
  EXPECT_EQ(request_bytes(Op::kModifyQp), sizeof(MsgHeader) + sizeof(ModifyQpReq));
  EXPECT_EQ(request_bytes(Op::kStatus), sizeof(MsgHeader) + sizeof(StatusReq));
  EXPECT_EQ(request_bytes(Op::kCapture), sizeof(MsgHeader) + sizeof(CaptureReq));
  for (std::uint16_t op = 1; op <= kMaxOp; ++op) {
    EXPECT_GT(request_bytes(static_cast<Op>(op)), sizeof(MsgHeader)) << op;
  }
}

TEST(RequestBytes, UnknownOpIsZero) {
  EXPECT_EQ(request_bytes(static_cast<Op>(0)), 0u);
  EXPECT_EQ(request_bytes(static_cast<Op>(kMaxOp + 1)), 0u);
  EXPECT_EQ(request_bytes(static_cast<Op>(0xffff)), 0u);
}

TEST(OpName, DistinctForEveryOpAndUnknownOtherwise) {
  std::set<std::string> names;
  for (std::uint16_t op = 1; op <= kMaxOp; ++op) {
    const std::string n = op_name(static_cast<Op>(op));
    EXPECT_NE(n, "unknown") << op;
    EXPECT_TRUE(names.insert(n).second) << n;
  }
  EXPECT_STREQ(op_name(static_cast<Op>(kMaxOp + 1)), "unknown");
}

TEST(RequestFdCount, OnlyOpsThatPassAnFd) {
  EXPECT_EQ(request_fd_count(Op::kHello), 1);
  EXPECT_EQ(request_fd_count(Op::kRegMr), 1);
  EXPECT_EQ(request_fd_count(Op::kCreateCompChannel), 1);
  EXPECT_EQ(request_fd_count(Op::kCapture), 1);
  EXPECT_EQ(request_fd_count(Op::kCreateQp), 0);
  EXPECT_EQ(request_fd_count(Op::kStatus), 0);
}

TEST(MsgHeader, MagicSpellsUrceInMemory) {
  char bytes[4];
  std::memcpy(bytes, &kMagic, 4);
  EXPECT_EQ(std::string(bytes, 4), "URCE");
}

}  // namespace
}  // namespace uroce::ctl
