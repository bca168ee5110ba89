#include "apps/uroced/sharded_device.h"

#include <gtest/gtest.h>

#include "tests/apps/uroced/fake_device.h"

namespace uroce::daemon {
namespace {

using testing::FakeDevice;

struct Shards {
  FakeDevice a{"uroce0", 1500, 1};
  FakeDevice b{"uroce0", 1500, 1};
  FakeDevice c{"uroce0", 1500, 1};
  ShardedDevice dev{{&a, &b, &c}, 4, "ring:p0"};
};

TEST(ShardedDevice, PlaceClient_FewestClientsFirstLowestOnTies) {
  Shards s;
  EXPECT_EQ(&s.dev.place_client(), &s.a);
  EXPECT_EQ(&s.dev.place_client(), &s.b);
  EXPECT_EQ(&s.dev.place_client(), &s.c);
  EXPECT_EQ(&s.dev.place_client(), &s.a);
  s.dev.leave_client(s.b);
  EXPECT_EQ(&s.dev.place_client(), &s.b);
  s.dev.leave_client(s.a);
  s.dev.leave_client(s.a);
  EXPECT_EQ(&s.dev.place_client(), &s.a);
}

TEST(ShardedDevice, Snapshot_SumsTheShardsAndListsEachShare) {
  Shards s;
  s.a.snap.qps = 1;
  s.a.snap.counters.rx_frames = 5;
  s.a.snap.counters.tx_frames = 50;
  s.a.snap.counters.parse_error[0] = 1;
  s.a.snap.counters.cq.cqes = 3;
  s.a.snap.arp.rx_requests = 2;
  s.a.snap.has_port_rx = true;
  s.a.snap.port_rx.handed_in = 9;
  s.a.snap.port_rx.frames = 3;
  s.b.snap.qps = 2;
  s.b.snap.counters.rx_frames = 7;
  s.b.snap.counters.rx_handoff = 4;
  s.b.snap.counters.parse_error[0] = 2;
  s.b.snap.counters.cq.cqes = 4;
  s.b.snap.has_port_rx = true;
  s.b.snap.port_rx.handed_in = 1;
  s.b.snap.port_rx.frames = 11;
  s.b.snap.qp_status.resize(2);
  s.c.snap.mw.bind_refused[1] = 6;
  (void)s.dev.place_client();
  (void)s.dev.place_client();
  (void)s.dev.place_client();
  (void)s.dev.place_client();

  DeviceSnapshot out;
  s.dev.snapshot(true, &out);
  EXPECT_EQ(out.qps, 3u);
  EXPECT_EQ(out.counters.rx_frames, 12u);
  EXPECT_EQ(out.counters.tx_frames, 50u);
  EXPECT_EQ(out.counters.parse_error[0], 3u);
  EXPECT_EQ(out.counters.cq.cqes, 7u);
  EXPECT_EQ(out.arp.rx_requests, 2u);
  EXPECT_TRUE(out.has_port_rx);
  EXPECT_EQ(out.port_rx.handed_in, 10u);
  EXPECT_EQ(out.qp_status.size(), 2u);
  EXPECT_EQ(out.mw.bind_refused[1], 6u);
  ASSERT_EQ(out.shards.size(), 3u);
  EXPECT_EQ(out.shards[0].clients, 2u);
  EXPECT_EQ(out.shards[1].clients, 1u);
  EXPECT_EQ(out.shards[2].clients, 1u);
  EXPECT_EQ(out.shards[0].qps, 1u);
  EXPECT_EQ(out.shards[1].qps, 2u);
  EXPECT_EQ(out.shards[0].rx_frames, 5u);
  EXPECT_EQ(out.shards[1].rx_handoff, 4u);
  EXPECT_EQ(out.shards[0].handed_in, 9u);
  EXPECT_EQ(out.shards[1].handed_in, 1u);
  EXPECT_EQ(out.port_rx.frames, 14u);
  EXPECT_EQ(out.shards[0].queue_frames, 3u);
  EXPECT_EQ(out.shards[1].queue_frames, 11u);
}

TEST(ShardedDevice, DeviceWideCalls_GoToShardZero) {
  Shards s;
  s.a.resolvable = true;
  wire::MacAddr mac{};
  EXPECT_TRUE(s.dev.resolve(wire::Ipv4Addr{(10u << 24) | 9}, &mac));
  EXPECT_EQ(mac.b[5], 9);
  engine::GsiMad m;
  s.a.gsi_in.push_back(m);
  std::vector<engine::GsiMad> got;
  s.dev.gsi_drain(&got);
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(&s.dev.config(), &s.a.config());
  EXPECT_EQ(s.dev.index(), 4u);
  EXPECT_EQ(s.dev.port_name(), "ring:p0");
}

TEST(ShardedDevice, DrainPfcEvents_EveryShard) {
  Shards s;
  s.a.events.resize(1);
  s.c.events.resize(2);
  std::vector<pfc::PfcEvent> ev;
  s.dev.drain_pfc_events(&ev);
  EXPECT_EQ(ev.size(), 3u);
}

}  // namespace
}  // namespace uroce::daemon
