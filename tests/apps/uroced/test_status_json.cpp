#include "apps/uroced/status_json.h"

#include <gtest/gtest.h>

#include "tests/apps/uroced/fake_device.h"

namespace uroce::daemon {
namespace {

using nlohmann::json;
using testing::FakeDevice;

DaemonInfo info() {
  DaemonInfo i;
  i.version = "9.9";
  i.pid = 42;
  i.run_dir = "/run/x";
  i.socket = "/run/x/uroced.sock";
  i.poll = "busy";
  i.lcores = {1};
  i.clients = 3;
  return i;
}

TEST(StatusJson_Devices, CountersAndObjects) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  s.counters.rx_frames = 11;
  s.counters.cq.cqes = 5;
  s.counters.parse_error[static_cast<std::size_t>(wire::ParseError::kBadIcrc)] = 2;
  s.counters.wqe_error[static_cast<std::size_t>(shm::WqeError::kBadOpcode)] = 1;
  s.arp.tx_requests = 4;
  s.qps = 2;
  const std::string out = status_json(info(), {&d}, {s}, false, nullptr, 1 << 16);
  const json j = json::parse(out);
  EXPECT_EQ(j["daemon"]["pid"], 42);
  EXPECT_EQ(j["daemon"]["clients"], 3);
  EXPECT_EQ(j["daemon"]["poll"], "busy");
  const json& dev = j["devices"][0];
  EXPECT_EQ(dev["name"], "uroce0");
  EXPECT_EQ(dev["uverbs"], 7);
  EXPECT_EQ(dev["mac"], "02:00:00:00:00:01");
  EXPECT_EQ(dev["ipv4"], "10.0.0.1");
  EXPECT_EQ(dev["active_mtu"], 4096);
  EXPECT_EQ(dev["objects"]["qps"], 2);
  EXPECT_EQ(dev["counters"]["rx_frames"], 11);
  EXPECT_EQ(dev["counters"]["cqes"], 5);
  EXPECT_EQ(dev["counters"]["parse_errors"].size(), 1u);
  EXPECT_EQ(dev["counters"]["wqe_errors"].size(), 1u);
  EXPECT_EQ(dev["arp"]["tx_requests"], 4);
  EXPECT_FALSE(j.contains("qps"));
  EXPECT_FALSE(j.contains("clients"));
}

TEST(StatusJson_Daemon, EngineCountersAndCpu) {
  FakeDevice d("uroce0", 9000);
  DaemonInfo i = info();
  json j = json::parse(status_json(i, {&d}, {DeviceSnapshot{}}, false, nullptr, 1 << 16));
  EXPECT_FALSE(j["daemon"].contains("engine"));  // nobody gave the server a reader
  EXPECT_EQ(j["daemon"]["engine_cpu"], -1);
  i.engine_cpu = 1;
  i.engine.emplace();
  i.engine->iterations = 10;
  i.engine->idle_iterations = 7;
  i.engine->yields = 5;
  j = json::parse(status_json(i, {&d}, {DeviceSnapshot{}}, false, nullptr, 1 << 16));
  EXPECT_EQ(j["daemon"]["engine_cpu"], 1);
  EXPECT_EQ(j["daemon"]["engine"]["iterations"], 10);
  EXPECT_EQ(j["daemon"]["engine"]["idle_iterations"], 7);
  EXPECT_EQ(j["daemon"]["engine"]["yields"], 5);
  EXPECT_EQ(j["daemon"]["engine"]["sleeps"], 0);
}

TEST(StatusJson_Daemon, EngineLoopsPerLcore) {
  FakeDevice d("uroce0", 9000);
  DaemonInfo i = info();
  json j = json::parse(status_json(i, {&d}, {DeviceSnapshot{}}, false, nullptr, 1 << 16));
  EXPECT_FALSE(j["daemon"].contains("engine_loops"));
  i.lcores = {2, 3};
  i.loops.resize(2);
  i.loops[1].work_ns[engine::loop_bucket(3000)] = 4;
  i.loops[1].oversleep_ns[engine::kLoopBuckets - 1] = 1;
  j = json::parse(status_json(i, {&d}, {DeviceSnapshot{}}, false, nullptr, 1 << 16));
  const json& l = j["daemon"]["engine_loops"];
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0]["lcore"], 2);
  EXPECT_EQ(l[1]["lcore"], 3);
  ASSERT_EQ(l[1]["work_ns"].size(), engine::kLoopBuckets);
  EXPECT_EQ(l[1]["work_ns"][12], 4);
  EXPECT_EQ(l[1]["idle_ns"][12], 0);
  EXPECT_EQ(l[1]["oversleep_ns"][engine::kLoopBuckets - 1], 1);
}

