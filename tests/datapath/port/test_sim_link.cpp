#include "datapath/port/sim_link.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "datapath/wire/ipv4.h"

// Counts operator new calls while armed, to check that the link does not
// allocate per frame. Only counts; allocation itself is unchanged.
namespace {
bool g_count_allocs = false;
std::size_t g_allocs = 0;
}  // namespace

// GCC pairs the malloc/free inside these replacements with the new/delete
// expressions it inlines them into and warns of a mismatch; the pair is
// consistent (every operator new here is malloc, every delete is free).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  if (g_count_allocs) ++g_allocs;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace uroce::port {
namespace {

// Frames carry a 64-bit id in their first 8 bytes and a pattern after it.
std::vector<std::uint8_t> make_frame(std::uint64_t id, std::size_t len) {
  std::vector<std::uint8_t> f(len);
  for (std::size_t i = 0; i < len; ++i) f[i] = static_cast<std::uint8_t>(i * 7 + id);
  if (len >= 8) std::memcpy(f.data(), &id, 8);
  return f;
}

std::uint64_t frame_id(std::span<const std::uint8_t> f) {
  std::uint64_t id = 0;
  std::memcpy(&id, f.data(), 8);
  return id;
}

std::vector<std::uint8_t> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string tmp_path(const std::string& tag) {
  return "/tmp/uroce_test_simlink_" + std::to_string(getpid()) + "_" + tag + ".pcap";
}

SimDirectionConfig rate(std::uint64_t bps, TimeNs prop) {
  SimDirectionConfig d;
  d.bandwidth_bps = bps;
  d.propagation_ns = prop;
  return d;
}

// Drains everything that reaches `endpoint`, jumping the clock from arrival
// to arrival; returns the frame ids in delivery order.
std::vector<std::uint64_t> drain_ids(SimLink& link, unsigned endpoint) {
  std::vector<std::uint64_t> ids;
  while (auto t = link.next_arrival(endpoint)) {
    link.receive(endpoint, *t, [&](const SimDelivery& d) { ids.push_back(frame_id(d.frame)); });
  }
  return ids;
}

TEST(SimLink_SerialisationNs, ThousandBytesAtEightGbpsIsOneMicrosecond) {
  EXPECT_EQ(SimLink::serialisation_ns(rate(8'000'000'000, 0), 1000), 1000u);
  EXPECT_EQ(SimLink::serialisation_ns(rate(100'000'000'000, 0), 1500), 120u);
}

TEST(SimLink_SerialisationNs, RoundsUpToWholeNanoseconds) {
  // 1 byte at 3 Gb/s is 2.67 ns.
  EXPECT_EQ(SimLink::serialisation_ns(rate(3'000'000'000, 0), 1), 3u);
}

TEST(SimLink_SerialisationNs, ZeroBandwidthIsInfinite) {
  EXPECT_EQ(SimLink::serialisation_ns(rate(0, 0), 9000), 0u);
}

TEST(SimLink_SerialisationNs, OverheadBytesAddWireTime) {
  SimDirectionConfig d = rate(8'000'000'000, 0);
  d.overhead_bytes = 20;
  EXPECT_EQ(SimLink::serialisation_ns(d, 1000), 1020u);
}

TEST(SimLink_Send, SerialisationAndPropagationTimingExact) {
  SimLink link(SimLinkConfig::symmetric(rate(8'000'000'000, 500)));
  for (std::uint64_t i = 0; i < 3; ++i)
    ASSERT_EQ(link.send(0, make_frame(i, 1000), 0), SimSendResult::kQueued);
  // Back-to-back frames queue behind each other: 1000 ns on the wire each.
  EXPECT_EQ(link.next_arrival(1), std::optional<TimeNs>(1500));
  EXPECT_EQ(link.next_arrival(), std::optional<TimeNs>(1500));
  EXPECT_EQ(link.next_arrival(0), std::nullopt);
  std::vector<TimeNs> arrivals;
  auto collect = [&](const SimDelivery& d) { arrivals.push_back(d.arrival); };
  EXPECT_EQ(link.receive(1, 1499, collect), 0u);
  EXPECT_EQ(link.receive(1, 1500, collect), 1u);
  EXPECT_EQ(link.next_arrival(1), std::optional<TimeNs>(2500));
  EXPECT_EQ(link.receive(1, 3499, collect), 1u);
  EXPECT_EQ(link.receive(1, 3500, collect), 1u);
  EXPECT_EQ(arrivals, (std::vector<TimeNs>{1500, 2500, 3500}));
  // Once the wire is idle a new frame starts at once.
  ASSERT_EQ(link.send(0, make_frame(9, 1000), 10'000), SimSendResult::kQueued);
  EXPECT_EQ(link.next_arrival(1), std::optional<TimeNs>(11'500));
  // A frame sent while one is on the wire waits for it.
  ASSERT_EQ(link.send(0, make_frame(10, 500), 10'200), SimSendResult::kQueued);
  link.receive(1, 11'500, collect);
  EXPECT_EQ(link.next_arrival(1), std::optional<TimeNs>(11'000 + 500 + 500));
}

TEST(SimLink_Send, DirectionsHaveTheirOwnRateAndDelay) {
  SimLinkConfig cfg;
  cfg.dir[0] = rate(8'000'000'000, 100);
  cfg.dir[1] = rate(1'000'000'000, 7);
  SimLink link(cfg);
  ASSERT_EQ(link.send(0, make_frame(1, 1000), 0), SimSendResult::kQueued);
  ASSERT_EQ(link.send(1, make_frame(2, 1000), 0), SimSendResult::kQueued);
  EXPECT_EQ(link.next_arrival(1), std::optional<TimeNs>(1100));
  EXPECT_EQ(link.next_arrival(0), std::optional<TimeNs>(8007));
  EXPECT_EQ(link.next_arrival(), std::optional<TimeNs>(1100));
}

TEST(SimLink_Send, EqualArrivalsDeliveredInSendOrder) {
  SimLink link(SimLinkConfig::symmetric(rate(0, 50)));
  for (std::uint64_t i = 0; i < 100; ++i)
    ASSERT_EQ(link.send(0, make_frame(i, 64), 0), SimSendResult::kQueued);
  std::vector<std::uint64_t> ids;
  std::vector<std::uint64_t> seqs;
  link.receive(1, 50, [&](const SimDelivery& d) {
    ids.push_back(frame_id(d.frame));
    seqs.push_back(d.seq);
  });
  ASSERT_EQ(ids.size(), 100u);
  for (std::uint64_t i = 0; i < 100; ++i) {
    EXPECT_EQ(ids[i], i);
    EXPECT_EQ(seqs[i], i);
  }
}

TEST(SimLink_Send, QueueFullTailDropsAndCounts) {
  SimDirectionConfig d = rate(1'000'000'000, 0);  // 1000 B = 8000 ns
  d.queue_frames = 3;
  SimLink link(SimLinkConfig::symmetric(d));
  const auto f = make_frame(0, 1000);
  EXPECT_EQ(link.send(0, f, 0), SimSendResult::kQueued);
  EXPECT_EQ(link.send(0, f, 0), SimSendResult::kQueued);
  EXPECT_EQ(link.send(0, f, 0), SimSendResult::kQueued);
  EXPECT_EQ(link.send(0, f, 0), SimSendResult::kDroppedQueueFull);
  EXPECT_EQ(link.send(0, f, 7999), SimSendResult::kDroppedQueueFull);
  // The first frame's last bit leaves at 8000: one place frees up.
  EXPECT_EQ(link.send(0, f, 8000), SimSendResult::kQueued);
  EXPECT_EQ(link.send(0, f, 8000), SimSendResult::kDroppedQueueFull);
  EXPECT_EQ(link.counters(0).drop_queue_full, 3u);
  EXPECT_EQ(link.counters(0).sent_frames, 7u);
  EXPECT_EQ(link.counters(1).drop_queue_full, 0u);
  // The accepted frame queued behind the other two.
  EXPECT_EQ(drain_ids(link, 1).size(), 4u);
  EXPECT_EQ(link.counters(0).delivered_frames, 4u);
}

TEST(SimLink_Send, QueueByteLimitTailDrops) {
  SimDirectionConfig d = rate(1'000'000'000, 0);
  d.queue_bytes = 2500;
  SimLink link(SimLinkConfig::symmetric(d));
  EXPECT_EQ(link.send(0, make_frame(0, 1000), 0), SimSendResult::kQueued);
  EXPECT_EQ(link.send(0, make_frame(1, 1000), 0), SimSendResult::kQueued);
  EXPECT_EQ(link.send(0, make_frame(2, 1000), 0), SimSendResult::kDroppedQueueFull);
  EXPECT_EQ(link.send(0, make_frame(3, 500), 0), SimSendResult::kQueued);
  EXPECT_EQ(link.counters(0).drop_queue_full, 1u);
}

TEST(SimLink_Send, InfiniteBandwidthNeverFillsTheQueue) {
  SimDirectionConfig d = rate(0, 10);
  d.queue_frames = 1;
  SimLink link(SimLinkConfig::symmetric(d));
  for (std::uint64_t i = 0; i < 50; ++i)
    EXPECT_EQ(link.send(0, make_frame(i, 100), 0), SimSendResult::kQueued);
  EXPECT_EQ(link.counters(0).drop_queue_full, 0u);
}

TEST(SimLink_Send, PoolExhaustedDropsAndCounts) {
  SimLinkConfig cfg = SimLinkConfig::symmetric(rate(0, 100));
  cfg.pool_frames = 4;
  SimLink link(cfg);
  // The pool is shared by both directions.
  EXPECT_EQ(link.send(1, make_frame(0, 64), 0), SimSendResult::kQueued);
  for (std::uint64_t i = 1; i < 4; ++i)
    EXPECT_EQ(link.send(0, make_frame(i, 64), 0), SimSendResult::kQueued);
  EXPECT_EQ(link.send(0, make_frame(4, 64), 0), SimSendResult::kDroppedPoolExhausted);
  EXPECT_EQ(link.send(1, make_frame(5, 64), 0), SimSendResult::kDroppedPoolExhausted);
  EXPECT_EQ(link.counters(0).drop_pool_exhausted, 1u);
  EXPECT_EQ(link.counters(1).drop_pool_exhausted, 1u);
  EXPECT_EQ(link.pool().in_use(), 4u);
  EXPECT_EQ(drain_ids(link, 1), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(drain_ids(link, 0), (std::vector<std::uint64_t>{0}));
  EXPECT_EQ(link.pool().in_use(), 0u);
  EXPECT_EQ(link.send(0, make_frame(6, 64), 1000), SimSendResult::kQueued);
}

TEST(SimLink_Send, DuplicateWithoutFreeSlotIsCountedAsPoolDrop) {
  SimDirectionConfig d = rate(0, 0);
  d.duplicate = 1.0;
  SimLinkConfig cfg = SimLinkConfig::symmetric(d);
  cfg.pool_frames = 3;
  SimLink link(cfg);
  EXPECT_EQ(link.send(0, make_frame(0, 64), 0), SimSendResult::kQueued);
  EXPECT_EQ(link.send(0, make_frame(1, 64), 0), SimSendResult::kQueued);
  const SimDirectionCounters& c = link.counters(0);
  EXPECT_EQ(c.duplicated, 2u);
  EXPECT_EQ(c.drop_pool_exhausted, 1u);
  EXPECT_EQ(drain_ids(link, 1), (std::vector<std::uint64_t>{0, 0, 1}));
}

TEST(SimLink_Send, OversizeFrameDropped) {
  SimLinkConfig cfg = SimLinkConfig::symmetric(rate(0, 0));
  cfg.slot_bytes = 64;
  SimLink link(cfg);
  EXPECT_EQ(link.send(0, make_frame(0, 64), 0), SimSendResult::kQueued);
  EXPECT_EQ(link.send(0, make_frame(1, 65), 0), SimSendResult::kDroppedOversize);
  EXPECT_EQ(link.counters(0).drop_oversize, 1u);
  EXPECT_EQ(link.pool().in_use(), 1u);
}

TEST(SimLink_Send, BadEndpointIsRefusedAndNotCounted) {
  SimLink link(SimLinkConfig::symmetric(rate(0, 0)));
  EXPECT_EQ(link.send(2, make_frame(0, 64), 0), SimSendResult::kBadEndpoint);
  EXPECT_EQ(link.counters(0).sent_frames, 0u);
  EXPECT_EQ(link.counters(1).sent_frames, 0u);
  EXPECT_EQ(link.peek(2, 0), std::nullopt);
  EXPECT_EQ(link.next_arrival(2), std::nullopt);
}

TEST(SimLink_Send, EmptyFrameIsCarried) {
  SimDirectionConfig d = rate(1'000'000'000, 5);
  d.corrupt = 1.0;
  SimLink link(SimLinkConfig::symmetric(d));
  EXPECT_EQ(link.send(0, {}, 0), SimSendResult::kQueued);
  std::size_t len = 99;
  EXPECT_EQ(link.receive(1, 5, [&](const SimDelivery& x) { len = x.frame.size(); }), 1u);
  EXPECT_EQ(len, 0u);
  EXPECT_EQ(link.counters(0).corrupted, 0u);
}

// |observed - n p| <= 5 sigma of a binomial(n, p).
void expect_binomial(std::uint64_t observed, std::uint64_t n, double p) {
  const double mean = static_cast<double>(n) * p;
  const double sigma = std::sqrt(mean * (1.0 - p));
  EXPECT_LE(std::fabs(static_cast<double>(observed) - mean), 5.0 * sigma)
      << "observed " << observed << " expected " << mean << " p " << p;
}

TEST(SimLink_Send, LossRateWithinFiveSigma) {
  constexpr std::uint64_t kFrames = 100'000;
  for (const double p : {0.01, 0.1}) {
    SimDirectionConfig d = rate(0, 0);
    d.loss = p;
    SimLink link(SimLinkConfig::symmetric(d, 42));
    const auto f = make_frame(0, 64);
    std::uint64_t lost = 0;
    std::uint64_t received = 0;
    auto count = [&](const SimDelivery&) { ++received; };
    for (std::uint64_t i = 0; i < kFrames; ++i) {
      if (link.send(0, f, i) == SimSendResult::kDroppedLoss) ++lost;
      link.receive(1, i, count);
    }
    EXPECT_EQ(link.counters(0).drop_loss, lost);
    EXPECT_EQ(received + lost, kFrames);
    expect_binomial(lost, kFrames, p);
    // Not degenerate: a broken generator that never draws would pass 0.
    EXPECT_GT(lost, 0u);
  }
}

TEST(SimLink_Send, DuplicationRateWithinFiveSigma) {
  constexpr std::uint64_t kFrames = 100'000;
  for (const double p : {0.01, 0.1}) {
    SimDirectionConfig d = rate(0, 0);
    d.duplicate = p;
    SimLink link(SimLinkConfig::symmetric(d, 43));
    const auto f = make_frame(0, 64);
    std::uint64_t received = 0;
    auto count = [&](const SimDelivery&) { ++received; };
    for (std::uint64_t i = 0; i < kFrames; ++i) {
      ASSERT_EQ(link.send(0, f, i), SimSendResult::kQueued);
      link.receive(1, i, count);
    }
    const std::uint64_t dups = link.counters(0).duplicated;
    EXPECT_EQ(received, kFrames + dups);
    expect_binomial(dups, kFrames, p);
    EXPECT_GT(dups, 0u);
  }
}

TEST(SimLink_Receive, ReorderingLetsLaterFramesOvertake) {
  SimDirectionConfig d = rate(10'000'000'000, 1000);  // 1000 B = 800 ns
  d.reorder = 0.2;
  d.reorder_hold_ns = 5000;
  SimLink link(SimLinkConfig::symmetric(d, 7));
  constexpr std::uint64_t kFrames = 200;
  for (std::uint64_t i = 0; i < kFrames; ++i)
    ASSERT_EQ(link.send(0, make_frame(i, 1000), i * 800), SimSendResult::kQueued);
  const std::vector<std::uint64_t> ids = drain_ids(link, 1);
  ASSERT_EQ(ids.size(), kFrames);
  std::uint64_t overtaken = 0;
  for (std::size_t i = 1; i < ids.size(); ++i)
    if (ids[i] < ids[i - 1]) ++overtaken;
  EXPECT_GT(overtaken, 0u);
  EXPECT_GT(link.counters(0).reordered, 0u);
  EXPECT_LE(overtaken, link.counters(0).reordered);
  // Every frame still arrives exactly once.
  std::vector<std::uint64_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  for (std::uint64_t i = 0; i < kFrames; ++i) EXPECT_EQ(sorted[i], i);
}

TEST(SimLink_Receive, NoReorderKeepsSendOrder) {
  SimLink link(SimLinkConfig::symmetric(rate(10'000'000'000, 1000), 7));
  for (std::uint64_t i = 0; i < 200; ++i)
    ASSERT_EQ(link.send(0, make_frame(i, 1000), i * 800), SimSendResult::kQueued);
  const std::vector<std::uint64_t> ids = drain_ids(link, 1);
  ASSERT_EQ(ids.size(), 200u);
  for (std::uint64_t i = 0; i < 200; ++i) EXPECT_EQ(ids[i], i);
}

TEST(SimLink_Send, CorruptionFlipsExactlyOneBit) {
  SimDirectionConfig d = rate(0, 0);
  d.corrupt = 1.0;
  SimLink link(SimLinkConfig::symmetric(d, 11));
  std::map<std::size_t, int> bit_positions;
  for (std::uint64_t i = 0; i < 500; ++i) {
    const auto f = make_frame(i, 32 + i % 100);
    ASSERT_EQ(link.send(0, f, i), SimSendResult::kQueued);
    ASSERT_EQ(link.receive(1, i,
                           [&](const SimDelivery& x) {
                             ASSERT_EQ(x.frame.size(), f.size());
                             int flipped = 0;
                             for (std::size_t b = 0; b < f.size(); ++b) {
                               const auto diff = static_cast<unsigned>(x.frame[b] ^ f[b]);
                               flipped += std::popcount(diff);
                               if (diff != 0) ++bit_positions[b];
                             }
                             EXPECT_EQ(flipped, 1) << "frame " << i;
                           }),
              1u);
  }
  EXPECT_EQ(link.counters(0).corrupted, 500u);
  // The flipped bit moves around the frame, not always the same byte.
  EXPECT_GT(bit_positions.size(), 20u);
}

TEST(SimLink_Send, NoCorruptionDeliversIdenticalBytes) {
  SimLink link(SimLinkConfig::symmetric(rate(0, 0), 11));
  const auto f = make_frame(3, 1500);
  ASSERT_EQ(link.send(0, f, 0), SimSendResult::kQueued);
  link.receive(1, 0, [&](const SimDelivery& x) {
    EXPECT_TRUE(std::equal(x.frame.begin(), x.frame.end(), f.begin(), f.end()));
  });
  EXPECT_EQ(link.counters(0).delivered_frames, 1u);
  EXPECT_EQ(link.counters(0).delivered_bytes, 1500u);
}

// Everything at once, with the simulator jumping the clock to each arrival:
// nothing arrives early or late, each frame once (twice if duplicated, never
// if lost), and the counters add up.
TEST(SimLink_Receive, NeverEarlyAndExactlyOnceUnlessDuplicated) {
  SimDirectionConfig d = rate(10'000'000'000, 2000);
  d.loss = 0.05;
  d.duplicate = 0.05;
  d.reorder = 0.1;
  d.reorder_hold_ns = 3000;
  d.corrupt = 0.0;  // ids must survive
  SimLink link(SimLinkConfig::symmetric(d, 99));
  constexpr std::uint64_t kFrames = 2000;
  std::map<std::uint64_t, TimeNs> sent_at;
  std::map<std::uint64_t, int> times_delivered;
  VirtualClock clock;
  std::uint64_t next = 0;
  bool ok = true;
  while (next < kFrames || link.next_arrival()) {
    const TimeNs next_send = next < kFrames ? next * 700 : UINT64_MAX;
    const TimeNs next_rx = link.next_arrival().value_or(UINT64_MAX);
    clock.advance_to(std::min(next_send, next_rx));
    const TimeNs now = clock.now();
    link.receive(1, now, [&](const SimDelivery& x) {
      const std::uint64_t id = frame_id(x.frame);
      ++times_delivered[id];
      // Jumping to next_arrival means a frame is seen at its arrival instant.
      if (x.arrival != now) ok = false;
      // 1000 B at 10 Gb/s is 800 ns on the wire, then 2000 ns propagation.
      if (x.arrival < sent_at.at(id) + 800 + 2000) ok = false;
    });
    if (next_send == now) {
      sent_at[next] = now;
      link.send(0, make_frame(next, 1000), now);
      ++next;
    }
  }
  EXPECT_TRUE(ok);
  const SimDirectionCounters& c = link.counters(0);
  std::uint64_t twice = 0;
  for (const auto& [id, n] : times_delivered) {
    EXPECT_GE(n, 1);
    EXPECT_LE(n, 2);
    if (n == 2) ++twice;
  }
  EXPECT_EQ(twice, c.duplicated);
  EXPECT_EQ(kFrames - times_delivered.size(), c.drop_loss);
  EXPECT_EQ(c.sent_frames + c.duplicated, c.delivered_frames + c.drop_loss + c.drop_queue_full +
                                              c.drop_pool_exhausted + c.drop_oversize);
  EXPECT_GT(c.duplicated, 0u);
  EXPECT_GT(c.drop_loss, 0u);
  EXPECT_GT(c.reordered, 0u);
  EXPECT_EQ(link.pool().in_use(), 0u);
}

// A scripted two-way exchange over a lossy link, captured at each end into
// its own pcap (`path` + ".0" / ".1"). Returns the counters of both
// directions.
std::array<SimDirectionCounters, 2> run_scripted(std::uint64_t seed, const std::string& path) {
  SimDirectionConfig d = rate(10'000'000'000, 1500);
  d.queue_frames = 16;
  d.loss = 0.1;
  d.duplicate = 0.1;
  d.reorder = 0.1;
  d.reorder_hold_ns = 4000;
  d.corrupt = 0.1;
  SimLinkConfig cfg = SimLinkConfig::symmetric(d, seed);
  cfg.dir[1].bandwidth_bps = 500'000'000;
  SimLink link(cfg);
  std::array<PcapWriter, 2> pcap;
  for (unsigned e = 0; e < 2; ++e) {
    EXPECT_EQ(pcap[e].open(path + "." + std::to_string(e)), 0);
    link.attach_pcap(e, &pcap[e]);
  }
  SimPort a(link, 0);
  SimPort b(link, 1);
  VirtualClock clock;
  std::uint64_t id = 0;
  for (int step = 0; step < 400; ++step) {
    const TimeNs now = clock.now();
    a.tx(make_frame(id++, 60 + (step * 37) % 1400), now);
    if (step % 3 == 0) b.tx(make_frame(id++, 64 + step % 200), now);
    a.rx_burst(now, [](const SimDelivery&) {});
    b.rx_burst(now, [](const SimDelivery&) {});
    clock.advance_by(300 + (step % 7) * 100);
  }
  while (auto t = link.next_arrival()) {
    clock.advance_to(*t);
    a.rx_burst(clock.now(), [](const SimDelivery&) {});
    b.rx_burst(clock.now(), [](const SimDelivery&) {});
  }
  for (unsigned e = 0; e < 2; ++e) {
    link.attach_pcap(e, nullptr);
    EXPECT_EQ(pcap[e].close(), 0);
  }
  EXPECT_EQ(link.pcap_errors(), 0u);
  return {link.counters(0), link.counters(1)};
}

bool same_counters(const SimDirectionCounters& x, const SimDirectionCounters& y) {
  return std::memcmp(&x, &y, sizeof(x)) == 0;
}

TEST(SimLink_Pcap, SameSeedGivesIdenticalFilesDifferentSeedDiffers) {
  const std::string p1 = tmp_path("seed5a");
  const std::string p2 = tmp_path("seed5b");
  const std::string p3 = tmp_path("seed6");
  const auto c1 = run_scripted(5, p1);
  const auto c2 = run_scripted(5, p2);
  run_scripted(6, p3);
  for (const char* end : {".0", ".1"}) {
    const auto b1 = slurp(p1 + end);
    const auto b2 = slurp(p2 + end);
    const auto b3 = slurp(p3 + end);
    unlink((p1 + end).c_str());
    unlink((p2 + end).c_str());
    unlink((p3 + end).c_str());
    EXPECT_GT(b1.size(), 24u + 50u * 16u) << end;
    EXPECT_EQ(b1, b2) << end;
    EXPECT_NE(b1, b3) << end;
  }
  EXPECT_TRUE(same_counters(c1[0], c2[0]));
  EXPECT_TRUE(same_counters(c1[1], c2[1]));
  // Every impairment fired in both directions of the run being compared.
  for (const auto& c : c1) {
    EXPECT_GT(c.drop_loss, 0u);
    EXPECT_GT(c.duplicated, 0u);
    EXPECT_GT(c.reordered, 0u);
    EXPECT_GT(c.corrupted, 0u);
  }
  // The slow reverse direction (500 Mb/s, queue 16) overflowed.
  EXPECT_GT(c1[1].drop_queue_full, 0u);
}

TEST(SimLink_Pcap, RecordsCarryArrivalTimestamps) {
  const std::string path = tmp_path("ts");
  {
    SimLink link(SimLinkConfig::symmetric(rate(8'000'000'000, 500)));
    PcapWriter pcap;
    ASSERT_EQ(pcap.open(path), 0);
    link.attach_pcap(1, &pcap);
    link.send(0, make_frame(1, 1000), 2 * kNsPerSec);
    drain_ids(link, 1);
    ASSERT_EQ(pcap.close(), 0);
  }
  const auto b = slurp(path);
  unlink(path.c_str());
  ASSERT_EQ(b.size(), 24u + 16u + 1000u);
  EXPECT_EQ(b[24], 2);  // ts_sec
  std::uint32_t ns = 0;
  std::memcpy(&ns, b.data() + 28, 4);  // little endian on this host
  EXPECT_EQ(ns, 1500u);
}

TEST(SimLink_Send, DirectionsDrawFromIndependentStreams) {
  // Reverse traffic must not change which forward frames are lost.
  auto forward_ids = [](bool reverse_traffic) {
    SimDirectionConfig d = rate(0, 10);
    d.loss = 0.3;
    SimLink link(SimLinkConfig::symmetric(d, 17));
    for (std::uint64_t i = 0; i < 300; ++i) {
      link.send(0, make_frame(i, 64), i);
      if (reverse_traffic) link.send(1, make_frame(i, 64), i);
      link.receive(0, i, [](const SimDelivery&) {});
    }
    return drain_ids(link, 1);
  };
  const auto quiet = forward_ids(false);
  EXPECT_LT(quiet.size(), 300u);
  EXPECT_EQ(quiet, forward_ids(true));
}

TEST(SimLink_Send, NoHeapAllocationPerFrame) {
  SimDirectionConfig d = rate(10'000'000'000, 1000);
  d.loss = 0.1;
  d.duplicate = 0.1;
  d.reorder = 0.1;
  d.corrupt = 0.1;
  d.queue_frames = 64;
  SimLinkConfig cfg = SimLinkConfig::symmetric(d, 3);
  cfg.pool_frames = 256;
  SimLink link(cfg);
  const auto f = make_frame(1, 1500);
  std::uint64_t delivered = 0;
  auto count = [&](const SimDelivery&) { ++delivered; };
  g_allocs = 0;
  g_count_allocs = true;
  for (TimeNs t = 0; t < 20'000 * 100; t += 100) {
    link.send(0, f, t);
    link.send(1, f, t);
    link.receive(0, t, count);
    link.receive(1, t, count);
  }
  while (auto t = link.next_arrival()) {
    link.receive(0, *t, count);
    link.receive(1, *t, count);
  }
  g_count_allocs = false;
  EXPECT_EQ(g_allocs, 0u);
  // 2 ms of wire at 1200 ns per frame: ~1666 frames per direction.
  EXPECT_GT(delivered, 3000u);
  // Offered faster than the wire: the queue bound was exercised.
  EXPECT_GT(link.counters(0).drop_queue_full, 0u);
}

TEST(SimPort_RxBurst, AtMostThirtyTwoPerBurst) {
  SimLink link(SimLinkConfig::symmetric(rate(0, 100)));
  SimPort a(link, 0);
  SimPort b(link, 1);
  EXPECT_EQ(a.endpoint(), 0u);
  for (std::uint64_t i = 0; i < 40; ++i) ASSERT_TRUE(a.tx(make_frame(i, 64), 0));
  std::vector<std::uint64_t> ids;
  auto collect = [&](const SimDelivery& x) { ids.push_back(frame_id(x.frame)); };
  EXPECT_EQ(b.rx_burst(99, collect), 0);
  EXPECT_EQ(b.rx_burst(100, collect), 32);
  EXPECT_EQ(b.rx_burst(100, collect, 5), 5);
  EXPECT_EQ(b.rx_burst(100, collect, 200), 3);
  EXPECT_EQ(a.rx_burst(100, collect), 0);
  ASSERT_EQ(ids.size(), 40u);
  for (std::uint64_t i = 0; i < 40; ++i) EXPECT_EQ(ids[i], i);
}

TEST(SimPort_Tx, LostFrameCountsAsTakenFullQueueDoesNot) {
  SimDirectionConfig d = rate(1'000'000'000, 0);
  d.loss = 1.0;
  d.queue_frames = 1;
  SimLink link(SimLinkConfig::symmetric(d));
  SimPort a(link, 0);
  EXPECT_TRUE(a.tx(make_frame(0, 1000), 0));
  EXPECT_FALSE(a.tx(make_frame(1, 1000), 0));
  EXPECT_EQ(link.counters(0).drop_loss, 1u);
  EXPECT_EQ(link.counters(0).drop_queue_full, 1u);
}

// A minimal IPv4 frame (Ethernet + 20-byte header with a valid checksum)
// whose TOS carries `ecn`.
std::vector<std::uint8_t> ipv4_frame(std::uint8_t ecn) {
  std::vector<std::uint8_t> f(64, 0);
  f[12] = 0x08;
  f[13] = 0x00;
  wire::Ipv4Hdr ip;
  ip.raw[0] = 0x45;
  ip.set_dscp_ecn(26, ecn);
  ip.fill_checksum();
  ip.write(f.data() + 14);
  return f;
}

TEST(SimLink_CeMark, MarksOnlyEcnCapableFramesAndKeepsTheChecksum) {
  SimDirectionConfig d;
  d.ce_mark = 1.0;
  SimLink link(SimLinkConfig::symmetric(d, 3));
  ASSERT_EQ(link.send(0, ipv4_frame(wire::kEcnEct0), 0), SimSendResult::kQueued);
  ASSERT_EQ(link.send(0, ipv4_frame(wire::kEcnNotEct), 0), SimSendResult::kQueued);
  ASSERT_EQ(link.send(0, make_frame(7, 64), 0), SimSendResult::kQueued);  // not IPv4
  std::vector<std::vector<std::uint8_t>> got;
  while (auto t = link.next_arrival(1)) {
    link.receive(1, *t, [&](const SimDelivery& x) { got.emplace_back(x.frame.begin(), x.frame.end()); });
  }
  ASSERT_EQ(got.size(), 3u);
  const wire::Ipv4Hdr a = wire::Ipv4Hdr::read(got[0].data() + 14);
  EXPECT_EQ(a.ecn(), wire::kEcnCe);
  EXPECT_EQ(a.dscp(), 26);
  EXPECT_TRUE(a.checksum_ok());
  EXPECT_EQ(wire::Ipv4Hdr::read(got[1].data() + 14).ecn(), wire::kEcnNotEct);
  EXPECT_EQ(got[2], make_frame(7, 64));
  EXPECT_EQ(link.counters(0).ce_marked, 1u);
}

TEST(SimLink_CeMark, SetCeMarkChangesOneDirectionFromNowOn) {
  SimLink link(SimLinkConfig::symmetric(SimDirectionConfig{}, 3));
  ASSERT_EQ(link.send(0, ipv4_frame(wire::kEcnEct0), 0), SimSendResult::kQueued);
  link.set_ce_mark(0, 1.0);
  ASSERT_EQ(link.send(0, ipv4_frame(wire::kEcnEct0), 0), SimSendResult::kQueued);
  ASSERT_EQ(link.send(1, ipv4_frame(wire::kEcnEct0), 0), SimSendResult::kQueued);
  EXPECT_EQ(link.counters(0).ce_marked, 1u);
  EXPECT_EQ(link.counters(1).ce_marked, 0u);
}

}  // namespace
}  // namespace uroce::port
