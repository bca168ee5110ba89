#include "apps/uroce-ctl/tables.h"

#include <gtest/gtest.h>

#include <sstream>

#include <algorithm>

namespace uroce::ctl_tool {
namespace {

using nlohmann::json;

const json kStatus = json::parse(R"({
  "daemon": {"version": "0.1.0", "pid": 7, "run_dir": "/run/u", "poll": "busy",
             "lcore": 1, "uptime_s": 2.25, "clients": 1},
  "devices": [
    {"name": "uroce0", "uverbs": 0, "port": "ring:p0", "mac": "02:00:00:00:00:01",
     "ipv4": "10.0.0.1", "mtu": 9000, "active_mtu": 4096,
     "objects": {"qps": 2, "cqs": 1, "srqs": 0, "mrs": 3, "ahs": 0},
     "counters": {"rx_frames": 10, "tx_frames": 12, "rx_no_qp": 0,
                  "parse_errors": {"bad ICRC": 2}},
     "arp": {"tx_requests": 1, "drops": {}},
     "port_stats": {"ipackets": 10, "imissed": 0, "mbufs": 8191},
     "port_xdp": {"tx_invalid_descs": 3, "rx_dropped": 0}}
  ],
  "qps": [{"device": "uroce0", "qpn": 17, "type": "RC", "state": "RTS", "client": 1,
           "dest_qpn": 18, "send_queue": 0, "recv_queue": 4,
           "engine": {"tx_packets": 5, "rx_packets": 6, "tx_bytes": 500, "rx_bytes": 600,
                      "bad_wqes": 0},
           "transport": {"tx_retransmits": 1}}],
  "clients": [{"id": 1, "pid": 99, "uid": 0, "device": "uroce0", "requests": 8,
               "bad_requests": 0,
               "objects": {"pds": [1], "mrs": [2, 3], "comp_channels": [], "cqs": [4],
                           "srqs": [], "ahs": [], "qps": [{"handle": 5, "qpn": 17}]}}]
})");

TEST(Table_Render, AlignedColumns) {
  Table t({"NAME", "N"});
  t.add({"a", "5"});
  t.add({"longer", "123"});
  EXPECT_EQ(t.render(), "NAME    N\na         5\nlonger  123\n");
}

TEST(RenderStatus, DaemonLineAndDeviceRow) {
  const std::string s = render_status(kStatus);
  EXPECT_NE(s.find("uroced 0.1.0 pid 7  run dir /run/u  poll busy  lcore 1  up 2.2 s  clients 1"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("uroce0"), std::string::npos);
  EXPECT_NE(s.find("02:00:00:00:00:01"), std::string::npos);
  EXPECT_NE(s.find("ring:p0"), std::string::npos);
}

TEST(RenderStatus, PortModeBesideAnAfXdpPort) {
  json j = kStatus;
  j["devices"][0]["port"] = "af_xdp:veth0";
  j["devices"][0]["port_mode"] = "copy";
  const std::string s = render_status(j);
  EXPECT_NE(s.find("af_xdp:veth0 (copy)\n"), std::string::npos) << s;
  EXPECT_EQ(render_status(kStatus).find("ring:p0 ("), std::string::npos);
}

TEST(RenderStatus, PortsTableFromPortInfo) {
  json j = kStatus;
  j["devices"][0]["port_info"] = {{"driver", "net_virtio"},
                                  {"rx_desc", 256},
                                  {"tx_desc", 256},
                                  {"queues", 4},
                                  {"rss", "pmd key"},
                                  {"reta_size", 128},
                                  {"rx_desc_max", 32768},
                                  {"tx_desc_max", 32768},
                                  {"max_mtu", 9698},
                                  {"rx_buf", 2048},
                                  {"rx_scatter", true},
                                  {"rx_offloads_offered", {"SCATTER"}},
                                  {"tx_offloads_offered", json::array()},
                                  {"rx_offloads", {"SCATTER"}},
                                  {"tx_offloads", json::array()}};
  const std::string s = render_status(j);
  EXPECT_NE(s.find("ports (as the PMD reported at open):\n"), std::string::npos) << s;
  EXPECT_NE(s.find("net_virtio"), std::string::npos) << s;
  EXPECT_NE(s.find("32768/32768"), std::string::npos) << s;
  EXPECT_NE(s.find("SCATTER\n"), std::string::npos) << s;
  // QUEUES and RSS follow DRIVER, in the header and in the row.
  EXPECT_NE(s.find("DRIVER      QUEUES  RSS      RX_DESC"), std::string::npos) << s;
  EXPECT_NE(s.find("net_virtio       4  pmd key      256"), std::string::npos) << s;
  // Devices without port_info (no DPDK port) print no ports table.
  EXPECT_EQ(render_status(kStatus).find("ports ("), std::string::npos);
}

TEST(RenderStatus, EngineLoopsPerLcore) {
  json j = kStatus;
  EXPECT_EQ(render_status(j).find("engine loops"), std::string::npos);
  std::vector<std::uint64_t> work(32, 0), idle(32, 0), over(32, 0);
  work[9] = 998;   // 256..511 ns
  work[13] = 1;    // 4096..8191 ns
  work[17] = 1;    // 65536..131071 ns
  idle[11] = 100;  // 1024..2047 ns
  over[10] = 5;    // 512..1023 ns
  j["daemon"]["engine_loops"] = {
      {{"lcore", 1}, {"work_ns", work}, {"idle_ns", idle}, {"oversleep_ns", over}}};
  const std::string s = render_status(j);
  EXPECT_NE(s.find("engine loops (iteration start to the next; after work, after an idle spin, "
                   "a sleep's lateness):\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("LCORE  WORK_P50  WORK_P99  WORK_P99.9  WORK_MAX  IDLE_P99.9  IDLE_MAX  "
                   "AWAY>=8us  AWAY>=65us  OVERSLEEP_P99  OVERSLEEP_MAX\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("    1  <512ns    <512ns    <8.2us      <131.1us  <2.0us      <2.0us    "
                   "        1           1  <1.0us         <1.0us\n"),
            std::string::npos)
      << s;
}

TEST(RenderStages, QuantilesAndTheSlowestPerShard) {
  json j = kStatus;
  EXPECT_EQ(render_stages(j),
            "no device keeps stage stamps (the device key stage_stamps, docs/tails.md)\n");
  std::vector<std::uint64_t> empty(32, 0), total(32, 0);
  total[12] = 990;  // 2048..4095 ns
  total[15] = 10;   // 16384..32767 ns
  j["devices"][0]["stages"] = {{{"shard", 0},
                                {"untracked", 0},
                                {"recent", 1000},
                                {"app_ns", empty},
                                {"seen_tx_ns", empty},
                                {"tx_rx_ns", empty},
                                {"rx_cqe_ns", empty},
                                {"total_ns", total},
                                {"slowest",
                                 {{"fraction", 0.01},
                                  {"count", 10},
                                  {"mean",
                                   {{"app_ns", 0},
                                    {"seen_tx_ns", 250},
                                    {"tx_rx_ns", 19500},
                                    {"rx_cqe_ns", 300},
                                    {"total_ns", 20050}}},
                                  {"max",
                                   {{"app_ns", 0},
                                    {"seen_tx_ns", 400},
                                    {"tx_rx_ns", 30000},
                                    {"rx_cqe_ns", 900},
                                    {"total_ns", 31000}}}}}}};
  const std::string s = render_stages(j);
  EXPECT_NE(s.find("uroce0 shard 0: 1000 tracked messages kept, 0 given up; the slowest 1 %: 10 "
                   "of them\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("STAGE       COUNT  P50     P99     P99.9    MAX      SLOWEST_MEAN  "
                   "SLOWEST_MAX\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("tx_rx_ns        0       0       0        0        0  19.50us       30.00us\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("total_ns     1000  <4.1us  <4.1us  <32.8us  <32.8us  20.05us       31.00us\n"),
            std::string::npos)
      << s;
}

TEST(RenderStatus, ShardsOfSeveralLcores) {
  json j = kStatus;
  j["daemon"]["lcore"] = 2;
  j["daemon"]["lcores"] = {2, 3};
  j["devices"][0]["shards"] = {{{"shard", 0},
                                {"clients", 1},
                                {"qps", 4},
                                {"queue_frames", 100},
                                {"rx_frames", 100},
                                {"tx_frames", 90},
                                {"rx_handoff", 7},
                                {"handed_in", 0}},
                               {{"shard", 1},
                                {"clients", 0},
                                {"qps", 0},
                                {"queue_frames", 0},
                                {"rx_frames", 5},
                                {"tx_frames", 0},
                                {"rx_handoff", 0},
                                {"handed_in", 7}}};
  const std::string s = render_status(j);
  EXPECT_NE(s.find("  lcores 2,3  up "), std::string::npos) << s;
  EXPECT_NE(s.find("shards (one per engine lcore; each client lives on one):\n"), std::string::npos)
      << s;
  EXPECT_NE(
      s.find("SHARD  LCORE  CLIENTS  QPS  QUEUE_RX  RX_FRAMES  TX_FRAMES  HANDED_OFF  HANDED_IN\n"),
      std::string::npos)
      << s;
  EXPECT_NE(s.find("uroce0      0      2        1    4       100        100         90           7 "
                   "         0\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("uroce0      1      3        0    0         0          5          0           0 "
                   "         7\n"),
            std::string::npos)
      << s;
  // One lcore: the daemon line as before, no shards table.
  const std::string one = render_status(kStatus);
  EXPECT_NE(one.find("  lcore "), std::string::npos) << one;
  EXPECT_EQ(one.find("shards ("), std::string::npos) << one;
}

TEST(RenderStatus, WorkersOnTheDaemonLine) {
  json j = kStatus;
  j["daemon"]["workers"] = {{"workers", 3}, {"idle", 2},    {"queued", 0},
                            {"started", 5}, {"retired", 2}, {"tasks", 40}};
  const std::string s = render_status(j);
  EXPECT_NE(s.find("clients 1  workers 3 (2 idle, 5 started)\n\n"), std::string::npos) << s;
}

TEST(RenderStatus, EngineLineUnderTheDaemonLine) {
  json j = kStatus;
  j["daemon"]["workers"] = {{"workers", 3}, {"idle", 2},    {"queued", 0},
                            {"started", 5}, {"retired", 2}, {"tasks", 40}};
  j["daemon"]["engine"] = {{"iterations", 900}, {"idle_iterations", 850}, {"sleeps", 0},
                           {"slept_ns", 0},     {"yields", 800},          {"yields_switched", 700},
                           {"calls", 12},       {"app_quiet_sleeps", 0}};
  const std::string s = render_status(j);
  EXPECT_NE(
      s.find("clients 1  workers 3 (2 idle, 5 started)\n"
             "engine: 900 iterations (850 idle), 0 sleeps, 800 yields (700 to another thread), 12 "
             "calls\n\n"),
      std::string::npos)
      << s;
}

TEST(RenderCounters, NonZeroFlattened) {
  const std::string s = render_counters(kStatus);
  EXPECT_NE(s.find("uroce0:"), std::string::npos);
  EXPECT_NE(s.find("rx_frames"), std::string::npos);
  EXPECT_NE(s.find("parse_errors.bad ICRC"), std::string::npos);
  EXPECT_NE(s.find("arp.tx_requests"), std::string::npos);
  EXPECT_EQ(s.find("rx_no_qp"), std::string::npos);  // zero: omitted
  EXPECT_NE(s.find("port.ipackets"), std::string::npos);
  EXPECT_NE(s.find("port.mbufs"), std::string::npos);
  EXPECT_EQ(s.find("port.imissed"), std::string::npos);
  EXPECT_NE(s.find("xdp.tx_invalid_descs"), std::string::npos);
  EXPECT_EQ(s.find("xdp.rx_dropped"), std::string::npos);
}

TEST(RenderQps, OneRowPerQp) {
  const std::string s = render_qps(kStatus);
  EXPECT_NE(s.find("RTS"), std::string::npos);
  EXPECT_NE(s.find("RETRANSMITS"), std::string::npos);
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 2);
}

// The RECOVERY column: go-back-N, selective repeat, and spraying with the
// paths avoided now; "-" for a QP that is not RC.
TEST(RenderQps, RecoveryColumn) {
  const json j = json::parse(R"({"qps": [
      {"device": "d", "qpn": 1, "type": "RC", "sr_peer": false, "sr_paths": 0, "sr_avoided": 0},
      {"device": "d", "qpn": 2, "type": "RC", "sr_peer": true, "sr_paths": 0, "sr_avoided": 0},
      {"device": "d", "qpn": 3, "type": "RC", "sr_peer": true, "sr_paths": 16, "sr_avoided": 3},
      {"device": "d", "qpn": 4, "type": "UD"}]})");
  const std::string s = render_qps(j);
  std::istringstream in(s);
  std::string line;
  std::vector<std::string> last;
  while (std::getline(in, line)) {
    const std::size_t end = line.find_last_not_of(' ');
    const std::size_t at = line.rfind("  ", end);
    last.push_back(line.substr(at == std::string::npos ? 0 : at + 2, end - at - 1));
  }
  ASSERT_EQ(last.size(), 5u) << s;
  EXPECT_EQ(last[0], "RECOVERY") << s;
  EXPECT_EQ(last[1], "gbn") << s;
  EXPECT_EQ(last[2], "sr") << s;
  EXPECT_EQ(last[3], "sr 16/3") << s;
  EXPECT_EQ(last[4], "-") << s;
}

