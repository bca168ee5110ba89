#include "datapath/shm/doorbell.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace uroce::shm {
namespace {

// 64-byte aligned, zeroed memory for one page of `g`.
struct Page {
  struct Free {
    void operator()(std::uint64_t* p) const { std::free(p); }
  };
  std::unique_ptr<std::uint64_t, Free> mem;
  std::size_t bytes = 0;
  explicit Page(const DoorbellGeometry& g) {
    bytes = (g.bytes() + kDoorbellAlign - 1) / kDoorbellAlign * kDoorbellAlign;
    mem.reset(static_cast<std::uint64_t*>(std::aligned_alloc(kDoorbellAlign, bytes)));
    std::memset(mem.get(), 0, bytes);
  }
};

DoorbellGeometry geometry(std::uint32_t count) {
  DoorbellGeometry g;
  EXPECT_EQ(make_doorbell_geometry(count, &g), DoorbellError::kOk);
  return g;
}

std::vector<std::uint32_t> collect_all(DoorbellCollector& c) {
  std::vector<std::uint32_t> out;
  c.collect([&](std::uint32_t i) { out.push_back(i); });
  return out;
}

TEST(MakeDoorbellGeometry, LevelsAndSizes) {
  const DoorbellGeometry one = geometry(64);
  EXPECT_EQ(one.levels, 1u);
  EXPECT_EQ(one.words[0], 1u);
  EXPECT_EQ(one.bytes(), 8u);
  const DoorbellGeometry two = geometry(65);
  EXPECT_EQ(two.levels, 2u);
  EXPECT_EQ(two.words[0], 1u);
  EXPECT_EQ(two.words[1], 2u);
  // Each level starts on its own 64-byte line: the top word, then the leaves.
  EXPECT_EQ(two.offset[1], 8u);
  EXPECT_EQ(two.bytes(), (8u + 2u) * 8u);
  // 2M doorbells (a million QPs' SQ and RQ): 32768 leaf words, 512, 8, 1.
  const DoorbellGeometry big = geometry(2u << 20);
  EXPECT_EQ(big.levels, 4u);
  EXPECT_EQ(big.words[0], 1u);
  EXPECT_EQ(big.words[1], 8u);
  EXPECT_EQ(big.words[2], 512u);
  EXPECT_EQ(big.words[3], 32768u);
}

TEST(MakeDoorbellGeometry, RejectsZeroAndTooMany) {
  DoorbellGeometry g;
  EXPECT_EQ(make_doorbell_geometry(0, &g), DoorbellError::kBadCount);
  EXPECT_EQ(make_doorbell_geometry(kMaxDoorbells + 1, &g), DoorbellError::kBadCount);
  EXPECT_STREQ(to_string(DoorbellError::kBadCount), "doorbell count out of range");
}

TEST(DoorbellAttach, RejectsShortAndMisalignedMemory) {
  const DoorbellGeometry g = geometry(1000);
  Page p(g);
  DoorbellCollector c;
  EXPECT_EQ(c.attach(p.mem.get(), g.bytes() - 1, g), DoorbellError::kTooSmall);
  EXPECT_EQ(c.attach(reinterpret_cast<std::byte*>(p.mem.get()) + 8, p.bytes, g),
            DoorbellError::kMisaligned);
  EXPECT_EQ(c.attach(nullptr, p.bytes, g), DoorbellError::kTooSmall);
  EXPECT_FALSE(c.attached());
  EXPECT_EQ(c.attach(p.mem.get(), p.bytes, g), DoorbellError::kOk);
  EXPECT_TRUE(c.attached());
}

TEST(DoorbellCollect, ReportsEachRungDoorbellOnceInOrder) {
  for (const std::uint32_t count : {1u, 64u, 65u, 4096u, 4097u, 300000u}) {
    const DoorbellGeometry g = geometry(count);
    Page p(g);
    DoorbellRinger r;
    DoorbellCollector c;
    ASSERT_EQ(r.attach(p.mem.get(), p.bytes, g), DoorbellError::kOk);
    ASSERT_EQ(c.attach(p.mem.get(), p.bytes, g), DoorbellError::kOk);
    EXPECT_TRUE(collect_all(c).empty());
    std::vector<std::uint32_t> want;
    for (std::uint32_t i = 0; i < count; i += 1 + count / 7) want.push_back(i);
    want.push_back(count - 1);
    for (const std::uint32_t i : want) {
      r.ring(i);
      r.ring(i);  // twice: still one report
    }
    r.ring(count);  // out of range: ignored
    if (want.size() > 1 && want[want.size() - 2] == want.back()) want.pop_back();
    EXPECT_EQ(collect_all(c), want) << "count " << count;
    EXPECT_TRUE(collect_all(c).empty()) << "count " << count;
  }
}

TEST(DoorbellCollect, IgnoresBitsBeyondTheCountAHostileClientSets) {
  const DoorbellGeometry g = geometry(70);  // 2 leaf words; bits 70..127 unused
  Page p(g);
  DoorbellCollector c;
  ASSERT_EQ(c.attach(p.mem.get(), p.bytes, g), DoorbellError::kOk);
  // Every bit of every word, as a client could write them.
  for (std::size_t w = 0; w < p.bytes / 8; ++w) p.mem.get()[w] = ~std::uint64_t{0};
  const std::vector<std::uint32_t> got = collect_all(c);
  ASSERT_EQ(got.size(), 70u);
  EXPECT_EQ(got.front(), 0u);
  EXPECT_EQ(got.back(), 69u);
}

// Producers ring concurrently with a collector; after the producers stop and
// a last collect, every doorbell rung after a publish was reported at least
// once after that publish (no lost wake-up): each producer's published count
// is what the collector saw when it last reported that doorbell.
TEST(DoorbellCollect, NoWakeUpLostUnderConcurrentRinging) {
  constexpr std::uint32_t kBells = 5000;
  constexpr int kThreads = 2;
  constexpr std::uint32_t kPosts = 20000;
  const DoorbellGeometry g = geometry(kBells);
  Page p(g);
  DoorbellCollector c;
  ASSERT_EQ(c.attach(p.mem.get(), p.bytes, g), DoorbellError::kOk);
  std::vector<std::atomic<std::uint32_t>> published(kBells);
  std::vector<std::uint32_t> seen(kBells, 0);
  std::atomic<int> running{kThreads};
  std::vector<std::thread> th;
  for (int t = 0; t < kThreads; ++t) {
    th.emplace_back([&, t] {
      DoorbellRinger r;
      if (r.attach(p.mem.get(), p.bytes, g) != DoorbellError::kOk) std::abort();
      for (std::uint32_t k = 0; k < kPosts; ++k) {
        const std::uint32_t i = (k * 7919u + static_cast<std::uint32_t>(t) * 104729u) % kBells;
        published[i].fetch_add(1, std::memory_order_release);
        r.ring(i);
      }
      running.fetch_sub(1);
    });
  }
  auto drain = [&] {
    c.collect([&](std::uint32_t i) { seen[i] = published[i].load(std::memory_order_acquire); });
  };
  while (running.load() != 0) drain();
  for (auto& t : th) t.join();
  drain();
  for (std::uint32_t i = 0; i < kBells; ++i) {
    ASSERT_EQ(seen[i], published[i].load()) << "doorbell " << i;
  }
}

}  // namespace
}  // namespace uroce::shm
