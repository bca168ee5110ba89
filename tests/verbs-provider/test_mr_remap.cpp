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

TEST(ParseMapsLine_Lines, MalformedLinesAreRejected) {
  MapsLine m;
  EXPECT_FALSE(parse_maps_line("", &m));
  EXPECT_FALSE(parse_maps_line("zzzz-1000 rw-p 0 00:00 0", &m));
  EXPECT_FALSE(parse_maps_line("2000-1000 rw-p 0 00:00 0", &m));  // end <= start
  EXPECT_FALSE(parse_maps_line("1000-2000 rw-x 0 00:00 0", &m));  // neither p nor s
  EXPECT_FALSE(parse_maps_line("1000-2000 rw-p 0 00-00 0", &m));  // bad dev
  EXPECT_FALSE(parse_maps_line("1000-2000 rw-p 0 00:00", &m));    // no inode
}

TEST(MemfdRegistryAcquire_Anonymous, MovesPagesOntoASealedSharedMemfd) {
  Anon buf(3);
  MemfdRegistry reg;
  MrBacking b;
  // 100 bytes into the first page, two pages long: all three pages move.
  ASSERT_EQ(reg.acquire(buf.p + 100, 2 * kPage, &b), 0);
  EXPECT_EQ(b.map_len, 3 * kPage);
  EXPECT_EQ(b.map_offset, 100u);
  EXPECT_EQ(reg.entries(), 1u);
  EXPECT_NE(maps_line_of(buf.p).find("/memfd:uroce-mr"), std::string::npos) << maps_line_of(buf.p);
  EXPECT_NE(maps_line_of(buf.p + 2 * kPage).find("rw-s"), std::string::npos);
  // Never shrinks (the daemon's mapping keeps its pages), may grow.
  const int seals = fcntl(b.fd, F_GET_SEALS);
  EXPECT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), F_SEAL_SHRINK | F_SEAL_SEAL);

  // Contents survived the move, as the application sees them.
  for (std::size_t i = 0; i < buf.len; ++i) {
    ASSERT_EQ(buf.p[i], static_cast<std::byte>(i * 13 + 7)) << i;
  }
  // The daemon's view: a second mapping of the memfd shares the bytes both ways.
  auto* view = static_cast<std::byte*>(
      mmap(nullptr, b.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, b.fd, 0));
  ASSERT_NE(view, MAP_FAILED);
  EXPECT_EQ(std::memcmp(view, buf.p, buf.len), 0);
  buf.p[b.map_offset] = std::byte{0xAB};
  EXPECT_EQ(view[b.map_offset], std::byte{0xAB});
  view[b.map_offset + kPage] = std::byte{0xCD};
  EXPECT_EQ(buf.p[100 + kPage], std::byte{0xCD});
  munmap(view, b.map_len);
  reg.release(b);
  EXPECT_EQ(reg.entries(), 0u);
  // Still mapped and intact for the application after the last release.
  EXPECT_EQ(buf.p[100], std::byte{0xAB});
}

TEST(MemfdRegistryAcquire_Reuse, RangeInsideALiveMemfdSharesIt) {
  Anon buf(4);
  MemfdRegistry reg;
  MrBacking whole, part;
  ASSERT_EQ(reg.acquire(buf.p, buf.len, &whole), 0);
  ASSERT_EQ(reg.acquire(buf.p + kPage + 8, 100, &part), 0);
  EXPECT_EQ(part.entry, whole.entry);
  EXPECT_EQ(part.fd, whole.fd);
  EXPECT_EQ(part.map_len, 4 * kPage);
  EXPECT_EQ(part.map_offset, kPage + 8);
  EXPECT_EQ(reg.entries(), 1u);
  reg.release(whole);
  EXPECT_EQ(reg.entries(), 1u);  // `part` still holds it
  EXPECT_GE(fcntl(part.fd, F_GETFD), 0);
  reg.release(part);
  EXPECT_EQ(reg.entries(), 0u);
}