TEST(RenderQps, DcStreamsDctsAndPool) {
  const json j = json::parse(R"({"devices": [{"name": "uroce0", "dc": {"pool": {
      "contexts": 4096, "open": 1, "bytes": 100, "counters": {"opened": 2, "busy": 0}}}}],
    "qps": [{"device": "uroce0", "qpn": 17, "type": "DCI", "state": "RTS",
             "dci": {"streams": [{"stream": 0, "bound": true, "dctn": 18, "conn": 99,
                                  "syn": false, "send_queue": 0,
                                  "counters": {"connects": 3, "wait_switch": 1}}]}},
            {"device": "uroce0", "qpn": 18, "type": "DCT", "state": "RTR",
             "dct": {"contexts": 1, "counters": {"rx_requests": 5, "key_violations": 0}}}]})");
  const std::string s = render_qps(j);
  EXPECT_NE(s.find("uroce0: DC pool 1 of 4096 contexts open, 100 bytes; opened=2\n"),
            std::string::npos)
      << s;
  // DEVICE DCI STREAM STATE BOUND DCTN CONN SYN SQ CONNECTS WAIT_SWITCH COUNTERS
  EXPECT_NE(s.find("uroce0   17       0  RTS    yes      18    99  no    0         3"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("connects=3 wait_switch=1"), std::string::npos) << s;
  EXPECT_NE(s.find("rx_requests=5"), std::string::npos) << s;
  // Without DC QPs or a pool, nothing of it.
  EXPECT_EQ(render_dc(kStatus), "");
}

