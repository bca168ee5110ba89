#include "datapath/engine/ah_table.h"

#include <gtest/gtest.h>

#include <set>

namespace uroce::engine {
namespace {

AhEntry ah(ObjId id) {
  AhEntry e;
  e.id = id;
  e.client = id * 3;
  e.pd = id + 1;
  e.dip = wire::Ipv4Addr{id};
  return e;
}

TEST(AhTable_Insert, FindsWhatWasInserted) {
  AhTable t(4);
  ASSERT_EQ(t.insert(ah(7)), 0);
  const AhEntry* e = t.find(7);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->client, 21u);
  EXPECT_EQ(e->pd, 8u);
  EXPECT_EQ(t.find(8), nullptr);
  EXPECT_EQ(t.find(0), nullptr);
  EXPECT_EQ(t.size(), 1u);
}

TEST(AhTable_Insert, Errors) {
  AhTable t(2);
  EXPECT_EQ(t.insert(ah(0)), EINVAL);
  ASSERT_EQ(t.insert(ah(1)), 0);
  EXPECT_EQ(t.insert(ah(1)), EEXIST);
  ASSERT_EQ(t.insert(ah(2)), 0);
  EXPECT_EQ(t.insert(ah(3)), ENOMEM);
  EXPECT_EQ(t.insert(ah(2)), EEXIST);
}

TEST(AhTable_Erase, UnknownIsEnoent) {
  AhTable t(2);
  EXPECT_EQ(t.erase(1), ENOENT);
  EXPECT_EQ(t.erase(0), ENOENT);
  ASSERT_EQ(t.insert(ah(1)), 0);
  EXPECT_EQ(t.erase(1), 0);
  EXPECT_EQ(t.erase(1), ENOENT);
  EXPECT_EQ(t.find(1), nullptr);
}

// Many inserts and erases in a small table (long probe runs, wrap-around):
// every live id stays findable, every erased id is gone.
TEST(AhTable_Erase, BackwardShiftKeepsEveryLiveEntry) {
  AhTable t(64);
  std::set<ObjId> live;
  std::uint64_t x = 12345;
  for (int step = 0; step < 20000; ++step) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const ObjId id = static_cast<ObjId>((x >> 33) % 200) + 1;
    if (live.count(id) != 0) {
      ASSERT_EQ(t.erase(id), 0);
      live.erase(id);
    } else if (live.size() < 64) {
      ASSERT_EQ(t.insert(ah(id)), 0);
      live.insert(id);
    }
    if (step % 97 == 0) {
      for (ObjId k = 1; k <= 200; ++k) {
        ASSERT_EQ(t.find(k) != nullptr, live.count(k) != 0) << "id " << k << " step " << step;
      }
    }
  }
  EXPECT_EQ(t.size(), live.size());
}

}  // namespace
}  // namespace uroce::engine
