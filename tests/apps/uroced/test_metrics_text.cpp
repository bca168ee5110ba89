// The Prometheus exposition of the status (metrics_text.cpp): names, units,
// escaping, HELP and TYPE lines, and a status with every counter set
// filled, whose every field of every list must be a family with the list's
// help, and whose numbers must all be described.
#include "apps/uroced/metrics_text.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "apps/pfc_status_json.h"
#include "apps/uroced/status_json.h"
#include "apps/uroced/status_values.h"
#include "datapath/cm/types.h"
#include "datapath/engine/engine.h"
#include "datapath/port/port_stats.h"
#include "datapath/transport/dc_target.h"
#include "sched/dcqcn.h"
#include "sched/grant_scheduler.h"
#include "tests/apps/uroced/fake_device.h"

namespace uroce::daemon {
namespace {

using counters::Kind;
using nlohmann::json;
using testing::FakeDevice;

TEST(MetricName_Forms, SuffixesAndUnits) {
  EXPECT_EQ(metric_name("device", "rx_frames", Kind::kCount), "uroce_device_rx_frames_total");
  EXPECT_EQ(metric_name("objects", "qps", Kind::kLevel), "uroce_objects_qps");
  EXPECT_EQ(metric_name("pfc", "paused", Kind::kFlag), "uroce_pfc_paused");
  EXPECT_EQ(metric_name("pfc", "paused_ns", Kind::kCount), "uroce_pfc_paused_seconds_total");
  EXPECT_EQ(metric_name("daemon", "uptime_s", Kind::kLevel), "uroce_daemon_uptime_seconds");
  EXPECT_EQ(metric_name("x", "a-b.c", Kind::kLevel), "uroce_x_a_b_c");
  EXPECT_TRUE(key_in_ns("slept_ns"));
  EXPECT_FALSE(key_in_ns("uptime_s"));
  EXPECT_FALSE(key_in_ns("nsent"));
}

TEST(EscapeLabel_Specials, BackslashQuoteNewline) {
  EXPECT_EQ(escape_label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(escape_label("bad ICRC"), "bad ICRC");
}

TEST(EscapeHelp_Specials, BackslashNewlineOnly) {
  EXPECT_EQ(escape_help("a\\b\"c\nd"), "a\\\\b\"c\\nd");
}

TEST(SecondsText_Exact, DecimalWithoutRounding) {
  EXPECT_EQ(seconds_text(0), "0");
  EXPECT_EQ(seconds_text(1500), "0.0000015");
  EXPECT_EQ(seconds_text(1'000'000'000), "1");
  EXPECT_EQ(seconds_text(1'073'741'823), "1.073741823");
  EXPECT_EQ(seconds_text(18'446'744'073'709'551'615ull), "18446744073.709551615");
}

// ---- a full status -------------------------------------------------------------

template <class S, std::size_t N>
void fill(S& s, const counters::FieldList<S, N>& list, std::uint64_t base) {
  for (std::size_t i = 0; i < N; ++i) s.*list[i].member = base + i;
}

DaemonInfo full_info() {
  DaemonInfo i;
  i.version = "9.9";
  i.pid = 42;
  i.poll = "busy";
  i.lcores = {1};
  i.uptime_s = 2.5;
  i.clients = 1;
  i.qp_classes_omitted = 5000;
  i.workers = {3, 2, 0, 4, 1, 9};
  i.engine.emplace();
  fill(*i.engine, engine::kEngineRunCounterFields, 100);
  i.loops.resize(1);
  i.loops[0].work_ns[0] = 1;
  i.loops[0].work_ns[3] = 2;
  i.loops[0].idle_ns[engine::kLoopBuckets - 1] = 5;
  i.loops[0].oversleep_ns[10] = 7;
  i.users[1000] = Usage{1, 2, 3, 4, 5, 6};
  fill(i.cm.service, kCmServiceCounterFields, 200);
  fill(i.cm.machine, cm::kCounterFields, 300);
  i.cm.files = 1;
  i.cm.ids = 2;
  i.cm.listeners = 3;
  i.cm.connections = 4;
  CaptureStatus cap;
  cap.device = "uroce0";
  cap.count = 10;
  cap.snaplen = 128;
  cap.written = 4096;
  fill(cap.counters, port::kCaptureCounterFields, 400);
  i.captures.push_back(cap);
  return i;
}

// One QP of `type` with every counter it has filled.
engine::QpStatus full_qp(transport::QpType type, std::uint32_t qpn, std::uint8_t tx_class) {
  engine::QpStatus q;
  q.qpn = qpn;
  q.type = type;
  q.client = 1;
  q.tx_class = tx_class;
  fill(q.engine, engine::kQpEngineCounterFields, 1000);
  fill(q.rc, transport::kRcCounterFields, 2000);
  fill(q.uc, transport::kUcCounterFields, 3000);
  q.uc.rx[1] = 31;
  fill(q.ud, transport::kUdCounterFields, 4000);
  q.ud.rx[1] = 41;
  q.pace.parks = 5;
  q.pace.paced_ns = 1500;
  q.pace.sent_bytes = 7;
  q.dcqcn = true;
  fill(q.cc.rp, sched::kDcqcnCounterFields, 5000);
  q.cc.ce_packets = 1;
  q.cc.cnps_sent = 2;
  q.cc.cnps_suppressed = 3;
  fill(q.homa, transport::kRcHomaCounterFields, 6000);
  fill(q.sr, transport::kRcSrCounterFields, 6500);
  fill(q.dci, transport::kDciCounterFields, 7000);
  q.dci_streams.resize(2);
  fill(q.dci_streams[0].ctr, transport::kDcStreamCounterFields, 8000);
  fill(q.dci_streams[1].ctr, transport::kDcStreamCounterFields, 8000);
  fill(q.dct, transport::kDctCounterFields, 9000);
  q.dct_contexts = 2;
  return q;
}

DeviceSnapshot full_snapshot() {
  DeviceSnapshot s;
  fill(s.counters, engine::kVnicCounterFields, 1);
  s.counters.cq.cqes = 70;
  s.counters.parse_error[static_cast<std::size_t>(wire::ParseError::kBadIcrc)] = 2;
  s.counters.wqe_error[static_cast<std::size_t>(shm::WqeError::kBadOpcode)] = 1;
  std::apply([](auto&... set) { (fill(set, counter_fields(set), 400), ...); }, s.policy);
  fill(s.arp, port::kArpCounterFields, 500);
  s.arp.drops[1] = 3;
  s.qps = 5;
  s.cqs = 4;
  s.srqs = 3;
  s.mrs = 2;
  engine::StageReport st;
  st.on = true;
  st.untracked = 6;
  st.hist.total_ns[engine::loop_bucket(3000)] = 2;
  st.recent.assign(2, engine::StageRecord{0, 100, 2'500, 200, 2'800});
  s.stages = {st};
  s.ahs = 1;
  s.has_port_tx = true;
  fill(s.port_tx, engine::kMbufTxCounterFields, 600);
  s.has_port_rx = true;
  fill(s.port_rx, engine::kEthRxCounterFields, 700);
  s.has_homa = true;
  fill(s.homa.grants, sched::homa::kGrantCounterFields, 800);
  s.homa.tracked = 2;
  s.homa.outstanding = 4096;
  s.homa.generation = 3;
  s.has_dc_pool = true;
  fill(s.dc_pool.counters, transport::kDcTargetCounterFields, 900);
  s.dc_pool.capacity = 64;
  s.dc_pool.open = 2;
  s.dc_pool.bytes = 8192;
  fill(s.dc_sr, transport::kRcSrCounterFields, 990);
  fill(s.mw, transport::kMwCounterFields, 950);
  s.mw.bind_refused[1] = 1;
  s.mw.inv_refused[2] = 1;
  s.pfc.enable = 0x08;
  s.pfc.ingress.prio[3].xoff_sent = 11;
  s.pfc.paused_ns[0] = 1500;
  s.pfc.peer_paused[3] = true;
  s.pfc.held[3] = 4;
  s.pfc.gate.empty_class_vector = 1;
  fill(s.pfc.ttl, pfc::kTtlCounterFields, 990);
  s.shards.resize(2);
  s.shards[1] = {1, 2, 3, 4, 5, 6, 7};
  s.qp_status.push_back(full_qp(transport::QpType::kRc, 0x11, 0));
  s.qp_status.push_back(full_qp(transport::QpType::kRc, 0x12, 0));
  s.qp_status.push_back(full_qp(transport::QpType::kUc, 0x13, 2));
  s.qp_status.push_back(full_qp(transport::QpType::kUd, 0x14, 0));
  s.qp_status.push_back(full_qp(transport::QpType::kDci, 0x15, 0));
  s.qp_status.push_back(full_qp(transport::QpType::kDct, 0x16, 0));
  return s;
}

ClientSummary full_client() {
  ClientSummary c;
  c.id = 1;
  c.cred = {99, 1000, 1000};
  c.device = "uroce0";
  c.requests = 12;
  c.bad_requests = 1;
  c.used = Usage{1, 6, 2, 3, 4096, 8192};
  return c;
}

json full_status() {
  FakeDevice d("uroce0", 9000);
  Device::PortCounts pc;
  fill(pc.stats, port::kPortStatsFields, 1100);
  pc.xdp.emplace();
  fill(*pc.xdp, port::kXdpStatsFields, 1200);
  d.counts = pc;
  const std::vector<DeviceSnapshot> snaps{full_snapshot()};
  const QpSums sums = qp_sums(snaps);
  const std::vector<ClientSummary> clients{full_client()};
  return json::parse(status_json(full_info(), {&d}, snaps, true, &clients, 1 << 20, &sums));
}

// "# TYPE name type" for every family; the HELP text of each.
struct Families {
  std::map<std::string, std::string> type, help;
  std::vector<std::string> samples;
  std::vector<std::string> twice;  // a family's HELP or TYPE given again
};

Families families_of(const std::string& text) {
  Families f;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("# HELP ")) {
      const std::string rest = line.substr(7);
      const std::string name = rest.substr(0, rest.find(' '));
      if (!f.help.emplace(name, rest.substr(name.size() + 1)).second) f.twice.push_back(name);
    } else if (line.starts_with("# TYPE ")) {
      const std::string rest = line.substr(7);
      const std::string name = rest.substr(0, rest.find(' '));
      if (!f.type.emplace(name, rest.substr(name.size() + 1)).second) f.twice.push_back(name);
    } else {
      f.samples.push_back(line);
    }
  }
  return f;
}

std::string type_of(Kind k) { return k == Kind::kCount ? "counter" : "gauge"; }

// Every entry of `list` is the family uroce_<set>_<name> with its help and
// kind.
template <class List>
void expect_list(const Families& f, std::string_view set, const List& list) {
  for (const auto& e : list) {
    const std::string name = metric_name(set, e.name, e.kind);
    ASSERT_TRUE(f.type.contains(name)) << name;
    EXPECT_EQ(f.type.at(name), type_of(e.kind)) << name;
    EXPECT_EQ(f.help.at(name), escape_help(e.help)) << name;
  }
}

bool has_sample(const Families& f, const std::string& line) {
  return std::find(f.samples.begin(), f.samples.end(), line) != f.samples.end();
}

TEST(MetricsText_FullStatus, EveryFieldOfEveryListIsAFamily) {
  const MetricsText m = metrics_text(full_status());
  EXPECT_TRUE(m.undescribed.empty()) << ::testing::PrintToString(m.undescribed);
  EXPECT_TRUE(m.conflicts.empty()) << ::testing::PrintToString(m.conflicts);
  const Families f = families_of(m.text);
  EXPECT_TRUE(f.twice.empty()) << ::testing::PrintToString(f.twice);
  expect_list(f, "device", engine::kVnicCounterFields);
  expect_list(f, "device", kVnicRenamedValues);
  std::apply([&](const auto&... set) { (expect_list(f, "device", counter_fields(set)), ...); },
             policy::RegisteredCounters{});
  expect_list(f, "port_tx", engine::kMbufTxCounterFields);
  expect_list(f, "port_rx", engine::kEthRxCounterFields);
  expect_list(f, "port_stats", port::kPortStatsFields);
  expect_list(f, "port_xdp", port::kXdpStatsFields);
  expect_list(f, "objects", kObjectValues);
  expect_list(f, "shard", kShardValues);
  expect_list(f, "arp", port::kArpCounterFields);
  expect_list(f, "mw", transport::kMwCounterFields);
  expect_list(f, "pfc", engine::kPfcPriorityValues);
  expect_list(f, "pfc", engine::kPfcDeviceValues);
  expect_list(f, "ttl", pfc::kTtlCounterFields);
  expect_list(f, "homa_receiver", kHomaReceiverValues);
  expect_list(f, "homa_receiver", sched::homa::kGrantCounterFields);
  expect_list(f, "dc_pool", kDcPoolValues);
  expect_list(f, "dc_pool", transport::kDcTargetCounterFields);
  expect_list(f, "dc_sr", transport::kRcSrCounterFields);
  expect_list(f, "workers", kWorkerValues);
  expect_list(f, "engine", engine::kEngineRunCounterFields);
  expect_list(f, "user", kUsageValues);
  expect_list(f, "cm", kCmValues);
  expect_list(f, "cm", kCmServiceCounterFields);
  expect_list(f, "cm", cm::kCounterFields);
  expect_list(f, "qp", engine::kQpEngineCounterFields);
  expect_list(f, "pace", kPaceValues);
  expect_list(f, "rc", transport::kRcCounterFields);
  expect_list(f, "uc", transport::kUcCounterFields);
  expect_list(f, "ud", transport::kUdCounterFields);
  expect_list(f, "rc_homa", transport::kRcHomaCounterFields);
  expect_list(f, "rc_sr", transport::kRcSrCounterFields);
  expect_list(f, "dci", transport::kDciCounterFields);
  expect_list(f, "dci_stream", transport::kDcStreamCounterFields);
  expect_list(f, "dct", transport::kDctCounterFields);
  expect_list(f, "qp_dcqcn", kDcqcnValues);
  expect_list(f, "qp_dcqcn", sched::kDcqcnCounterFields);
  expect_list(f, "client", kClientValues);
  expect_list(f, "client_used", kUsageValues);
  expect_list(f, "client_qp", engine::kQpEngineCounterFields);
  expect_list(f, "capture", kCaptureValues);
  expect_list(f, "capture", port::kCaptureCounterFields);
  // The keys of their own.
  for (const StatusKey* k : {&kParseErrorsKey, &kWqeErrorsKey}) {
    EXPECT_TRUE(f.type.contains(metric_name("device", k->name, k->kind))) << k->name;
  }
  EXPECT_EQ(f.type.at("uroce_daemon_uptime_seconds"), "gauge");
  EXPECT_EQ(f.type.at("uroce_daemon_clients"), "gauge");
  EXPECT_EQ(f.type.at("uroce_qp_class_qps"), "gauge");
  EXPECT_EQ(f.type.at("uroce_dct_contexts"), "gauge");
  EXPECT_EQ(f.type.at("uroce_engine_loop_work_seconds"), "histogram");
}

TEST(MetricsText_FullStatus, SamplesWithTheirLabelsAndValues) {
  const Families f = families_of(metrics_text(full_status()).text);
  // Device counters, the renamed CQ set, counts by reason.
  EXPECT_TRUE(has_sample(f, "uroce_device_iterations_total{device=\"uroce0\"} 1"));
  EXPECT_TRUE(has_sample(f, "uroce_device_cqes_total{device=\"uroce0\"} 70"));
  EXPECT_TRUE(has_sample(f, "uroce_device_parse_errors_total{device=\"uroce0\",reason=\"" +
                                std::string(wire::parse_error_name(wire::ParseError::kBadIcrc)) +
                                "\"} 2"));
  // Levels, flags, nanoseconds as seconds, per priority.
  EXPECT_TRUE(has_sample(f, "uroce_objects_qps{device=\"uroce0\"} 5"));
  EXPECT_TRUE(has_sample(f, "uroce_pfc_xoff_sent_total{device=\"uroce0\",priority=\"3\"} 11"));
  EXPECT_TRUE(has_sample(f, "uroce_pfc_lossless{device=\"uroce0\",priority=\"3\"} 1"));
  EXPECT_TRUE(has_sample(f, "uroce_pfc_lossless{device=\"uroce0\",priority=\"2\"} 0"));
  EXPECT_TRUE(has_sample(f, "uroce_pfc_paused{device=\"uroce0\",priority=\"3\"} 1"));
  EXPECT_TRUE(
      has_sample(f, "uroce_pfc_paused_seconds_total{device=\"uroce0\",priority=\"0\"} 0.0000015"));
  EXPECT_TRUE(has_sample(f, "uroce_pfc_held{device=\"uroce0\",priority=\"3\"} 4"));
  EXPECT_TRUE(has_sample(f, "uroce_shard_handed_in_total{device=\"uroce0\",shard=\"1\"} 7"));
  EXPECT_TRUE(has_sample(f, "uroce_daemon_uptime_seconds 2.5"));
  EXPECT_TRUE(has_sample(f, "uroce_daemon_qp_classes_omitted 5000"));
  EXPECT_TRUE(has_sample(f, "uroce_user_reg_bytes{uid=\"1000\"} 5"));
  EXPECT_TRUE(has_sample(f, "uroce_daemon_info{version=\"9.9\",poll=\"busy\"} 1"));
  // Two RC QPs of class 0 summed; the UC one in class 2.
  EXPECT_TRUE(has_sample(f, "uroce_qp_class_qps{device=\"uroce0\",type=\"RC\",class=\"0\"} 2"));
  EXPECT_TRUE(
      has_sample(f, "uroce_qp_rx_packets_total{device=\"uroce0\",type=\"RC\",class=\"0\"} 2000"));
  EXPECT_TRUE(
      has_sample(f,
                 "uroce_pace_paced_seconds_total{device=\"uroce0\",type=\"UC\",class=\"2\"} "
                 "0.0000015"));
  EXPECT_TRUE(has_sample(
      f, "uroce_dci_stream_connects_total{device=\"uroce0\",type=\"DCI\",class=\"0\"} 16000"));
  // The port's PMD and pool counts (a level among them), and its sockets'.
  EXPECT_TRUE(has_sample(f, "uroce_port_stats_ipackets_total{device=\"uroce0\"} 1100"));
  EXPECT_TRUE(has_sample(f, "uroce_port_stats_mbufs_free{device=\"uroce0\"} 1109"));
  EXPECT_EQ(f.type.at("uroce_port_stats_mbufs_free"), "gauge");
  EXPECT_TRUE(has_sample(f, "uroce_port_xdp_tx_invalid_descs_total{device=\"uroce0\"} 1202"));
  // DC's selective repeat, the device's sum (first field: 990 + 0).
  EXPECT_TRUE(has_sample(f, "uroce_dc_sr_sr_rx_held_total{device=\"uroce0\"} 990"));
  // Per client: its QPs' engine counters summed (six QPs).
  EXPECT_TRUE(has_sample(
      f,
      "uroce_client_qp_rx_packets_total{client=\"1\",pid=\"99\",uid=\"1000\",device=\"uroce0\"} "
      "6000"));
  EXPECT_TRUE(has_sample(
      f, "uroce_client_requests_total{client=\"1\",pid=\"99\",uid=\"1000\",device=\"uroce0\"} 12"));
}

TEST(MetricsText_FullStatus, LoopHistogramCumulativeWithCeilings) {
  const Families f = families_of(metrics_text(full_status()).text);
  const std::string w = "uroce_engine_loop_work_seconds";
  // Bucket 0 holds 0 ns; bucket 3 holds 4..7 ns.
  EXPECT_TRUE(has_sample(f, w + "_bucket{lcore=\"1\",le=\"0\"} 1"));
  EXPECT_TRUE(has_sample(f, w + "_bucket{lcore=\"1\",le=\"0.000000003\"} 1"));
  EXPECT_TRUE(has_sample(f, w + "_bucket{lcore=\"1\",le=\"0.000000007\"} 3"));
  EXPECT_TRUE(has_sample(f, w + "_bucket{lcore=\"1\",le=\"+Inf\"} 3"));
  EXPECT_TRUE(has_sample(f, w + "_count{lcore=\"1\"} 3"));
  // The last bucket is open: only +Inf counts it.
  const std::string i = "uroce_engine_loop_idle_seconds";
  EXPECT_TRUE(has_sample(f, i + "_bucket{lcore=\"1\",le=\"0.536870911\"} 0"));
  EXPECT_TRUE(has_sample(f, i + "_bucket{lcore=\"1\",le=\"+Inf\"} 5"));
}

TEST(MetricsText_FullStatus, StageHistogramsAndCountsPerShard) {
  const Families f = families_of(metrics_text(full_status()).text);
  const std::string t = "uroce_stage_total_seconds";
  // 3000 ns is in bucket 12, 2048..4095 ns.
  EXPECT_TRUE(has_sample(f, t + "_bucket{device=\"uroce0\",shard=\"0\",le=\"0.000002047\"} 0"));
  EXPECT_TRUE(has_sample(f, t + "_bucket{device=\"uroce0\",shard=\"0\",le=\"0.000004095\"} 2"));
  EXPECT_TRUE(has_sample(f, t + "_count{device=\"uroce0\",shard=\"0\"} 2"));
  for (const StageKey& k : kStageKeys) {
    EXPECT_TRUE(has_sample(f, "uroce_stage_" +
                                  std::string(k.key.name.substr(0, k.key.name.size() - 3)) +
                                  "_seconds_count{device=\"uroce0\",shard=\"0\"} " +
                                  (k.key.name == "total_ns" ? "2" : "0")))
        << k.key.name;
  }
  EXPECT_TRUE(has_sample(f, "uroce_stage_recent{device=\"uroce0\",shard=\"0\"} 2"));
  EXPECT_TRUE(has_sample(f, "uroce_stage_untracked_total{device=\"uroce0\",shard=\"0\"} 6"));
}

// docs/grafana-uroce.json's queries name only families of the exposition.
TEST(MetricsText_GrafanaExample, UsesRealNames) {
  std::ifstream in(std::string(UROCE_SOURCE_ROOT) + "/docs/grafana-uroce.json");
  ASSERT_TRUE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const json dash = json::parse(ss.str());
  const Families f = families_of(metrics_text(full_status()).text);
  const std::regex name("uroce_[a-z_]+");
  std::size_t n = 0;
  for (const json& p : dash["panels"]) {
    for (const json& t : p["targets"]) {
      const std::string e = t["expr"].get<std::string>();
      for (auto it = std::sregex_iterator(e.begin(), e.end(), name); it != std::sregex_iterator();
           ++it) {
        std::string m = it->str();
        if (m.ends_with("_bucket")) m.resize(m.size() - 7);
        EXPECT_TRUE(f.type.contains(m)) << m;
        ++n;
      }
    }
  }
  EXPECT_GE(n, 10u);
}

// What was cut to fit one control message is no metric (uroce-ctl metrics
// says it in a comment).
TEST(MetricsText_Undescribed, CutMarkersAreNotMetrics) {
  const json j = json::parse(R"({"qps_truncated": true, "client_objects_truncated": true,
      "clients_omitted": 3, "clients": []})");
  const MetricsText m = metrics_text(j);
  EXPECT_TRUE(m.undescribed.empty()) << ::testing::PrintToString(m.undescribed);
  EXPECT_EQ(m.text.find("omitted"), std::string::npos) << m.text;
}

TEST(MetricsText_Undescribed, RenderedAsGaugeAndNamed) {
  const json j = json::parse(R"({"devices": [{"name": "uroce0",
      "counters": {"rx_frames": 3, "rx_new": 5}}], "extra": 1})");
  const MetricsText m = metrics_text(j);
  EXPECT_EQ(m.undescribed, (std::vector<std::string>{"devices[0].counters.rx_new", "extra"}));
  EXPECT_NE(m.text.find("# HELP uroce_device_rx_new status value devices[].counters.rx_new "
                        "(no list describes it)\n# TYPE uroce_device_rx_new gauge\n"
                        "uroce_device_rx_new{device=\"uroce0\"} 5\n"),
            std::string::npos)
      << m.text;
  EXPECT_NE(m.text.find("uroce_device_rx_frames_total{device=\"uroce0\"} 3\n"), std::string::npos);
}

TEST(MetricsText_Labels, ValuesEscaped) {
  const json j = json::parse(R"({"devices": [{"name": "a\"b\\c", "counters": {"rx_frames": 1}}]})");
  const MetricsText m = metrics_text(j);
  EXPECT_NE(m.text.find("uroce_device_rx_frames_total{device=\"a\\\"b\\\\c\"} 1\n"),
            std::string::npos)
      << m.text;
}

TEST(MetricsText_HelpAndType, OncePerFamilyBeforeItsSamples) {
  // Two devices: one family each for their samples.
  const json j = json::parse(R"({"devices": [{"name": "u0", "counters": {"rx_frames": 1}},
                                              {"name": "u1", "counters": {"rx_frames": 2}}]})");
  const std::string t = metrics_text(j).text;
  const std::string want =
      "# HELP uroce_device_rx_frames_total frames received from the port\n"
      "# TYPE uroce_device_rx_frames_total counter\n"
      "uroce_device_rx_frames_total{device=\"u0\"} 1\n"
      "uroce_device_rx_frames_total{device=\"u1\"} 2\n";
  EXPECT_NE(t.find(want), std::string::npos) << t;
}

TEST(MetricsText_NotAnObject, Empty) {
  EXPECT_EQ(metrics_text(json::array()).text, "");
  EXPECT_EQ(metrics_text(json()).text, "");
}

}  // namespace
}  // namespace uroce::daemon