TEST(RenderClients, CountsObjects) {
  const std::string s = render_clients(kStatus);
  EXPECT_NE(s.find("99"), std::string::npos);
  // pds 1, mrs 2, channels 0, cqs 1, srqs 0, ahs 0, qps 1
  EXPECT_NE(s.find("1    2         0    1     0    0    1"), std::string::npos) << s;
}

// A list cut to fit the reply counts what it left out, and the table says
// the lists were cut.
TEST(RenderClients, CountsOmittedHandles) {
  const json j = json::parse(R"({"client_objects_truncated": true, "clients": [{"id": 4,
    "pid": 9, "uid": 0, "device": "uroce0", "requests": 1, "bad_requests": 0, "objects": {
    "pds": [1], "mrs": [], "comp_channels": [], "cqs": [2, 3], "cqs_omitted": 1498,
    "srqs": [], "ahs": [], "qps": [{"handle": 5, "qpn": 17}], "qps_omitted": 1499}}]})");
  const std::string s = render_clients(j);
  EXPECT_NE(s.find("1    0         0  1500     0    0  1500"), std::string::npos) << s;
  EXPECT_NE(s.find("(more handles than one status message holds: the clients' lists "
                   "truncated)"),
            std::string::npos)
      << s;
  EXPECT_EQ(render_clients(json::parse(R"({"clients": []})")).find("truncated"), std::string::npos);
}

