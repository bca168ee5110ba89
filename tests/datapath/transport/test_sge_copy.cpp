#include "datapath/transport/sge_copy.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace uroce::transport {
namespace {

struct SgeCopyFixture : ::testing::Test {
  MrTable mrs{8};
  std::vector<std::uint8_t> a = std::vector<std::uint8_t>(64);
  std::vector<std::uint8_t> b = std::vector<std::uint8_t>(64);
  std::uint32_t ka = 0, kb = 0, kro = 0;
  void SetUp() override {
    std::iota(a.begin(), a.end(), 0);
    std::iota(b.begin(), b.end(), 100);
    int err = 0;
    ka = mrs.reg({1, 0x1000, a.size(), access::kLocalWrite, a.data()}, &err);
    kb = mrs.reg({1, 0x2000, b.size(), access::kLocalWrite, b.data()}, &err);
    kro = mrs.reg({1, 0x2000, b.size(), 0, b.data()}, &err);
  }
};

TEST_F(SgeCopyFixture, Gather_SpansSgesWithOffset) {
  const Sge sge[] = {{0x1000 + 60, 4, ka}, {0x2000, 8, kb}};
  std::vector<std::uint8_t> out(6);
  const auto r = gather(mrs, 1, sge, 2, 2, out);
  EXPECT_EQ(r.err, MrError::kOk);
  EXPECT_FALSE(r.too_long);
  EXPECT_EQ(out, (std::vector<std::uint8_t>{62, 63, 100, 101, 102, 103}));
}

TEST_F(SgeCopyFixture, Gather_ListTooShort) {
  const Sge sge[] = {{0x1000, 4, ka}};
  std::vector<std::uint8_t> out(5);
  EXPECT_TRUE(gather(mrs, 1, sge, 1, 0, out).too_long);
}

TEST_F(SgeCopyFixture, Scatter_WritesAcrossSges) {
  const Sge sge[] = {{0x1000, 2, ka}, {0x2000 + 10, 4, kb}};
  const std::vector<std::uint8_t> src = {9, 8, 7, 6, 5};
  const auto r = scatter(mrs, 1, sge, 2, 1, src);
  EXPECT_EQ(r.err, MrError::kOk);
  EXPECT_EQ(a[0], 0);
  EXPECT_EQ(a[1], 9);
  EXPECT_EQ(b[10], 8);
  EXPECT_EQ(b[13], 5);
  EXPECT_EQ(b[14], 114);
}

TEST_F(SgeCopyFixture, Scatter_NeedsLocalWriteAndWritesNothingOnError) {
  // The second SGE is read-only: nothing may be written, not even the first.
  const Sge sge[] = {{0x1000, 2, ka}, {0x2000, 4, kro}};
  const std::vector<std::uint8_t> src = {9, 9, 9, 9, 9};
  const auto r = scatter(mrs, 1, sge, 2, 0, src);
  EXPECT_EQ(r.err, MrError::kAccessDenied);
  EXPECT_EQ(a[0], 0);
  EXPECT_EQ(a[1], 1);
}

TEST_F(SgeCopyFixture, Scatter_WrongPdAndBounds) {
  const Sge sge[] = {{0x1000, 8, ka}};
  const std::vector<std::uint8_t> src(4, 1);
  EXPECT_EQ(scatter(mrs, 2, sge, 1, 0, src).err, MrError::kWrongPd);
  const Sge bad[] = {{0x1000 + 62, 4, ka}};
  EXPECT_EQ(scatter(mrs, 1, bad, 1, 0, src).err, MrError::kOutOfBounds);
}

TEST_F(SgeCopyFixture, Gather_ZeroLengthTouchesNothing) {
  std::vector<std::uint8_t> out;
  const auto r = gather(mrs, 1, nullptr, 0, 0, out);
  EXPECT_EQ(r.err, MrError::kOk);
  EXPECT_FALSE(r.too_long);
}

}  // namespace
}  // namespace uroce::transport
