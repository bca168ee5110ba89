#include "apps/uroce-ctl/tables.h"

#include <gtest/gtest.h>

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
     "arp": {"tx_requests": 1, "drops": {}}}
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

TEST(RenderCounters, NonZeroFlattened) {
  const std::string s = render_counters(kStatus);
  EXPECT_NE(s.find("uroce0:"), std::string::npos);
  EXPECT_NE(s.find("rx_frames"), std::string::npos);
  EXPECT_NE(s.find("parse_errors.bad ICRC"), std::string::npos);
  EXPECT_NE(s.find("arp.tx_requests"), std::string::npos);
  EXPECT_EQ(s.find("rx_no_qp"), std::string::npos);  // zero: omitted
}

TEST(RenderQps, OneRowPerQp) {
  const std::string s = render_qps(kStatus);
  EXPECT_NE(s.find("RTS"), std::string::npos);
  EXPECT_NE(s.find("RETRANSMITS"), std::string::npos);
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 2);
}

TEST(RenderClients, CountsObjects) {
  const std::string s = render_clients(kStatus);
  EXPECT_NE(s.find("99"), std::string::npos);
  // pds 1, mrs 2, channels 0, cqs 1, srqs 0, ahs 0, qps 1
  EXPECT_NE(s.find("1    2         0    1     0    0    1"), std::string::npos) << s;
}

TEST(Render_MissingFields, Dashes) {
  const json j = json::parse(R"({"devices": [{"name": "x"}], "qps": [{}]})");
  EXPECT_NE(render_status(j).find("x       -"), std::string::npos) << render_status(j);
  EXPECT_NE(render_qps(j).find("-"), std::string::npos);
  EXPECT_EQ(render_clients(json::object()), render_clients(json::parse("{\"clients\": []}")));
}

}  // namespace
}  // namespace uroce::ctl_tool