// Clients left out to fit the reply are counted under the table.
TEST(RenderClients, SaysHowManyClientsAreNotListed) {
  const json j = json::parse(R"({"client_objects_truncated": true, "clients_omitted": 212,
    "clients": [{"id": 4, "pid": 9, "uid": 0, "device": "uroce0", "requests": 1,
    "bad_requests": 0, "objects": {"pds": [], "pds_omitted": 1}}]})");
  const std::string s = render_clients(j);
  EXPECT_NE(s.find("(212 more clients than one status message holds: not listed)\n"),
            std::string::npos)
      << s;
  EXPECT_EQ(render_clients(json::parse(R"({"clients": [], "clients_omitted": 0})"))
                .find("not listed"),
            std::string::npos);
}

// uroce-ctl metrics names the clients a status reply left out (their
// series are missing) in a comment line, and adds nothing when none was.
TEST(RenderMetrics, NamesClientsLeftOutInAComment) {
  const std::string cut = render_metrics(json::parse(R"({"clients": [], "clients_omitted": 7})"));
  EXPECT_NE(cut.find("# uroce-ctl: the series of 7 clients are left out (more than one status "
                     "message holds; the metrics listener serves them all)\n"),
            std::string::npos)
      << cut;
  const std::string whole = render_metrics(json::parse(R"({"clients": []})"));
  EXPECT_EQ(whole.find("# uroce-ctl"), std::string::npos) << whole;
}

