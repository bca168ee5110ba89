#include "verbs-provider/mr_remap.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace uroce::provider {
namespace {

const std::size_t kPage = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

// The maps line covering `p`.
std::string maps_line_of(const void* p) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  while (std::getline(maps, line)) {
    MapsLine m;
    if (parse_maps_line(line, &m) && m.start <= a && a < m.end) return line;
  }
  return {};
}

struct Anon {
  explicit Anon(std::size_t pages) : len(pages * kPage) {
    p = static_cast<std::byte*>(
        mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (p == MAP_FAILED) std::abort();
    for (std::size_t i = 0; i < len; ++i) p[i] = static_cast<std::byte>(i * 13 + 7);
  }
  ~Anon() { munmap(p, len); }
  std::byte* p;
  std::size_t len;
};

TEST(ParseMapsLine_Lines, HeapAnonFileMemfdAndStack) {
  MapsLine m;
  ASSERT_TRUE(parse_maps_line("55d4c0a00000-55d4c0a21000 rw-p 00000000 00:00 0    [heap]\n", &m));
  EXPECT_EQ(m.start, 0x55d4c0a00000u);
  EXPECT_EQ(m.end, 0x55d4c0a21000u);
  EXPECT_TRUE(m.read && m.write && !m.exec && !m.shared);
  EXPECT_EQ(m.inode, 0u);
  EXPECT_EQ(m.name, "[heap]");

  ASSERT_TRUE(parse_maps_line("7f0000000000-7f0000001000 rw-p 00000000 00:00 0 ", &m));
  EXPECT_EQ(m.name, "");

  ASSERT_TRUE(parse_maps_line(
      "7f1b0a600000-7f1b0a628000 r-xp 00028000 fe:01 1837 /usr/lib/x86_64-linux-gnu/libc.so.6",
      &m));
  EXPECT_TRUE(m.exec && !m.write);
  EXPECT_EQ(m.offset, 0x28000u);
  EXPECT_EQ(m.dev, makedev(0xfe, 0x01));
  EXPECT_EQ(m.inode, 1837u);
  EXPECT_EQ(m.name, "/usr/lib/x86_64-linux-gnu/libc.so.6");

  ASSERT_TRUE(parse_maps_line(
      "7f1b0a000000-7f1b0a003000 rw-s 00001000 00:01 4242 /memfd:uroce-mr (deleted)", &m));
  EXPECT_TRUE(m.shared);
  EXPECT_EQ(m.offset, 0x1000u);
  EXPECT_EQ(m.name, "/memfd:uroce-mr (deleted)");

  ASSERT_TRUE(parse_maps_line("7ffc1000-7ffc2000 rw-p 00000000 00:00 0 [stack]", &m));
  EXPECT_EQ(m.name, "[stack]");
}

// SysV segment 0 has inode 0, as anonymous private memory does; it is a
// shared object all the same (a registration on it was refused with EINVAL
// on a machine whose first segment it was).
TEST(SharedObjectSpan_Sysv, SegmentZeroIsASharedObject) {
  MapsLine m;
  ASSERT_TRUE(
      parse_maps_line("7f0000000000-7f0000004000 rw-s 00000000 00:01 0 /SYSV00000000 (deleted)",
                      &m));
  EXPECT_EQ(m.inode, 0u);
  EXPECT_TRUE(shm::is_shared_object(m));
  shm::SharedObjectSpan span;
  span.add(m);
  EXPECT_TRUE(span.ok());
  // Inode 0 without the SysV name is nobody's object, shared or not.
  ASSERT_TRUE(parse_maps_line("7f0000000000-7f0000001000 rw-s 00000000 00:00 0 ", &m));
  EXPECT_FALSE(shm::is_shared_object(m));
  ASSERT_TRUE(parse_maps_line("7f0000000000-7f0000001000 rw-p 00000000 00:00 0 ", &m));
  EXPECT_FALSE(shm::is_shared_object(m));
}

TEST(ParseMapsLine_Lines, MalformedLinesAreRejected) {
  MapsLine m;
  EXPECT_FALSE(parse_maps_line("", &m));
  EXPECT_FALSE(parse_maps_line("zzzz-1000 rw-p 0 00:00 0", &m));
  EXPECT_FALSE(parse_maps_line("2000-1000 rw-p 0 00:00 0", &m));  // end <= start
  EXPECT_FALSE(parse_maps_line("1000-2000 rw-x 0 00:00 0", &m));  // neither p nor s
  EXPECT_FALSE(parse_maps_line("1000-2000 rw-p 0 00-00 0", &m));  // bad dev
  EXPECT_FALSE(parse_maps_line("1000-2000 rw-p 0 00:00", &m));    // no inode
}

// The maps line covering `p`, parsed (name empty: it pointed into the line).
MapsLine parsed_line_of(const void* p) {
  MapsLine m;
  parse_maps_line(maps_line_of(p), &m);
  m.name = {};
  return m;
}

bool same_object(const void* a, const void* b) {
  const MapsLine x = parsed_line_of(a), y = parsed_line_of(b);
  return x.shared && y.shared && x.dev == y.dev && x.inode == y.inode;
}

std::size_t open_fds() {
  std::size_t n = 0;
  for (int fd = 0; fd < 4096; ++fd) n += fcntl(fd, F_GETFD) >= 0 ? 1 : 0;
  return n;
}

// How many of the `pages` pages from `p` have a page mapped (the present
// bit, 63, of their /proc/self/pagemap entries; readable without root).
std::size_t pages_mapped(const void* p, std::size_t pages) {
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::size_t n = 0;
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(p) / kPage;
  for (std::size_t i = 0; i < pages; ++i) {
    std::uint64_t entry = 0;
    const off_t at = static_cast<off_t>((first + i) * sizeof(entry));
    if (pread(fd, &entry, sizeof(entry), at) == static_cast<ssize_t>(sizeof(entry))) {
      n += (entry >> 63) & 1;
    }
  }
  close(fd);
  return n;
}

// What the daemon does: open the object under `p` through map_files. -1
// when this process may not (not root).
int open_as_daemon(const void* p) {
  const MapsLine m = parsed_line_of(p);
  char path[96];
  std::snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
                static_cast<unsigned long>(m.start), static_cast<unsigned long>(m.end));
  return open(path, O_RDWR | O_CLOEXEC);
}

