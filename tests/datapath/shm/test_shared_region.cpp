#include "datapath/shm/shared_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "datapath/shm/ring.h"

namespace uroce::shm {
namespace {

bool fd_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(SharedRegion_Create, MapsZeroedSealedMemfd) {
  SharedRegion r;
  const ShmStatus st = SharedRegion::create("uroce-test", 8192, &r);
  ASSERT_TRUE(st.ok()) << to_string(st.err) << " " << st.sys_errno;
  ASSERT_TRUE(r.valid());
  EXPECT_EQ(r.size(), 8192u);
  EXPECT_GE(r.fd(), 0);
  const auto* p = static_cast<const unsigned char*>(r.data());
  for (std::size_t i = 0; i < r.size(); ++i) ASSERT_EQ(p[i], 0) << i;
  const int seals = ::fcntl(r.fd(), F_GET_SEALS);
  EXPECT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  EXPECT_NE(::fcntl(r.fd(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST(SharedRegion_Create, ZeroSizeGivesBadSize) {
  SharedRegion r;
  EXPECT_EQ(SharedRegion::create("uroce-test", 0, &r).err, ShmError::kBadSize);
  EXPECT_FALSE(r.valid());
}

TEST(SharedRegion_Create, PeerCannotShrinkIt) {
  SharedRegion r;
  ASSERT_TRUE(SharedRegion::create("uroce-test", 4096, &r).ok());
  EXPECT_EQ(::ftruncate(r.fd(), 1024), -1);
  EXPECT_EQ(errno, EPERM);
}

TEST(SharedRegion_MapFd, SecondMappingSeesSameData) {
  SharedRegion a;
  ASSERT_TRUE(SharedRegion::create("uroce-test", 4096, &a).ok());
  SharedRegion b;
  const ShmStatus st = SharedRegion::map_fd(::dup(a.fd()), 4096, &b);
  ASSERT_TRUE(st.ok()) << to_string(st.err) << " " << st.sys_errno;
  ASSERT_NE(a.data(), b.data());
  std::memcpy(a.data(), "hello", 6);
  EXPECT_STREQ(static_cast<const char*>(b.data()), "hello");
  static_cast<char*>(b.data())[4095] = 'z';
  EXPECT_EQ(static_cast<const char*>(a.data())[4095], 'z');
}

TEST(SharedRegion_MapFd, RingAcrossTwoMappings) {
  RingGeometry g;
  ASSERT_EQ(make_geometry(cq_elem_bytes(), 15, &g), RingError::kOk);
  SharedRegion daemon_side;
  ASSERT_TRUE(SharedRegion::create("uroce-cq", g.bytes(), &daemon_side).ok());
  ASSERT_EQ(ring_init(daemon_side.data(), daemon_side.size(), g), RingError::kOk);
  SharedRegion app_side;
  ASSERT_TRUE(SharedRegion::map_fd(::dup(daemon_side.fd()), g.bytes(), &app_side).ok());
  RingGeometry seen;
  ASSERT_EQ(read_geometry(app_side.data(), app_side.size(), &seen), RingError::kOk);
  EXPECT_EQ(seen, g);
  CqProducer prod;
  CqConsumer cons;
  ASSERT_EQ(prod.attach(daemon_side.data(), daemon_side.size(), g), RingError::kOk);
  ASSERT_EQ(cons.attach(app_side.data(), app_side.size(), seen), RingError::kOk);
  for (std::uint64_t i = 0; i < 40; ++i) {
    ib_uverbs_wc wc{};
    wc.wr_id = i;
    wc.status = static_cast<std::uint32_t>(i % 3);
    ASSERT_TRUE(prod.try_push(wc));
    ib_uverbs_wc got{};
    ASSERT_TRUE(cons.try_pop(&got));
    EXPECT_EQ(got.wr_id, i);
    EXPECT_EQ(got.status, i % 3);
  }
}

TEST(SharedRegion_MapFd, TooSmallFileRejectedAndFdClosed) {
  SharedRegion a;
  ASSERT_TRUE(SharedRegion::create("uroce-test", 1000, &a).ok());
  const int fd = ::dup(a.fd());
  SharedRegion b;
  const ShmStatus st = SharedRegion::map_fd(fd, 4096, &b);
  EXPECT_EQ(st.err, ShmError::kTooSmall);
  EXPECT_FALSE(b.valid());
  EXPECT_FALSE(fd_open(fd));
  SharedRegion c;
  EXPECT_TRUE(SharedRegion::map_fd(::dup(a.fd()), 1000, &c).ok());
}

TEST(SharedRegion_MapFd, UnsealedFileRejected) {
  const int fd = ::memfd_create("uroce-unsealed", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 4096), 0);
  SharedRegion r;
  EXPECT_EQ(SharedRegion::map_fd(fd, 4096, &r).err, ShmError::kNotSealed);
  EXPECT_FALSE(fd_open(fd));
}

TEST(SharedRegion_MapFd, PipeRejectedAsNotRegular) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  SharedRegion r;
  EXPECT_EQ(SharedRegion::map_fd(p[0], 4096, &r).err, ShmError::kNotRegular);
  ::close(p[1]);
}

TEST(SharedRegion_MapFd, BadFdGivesStatError) {
  SharedRegion r;
  const ShmStatus st = SharedRegion::map_fd(-1, 4096, &r);
  EXPECT_EQ(st.err, ShmError::kStat);
  EXPECT_EQ(st.sys_errno, EBADF);
}

TEST(SharedRegion_Move, TransfersOwnership) {
  SharedRegion a;
  ASSERT_TRUE(SharedRegion::create("uroce-test", 4096, &a).ok());
  const int fd = a.fd();
  void* addr = a.data();
  SharedRegion b(std::move(a));
  EXPECT_FALSE(a.valid());
  EXPECT_EQ(a.fd(), -1);
  EXPECT_EQ(b.fd(), fd);
  EXPECT_EQ(b.data(), addr);
  b.reset();
  EXPECT_FALSE(fd_open(fd));
  EXPECT_FALSE(b.valid());
}

}  // namespace
}  // namespace uroce::shm