TEST(StatusJson_Devices, StagesPerShardWithTheSlowest) {
  FakeDevice d("uroce0", 9000);
  json j = json::parse(status_json(info(), {&d}, {DeviceSnapshot{}}, false, nullptr, 1 << 16));
  EXPECT_FALSE(j["devices"][0].contains("stages"));
  DeviceSnapshot s;
  engine::StageReport r;
  r.on = true;
  r.untracked = 2;
  r.hist.tx_rx_ns[engine::loop_bucket(3000)] = 150;
  // 199 records of 1 us and one of 9 us: the slowest 1 % is that one.
  r.recent.assign(199, engine::StageRecord{100, 200, 500, 200, 900});
  r.recent.push_back(engine::StageRecord{100, 200, 8'500, 300, 9'000});
  s.stages = {engine::StageReport{.on = true}, r};
  j = json::parse(status_json(info(), {&d}, {s}, false, nullptr, 1 << 16));
  const json& st = j["devices"][0]["stages"];
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0]["recent"], 0);
  EXPECT_EQ(st[0]["slowest"]["count"], 0);
  EXPECT_EQ(st[1]["shard"], 1);
  EXPECT_EQ(st[1]["untracked"], 2);
  EXPECT_EQ(st[1]["recent"], 200);
  for (const StageKey& k : kStageKeys) {
    ASSERT_EQ(st[1][std::string(k.key.name)].size(), engine::kLoopBuckets) << k.key.name;
  }
  EXPECT_EQ(st[1]["tx_rx_ns"][12], 150);
  EXPECT_EQ(st[1]["slowest"]["fraction"], 0.01);
  EXPECT_EQ(st[1]["slowest"]["count"], 2);
  EXPECT_EQ(st[1]["slowest"]["max"]["tx_rx_ns"], 8'500);
  EXPECT_EQ(st[1]["slowest"]["mean"]["tx_rx_ns"], 4'500);
  EXPECT_EQ(st[1]["slowest"]["mean"]["total_ns"], 4'950);
}

TEST(StatusJson_Devices, CompEventCounters) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  s.counters.cq.comp_events = 3;
  s.counters.comp.records = 3;
  s.counters.comp.writes = 2;
  s.counters.comp.errors = 1;
  const json j = json::parse(status_json(info(), {&d}, {s}, false, nullptr, 1 << 16));
  EXPECT_EQ(j["devices"][0]["counters"]["comp_events"], 3);
  EXPECT_EQ(j["devices"][0]["counters"]["comp_event_writes"], 2);
  EXPECT_EQ(j["devices"][0]["counters"]["comp_event_errors"], 1);
}

TEST(StatusJson_Devices, LossInjectionCounters) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  s.counters.tx_impair_drop = 6;
  s.counters.rx_impair_drop = 2;
  const json j = json::parse(status_json(info(), {&d}, {s}, false, nullptr, 1 << 16));
  EXPECT_EQ(j["devices"][0]["counters"]["tx_impair_drop"], 6);
  EXPECT_EQ(j["devices"][0]["counters"]["rx_impair_drop"], 2);
}

// The port limit's stops, and the TX sink's counters only where the port
// has a sink (a DPDK port: has_port_tx), so a full ring below the
// scheduler shows in `uroce-ctl counters`.
TEST(StatusJson_Devices, PortLimitAndPortTxSink) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  s.counters.tx_limit_stops = 9;
  json j = json::parse(status_json(info(), {&d}, {s}, false, nullptr, 1 << 16));
  EXPECT_EQ(j["devices"][0]["counters"]["tx_limit_stops"], 9);
  EXPECT_FALSE(j["devices"][0]["counters"].contains("port_tx"));
  s.has_port_tx = true;
  s.port_tx.sent = 100;
  s.port_tx.bursts = 7;
  s.port_tx.refused = 3;
  s.port_tx.streamed = 5;
  j = json::parse(status_json(info(), {&d}, {s}, false, nullptr, 1 << 16));
  const json& t = j["devices"][0]["counters"]["port_tx"];
  EXPECT_EQ(t["sent"], 100);
  EXPECT_EQ(t["bursts"], 7);
  EXPECT_EQ(t["refused"], 3);
  EXPECT_EQ(t["streamed"], 5);
  EXPECT_EQ(t["no_mbuf"], 0);
}

TEST(StatusJson_Devices, PfcPerPriorityBadInputAndTtl) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  s.pfc.enable = 0x08;
  s.pfc.link_bps = 25'000'000'000ull;
  s.pfc.tx_ttl = 64;
  s.pfc.ingress.prio[3].xoff_sent = 4;
  s.pfc.ingress.prio[3].xon_sent = 3;
  s.pfc.gate.prio[3].pause_rx = 7;
  s.pfc.paused_ns[3] = 1234;
  s.pfc.stormed[3] = true;
  s.pfc.gate.parse[static_cast<std::size_t>(wire::PfcParseError::kTruncated)] = 2;
  s.pfc.ttl.replay_lower_ttl = 5;
  const json j = json::parse(status_json(info(), {&d}, {s}, false, nullptr, 1 << 16));
  const json& p = j["devices"][0]["pfc"];
  EXPECT_EQ(p["enabled_priorities"], json::array({3}));
  EXPECT_EQ(p["link_mbps"], 25000);
  ASSERT_EQ(p["priorities"].size(), 8u);
  const json& q = p["priorities"][3];
  EXPECT_EQ(q["lossless"], true);
  EXPECT_EQ(q["xoff_sent"], 4);
  EXPECT_EQ(q["xon_sent"], 3);
  EXPECT_EQ(q["pause_rx"], 7);
  EXPECT_EQ(q["paused_ns"], 1234);
  EXPECT_EQ(q["stormed"], true);
  EXPECT_EQ(p["priorities"][0]["lossless"], false);
  EXPECT_EQ(p["rx_bad"]["Truncated"], 2);
  EXPECT_EQ(p["ttl"]["replay_lower_ttl"], 5);
}

