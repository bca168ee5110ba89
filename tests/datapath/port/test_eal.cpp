#include "datapath/port/eal.h"

#include <gtest/gtest.h>

namespace uroce::port {
namespace {

TEST(EalHugepageFile_MapsLine, OnlyThisPrefixsMapFiles) {
  const char* mine =
      "7f0000000000-7f0000200000 rw-s 00000000 00:30 1234                       "
      "/dev/hugepages/uroced-77map_3";
  EXPECT_EQ(eal_hugepage_file(mine, "uroced-77"), "/dev/hugepages/uroced-77map_3");
  // Another process's prefix, one that only starts like ours, or no map_.
  EXPECT_EQ(eal_hugepage_file(mine, "uroced-7"), "");
  EXPECT_EQ(eal_hugepage_file(mine, "other"), "");
  EXPECT_EQ(eal_hugepage_file("7f00-7f01 rw-s 0 00:30 9 /mnt/h/uroced-77config", "uroced-77"), "");
  // A path with a space in a directory name.
  EXPECT_EQ(eal_hugepage_file("7f00-7f01 rw-s 0 00:30 9 /tmp/a b/pmap_0", "p"), "/tmp/a b/pmap_0");
}

TEST(EalHugepageFile_MapsLine, AnonymousDeletedOrNoPrefix) {
  EXPECT_EQ(eal_hugepage_file("7f00-7f01 rw-p 00000000 00:00 0 ", "p"), "");
  EXPECT_EQ(eal_hugepage_file("7f00-7f01 rw-s 0 00:01 9 /memfd:nohuge (deleted)", "p"), "");
  EXPECT_EQ(eal_hugepage_file("7f00-7f01 rw-s 0 00:30 9 /dev/hugepages/pmap_1 (deleted)", "p"), "");
  EXPECT_EQ(eal_hugepage_file("7f00-7f01 rw-s 0 00:30 9 /dev/hugepages/map_1", ""), "");
}

}  // namespace
}  // namespace uroce::port