TEST(RenderPfc, PrioritiesBadInputAndTtl) {
  const json j = json::parse(R"({"devices": [{"name": "uroce0", "pfc": {
    "enabled_priorities": [3], "link_mbps": 10000, "tx_ttl": 64,
    "priorities": [{"priority": 3, "lossless": true, "xoff_sent": 4, "refresh_sent": 2,
                    "xon_sent": 4, "asserted_ns": 1500000, "pause_rx": 7, "resume_rx": 1,
                    "paused": true, "paused_ns": 2000000, "tx_held": 5,
                    "rx_while_paused": 9, "drop_stage_full": 1, "drop_hold_full": 2,
                    "stormed": false, "storms_detected": 0, "stormed_ns": 0}],
    "frames_sent": 10, "mac_control_rx": 9, "frames_parsed": 8,
    "rx_bad": {"Truncated": 1},
    "ttl": {"rx_checked": 100, "own_packets": 0, "replay_lower_ttl": 2,
            "outliers_low": 1, "outliers_high": 0, "replay_same_ttl": 3,
            "events_logged": 2, "events_suppressed": 1}}}]})");
  const std::string out = render_pfc(j);
  EXPECT_NE(out.find("uroce0: PFC on priorities 3  link 10000 Mb/s  tx_ttl 64\n"),
            std::string::npos)
      << out;
  // PRIO LOSSLESS XOFF_TX REFRESH_TX XON_TX PAUSING_MS PAUSE_RX RESUME_RX PAUSED
  // PAUSED_MS HELD RX_WHILE_PAUSED DROPS STORM STORMS STORM_MS
  EXPECT_NE(out.find("3  yes"), std::string::npos) << out;
  EXPECT_NE(out.find("1.500"), std::string::npos) << out;
  EXPECT_NE(out.find("2.000"), std::string::npos) << out;
  EXPECT_NE(out.find("PFC frames sent 10  MAC Control received 9 (parsed 8); bad: Truncated=1\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("replay_lower_ttl 2  outliers_low 1"), std::string::npos) << out;
  EXPECT_NE(out.find(
                "\n   3  yes             4           2       4       1.500         7          1  "
                "yes         2.000     5                9      3  no          0     0.000\n"),
            std::string::npos)
      << out;  // DROPS = 1 stage_full + 2 hold_full
}

TEST(RenderSched, ClassesWithTheirQpsAndPacedQps) {
  const json j = json::parse(R"({"devices": [{"name": "uroce0", "sched": {
    "isolation": "classes", "pace_granularity_ns": 1000,
    "classes": [{"class": 0, "mode": "weighted", "weight": 1, "rate_mbps": 0},
                {"class": 6, "mode": "strict", "weight": 1, "rate_mbps": 1000},
                {"class": 7, "mode": "strict", "weight": 1}]}}],
    "qps": [{"device": "uroce0", "qpn": 17, "type": "RC", "state": "RTS", "send_queue": 3,
             "sched": {"class": 6, "pinned": true, "paced": true, "rate_bps": 250000000,
                       "burst_bytes": 8192, "parks": 4, "paced_ns": 2500000,
                       "sent_bytes": 65536}},
            {"device": "uroce0", "qpn": 18, "type": "UD", "state": "RTS", "send_queue": 0,
             "sched": {"class": 0, "pinned": false, "paced": false, "rate_bps": 0,
                       "burst_bytes": 0, "parks": 0, "paced_ns": 0, "sent_bytes": 0}}]})");
  const std::string out = render_sched(j);
  EXPECT_EQ(out,
            "uroce0: isolation classes  pace granularity 1000 ns\n"
            "CLASS  MODE      WEIGHT  RATE_MBPS  QPS\n"
            "    0  weighted       1  -           18\n"
            "    6  strict         1       1000   17\n"
            "    7  strict         1  -          -\n"
            "\n"
            "DEVICE  QPN  TYPE  STATE  CLASS  FROM    RATE_MBPS  BURST  PARKS  PACED_MS  "
            "SENT_BYTES  SQ\n"
            "uroce0   17  RC    RTS        6  pinned    250.000   8192      4     2.500       "
            "65536   3\n"
            "uroce0   18  UD    RTS        0  dscp    -              0      0     0.000           "
            "0   0\n")
      << out;
}