TEST(StatusJson_Qps, TypeSpecificCounters) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  engine::QpStatus q;
  q.qpn = 0x11;
  q.type = transport::QpType::kRc;
  q.state = transport::QpState::kRts;
  q.rc.tx_retransmits = 3;
  s.qp_status.push_back(q);
  q.qpn = 0x12;
  q.type = transport::QpType::kUd;
  q.ud.tx_packets = 8;
  q.ud.rx[static_cast<std::size_t>(transport::UdRx::kDropQkey)] = 5;
  s.qp_status.push_back(q);
  const json j = json::parse(status_json(info(), {&d}, {s}, true, nullptr, 1 << 16));
  ASSERT_EQ(j["qps"].size(), 2u);
  EXPECT_EQ(j["qps"][0]["type"], "RC");
  EXPECT_EQ(j["qps"][0]["device"], "uroce0");
  EXPECT_EQ(j["qps"][0]["transport"]["tx_retransmits"], 3);
  EXPECT_EQ(j["qps"][1]["type"], "UD");
  EXPECT_EQ(j["qps"][1]["transport"]["tx_packets"], 8);
  const json& rx = j["qps"][1]["transport"]["rx"];
  ASSERT_TRUE(rx.is_object());
  EXPECT_EQ(rx.size(), transport::kNumUdRx);
  EXPECT_EQ(rx[transport::ud_rx_name(transport::UdRx::kDropQkey)], 5);
}

// A QP's "transport" holds every counter of RcCounters' field list
// (rc_core.h) under its name, and nothing else.
TEST(StatusJson_Qps, EveryRcCounterUnderItsListedName) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  engine::QpStatus q;
  q.type = transport::QpType::kRc;
  std::uint64_t v = 1;
  for (const auto& f : transport::kRcCounterFields) q.rc.*f.member = v++;
  s.qp_status.push_back(q);
  const json j = json::parse(status_json(info(), {&d}, {s}, true, nullptr, 1 << 16));
  const json& t = j["qps"][0]["transport"];
  EXPECT_EQ(t.size(), transport::kRcCounterFields.size());
  v = 1;
  for (const auto& f : transport::kRcCounterFields)
    EXPECT_EQ(t[std::string(f.name)], v++) << f.name;
}

// The device's counters: every entry of VnicCounters' field list under its
// name, then the CQ and comp-channel counters and the two by-reason tables.
TEST(StatusJson_Devices, EveryVnicCounterUnderItsListedName) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  std::uint64_t v = 1;
  for (const auto& f : engine::kVnicCounterFields) s.counters.*f.member = v++;
  // The QP extensions' sets (DCQCN, Homa) go into the same object.
  std::size_t policy_fields = 0;
  std::apply(
      [&](auto&... set) {
        ((policy_fields += counter_fields(set).size(),
          [&] {
            for (const auto& f : counter_fields(set)) set.*f.member = v++;
          }()),
         ...);
      },
      s.policy);
  EXPECT_EQ(policy_fields, policy::kLossyCounterFields.size() + policy::kDcqcnCounterFields.size() +
                               policy::kHomaCounterFields.size());
  const json j = json::parse(status_json(info(), {&d}, {s}, false, nullptr, 1 << 16));
  const json& c = j["devices"][0]["counters"];
  EXPECT_EQ(c.size(), engine::kVnicCounterFields.size() + policy_fields + 8);
  v = 1;
  for (const auto& f : engine::kVnicCounterFields) EXPECT_EQ(c[std::string(f.name)], v++) << f.name;
  // In the registration order (policy::Registered): selective repeat,
  // Homa, then DCQCN.
  for (const auto& f : policy::kLossyCounterFields)
    EXPECT_EQ(c[std::string(f.name)], v++) << f.name;
  for (const auto& f : policy::kHomaCounterFields) EXPECT_EQ(c[std::string(f.name)], v++) << f.name;
  for (const auto& f : policy::kDcqcnCounterFields)
    EXPECT_EQ(c[std::string(f.name)], v++) << f.name;
  for (const char* k : {"cqes", "cq_overflow", "comp_events", "comp_events_unsolicited",
                        "comp_event_writes", "comp_event_errors", "parse_errors", "wqe_errors"}) {
    EXPECT_TRUE(c.contains(k)) << k;
  }
}

TEST(StatusJson_Devices, PortModeOnlyWhereThePortHasOne) {
  FakeDevice d("uroce0", 3504);
  json j = json::parse(status_json(info(), {&d}, {DeviceSnapshot{}}, false, nullptr, 1 << 16));
  EXPECT_FALSE(j["devices"][0].contains("port_mode"));
  d.mode = "copy";
  j = json::parse(status_json(info(), {&d}, {DeviceSnapshot{}}, false, nullptr, 1 << 16));
  EXPECT_EQ(j["devices"][0]["port_mode"], "copy");
}

