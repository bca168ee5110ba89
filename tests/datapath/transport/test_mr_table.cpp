#include "datapath/transport/mr_table.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <vector>

namespace uroce::transport {
namespace {

struct MrTableFixture : ::testing::Test {
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(4096);
  MrTable t{16};
  MrDesc desc(std::uint32_t acc, PdHandle pd = 1) {
    return MrDesc{pd, 0x10000, buf.size(), acc, buf.data()};
  }
};

TEST_F(MrTableFixture, Reg_KeysCarryIndexAndVariant) {
  int err = -1;
  const auto k1 = t.reg(desc(access::kLocalWrite), &err);
  EXPECT_EQ(err, 0);
  EXPECT_EQ(k1, (1u << 8) | 1u);
  const auto k2 = t.reg(desc(access::kLocalWrite), &err);
  EXPECT_EQ(k2, (2u << 8) | 1u);
  EXPECT_EQ(t.live(), 2u);
}

TEST_F(MrTableFixture, Reg_RemoteWriteWithoutLocalWriteIsEinval) {
  int err = 0;
  EXPECT_EQ(t.reg(desc(access::kRemoteWrite), &err), 0u);
  EXPECT_EQ(err, EINVAL);
  EXPECT_EQ(t.reg(desc(access::kRemoteAtomic), &err), 0u);
  EXPECT_EQ(err, EINVAL);
}

TEST_F(MrTableFixture, Reg_FullTableIsEnomem) {
  int err = 0;
  for (int i = 0; i < 15; ++i) ASSERT_NE(t.reg(desc(0), &err), 0u);
  EXPECT_EQ(t.reg(desc(0), &err), 0u);
  EXPECT_EQ(err, ENOMEM);
}

TEST_F(MrTableFixture, Dereg_StaleKeyRejectedAfterReuse) {
  int err = 0;
  const auto k1 = t.reg(desc(access::kLocalWrite | access::kRemoteRead), &err);
  ASSERT_EQ(t.dereg(k1), 0);
  EXPECT_EQ(t.dereg(k1), EINVAL);
  const auto k2 = t.reg(desc(access::kLocalWrite | access::kRemoteRead), &err);
  EXPECT_EQ(k2 >> 8, k1 >> 8);  // same slot
  EXPECT_NE(k2, k1);            // new variant
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve(k1, 1, 0x10000, 8, access::kRemoteRead, &p), MrError::kBadKey);
  EXPECT_EQ(t.resolve(k2, 1, 0x10000, 8, access::kRemoteRead, &p), MrError::kOk);
}

TEST_F(MrTableFixture, Resolve_ChecksEachRule) {
  int err = 0;
  const auto k = t.reg(desc(access::kLocalWrite | access::kRemoteWrite), &err);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve(k, 1, 0x10010, 16, access::kRemoteWrite, &p), MrError::kOk);
  EXPECT_EQ(p, buf.data() + 0x10);
  EXPECT_EQ(t.resolve(k, 2, 0x10010, 16, access::kRemoteWrite, &p), MrError::kWrongPd);
  EXPECT_EQ(t.resolve(k, 1, 0x10010, 16, access::kRemoteRead, &p), MrError::kAccessDenied);
  EXPECT_EQ(t.resolve(k ^ 0x100, 1, 0x10010, 16, access::kRemoteWrite, &p), MrError::kBadKey);
  EXPECT_EQ(t.resolve(0, 1, 0x10010, 16, access::kRemoteWrite, &p), MrError::kBadKey);
}

TEST_F(MrTableFixture, Resolve_BoundsAreExactAndOverflowSafe) {
  int err = 0;
  const auto k = t.reg(desc(access::kLocalWrite | access::kRemoteWrite), &err);
  std::uint8_t* p = nullptr;
  const std::uint32_t w = access::kRemoteWrite;
  EXPECT_EQ(t.resolve(k, 1, 0x10000, 4096, w, &p), MrError::kOk);
  EXPECT_EQ(t.resolve(k, 1, 0x10FFF, 1, w, &p), MrError::kOk);
  EXPECT_EQ(t.resolve(k, 1, 0x10FFF, 2, w, &p), MrError::kOutOfBounds);
  EXPECT_EQ(t.resolve(k, 1, 0xFFFF, 1, w, &p), MrError::kOutOfBounds);
  EXPECT_EQ(t.resolve(k, 1, 0x10000, 4097, w, &p), MrError::kOutOfBounds);
  EXPECT_EQ(t.resolve(k, 1, 0x10001, UINT64_MAX, w, &p), MrError::kOutOfBounds);
  EXPECT_EQ(t.resolve(k, 1, UINT64_MAX, 2, w, &p), MrError::kOutOfBounds);
}

TEST_F(MrTableFixture, Resolve_ZeroLengthChecksNothing) {
  std::uint8_t* p = buf.data();
  EXPECT_EQ(t.resolve(0xdeadbe, 9, 0, 0, access::kRemoteWrite, &p), MrError::kOk);
  EXPECT_EQ(p, nullptr);
}

TEST_F(MrTableFixture, Resolve_AtomicNeedsAlignment) {
  int err = 0;
  const auto k = t.reg(desc(access::kLocalWrite | access::kRemoteAtomic), &err);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve(k, 1, 0x10008, 8, access::kRemoteAtomic, &p), MrError::kOk);
  EXPECT_EQ(t.resolve(k, 1, 0x10004, 8, access::kRemoteAtomic, &p), MrError::kMisaligned);
}

TEST_F(MrTableFixture, Invalidate_BlocksAccessUntilDereg) {
  int err = 0;
  const auto k = t.reg(desc(access::kLocalWrite | access::kRemoteRead), &err);
  ASSERT_EQ(t.invalidate(k), 0);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve(k, 1, 0x10000, 4, access::kRemoteRead, &p), MrError::kInvalidated);
  EXPECT_EQ(t.invalidate(k + 1), EINVAL);
  EXPECT_EQ(t.dereg(k), 0);
}

TEST_F(MrTableFixture, Rereg_ChangesAccessKeepsKey) {
  int err = 0;
  const auto k = t.reg(desc(access::kLocalWrite), &err);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve(k, 1, 0x10000, 4, access::kRemoteRead, &p), MrError::kAccessDenied);
  ASSERT_EQ(t.rereg(k, desc(access::kLocalWrite | access::kRemoteRead)), 0);
  EXPECT_EQ(t.resolve(k, 1, 0x10000, 4, access::kRemoteRead, &p), MrError::kOk);
  EXPECT_EQ(t.rereg(k, desc(access::kRemoteWrite)), EINVAL);
}

TEST(MrErrorName, NamesEveryError) {
  EXPECT_STREQ(mr_error_name(MrError::kOutOfBounds), "out_of_bounds");
  EXPECT_STREQ(mr_error_name(MrError::kMisaligned), "misaligned");
}

}  // namespace
}  // namespace uroce::transport