TEST(RenderSched, AutoKindInTheFromColumn) {
  const json j = json::parse(R"({"devices": [{"name": "uroce0", "sched": {
    "isolation": "auto", "pace_granularity_ns": 1000, "classes": []}}],
    "qps": [{"device": "uroce0", "qpn": 17, "type": "RC", "state": "RTS", "send_queue": 1,
             "sched": {"class": 6, "pinned": false, "kind": "latency", "sent_bytes": 0}},
            {"device": "uroce0", "qpn": 18, "type": "RC", "state": "RTS", "send_queue": 0,
             "sched": {"class": 0, "pinned": false, "kind": "none", "sent_bytes": 0}},
            {"device": "uroce0", "qpn": 19, "type": "RC", "state": "RTS", "send_queue": 0,
             "sched": {"class": 2, "pinned": true, "kind": "bandwidth", "sent_bytes": 0}}]})");
  const std::string out = render_sched(j);
  EXPECT_NE(out.find("uroce0: isolation auto"), std::string::npos) << out;
  EXPECT_NE(out.find("  17  RC    RTS        6  auto:latency "), std::string::npos) << out;
  EXPECT_NE(out.find("  18  RC    RTS        0  auto:none "), std::string::npos) << out;
  // Pinned wins over the classifier's kind.
  EXPECT_NE(out.find("  19  RC    RTS        2  pinned "), std::string::npos) << out;
}