TEST(StatusJson_Devices, PortCountsWhereThePortHasThemXdpOnlyForAfXdp) {
  FakeDevice d("uroce0", 3504);
  json j = json::parse(status_json(info(), {&d}, {DeviceSnapshot{}}, false, nullptr, 1 << 16));
  EXPECT_FALSE(j["devices"][0].contains("port_stats"));
  EXPECT_FALSE(j["devices"][0].contains("port_xdp"));
  Device::PortCounts pc;
  pc.stats.imissed = 4;
  pc.stats.mbufs = 8191;
  pc.stats.mbufs_free = 7000;
  d.counts = pc;
  j = json::parse(status_json(info(), {&d}, {DeviceSnapshot{}}, false, nullptr, 1 << 16));
  const json& ps = j["devices"][0]["port_stats"];
  EXPECT_EQ(ps.size(), port::kPortStatsFields.size());
  EXPECT_EQ(ps["imissed"], 4);
  EXPECT_EQ(ps["mbufs"], 8191);
  EXPECT_EQ(ps["mbufs_free"], 7000);
  EXPECT_FALSE(j["devices"][0].contains("port_xdp"));
  pc.xdp.emplace();
  pc.xdp->tx_invalid_descs = 13;
  d.counts = pc;
  j = json::parse(status_json(info(), {&d}, {DeviceSnapshot{}}, false, nullptr, 1 << 16));
  const json& x = j["devices"][0]["port_xdp"];
  EXPECT_EQ(x.size(), port::kXdpStatsFields.size());
  EXPECT_EQ(x["tx_invalid_descs"], 13);
  EXPECT_EQ(x["rx_dropped"], 0);
}

TEST(StatusJson_Devices, MemoryWindowCountersAndRefusalsByReason) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  s.mw.binds = 7;
  s.mw.invalidates = 3;
  s.mw.bind_refused[static_cast<std::size_t>(transport::MrError::kAccessDenied)] = 2;
  s.mw.inv_refused[static_cast<std::size_t>(transport::MrError::kWrongPd)] = 5;
  const json j = json::parse(status_json(info(), {&d}, {s}, false, nullptr, 1 << 16));
  const json& mw = j["devices"][0]["mw"];
  EXPECT_EQ(mw.size(), transport::kMwCounterFields.size() + 2);
  EXPECT_EQ(mw["binds"], 7);
  EXPECT_EQ(mw["invalidates"], 3);
  EXPECT_EQ(mw["bind_refused"], json({{"access_denied", 2}}));
  EXPECT_EQ(mw["inv_refused"], json({{"wrong_pd", 5}}));
}

