#include "datapath/port/got_patch.h"

#include <gtest/gtest.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

// got_patch_target.c, built as these two objects (meson.build).
extern "C" pid_t got_target_plt_getppid();
extern "C" pid_t got_target_noplt_getppid();
extern "C" pid_t got_target_lazy_getppid();

namespace uroce::port {
namespace {

constexpr pid_t kFakeParent = 424242;
extern "C" pid_t fake_getppid() { return kFakeParent; }

// The permissions of the object's mappings, in /proc/self/maps order.
std::vector<std::string> mapping_perms(const std::string& object) {
  std::vector<std::string> out;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find(object) == std::string::npos) continue;
    const std::size_t sp = line.find(' ');
    out.push_back(line.substr(sp + 1, 4));
  }
  return out;
}

TEST(PatchGot_Plt, RedirectsTheObjectsCallsOnly) {
  const pid_t real = getppid();
  ASSERT_NE(real, kFakeParent);
  ASSERT_EQ(got_target_plt_getppid(), real);
  // Bound at load and read-only (-z now, -z relro): the patch opens the
  // page and closes it again.
  const std::vector<std::string> perms = mapping_perms("libgot_target_plt.so");
  ASSERT_FALSE(perms.empty());
  std::string err;
  EXPECT_EQ(patch_got("libgot_target_plt.so", "getppid", reinterpret_cast<void*>(&fake_getppid),
                      &err),
            1)
      << err;
  EXPECT_EQ(got_target_plt_getppid(), kFakeParent);
  EXPECT_EQ(getppid(), real);  // this object's own calls: untouched
  EXPECT_EQ(got_target_noplt_getppid(), real);
  const std::vector<void*> t = got_slot_targets("libgot_target_plt.so", "getppid");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0], reinterpret_cast<void*>(&fake_getppid));
  EXPECT_EQ(mapping_perms("libgot_target_plt.so"), perms);
}

TEST(PatchGot_Lazy, RedirectsASlotNotYetBound) {
  // Not called before: its slot still points into its PLT (-z lazy).
  std::string err;
  EXPECT_EQ(patch_got("libgot_target_lazy.so", "getppid", reinterpret_cast<void*>(&fake_getppid),
                      &err),
            1)
      << err;
  EXPECT_EQ(got_target_lazy_getppid(), kFakeParent);
  EXPECT_EQ(got_target_lazy_getppid(), kFakeParent);  // the binder did not undo it
}

TEST(PatchGot_NoPlt, RedirectsAGlobDatSlot) {
  const pid_t real = getppid();
  ASSERT_EQ(got_target_noplt_getppid(), real);
  std::string err;
  EXPECT_GE(patch_got("libgot_target_noplt.so", "getppid", reinterpret_cast<void*>(&fake_getppid),
                      &err),
            1)
      << err;
  EXPECT_EQ(got_target_noplt_getppid(), kFakeParent);
  EXPECT_EQ(getppid(), real);
}

TEST(PatchGot_Errors, AnObjectNotLoaded) {
  std::string err;
  EXPECT_EQ(patch_got("libno_such_object.so", "getppid", reinterpret_cast<void*>(&fake_getppid),
                      &err),
            -ENOENT);
  EXPECT_EQ(err, "no loaded object named libno_such_object.so*");
  EXPECT_TRUE(got_slot_targets("libno_such_object.so", "getppid").empty());
}

TEST(PatchGot_Errors, ASymbolTheObjectDoesNotImport) {
  std::string err;
  EXPECT_EQ(patch_got("libgot_target_plt.so", "munmap", reinterpret_cast<void*>(&fake_getppid),
                      &err),
            -ENOENT);
  EXPECT_EQ(err, "libgot_target_plt.so imports no munmap");
}

}  // namespace
}  // namespace uroce::port
