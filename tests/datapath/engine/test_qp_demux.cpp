#include "datapath/engine/qp_demux.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace uroce::engine {
namespace {

struct Obj {
  int id = 0;
};

TEST(QpDemux_Construct, CapacityRoundsUpToAPowerOfTwo) {
  EXPECT_EQ(QpDemux<Obj>(5).capacity(), 8u);
  EXPECT_EQ(QpDemux<Obj>(64).capacity(), 64u);
  EXPECT_EQ(QpDemux<Obj>(0).capacity(), 1u);
}

TEST(QpDemux_Find, ReturnsTheInsertedObject) {
  QpDemux<Obj> d(16);
  Obj a{1}, b{2};
  ASSERT_EQ(d.insert(0x101, &a), 0);
  ASSERT_EQ(d.insert(0x202, &b), 0);
  EXPECT_EQ(d.find(0x101), &a);
  EXPECT_EQ(d.find(0x202), &b);
  EXPECT_EQ(d.size(), 2u);
}

TEST(QpDemux_Find, QpnSharingTheSlotOfAnotherIsNotFound) {
  QpDemux<Obj> d(16);
  Obj a;
  ASSERT_EQ(d.insert(0x11, &a), 0);
  EXPECT_EQ(d.find(0x21), nullptr);  // same low 4 bits
  EXPECT_EQ(d.find(0x12), nullptr);  // empty slot
}

TEST(QpDemux_Insert, ClashInTheLowBitsGivesEexist) {
  QpDemux<Obj> d(16);
  Obj a, b;
  ASSERT_EQ(d.insert(0x11, &a), 0);
  EXPECT_FALSE(d.slot_free(0x21));
  EXPECT_EQ(d.insert(0x21, &b), EEXIST);
  EXPECT_EQ(d.insert(0x11, &b), EEXIST);
  EXPECT_EQ(d.find(0x11), &a);
}

TEST(QpDemux_Insert, QpnWiderThan24BitsOrNullGivesEinval) {
  QpDemux<Obj> d(16);
  Obj a;
  EXPECT_EQ(d.insert(0x1000000, &a), EINVAL);
  EXPECT_EQ(d.insert(5, nullptr), EINVAL);
  EXPECT_EQ(d.size(), 0u);
}

TEST(QpDemux_Erase, FreesTheSlotAndUnknownGivesEnoent) {
  QpDemux<Obj> d(16);
  Obj a, b;
  ASSERT_EQ(d.insert(0x11, &a), 0);
  EXPECT_EQ(d.erase(0x21), ENOENT);
  EXPECT_EQ(d.erase(0x11), 0);
  EXPECT_EQ(d.find(0x11), nullptr);
  EXPECT_EQ(d.size(), 0u);
  EXPECT_EQ(d.insert(0x21, &b), 0);
  EXPECT_EQ(d.erase(0x11), ENOENT);
}

TEST(QpDemux_Update, RepointsAnExistingQpnOnly) {
  QpDemux<Obj> d(16);
  Obj a, b;
  ASSERT_EQ(d.insert(0x11, &a), 0);
  EXPECT_EQ(d.update(0x11, &b), 0);
  EXPECT_EQ(d.find(0x11), &b);
  EXPECT_EQ(d.update(0x12, &a), ENOENT);
}

}  // namespace
}  // namespace uroce::engine