TEST(StatusJson_Sched, DevicePolicyAndQpClassAndPace) {
  FakeDevice d("uroce0", 9000);
  d.mutable_config().sched.isolation = sched::Isolation::kClasses;
  d.mutable_config().sched.classes.classes[6].mode = sched::ClassMode::kStrict;
  d.mutable_config().sched.classes.classes[2].weight = 4;
  d.mutable_config().sched.classes.classes[6].rate_mbps = 500;
  d.mutable_config().pacer.granularity_ns = 2000;
  DeviceSnapshot s;
  engine::QpStatus q;
  q.qpn = 0x11;
  q.send_queue = 9;
  q.tx_class = 6;
  q.class_pinned = true;
  q.paced = true;
  q.pace.spec = {.rate_bps = 1'000'000'000, .burst_bytes = 8192, .typical_bytes = 4096};
  q.pace.parks = 3;
  q.pace.paced_ns = 4500;
  q.pace.sent_bytes = 70000;
  s.qp_status.push_back(q);
  const json j = json::parse(status_json(info(), {&d}, {s}, true, nullptr, 1 << 16));
  const json& ds = j["devices"][0]["sched"];
  EXPECT_EQ(ds["isolation"], "classes");
  EXPECT_EQ(ds["pace_granularity_ns"], 2000);
  ASSERT_EQ(ds["classes"].size(), 8u);
  EXPECT_EQ(ds["classes"][6],
            json({{"class", 6}, {"mode", "strict"}, {"weight", 1}, {"rate_mbps", 500}}));
  EXPECT_EQ(ds["classes"][2],
            json({{"class", 2}, {"mode", "weighted"}, {"weight", 4}, {"rate_mbps", 0}}));
  const json& qs = j["qps"][0]["sched"];
  EXPECT_EQ(qs, json({{"class", 6},
                      {"pinned", true},
                      {"paced", true},
                      {"rate_bps", 1'000'000'000},
                      {"burst_bytes", 8192},
                      {"typical_bytes", 4096},
                      {"parks", 3},
                      {"paced_ns", 4500},
                      {"sent_bytes", 70000},
                      {"waiting", false},
                      {"cc_bps", 0},
                      {"dcqcn", nullptr}}));
  EXPECT_EQ(j["qps"][0]["send_queue"], 9);
  EXPECT_EQ(ds["dcqcn"], json({{"enabled", false},
                               {"line_rate_bps", sched::DcqcnConfig{}.line_rate_bps},
                               {"cnp_dscp", 48},
                               {"cnp_interval_ns", 50'000}}));
}

TEST(StatusJson_Sched, DcqcnDeviceAndQpState) {
  FakeDevice d("uroce0", 9000);
  d.mutable_config().dcqcn.enabled = true;
  d.mutable_config().dcqcn.rp.line_rate_bps = 25'000'000'000;
  DeviceSnapshot s;
  engine::QpStatus q;
  q.qpn = 0x12;
  q.paced = true;
  q.pace.cc_bps = 3'000'000'000;
  q.dcqcn = true;
  q.cc.rate_bps = 3'000'000'000;
  q.cc.target_bps = 6'000'000'000;
  q.cc.alpha = 512;
  q.cc.limited = true;
  q.cc.rp.cnps = 4;
  q.cc.rp.decreases = 3;
  q.cc.ce_packets = 10;
  q.cc.cnps_sent = 2;
  q.cc.cnps_suppressed = 8;
  s.qp_status.push_back(q);
  const json j = json::parse(status_json(info(), {&d}, {s}, true, nullptr, 1 << 16));
  EXPECT_EQ(j["devices"][0]["sched"]["dcqcn"]["enabled"], true);
  EXPECT_EQ(j["devices"][0]["sched"]["dcqcn"]["line_rate_bps"], 25'000'000'000);
  const json& c = j["qps"][0]["sched"]["dcqcn"];
  EXPECT_EQ(j["qps"][0]["sched"]["cc_bps"], 3'000'000'000);
  EXPECT_EQ(c["rate_bps"], 3'000'000'000);
  EXPECT_EQ(c["target_bps"], 6'000'000'000);
  EXPECT_EQ(c["alpha"], 512);
  EXPECT_EQ(c["limited"], true);
  EXPECT_EQ(c["rp"]["cnps"], 4);
  EXPECT_EQ(c["rp"]["decreases"], 3);
  EXPECT_EQ(c["ce_packets"], 10);
  EXPECT_EQ(c["cnps_sent"], 2);
  EXPECT_EQ(c["cnps_suppressed"], 8);
}

// DC QPs: a DCI's streams and a DCT's counters beside their RC counters;
// the device's DC settings, and its pool once it has one.
TEST(StatusJson_Dc, StreamsDctCountersAndPool) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  engine::QpStatus dci;
  dci.qpn = 0x21;
  dci.type = transport::QpType::kDci;
  dci.rc.tx_requests = 7;
  dci.dci.stream_recoveries = 1;
  engine::QpStatus::DcStream st;
  st.bound = true;
  st.conn = 1234;
  st.dctn = 0x30;
  st.ctr.connects = 2;
  dci.dci_streams = {st, engine::QpStatus::DcStream{}};
  engine::QpStatus dct;
  dct.qpn = 0x30;
  dct.type = transport::QpType::kDct;
  dct.dct_contexts = 3;
  dct.dct.key_violations = 4;
  s.qp_status = {dci, dct};
  json j = json::parse(status_json(info(), {&d}, {s}, true, nullptr, 1 << 16));
  const json& q0 = j["qps"][0];
  EXPECT_EQ(q0["type"], "DCI");
  EXPECT_EQ(q0["transport"]["tx_requests"], 7);
  EXPECT_EQ(q0["dci"]["counters"]["stream_recoveries"], 1);
  ASSERT_EQ(q0["dci"]["streams"].size(), 2u);
  EXPECT_EQ(q0["dci"]["streams"][0]["bound"], true);
  EXPECT_EQ(q0["dci"]["streams"][0]["conn"], 1234);
  EXPECT_EQ(q0["dci"]["streams"][0]["dctn"], 0x30);
  EXPECT_EQ(q0["dci"]["streams"][0]["syn"], false);
  EXPECT_EQ(q0["dci"]["streams"][0]["counters"]["connects"], 2);
  EXPECT_EQ(q0["dci"]["streams"][1]["stream"], 1);
  EXPECT_FALSE(q0.contains("dct"));
  const json& q1 = j["qps"][1];
  EXPECT_EQ(q1["type"], "DCT");
  EXPECT_EQ(q1["dct"]["contexts"], 3);
  EXPECT_EQ(q1["dct"]["counters"]["key_violations"], 4);
  EXPECT_FALSE(q1.contains("dci"));
  const json& dc = j["devices"][0]["dc"];
  EXPECT_EQ(dc["settings"]["dc_contexts"], 4096);
  EXPECT_EQ(dc["settings"]["dc_records_log2"], 16);
  EXPECT_EQ(dc["settings"]["dc_stale_ms"], 10000);
  EXPECT_EQ(dc["settings"]["dc_idle_disconnect_us"], 1000);
  EXPECT_TRUE(dc["pool"].is_null());
  s.has_dc_pool = true;
  s.dc_pool.capacity = 4096;
  s.dc_pool.open = 2;
  s.dc_pool.counters.opened = 5;
  j = json::parse(status_json(info(), {&d}, {s}, false, nullptr, 1 << 16));
  const json& p = j["devices"][0]["dc"]["pool"];
  EXPECT_EQ(p["contexts"], 4096);
  EXPECT_EQ(p["open"], 2);
  EXPECT_EQ(p["counters"]["opened"], 5);
  EXPECT_EQ(p["counters"]["retired_stale"], 0);
}

TEST(StatusJson_Homa, OffDeviceSettingsOnlyAndPlainRcQp) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  engine::QpStatus rc;
  rc.type = transport::QpType::kRc;
  engine::QpStatus ud;
  ud.type = transport::QpType::kUd;
  s.qp_status = {rc, ud};
  const json j = json::parse(status_json(info(), {&d}, {s}, true, nullptr, 1 << 16));
  const json& h = j["devices"][0]["homa"];
  EXPECT_EQ(h["settings"]["enabled"], false);
  EXPECT_EQ(h["settings"]["rtt_bytes"], sched::homa::HomaSettings{}.rtt_bytes);
  EXPECT_TRUE(h["receiver"].is_null());
  EXPECT_EQ(j["devices"][0]["counters"]["homa_tx_grants"], 0);
  EXPECT_EQ(j["qps"][0]["homa_peer"], false);
  EXPECT_EQ(j["qps"][0]["homa"]["gated"], 0);
  // Not RC: no Homa fields at all.
  EXPECT_FALSE(j["qps"][1].contains("homa_peer"));
  EXPECT_FALSE(j["qps"][1].contains("homa"));
}

TEST(StatusJson_Qps, SelectiveRepeatOfRcQpsOnly) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  engine::QpStatus rc;
  rc.type = transport::QpType::kRc;
  rc.sr_peer = true;
  rc.sr.sr_tx_resends = 7;
  engine::QpStatus ud;
  ud.type = transport::QpType::kUd;
  s.qp_status = {rc, ud};
  const QpSums sums = qp_sums({s});
  const json j = json::parse(status_json(info(), {&d}, {s}, true, nullptr, 1 << 16, &sums));
  EXPECT_EQ(j["qps"][0]["sr_peer"], true);
  EXPECT_EQ(j["qps"][0]["sr"]["sr_tx_resends"], 7);
  EXPECT_EQ(j["qps"][0]["sr"].size(), transport::kRcSrCounterFields.size());
  EXPECT_FALSE(j["qps"][1].contains("sr_peer"));
  EXPECT_FALSE(j["qps"][1].contains("sr"));
  // The RC class line sums them.
  ASSERT_EQ(j["qp_classes"].size(), 2u);
  EXPECT_EQ(j["qp_classes"][0]["sr"]["sr_tx_resends"], 7);
  EXPECT_FALSE(j["qp_classes"][1].contains("sr"));
}

TEST(StatusJson_Homa, ReceiverCutoffsCountersAndSender) {
  FakeDevice d("uroce0", 9000);
  sched::homa::HomaSettings& hs = d.mutable_config().homa;
  hs.enabled = true;
  hs.priorities = 8;
  hs.unsched_priorities = 3;
  hs.resend_ns = 500'000;
  DeviceSnapshot s;
  auto& homa = std::get<policy::HomaCounters>(s.policy);
  homa.homa_tx_grants = 40;
  homa.homa_rx_mlen = 5;
  homa.homa_peers = 2;
  s.has_homa = true;
  s.homa.tracked = 2;
  s.homa.outstanding = 90'000;
  s.homa.generation = 3;
  s.homa.grants.messages = 5;
  s.homa.grants.grants = 40;
  s.homa.grants.resends = 1;
  s.homa.cutoffs.levels = 3;
  s.homa.cutoffs.max_length = {1'000,      20'000,     UINT64_MAX, UINT64_MAX,
                               UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
  engine::QpStatus q;
  q.type = transport::QpType::kRc;
  q.qpn = 0x21;
  q.homa_peer = true;
  q.homa.gated = 4;
  q.homa.mlen = 4;
  q.homa.wait_grant = 30;
  q.homa.grants = 38;
  q.homa.fallbacks = 0;
  s.qp_status.push_back(q);
  const json j = json::parse(status_json(info(), {&d}, {s}, true, nullptr, 1 << 16));
  const json& h = j["devices"][0]["homa"];
  EXPECT_EQ(h["settings"]["enabled"], true);
  EXPECT_EQ(h["settings"]["resend_ns"], 500'000);
  EXPECT_EQ(h["unsched_levels"], 3);
  const json& r = h["receiver"];
  EXPECT_EQ(r["tracked"], 2);
  EXPECT_EQ(r["outstanding"], 90'000);
  EXPECT_EQ(r["generation"], 3);
  EXPECT_EQ(r["counters"]["messages"], 5);
  EXPECT_EQ(r["counters"]["grants"], 40);
  EXPECT_EQ(r["counters"]["resends"], 1);
  EXPECT_EQ(r["cutoffs"], json::parse(R"([{"level": 0, "priority": 7, "max_length": 1000},
                            {"level": 1, "priority": 6, "max_length": 20000},
                            {"level": 2, "priority": 5, "max_length": null}])"));
  const json& c = j["devices"][0]["counters"];
  EXPECT_EQ(c["homa_tx_grants"], 40);
  EXPECT_EQ(c["homa_rx_mlen"], 5);
  EXPECT_EQ(c["homa_peers"], 2);
  EXPECT_EQ(j["qps"][0]["homa_peer"], true);
  EXPECT_EQ(j["qps"][0]["homa"], json::parse(R"({"gated": 4, "mlen": 4, "wait_grant": 30,
      "grants": 38, "grant_stale": 0, "timeouts": 0, "fallbacks": 0, "prio_capped": 0})"));
}

TEST(StatusJson_TooBig, KeepsFirstQpsAndSaysSo) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  for (std::uint32_t i = 0; i < 200; ++i) {
    engine::QpStatus q;
    q.qpn = i + 2;
    s.qp_status.push_back(q);
  }
  const std::string out = status_json(info(), {&d}, {s}, true, nullptr, 20000);
  EXPECT_LE(out.size(), 20000u);
  json j = json::parse(out);
  EXPECT_TRUE(j["qps_truncated"].get<bool>());
  const std::size_t kept = j["qps"].size();
  ASSERT_GT(kept, 0u);
  ASSERT_LT(kept, 200u);
  EXPECT_EQ(j["qps"][0]["qpn"], 2);
  // As many as fit: the next line would not have.
  const json whole = json::parse(status_json(info(), {&d}, {s}, true, nullptr, SIZE_MAX));
  j["qps"].push_back(whole["qps"][kept]);
  EXPECT_GT(j.dump().size(), 20000u);
}

TEST(StatusJson_Clients, ObjectsByKind) {
  FakeDevice d("uroce0", 9000);
  ClientSummary c;
  c.id = 5;
  c.cred = {123, 1000, 1000};
  c.device = "uroce0";
  c.pds = {10};
  c.qps = {{12, 0x44, 2}, {13, 0x45, 0}};
  c.bad_requests = 2;
  const std::vector<ClientSummary> clients{c};
  const json j =
      json::parse(status_json(info(), {&d}, {DeviceSnapshot{}}, false, &clients, 1 << 16));
  ASSERT_EQ(j["clients"].size(), 1u);
  const json& cl = j["clients"][0];
  EXPECT_EQ(cl["pid"], 123);
  EXPECT_EQ(cl["uid"], 1000);
  EXPECT_EQ(cl["objects"]["pds"], std::vector<int>{10});
  EXPECT_EQ(cl["objects"]["qps"][0]["qpn"], 0x44);
  EXPECT_EQ(cl["objects"]["qps"][0]["mcast_groups"], 2);
  EXPECT_FALSE(cl["objects"]["qps"][1].contains("mcast_groups"));  // none: not shown
  EXPECT_EQ(cl["bad_requests"], 2);
}

// A client of 1,500 QPs (and as many CQs) does not fit one message: its
// lists keep their first entries, each cut list says how many it left out,
// and the body says so. A client of few objects keeps all of its lists.
TEST(StatusJson_TooBig, CutsClientListsAndCountsTheRest) {
  FakeDevice d("uroce0", 9000);
  ClientSummary big;
  big.id = 1;
  big.pds = {7};
  for (std::uint32_t i = 0; i < 1500; ++i) {
    big.qps.push_back({100 + i, 0x100 + i, 0});
    big.cqs.push_back(5000 + i);
  }
  ClientSummary small;
  small.id = 2;
  small.qps = {{3, 0x40, 0}};
  const std::vector<ClientSummary> clients{big, small};
  const std::string whole = status_json(info(), {&d}, {DeviceSnapshot{}}, false, &clients, 1 << 30);
  ASSERT_GT(whole.size(), 20000u);
  EXPECT_FALSE(json::parse(whole).contains("client_objects_truncated"));

  const std::string out = status_json(info(), {&d}, {DeviceSnapshot{}}, false, &clients, 20000);
  ASSERT_LE(out.size(), 20000u);
  const json j = json::parse(out);
  EXPECT_TRUE(j["client_objects_truncated"].get<bool>());
  const json& o = j["clients"][0]["objects"];
  ASSERT_GT(o["qps"].size(), 0u);
  ASSERT_LT(o["qps"].size(), 1500u);
  EXPECT_EQ(o["qps"][0]["handle"], 100);
  EXPECT_EQ(o["qps"].size() + o["qps_omitted"].get<std::size_t>(), 1500u);
  EXPECT_EQ(o["cqs"].size(), o["qps"].size());
  EXPECT_EQ(o["cqs"].size() + o["cqs_omitted"].get<std::size_t>(), 1500u);
  EXPECT_EQ(o["pds"], std::vector<int>{7});
  EXPECT_FALSE(o.contains("pds_omitted"));
  EXPECT_EQ(j["clients"][1]["objects"]["qps"].size(), 1u);
  EXPECT_FALSE(j["clients"][1]["objects"].contains("qps_omitted"));
  // As many as fit: one more of each cut list would not have.
  const json w = json::parse(whole)["clients"][0]["objects"];
  json more = j;
  json& m = more["clients"][0]["objects"];
  const std::size_t kept = o["qps"].size();
  for (const char* kind : {"qps", "cqs"}) {
    m[kind].push_back(w[kind][kept]);
    m[std::string(kind) + "_omitted"] = 1500 - kept - 1;
  }
  EXPECT_GT(more.dump().size(), 20000u);
}

// A few hundred clients do not fit one message even with every handle list
// empty: the first clients stay, as many as fit (one more would not), and
// the body counts the rest.
TEST(StatusJson_TooBig, KeepsTheFirstClientsThatFitAndCountsTheRest) {
  FakeDevice d("uroce0", 9000);
  std::vector<ClientSummary> clients(400);
  for (std::uint32_t i = 0; i < clients.size(); ++i) {
    clients[i].id = i + 1;
    clients[i].cred = {static_cast<pid_t>(1000 + i), 1000, 1000};
    clients[i].device = "uroce0";
    clients[i].pds = {i};
  }
  const std::size_t room = 1 << 16;
  const std::string whole =
      status_json(info(), {&d}, {DeviceSnapshot{}}, false, &clients, SIZE_MAX);
  ASSERT_GT(whole.size(), room);
  EXPECT_FALSE(json::parse(whole).contains("clients_omitted"));

  const std::string out = status_json(info(), {&d}, {DeviceSnapshot{}}, false, &clients, room);
  ASSERT_LE(out.size(), room);
  json j = json::parse(out);
  EXPECT_TRUE(j["client_objects_truncated"].get<bool>());
  const std::size_t kept = j["clients"].size();
  ASSERT_GT(kept, 0u);
  ASSERT_LT(kept, clients.size());
  EXPECT_EQ(kept + j["clients_omitted"].get<std::size_t>(), clients.size());
  for (std::size_t i = 0; i < kept; ++i) EXPECT_EQ(j["clients"][i]["id"], i + 1);
  // Their lists were cut to nothing first.
  EXPECT_EQ(j["clients"][0]["objects"]["pds"].size(), 0u);
  EXPECT_EQ(j["clients"][0]["objects"]["pds_omitted"], 1);
  // The next client would not have fit.
  json next = j["clients"][kept - 1];
  next["id"] = kept + 1;
  j["clients"].push_back(next);
  j["clients_omitted"] = clients.size() - kept - 1;
  EXPECT_GT(j.dump().size(), room);
}

// With QP lines asked for, those are cut first: only when none of them is
// left do the clients' lists lose entries.
TEST(StatusJson_TooBig, QpLinesGoBeforeClientLists) {
  FakeDevice d("uroce0", 9000);
  DeviceSnapshot s;
  ClientSummary c;
  c.id = 1;
  for (std::uint32_t i = 0; i < 300; ++i) {
    engine::QpStatus q;
    q.qpn = i + 2;
    q.client = 1;
    s.qp_status.push_back(q);
    c.qps.push_back({i, i + 2, 0});
  }
  const std::vector<ClientSummary> clients{c};
  // Room for every client list but not for the QP lines.
  const std::size_t lists = status_json(info(), {&d}, {s}, false, &clients, 1 << 30).size() + 64;
  json j = json::parse(status_json(info(), {&d}, {s}, true, &clients, lists));
  EXPECT_TRUE(j["qps_truncated"].get<bool>());
  EXPECT_FALSE(j.contains("client_objects_truncated"));
  EXPECT_EQ(j["clients"][0]["objects"]["qps"].size(), 300u);
  // Room for half the client's list: no QP line is left, and the list is cut.
  ClientSummary bare = c;
  bare.qps.clear();
  const std::vector<ClientSummary> none{bare};
  const std::size_t half =
      (lists + status_json(info(), {&d}, {s}, false, &none, 1 << 30).size()) / 2;
  const std::string out = status_json(info(), {&d}, {s}, true, &clients, half);
  ASSERT_LE(out.size(), half);
  j = json::parse(out);
  EXPECT_EQ(j["qps"].size(), 0u);
  EXPECT_GT(j["clients"][0]["objects"]["qps"].size(), 0u);
  EXPECT_TRUE(j["client_objects_truncated"].get<bool>());
  EXPECT_EQ(j["clients"][0]["objects"]["qps"].size() +
                j["clients"][0]["objects"]["qps_omitted"].get<std::size_t>(),
            300u);
}

// The sums by device, QP type and TX class ("qp_classes"), and each
// client's QPs' engine counters ("qp_engine"), even when the QP lines are
// cut to fit: they come from every QP of the snapshots.
TEST(StatusJson_QpClasses, SumsByDeviceTypeAndClass) {
  FakeDevice d0("uroce0", 9000, 1), d1("uroce1", 9000, 2);
  std::vector<DeviceSnapshot> snaps(2);
  engine::QpStatus q;
  q.type = transport::QpType::kRc;
  q.client = 5;
  q.engine.tx_bytes = 100;
  q.rc.tx_retransmits = 1;
  snaps[0].qp_status = {q, q};
  q.tx_class = 3;
  snaps[0].qp_status.push_back(q);
  q.type = transport::QpType::kUd;
  q.tx_class = 0;
  q.client = 6;
  q.ud.rx[static_cast<std::size_t>(transport::UdRx::kDropQkey)] = 2;
  snaps[1].qp_status = {q};
  const QpSums sums = qp_sums(snaps);
  ASSERT_EQ(sums.classes.size(), 3u);
  ClientSummary c;
  c.id = 5;
  const std::vector<ClientSummary> clients{c};
  const json j =
      json::parse(status_json(info(), {&d0, &d1}, snaps, true, &clients, 1 << 16, &sums));
  const json& k = j["qp_classes"];
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k[0]["device"], "uroce0");
  EXPECT_EQ(k[0]["type"], "RC");
  EXPECT_EQ(k[0]["class"], 0);
  EXPECT_EQ(k[0]["qps"], 2);
  EXPECT_EQ(k[0]["engine"]["tx_bytes"], 200);
  EXPECT_EQ(k[0]["transport"]["tx_retransmits"], 2);
  EXPECT_TRUE(k[0].contains("homa"));
  EXPECT_EQ(k[0]["pace"]["parks"], 0);
  EXPECT_FALSE(k[0].contains("dcqcn"));
  EXPECT_EQ(k[1]["class"], 3);
  EXPECT_EQ(k[1]["qps"], 1);
  EXPECT_EQ(k[2]["device"], "uroce1");
  EXPECT_EQ(k[2]["type"], "UD");
  EXPECT_EQ(k[2]["transport"]["rx"][transport::ud_rx_name(transport::UdRx::kDropQkey)], 2);
  ASSERT_EQ(j["clients"].size(), 1u);
  EXPECT_EQ(j["clients"][0]["qp_engine"]["tx_bytes"], 300);
  // Without the sums (no kStatusQps): neither.
  const json n = json::parse(status_json(info(), {&d0, &d1}, snaps, false, &clients, 1 << 16));
  EXPECT_FALSE(n.contains("qp_classes"));
  EXPECT_FALSE(n["clients"][0].contains("qp_engine"));
}

}  // namespace
}  // namespace uroce::daemon