TEST(ReadMaps_Until, StopsPastTheAddressAndKeepsEveryLineBelowIt) {
  // 3,000 one-page mappings (alternating protection, so none merge): more
  // text than one read returns.
  constexpr std::size_t kPages = 3000;
  Anon many(kPages);
  for (std::size_t i = 0; i < kPages; i += 2) {
    ASSERT_EQ(mprotect(many.p + i * kPage, kPage, PROT_READ), 0);
  }
  char* all = nullptr;
  char* part = nullptr;
  std::size_t all_len = 0, part_len = 0;
  ASSERT_EQ(shm::read_maps(0, &all, &all_len), 0);
  const auto until = reinterpret_cast<std::uintptr_t>(many.p) + 10 * kPage;
  ASSERT_EQ(shm::read_maps(0, &part, &part_len, until), 0);
  EXPECT_LT(part_len, all_len);
  // Every line below `until` is there: those of the test's own pages (other
  // lines may come and go between the reads, the buffers' own included).
  const auto from = reinterpret_cast<std::uintptr_t>(many.p);
  auto lines_in = [&](std::string_view text) {
    std::size_t n = 0;
    while (!text.empty()) {
      const std::size_t nl = text.find('\n');
      MapsLine m;
      if (parse_maps_line(text.substr(0, nl), &m) && m.start >= from && m.start < until) ++n;
      text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    }
    return n;
  };
  EXPECT_EQ(lines_in({all, all_len}), 10u);
  EXPECT_EQ(lines_in({part, part_len}), 10u);
  std::free(all);
  std::free(part);
}