TEST(RenderSched, DcqcnDeviceLineAndPerQpTable) {
  const json j = json::parse(R"({"devices": [{"name": "uroce0", "sched": {
    "isolation": "off", "pace_granularity_ns": 1000, "classes": [],
    "dcqcn": {"enabled": true, "line_rate_bps": 40000000000, "cnp_dscp": 48,
              "cnp_interval_ns": 50000}}}],
    "qps": [{"device": "uroce0", "qpn": 17, "type": "RC", "state": "RTS", "send_queue": 3,
             "sched": {"class": 0, "pinned": false, "paced": true, "rate_bps": 0,
                       "burst_bytes": 4096, "parks": 4, "paced_ns": 2500000,
                       "sent_bytes": 65536, "cc_bps": 5000000000,
                       "dcqcn": {"rate_bps": 5000000000, "target_bps": 10000000000,
                                 "alpha": 512, "limited": true,
                                 "rp": {"cnps": 7, "decreases": 3}, "ce_packets": 40,
                                 "cnps_sent": 2, "cnps_suppressed": 38}}},
            {"device": "uroce0", "qpn": 18, "type": "RC", "state": "RTS", "send_queue": 0,
             "sched": {"class": 0, "pinned": false, "paced": false, "rate_bps": 0,
                       "burst_bytes": 0, "parks": 0, "paced_ns": 0, "sent_bytes": 0,
                       "cc_bps": 0,
                       "dcqcn": {"rate_bps": 40000000000, "target_bps": 40000000000,
                                 "alpha": 1024, "limited": false,
                                 "rp": {"cnps": 0, "decreases": 0}, "ce_packets": 0,
                                 "cnps_sent": 0, "cnps_suppressed": 0}}}]})");
  const std::string out = render_sched(j);
  EXPECT_NE(out.find("uroce0: DCQCN on  line rate 40000.000 Mb/s  CNP DSCP 48  CNP interval "
                     "50 us\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("DEVICE  QPN  DCQCN_MBPS  TARGET_MBPS  ALPHA  CE_RX  CNP_TX  CNP_RX  "
                     "DECREASES\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("uroce0   17    5000.000    10000.000  0.500     40       2       7  "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("uroce0   18  -           -            1.000      0       0       0  "),
            std::string::npos)
      << out;
}

TEST(RenderSched, NoDcqcnTableWithoutDcqcn) {
  const json j = json::parse(R"({"devices": [{"name": "uroce0", "sched": {
    "isolation": "off", "pace_granularity_ns": 1000, "classes": [],
    "dcqcn": {"enabled": false, "line_rate_bps": 0, "cnp_dscp": 48, "cnp_interval_ns": 50000}}}],
    "qps": [{"device": "uroce0", "qpn": 18, "type": "RC", "state": "RTS", "send_queue": 0,
             "sched": {"class": 0, "pinned": false, "paced": false, "rate_bps": 0,
                       "dcqcn": null}}]})");
  const std::string out = render_sched(j);
  EXPECT_EQ(out.find("DCQCN"), std::string::npos) << out;
}