TEST(MemfdRegistryAcquire_Reuse, PagesOfAReleasedMemfdMoveAgainWithTheirBytes) {
  Anon buf(2);
  MemfdRegistry reg;
  MrBacking b;
  ASSERT_EQ(reg.acquire(buf.p, buf.len, &b), 0);
  reg.release(b);
  buf.p[5] = std::byte{0x5A};
  MrBacking again;
  ASSERT_EQ(reg.acquire(buf.p, buf.len, &again), 0);
  EXPECT_EQ(again.map_offset, 0u);
  auto* view =
      static_cast<std::byte*>(mmap(nullptr, again.map_len, PROT_READ, MAP_SHARED, again.fd, 0));
  ASSERT_NE(view, MAP_FAILED);
  EXPECT_EQ(view[5], std::byte{0x5A});
  EXPECT_EQ(view[6], static_cast<std::byte>(6 * 13 + 7));
  munmap(view, again.map_len);
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

TEST(MemfdRegistryAcquire_Grow, NextBufferExtendsTheMemfdOfThePreviousOne) {
  Anon buf(5);
  MemfdRegistry reg;
  MrBacking first, second;
  ASSERT_EQ(reg.acquire(buf.p, 2 * kPage - 100, &first), 0);  // pages 0..1
  EXPECT_EQ(first.map_len, 2 * kPage);
  // Starts in page 1 (shared with `first`), runs to page 3.
  ASSERT_EQ(reg.acquire(buf.p + 2 * kPage - 50, 2 * kPage, &second), 0);
  EXPECT_EQ(second.entry, first.entry);
  EXPECT_EQ(second.fd, first.fd);
  EXPECT_EQ(second.map_len, 4 * kPage);
  EXPECT_EQ(second.map_offset, 2 * kPage - 50);
  EXPECT_EQ(reg.entries(), 1u);
  for (std::size_t i = 0; i < 4 * kPage; ++i) {
    ASSERT_EQ(buf.p[i], static_cast<std::byte>(i * 13 + 7)) << i;
  }
  EXPECT_NE(maps_line_of(buf.p + 3 * kPage).find("/memfd:uroce-mr"), std::string::npos);
  EXPECT_NE(maps_line_of(buf.p + 4 * kPage).find("rw-p"), std::string::npos);  // untouched
  // One file, one linear layout: the grown tail is shared too, and the first
  // registration's view (its old map_len) is unchanged.
  auto* view = static_cast<std::byte*>(
      mmap(nullptr, second.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, second.fd, 0));
  ASSERT_NE(view, MAP_FAILED);
  view[3 * kPage + 1] = std::byte{0x77};
  EXPECT_EQ(buf.p[3 * kPage + 1], std::byte{0x77});
  buf.p[10] = std::byte{0x66};
  EXPECT_EQ(view[10], std::byte{0x66});
  munmap(view, second.map_len);
  reg.release(first);
  reg.release(second);
  EXPECT_EQ(reg.entries(), 0u);
}

TEST(MemfdRegistryAcquire_Refused, RangeReachingBelowOrAcrossLiveMemfdsGivesEinval) {
  Anon buf(6);
  MemfdRegistry reg;
  MrBacking high, low, both;
  ASSERT_EQ(reg.acquire(buf.p + 2 * kPage, 2 * kPage, &high), 0);  // pages 2..3
  // Pages 1..2: below the live memfd, which cannot grow downwards.
  EXPECT_EQ(reg.acquire(buf.p + kPage, 2 * kPage, &low), EINVAL);
  ASSERT_EQ(reg.acquire(buf.p + 5 * kPage, kPage, &low), 0);  // page 5
  // Pages 3..5: from one live memfd across movable page 4 into another.
  EXPECT_EQ(reg.acquire(buf.p + 3 * kPage, 3 * kPage, &both), EINVAL);
  EXPECT_EQ(reg.entries(), 2u);
  reg.release(high);
  reg.release(low);
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
  EXPECT_EQ(b.source, MrSource::kMemfd);
  // On our memfd now, still read-only, same bytes.
  const std::string line = maps_line_of(ro.p);
  EXPECT_NE(line.find("r--s"), std::string::npos) << line;
  EXPECT_NE(line.find("/memfd:uroce-mr"), std::string::npos) << line;
  for (std::size_t i = 0; i < ro.len; ++i) {
    ASSERT_EQ(ro.p[i], static_cast<std::byte>(i * 13 + 7)) << i;
  }
  reg.release(b);
}

TEST(MemfdRegistryAcquire_Refused, MixedWritableAndReadOnlyPagesGiveEinval) {
  MemfdRegistry reg;
  MrBacking b;
  Anon buf(2);
  ASSERT_EQ(mprotect(buf.p + kPage, kPage, PROT_READ), 0);
  EXPECT_EQ(reg.acquire(buf.p, buf.len, &b, /*write=*/false), EINVAL);
  EXPECT_EQ(reg.entries(), 0u);
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
  EXPECT_EQ(b.source, MrSource::kProcessMapping);
  EXPECT_EQ(b.entry, nullptr);
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
  EXPECT_EQ(b.source, MrSource::kProcessMapping);
  munmap(anon, kPage);

  char path[] = "/tmp/uroce-test-mr-remap-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(kPage)), 0);
  void* ro = mmap(nullptr, kPage, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(ro, MAP_FAILED);
  EXPECT_EQ(reg.acquire(ro, 64, &b, /*write=*/true), EFAULT);
  ASSERT_EQ(reg.acquire(ro, 64, &b, /*write=*/false), 0);
  EXPECT_EQ(b.source, MrSource::kProcessMapping);
  munmap(ro, kPage);
  close(fd);
  unlink(path);
  EXPECT_EQ(reg.entries(), 0u);
}

TEST(MemfdRegistryAcquire_Shared, SharedAndPrivatePagesTogetherGiveEinval) {
  MemfdRegistry reg;
  MrBacking b;
  // Two adjacent pages: a shared one, then a private one, fixed in place.
  auto* two = static_cast<std::byte*>(
      mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(two, MAP_FAILED);
  ASSERT_NE(mmap(two + kPage, kPage, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
            MAP_FAILED);
  EXPECT_EQ(reg.acquire(two, 2 * kPage, &b), EINVAL);
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
  EXPECT_EQ(b.source, MrSource::kMemfd);
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
  MemfdRegistry reg;
  MrBacking b;
  std::string line;
  std::uintptr_t at = 0;
  ASSERT_EQ(register_on_stack(&reg, &b, &line, &at), 0);
  EXPECT_EQ(b.source, MrSource::kMemfd);
  EXPECT_NE(line.find("/memfd:uroce-mr"), std::string::npos) << line;
  reg.release(b);
  EXPECT_EQ(reg.entries(), 0u);
  // Private again once released: a child forked now gets its own frames.
  line = maps_line_of(reinterpret_cast<void*>(at));
  EXPECT_EQ(line.find("memfd"), std::string::npos) << line;
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

}  // namespace
}  // namespace uroce::provider