TEST(MemfdRegistryAcquire_Anonymous, MovesPagesOntoASealedMemfdAndKeepsNoDescriptor) {
  Anon buf(3);
  MemfdRegistry reg(0);  // no idle memfds: private at release
  MrBacking b;
  const std::size_t fds = open_fds();
  // 100 bytes into the first page, two pages long: all three pages move.
  ASSERT_EQ(reg.acquire(buf.p + 100, 2 * kPage, &b), 0);
  EXPECT_EQ(open_fds(), fds);
  EXPECT_EQ(reg.entries(), 1u);  // tracked: private again at release
  EXPECT_NE(maps_line_of(buf.p).find("/memfd:uroce-mr"), std::string::npos) << maps_line_of(buf.p);
  EXPECT_NE(maps_line_of(buf.p + 2 * kPage).find("rw-s"), std::string::npos);
  EXPECT_TRUE(same_object(buf.p, buf.p + 2 * kPage));
  // Contents survived the move, as the application sees them.
  for (std::size_t i = 0; i < buf.len; ++i) {
    ASSERT_EQ(buf.p[i], static_cast<std::byte>(i * 13 + 7)) << i;
  }
  const int fd = open_as_daemon(buf.p);
  if (fd < 0) GTEST_SKIP() << "no access to /proc/self/map_files (not root)";
  // Never shrinks (the daemon's mapping keeps its pages).
  EXPECT_EQ(fcntl(fd, F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_SEAL), F_SEAL_SHRINK | F_SEAL_SEAL);
  // The daemon's view: a second mapping of the memfd shares the bytes both ways.
  auto* view =
      static_cast<std::byte*>(mmap(nullptr, buf.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  close(fd);
  ASSERT_NE(view, MAP_FAILED);
  EXPECT_EQ(std::memcmp(view, buf.p, buf.len), 0);
  buf.p[100] = std::byte{0xAB};
  EXPECT_EQ(view[100], std::byte{0xAB});
  view[100 + kPage] = std::byte{0xCD};
  EXPECT_EQ(buf.p[100 + kPage], std::byte{0xCD});
  reg.release(b);
  EXPECT_EQ(reg.entries(), 0u);
  // Still mapped and intact for the application after the release, but
  // private: its stores no longer reach the file.
  EXPECT_EQ(buf.p[100], std::byte{0xAB});
  EXPECT_EQ(buf.p[100 + kPage], std::byte{0xCD});
  EXPECT_FALSE(parsed_line_of(buf.p).shared) << maps_line_of(buf.p);
  EXPECT_FALSE(parsed_line_of(buf.p + 2 * kPage).shared);
  buf.p[200] = std::byte{0x11};
  EXPECT_EQ(view[200], static_cast<std::byte>(200 * 13 + 7));
  for (std::size_t i = 0; i < buf.len; ++i) {
    if (i == 100 || i == 100 + kPage || i == 200) continue;
    ASSERT_EQ(buf.p[i], static_cast<std::byte>(i * 13 + 7)) << i;
  }
  munmap(view, buf.len);
}

// An RNIC's registration pins (and so maps) the pages: the application's
// first touch of a registered buffer after the move must not fault either.
// The buffer was never touched before, so no page of it was mapped.
TEST(MemfdRegistryAcquire_Anonymous, MovedPagesAreMappedAtOnce) {
  constexpr std::size_t kPages = 64;
  void* const raw =
      mmap(nullptr, kPages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(raw, MAP_FAILED);
  ASSERT_EQ(pages_mapped(raw, kPages), 0u);
  MemfdRegistry reg(0);
  MrBacking b;
  ASSERT_EQ(reg.acquire(raw, kPages * kPage, &b), 0);
  EXPECT_NE(maps_line_of(raw).find("/memfd:uroce-mr"), std::string::npos) << maps_line_of(raw);
  EXPECT_EQ(pages_mapped(raw, kPages), kPages);
  reg.release(b);
  munmap(raw, kPages * kPage);
}

TEST(MemfdRegistryAcquire_Anonymous, ManyRegistrationsHoldNoDescriptors) {
  constexpr std::size_t kBuffers = 64;
  Anon buf(2 * kBuffers);
  MemfdRegistry reg;
  MrBacking b[kBuffers];
  const std::size_t fds = open_fds();
  for (std::size_t i = 0; i < kBuffers; ++i) {
    ASSERT_EQ(reg.acquire(buf.p + 2 * i * kPage, kPage, &b[i]), 0) << i;
  }
  EXPECT_EQ(open_fds(), fds);
  for (auto& one : b) reg.release(one);
}

TEST(MemfdRegistryAcquire_Reuse, RangeInsideAnEarlierRegistrationMovesNothing) {
  Anon buf(4);
  MemfdRegistry reg;
  MrBacking whole, part;
  ASSERT_EQ(reg.acquire(buf.p, buf.len, &whole), 0);
  const MapsLine before = parsed_line_of(buf.p + kPage);
  ASSERT_EQ(reg.acquire(buf.p + kPage + 8, 100, &part), 0);
  const MapsLine after = parsed_line_of(buf.p + kPage);
  EXPECT_EQ(after.inode, before.inode);
  EXPECT_TRUE(same_object(buf.p, buf.p + 3 * kPage));
  reg.release(whole);
  reg.release(part);
}

TEST(MemfdRegistryAcquire_Reuse, PagesOfAReleasedRegistrationStayWithTheirBytes) {
  Anon buf(2);
  MemfdRegistry reg;
  MrBacking b;
  ASSERT_EQ(reg.acquire(buf.p, buf.len, &b), 0);
  const MapsLine first = parsed_line_of(buf.p);
  reg.release(b);
  buf.p[5] = std::byte{0x5A};
  // Idle after the release (within kIdleBudget): registered again, the
  // pages stay on their memfd and nothing moves.
  EXPECT_EQ(reg.entries(), 1u);
  MrBacking again;
  ASSERT_EQ(reg.acquire(buf.p, buf.len, &again), 0);
  EXPECT_EQ(parsed_line_of(buf.p).inode, first.inode);
  EXPECT_EQ(buf.p[5], std::byte{0x5A});
  EXPECT_EQ(buf.p[6], static_cast<std::byte>(6 * 13 + 7));
  reg.release(again);
}

TEST(MemfdRegistryAcquire_Heap, MallocBufferKeepsItsContents) {
  constexpr std::size_t kLen = 3 * 4096 + 123;
  auto* p = static_cast<unsigned char*>(std::malloc(kLen));
  for (std::size_t i = 0; i < kLen; ++i) p[i] = static_cast<unsigned char>(i);
  MemfdRegistry reg;
  MrBacking b;
  ASSERT_EQ(reg.acquire(p, kLen, &b), 0);
  for (std::size_t i = 0; i < kLen; ++i) ASSERT_EQ(p[i], static_cast<unsigned char>(i));
  reg.release(b);
  std::free(p);
}

TEST(MemfdRegistryAcquire_Pieces, NextBufferMovesOnlyThePagesAfterThePreviousOne) {
  Anon buf(5);
  MemfdRegistry reg;
  MrBacking first, second;
  ASSERT_EQ(reg.acquire(buf.p, 2 * kPage - 100, &first), 0);  // pages 0..1
  const MapsLine page1 = parsed_line_of(buf.p + kPage);
  // Starts in page 1 (shared with `first`), runs to page 3.
  ASSERT_EQ(reg.acquire(buf.p + 2 * kPage - 50, 2 * kPage, &second), 0);
  // Page 1 stays where the first registration's daemon mapping sees it;
  // pages 2..3 are a memfd of their own; page 4 is untouched.
  EXPECT_EQ(parsed_line_of(buf.p + kPage).inode, page1.inode);
  EXPECT_TRUE(same_object(buf.p + 2 * kPage, buf.p + 3 * kPage));
  EXPECT_FALSE(same_object(buf.p + kPage, buf.p + 2 * kPage));
  EXPECT_NE(maps_line_of(buf.p + 3 * kPage).find("/memfd:uroce-mr"), std::string::npos);
  EXPECT_NE(maps_line_of(buf.p + 4 * kPage).find("rw-p"), std::string::npos);
  for (std::size_t i = 0; i < buf.len; ++i) {
    ASSERT_EQ(buf.p[i], static_cast<std::byte>(i * 13 + 7)) << i;
  }
  reg.release(first);
  reg.release(second);
}

TEST(MemfdRegistryAcquire_Pieces, RangeAcrossEarlierRegistrationsMovesOnlyThePrivatePages) {
  Anon buf(6);
  MemfdRegistry reg;
  MrBacking high, low, both;
  ASSERT_EQ(reg.acquire(buf.p + 2 * kPage, 2 * kPage, &high), 0);  // pages 2..3
  ASSERT_EQ(reg.acquire(buf.p + 5 * kPage, kPage, &low), 0);       // page 5
  const MapsLine p2 = parsed_line_of(buf.p + 2 * kPage);
  const MapsLine p5 = parsed_line_of(buf.p + 5 * kPage);
  // Pages 1..5: private, memfd, private, memfd.
  ASSERT_EQ(reg.acquire(buf.p + kPage, 5 * kPage, &both), 0);
  EXPECT_EQ(parsed_line_of(buf.p + 2 * kPage).inode, p2.inode);
  EXPECT_EQ(parsed_line_of(buf.p + 5 * kPage).inode, p5.inode);
  EXPECT_NE(maps_line_of(buf.p + kPage).find("/memfd:uroce-mr"), std::string::npos);
  EXPECT_NE(maps_line_of(buf.p + 4 * kPage).find("/memfd:uroce-mr"), std::string::npos);
  EXPECT_NE(maps_line_of(buf.p).find("rw-p"), std::string::npos);  // page 0 untouched
  for (std::size_t i = 0; i < buf.len; ++i) {
    ASSERT_EQ(buf.p[i], static_cast<std::byte>(i * 13 + 7)) << i;
  }
  reg.release(high);
  reg.release(low);
  reg.release(both);
}

TEST(MemfdRegistryAcquire_Refused, MoreRunsThanTheDaemonMapsGiveEinval) {
  // Pages alternating read-write and read-only: one run each.
  Anon buf(kMaxMrRuns + 1);
  for (std::size_t i = 1; i < kMaxMrRuns + 1; i += 2) {
    ASSERT_EQ(mprotect(buf.p + i * kPage, kPage, PROT_READ), 0);
  }
  MemfdRegistry reg;
  MrBacking b;
  EXPECT_EQ(reg.acquire(buf.p, buf.len, &b, /*write=*/false), EINVAL);
  EXPECT_NE(maps_line_of(buf.p).find("rw-p"), std::string::npos);  // nothing moved
  ASSERT_EQ(reg.acquire(buf.p, buf.len - kPage, &b, /*write=*/false), 0);
  reg.release(b);
}

TEST(MemfdRegistryAcquire_Refused, HoleGivesEfault) {
  Anon buf(3);
  ASSERT_EQ(munmap(buf.p + kPage, kPage), 0);
  MemfdRegistry reg;
  MrBacking b;
  EXPECT_EQ(reg.acquire(buf.p, buf.len, &b), EFAULT);
  EXPECT_EQ(reg.entries(), 0u);
  // The untouched first page is still private.
  EXPECT_NE(maps_line_of(buf.p).find("rw-p"), std::string::npos);
}

TEST(MemfdRegistryAcquire_ReadOnly, WriteAccessGivesEfaultReadAccessRemapsReadOnly) {
  MemfdRegistry reg;
  MrBacking b;
  Anon ro(2);
  ASSERT_EQ(mprotect(ro.p, ro.len, PROT_READ), 0);
  EXPECT_EQ(reg.acquire(ro.p, 16, &b, /*write=*/true), EFAULT);
  EXPECT_EQ(reg.entries(), 0u);
  ASSERT_EQ(reg.acquire(ro.p, ro.len, &b, /*write=*/false), 0);
  // On our memfd now, still read-only, same bytes.
  const std::string line = maps_line_of(ro.p);
  EXPECT_NE(line.find("r--s"), std::string::npos) << line;
  EXPECT_NE(line.find("/memfd:uroce-mr"), std::string::npos) << line;
  for (std::size_t i = 0; i < ro.len; ++i) {
    ASSERT_EQ(ro.p[i], static_cast<std::byte>(i * 13 + 7)) << i;
  }
  reg.release(b);
}

TEST(MemfdRegistryAcquire_Pieces, WritableAndReadOnlyPagesMoveOntoOneMemfdEach) {
  MemfdRegistry reg;
  MrBacking b;
  Anon buf(2);
  ASSERT_EQ(mprotect(buf.p + kPage, kPage, PROT_READ), 0);
  EXPECT_EQ(reg.acquire(buf.p, buf.len, &b, /*write=*/true), EFAULT);
  ASSERT_EQ(reg.acquire(buf.p, buf.len, &b, /*write=*/false), 0);
  EXPECT_NE(maps_line_of(buf.p).find("rw-s"), std::string::npos) << maps_line_of(buf.p);
  EXPECT_NE(maps_line_of(buf.p + kPage).find("r--s"), std::string::npos);
  EXPECT_FALSE(same_object(buf.p, buf.p + kPage));
  reg.release(b);
}

TEST(MemfdRegistryAcquire_Shared, ApplicationMemfdIsItsOwnSharedObject) {
  MemfdRegistry reg;
  MrBacking b;
  const int fd = memfd_create("app-shared", MFD_CLOEXEC);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(2 * kPage)), 0);
  auto* shared =
      static_cast<std::byte*>(mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(shared, MAP_FAILED);
  ASSERT_EQ(reg.acquire(shared + 10, kPage, &b), 0);
  EXPECT_EQ(b.count, 0u);
  EXPECT_EQ(reg.entries(), 0u);
  // Nothing moved: still the application's memfd.
  EXPECT_NE(maps_line_of(shared).find("/memfd:app-shared"), std::string::npos);
  reg.release(b);
  munmap(shared, 2 * kPage);
  close(fd);
}

TEST(MemfdRegistryAcquire_Shared, AnonymousSharedAndSharedFileAreSharedObjects) {
  MemfdRegistry reg;
  MrBacking b;
  void* anon = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(anon, MAP_FAILED);
  ASSERT_EQ(reg.acquire(anon, 64, &b), 0);
  EXPECT_NE(maps_line_of(anon).find("/dev/zero"), std::string::npos);  // not moved
  munmap(anon, kPage);

  char path[] = "/tmp/uroce-test-mr-remap-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(kPage)), 0);
  void* ro = mmap(nullptr, kPage, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(ro, MAP_FAILED);
  EXPECT_EQ(reg.acquire(ro, 64, &b, /*write=*/true), EFAULT);
  ASSERT_EQ(reg.acquire(ro, 64, &b, /*write=*/false), 0);
  EXPECT_NE(maps_line_of(ro).find(path), std::string::npos);  // not moved
  munmap(ro, kPage);
  close(fd);
  unlink(path);
  EXPECT_EQ(reg.entries(), 0u);
}

TEST(MemfdRegistryAcquire_Shared, SharedThenPrivatePagesMoveOnlyThePrivateOne) {
  MemfdRegistry reg;
  MrBacking b;
  // Two adjacent pages: a shared one, then a private one, fixed in place.
  auto* two = static_cast<std::byte*>(
      mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(two, MAP_FAILED);
  ASSERT_NE(mmap(two + kPage, kPage, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
            MAP_FAILED);
  ASSERT_EQ(reg.acquire(two, 2 * kPage, &b), 0);
  EXPECT_NE(maps_line_of(two).find("/dev/zero"), std::string::npos) << maps_line_of(two);
  EXPECT_NE(maps_line_of(two + kPage).find("/memfd:uroce-mr"), std::string::npos);
  reg.release(b);
  munmap(two, 2 * kPage);
}

TEST(MemfdRegistryAcquire_Private, FileMapPrivateIsRemappedWithItsBytes) {
  char path[] = "/tmp/uroce-test-mr-remap-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string bytes(kPage, 'f');
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(kPage));
  auto* p = static_cast<char*>(mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
  ASSERT_NE(p, MAP_FAILED);
  p[0] = 'x';  // a private change the file never sees
  MemfdRegistry reg;
  MrBacking b;
  ASSERT_EQ(reg.acquire(p, kPage, &b), 0);
  EXPECT_NE(maps_line_of(p).find("/memfd:uroce-mr"), std::string::npos);
  EXPECT_EQ(p[0], 'x');
  EXPECT_EQ(p[1], 'f');
  char first = 0;
  ASSERT_EQ(pread(fd, &first, 1, 0), 1);
  EXPECT_EQ(first, 'f');
  reg.release(b);
  munmap(p, kPage);
  close(fd);
  unlink(path);
}

// Registers a buffer in its own frame: the frames in those pages, this
// one's included, must survive the remap for the function to return.
[[gnu::noinline]] int register_on_stack(MemfdRegistry* reg, MrBacking* b, std::string* line,
                                        std::uintptr_t* at) {
  volatile char on_stack[3 * 4096];
  for (std::size_t i = 0; i < sizeof(on_stack); ++i) on_stack[i] = static_cast<char>(i * 3);
  const int rc = reg->acquire(const_cast<char*>(on_stack), sizeof(on_stack), b);
  *line = maps_line_of(const_cast<char*>(on_stack));
  *at = reinterpret_cast<std::uintptr_t>(on_stack);
  for (std::size_t i = 0; i < sizeof(on_stack); ++i) {
    if (on_stack[i] != static_cast<char>(i * 3)) return -1;
  }
  return rc;
}

TEST(MemfdRegistryAcquire_Stack, OwnStackIsRemappedAndTheFramesLive) {
  MemfdRegistry reg(0);  // no idle memfds: private at release
  MrBacking b;
  std::string line;
  std::uintptr_t at = 0;
  ASSERT_EQ(register_on_stack(&reg, &b, &line, &at), 0);
  EXPECT_NE(line.find("/memfd:uroce-mr"), std::string::npos) << line;
  EXPECT_EQ(reg.entries(), 1u);  // tracked: made private again at release
  reg.release(b);
  EXPECT_EQ(reg.entries(), 0u);
  // Private again once released: a child forked now gets its own frames.
  line = maps_line_of(reinterpret_cast<void*>(at));
  EXPECT_NE(line.find("rw-p"), std::string::npos) << line;
}

TEST(MemfdRegistryAcquire_Refused, SpecialMappingsGiveEinval) {
  MemfdRegistry reg;
  MrBacking b;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    MapsLine m;
    if (parse_maps_line(line, &m) && m.name == "[vdso]") {
      EXPECT_EQ(reg.acquire(reinterpret_cast<void*>(m.start), 16, &b, false), EINVAL);
    }
  }
  EXPECT_EQ(reg.entries(), 0u);
}

TEST(MemfdRegistryAcquire_Refused, EmptyOrNullGivesEinval) {
  MemfdRegistry reg;
  MrBacking b;
  Anon buf(1);
  EXPECT_EQ(reg.acquire(buf.p, 0, &b), EINVAL);
  EXPECT_EQ(reg.acquire(nullptr, 16, &b), EINVAL);
  EXPECT_EQ(reg.acquire(reinterpret_cast<void*>(UINTPTR_MAX - 10), 100, &b), EINVAL);
}

TEST(MemfdRegistryRelease, UnknownBackingIsIgnored) {
  MemfdRegistry reg;
  reg.release(MrBacking{});
  EXPECT_EQ(reg.entries(), 0u);
}

// The count of lines of our memfds' shadows (private, PROT_NONE) in maps.
std::size_t shadows() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  std::size_t n = 0;
  while (std::getline(maps, line)) {
    n += line.find("---p") != std::string::npos && line.find("/memfd:uroce-mr") != std::string::npos
             ? 1
             : 0;
  }
  return n;
}

TEST(MemfdRegistryRelease, LastReferenceMakesThePagesPrivateAndDropsTheShadow) {
  Anon buf(4);
  MemfdRegistry reg(0);  // no idle memfds: private at release
  const std::size_t before = shadows();
  MrBacking whole, part;
  ASSERT_EQ(reg.acquire(buf.p, buf.len, &whole), 0);
  EXPECT_EQ(shadows(), before + 1);
  ASSERT_EQ(reg.acquire(buf.p + kPage, 10, &part), 0);  // same memfd
  EXPECT_EQ(reg.entries(), 1u);
  reg.release(whole);
  // `part` still holds the memfd: still shared, shadow kept.
  EXPECT_TRUE(parsed_line_of(buf.p).shared);
  EXPECT_EQ(shadows(), before + 1);
  reg.release(part);
  EXPECT_EQ(reg.entries(), 0u);
  EXPECT_EQ(shadows(), before);
  EXPECT_FALSE(parsed_line_of(buf.p).shared);
  EXPECT_FALSE(parsed_line_of(buf.p + 3 * kPage).shared);
  for (std::size_t i = 0; i < buf.len; ++i) {
    ASSERT_EQ(buf.p[i], static_cast<std::byte>(i * 13 + 7)) << i;
  }
}

TEST(MemfdRegistryRelease, IdleBeyondTheBudgetBecomePrivateOldestFirst) {
  Anon buf(5);
  MemfdRegistry reg(3 * kPage);
  MrBacking a, b;
  ASSERT_EQ(reg.acquire(buf.p, 2 * kPage, &a), 0);
  ASSERT_EQ(reg.acquire(buf.p + 3 * kPage, 2 * kPage, &b), 0);
  reg.release(a);  // 2 pages idle: within the budget
  EXPECT_EQ(reg.entries(), 2u);
  EXPECT_TRUE(parsed_line_of(buf.p).shared);
  reg.release(b);  // 4 pages idle: the older one goes
  EXPECT_EQ(reg.entries(), 1u);
  EXPECT_FALSE(parsed_line_of(buf.p).shared);
  EXPECT_TRUE(parsed_line_of(buf.p + 3 * kPage).shared);
  for (std::size_t i = 0; i < buf.len; ++i) {
    ASSERT_EQ(buf.p[i], static_cast<std::byte>(i * 13 + 7)) << i;
  }
  // Registered again, the idle one is taken back as it is.
  const std::uint64_t inode = parsed_line_of(buf.p + 3 * kPage).inode;
  ASSERT_EQ(reg.acquire(buf.p + 3 * kPage, kPage, &b), 0);
  EXPECT_EQ(parsed_line_of(buf.p + 3 * kPage).inode, inode);
  reg.release(b);
}

TEST(MemfdRegistryRelease, IdleTheApplicationUnmappedGoFirst) {
  MemfdRegistry reg(3 * kPage);
  Anon kept(2);
  MrBacking a, b;
  ASSERT_EQ(reg.acquire(kept.p, kept.len, &a), 0);
  {
    Anon freed(2);
    ASSERT_EQ(reg.acquire(freed.p, freed.len, &b), 0);
    reg.release(b);
  }  // unmapped while idle
  const std::size_t with_freed = shadows();
  reg.release(a);  // 4 pages idle: the unmapped one goes, not the older
  EXPECT_EQ(reg.entries(), 1u);
  EXPECT_EQ(shadows(), with_freed - 1);
  EXPECT_TRUE(parsed_line_of(kept.p).shared);
}

TEST(MemfdRegistryRelease, MemoryTheApplicationReplacedIsLeftAlone) {
  Anon buf(3);
  MemfdRegistry reg(0);  // no idle memfds: private at release
  MrBacking b;
  ASSERT_EQ(reg.acquire(buf.p, buf.len, &b), 0);
  // The application unmaps its middle page and maps its own shared memory
  // there (freeing a buffer before deregistering it): not ours to change.
  void* own = mmap(buf.p + kPage, kPage, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  ASSERT_EQ(own, buf.p + kPage);
  std::memset(own, 0x77, kPage);
  reg.release(b);
  EXPECT_TRUE(parsed_line_of(buf.p + kPage).shared);
  EXPECT_EQ(parsed_line_of(buf.p + kPage).inode, parsed_line_of(own).inode);
  for (std::size_t i = 0; i < kPage; ++i) ASSERT_EQ(buf.p[kPage + i], std::byte{0x77}) << i;
  // The pages either side became private with their bytes.
  EXPECT_FALSE(parsed_line_of(buf.p).shared);
  EXPECT_FALSE(parsed_line_of(buf.p + 2 * kPage).shared);
  EXPECT_EQ(buf.p[7], static_cast<std::byte>(7 * 13 + 7));
  EXPECT_EQ(buf.p[2 * kPage + 7], static_cast<std::byte>((2 * kPage + 7) * 13 + 7));
}

TEST(MemfdRegistryAcquire_DontFork, MovedPagesAreMadvDontFork) {
  Anon buf(2);
  MemfdRegistry reg;
  MrBacking b;
  ASSERT_EQ(reg.acquire(buf.p, buf.len, &b, true, true), 0);
  // smaps' VmFlags of the range: "dc" is VM_DONTCOPY.
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_range = false;
  std::string flags;
  while (std::getline(smaps, line)) {
    MapsLine m;
    if (parse_maps_line(line, &m)) {
      in_range = m.start == reinterpret_cast<std::uintptr_t>(buf.p);
    } else if (in_range && line.rfind("VmFlags:", 0) == 0) {
      flags = line;
    }
  }
  EXPECT_NE(flags.find(" dc"), std::string::npos) << flags;
  reg.release(b);
}

}  // namespace
}  // namespace uroce::provider
