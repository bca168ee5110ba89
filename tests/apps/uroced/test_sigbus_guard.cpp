// The SIGBUS guard of truncatable registrations (sigbus_guard.h).
#include "apps/uroced/sigbus_guard.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>

namespace uroce::daemon {
namespace {

const std::size_t kPage = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

// A shared mapping of a 2-page file, then the file truncated to nothing.
struct Truncated {
  Truncated() {
    char path[] = "/tmp/uroce-test-sigbus-XXXXXX";
    fd = mkstemp(path);
    unlink(path);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(2 * kPage)) != 0) std::abort();
    p = static_cast<volatile std::uint8_t*>(
        mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    if (p == MAP_FAILED) std::abort();
    p[kPage + 5] = 42;
    if (ftruncate(fd, 0) != 0) std::abort();
  }
  ~Truncated() {
    munmap(const_cast<std::uint8_t*>(p), 2 * kPage);
    close(fd);
  }
  int fd = -1;
  volatile std::uint8_t* p = nullptr;
};

TEST(SigbusGuard_Add, TruncatedPageReadsZerosAndTakesWrites) {
  Truncated t;
  const int slot = sigbus_guard::add(const_cast<std::uint8_t*>(t.p), 2 * kPage, kPage);
  ASSERT_GE(slot, 0);
  const std::uint64_t before = sigbus_guard::replaced_pages();
  EXPECT_EQ(t.p[kPage + 5], 0);  // the page past the end: replaced, zero
  t.p[kPage + 6] = 7;            // and writable
  EXPECT_EQ(t.p[kPage + 6], 7);
  EXPECT_EQ(t.p[0], 0);
  EXPECT_EQ(sigbus_guard::replaced_pages(), before + 2);
  sigbus_guard::remove(slot);
}

TEST(SigbusGuardDeathTest, UnguardedRangeStillDies) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Truncated t;
        const int slot = sigbus_guard::add(const_cast<std::uint8_t*>(t.p), kPage, kPage);
        sigbus_guard::remove(slot);
        (void)t.p[kPage + 5];
      },
      testing::KilledBySignal(SIGBUS), "");
}

TEST(SigbusGuard_Remove, BadSlotIsIgnored) {
  sigbus_guard::remove(-1);
  sigbus_guard::remove(sigbus_guard::kSlots);
  SUCCEED();
}

}  // namespace
}  // namespace uroce::daemon