TEST(RenderHoma, SettingsReceiverPacketsAndQps) {
  const json j = json::parse(R"({"devices": [
    {"name": "uroce0", "counters": {"homa_tx_grants": 40, "homa_rx_grants": 0,
       "homa_tx_cutoffs": 2, "homa_rx_cutoffs": 2, "homa_rx_mlen": 5, "homa_rx_bad": 0,
       "homa_tx_no_buffer": 0, "homa_grant_no_qp": 0, "homa_peers": 1,
       "homa_cutoffs_updates": 0},
     "homa": {"settings": {"enabled": true, "priorities": 8, "unsched_bytes": 60000,
                           "rtt_bytes": 60000, "overcommit": 4, "max_incoming": 400000,
                           "fifo_permille": 50, "resend_ns": 1000000,
                           "grant_timeout_ns": 4000000},
              "unsched_levels": 4,
              "receiver": {"tracked": 1, "outstanding": 60000, "generation": 1,
                           "counters": {"messages": 5, "completed": 4, "grants": 40,
                                        "resends": 0, "fifo_grants": 2,
                                        "granted_bytes": 4900000, "incoming_capped": 0,
                                        "table_full": 0, "bad_length": 0},
                           "cutoffs": [{"level": 0, "priority": 7, "max_length": 1024},
                                       {"level": 1, "priority": 6, "max_length": null}]}}},
    {"name": "uroce1", "homa": {"settings": {"enabled": false}, "receiver": null}}],
    "qps": [{"device": "uroce0", "qpn": 17, "type": "RC", "state": "RTS", "homa_peer": true,
             "homa": {"gated": 4, "mlen": 4, "wait_grant": 30, "grants": 38,
                      "grant_stale": 1, "timeouts": 0, "fallbacks": 0, "prio_capped": 2}},
            {"device": "uroce1", "qpn": 18, "type": "UD", "state": "RTS"}]})");
  const std::string out = render_homa(j);
  EXPECT_NE(out.find("uroce0: Homa-like scheduler on  priorities 8 (4 unscheduled)  "
                     "unscheduled 60000 B  RTT 60000 B  overcommit 4  max incoming 400000 B  "
                     "FIFO 50 permille  resend 1000 us  grant timeout 4000 us\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  receiver: messages 5 (1 now, 60000 B granted ahead)  completed 4  "
                     "grants 40 (0 resends, 2 FIFO)  granted 4900000 B"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  cutoffs (generation 1): level 0 prio 7 <= 1024 B, level 1 prio 6 any\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  packets: GRANT sent 40 received 0  CUTOFFS sent 2 received 2  "
                     "MLEN received 5"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("uroce1: Homa-like scheduler off\n"), std::string::npos) << out;
  // One column per sender counter (rc_homa.h's field list).
  EXPECT_NE(out.find("DEVICE  QPN  STATE  PEER  GATED  MLEN  WAIT_GRANT  GRANTS  GRANT_STALE  "
                     "TIMEOUTS  FALLBACKS  PRIO_CAPPED\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("uroce0   17  RTS    yes       4     4          30      38            1  "
                     "       0          0            2\n"),
            std::string::npos)
      << out;
  // UD QPs have no row.
  EXPECT_EQ(out.find("   18 "), std::string::npos) << out;
}

TEST(RenderSched, HomaLineWhenOn) {
  const json j = json::parse(R"({"devices": [{"name": "uroce0", "sched": {
    "isolation": "off", "pace_granularity_ns": 1000, "classes": [],
    "dcqcn": {"enabled": false}}, "homa": {"settings": {"enabled": true}}}], "qps": []})");
  EXPECT_NE(render_sched(j).find("uroce0: Homa-like scheduler on (uroce-ctl homa)\n"),
            std::string::npos)
      << render_sched(j);
}

TEST(Render_MissingFields, Dashes) {
  const json j = json::parse(R"({"devices": [{"name": "x"}], "qps": [{}]})");
  EXPECT_NE(render_status(j).find("x       -"), std::string::npos) << render_status(j);
  EXPECT_NE(render_qps(j).find("-"), std::string::npos);
  EXPECT_EQ(render_clients(json::object()), render_clients(json::parse("{\"clients\": []}")));
}

}  // namespace
}  // namespace uroce::ctl_tool
