// The `port` string (config_values.cpp, parse_port): each form, and the
// exact message for each kind of bad af_xdp port; daemon.metrics_listen
// (parse_metrics_listen): each form, and the refusal of any address that
// is not loopback.
#include <gtest/gtest.h>

#include <string>

#include "apps/uroced/config.h"
#include "apps/uroced/config_values.h"

namespace uroce::daemon::config_detail {
namespace {

std::string error_of(const std::string& s) {
  PortSpec p;
  return parse_port(s, "device[0].port", &p);
}

// Queue 0 alone, and no preferred busy polling (busy_budget=0).
TEST(ParsePort_AfXdp, DefaultsToQueueZeroOnly) {
  PortSpec p;
  ASSERT_EQ(parse_port("af_xdp:veth0", "k", &p), "");
  EXPECT_EQ(p.kind, PortKind::kAfXdp);
  EXPECT_EQ(p.name, "veth0");
  EXPECT_EQ(p.args, "iface=veth0,start_queue=0,queue_count=1,busy_budget=0");
  EXPECT_EQ(p.first_queue, 0u);
  EXPECT_EQ(p.queue_count, 1u);
}

TEST(ParsePort_AfXdp, QueueAndCount) {
  PortSpec p;
  ASSERT_EQ(parse_port("af_xdp:ens5,queue=2,count=4", "k", &p), "");
  EXPECT_EQ(p.name, "ens5");
  EXPECT_EQ(p.args, "iface=ens5,start_queue=2,queue_count=4,busy_budget=0");
  ASSERT_EQ(parse_port("af_xdp:ens5,count=2,queue=1,busy_budget=64", "k", &p), "");
  EXPECT_EQ(p.args, "iface=ens5,start_queue=1,queue_count=2,busy_budget=64");
}

TEST(ParsePort_AfXdp, BadInterfaceName) {
  const std::string why =
      ": the interface name must be 1..15 bytes without '/', ':', ',', '=' or spaces";
  EXPECT_EQ(error_of("af_xdp:"), "device[0].port: \"af_xdp:\"" + why);
  EXPECT_EQ(error_of("af_xdp:a234567890123456"),
            "device[0].port: \"af_xdp:a234567890123456\"" + why);
  EXPECT_EQ(error_of("af_xdp:a/b"), "device[0].port: \"af_xdp:a/b\"" + why);
  EXPECT_EQ(error_of("af_xdp:,queue=1"), "device[0].port: \"af_xdp:,queue=1\"" + why);
}

TEST(ParsePort_AfXdp, BadOptions) {
  EXPECT_EQ(error_of("af_xdp:v0,zerocopy=1"),
            "device[0].port: \"af_xdp:v0,zerocopy=1\": \"zerocopy\" is not an af_xdp option "
            "(expected queue=Q, count=N or busy_budget=B)");
  EXPECT_EQ(error_of("af_xdp:v0,count=0"),
            "device[0].port: \"af_xdp:v0,count=0\": count must be an integer in 1..1024");
  EXPECT_EQ(error_of("af_xdp:v0,queue=x"),
            "device[0].port: \"af_xdp:v0,queue=x\": queue must be an integer in 0..1024");
  EXPECT_EQ(error_of("af_xdp:v0,queue="),
            "device[0].port: \"af_xdp:v0,queue=\": queue must be an integer in 0..1024");
}

// Two devices on interface v0 with the given af_xdp ports.
DaemonConfig two_af_xdp(const std::string& a, const std::string& b) {
  DaemonConfig cfg;
  cfg.devices.resize(2);
  for (int i = 0; i < 2; ++i) {
    DeviceConfig& d = cfg.devices[i];
    d.name = "uroce" + std::to_string(i);
    d.mac = wire::MacAddr{{0x02, 0, 0, 0, 0, static_cast<std::uint8_t>(i + 1)}};
    d.ipv4 = wire::Ipv4Addr{0x0a000001u + static_cast<std::uint32_t>(i)};
    EXPECT_EQ(set_port(i == 0 ? a : b, "k", &d), "");
  }
  return cfg;
}

TEST(CheckUnique_AfXdp, DistinctQueuesOfOneInterface) {
  EXPECT_EQ(check_unique(two_af_xdp("af_xdp:v0", "af_xdp:v0,queue=1")), "");
  EXPECT_EQ(check_unique(two_af_xdp("af_xdp:v0,count=2", "af_xdp:v0,queue=2,count=2")), "");
  EXPECT_EQ(check_unique(two_af_xdp("af_xdp:v0", "af_xdp:v1")), "");
}

TEST(CheckUnique_AfXdp, OverlappingQueuesRefused) {
  EXPECT_EQ(check_unique(two_af_xdp("af_xdp:v0,count=2", "af_xdp:v0,queue=1")),
            "device[1].port: \"af_xdp:v0,queue=1\": queues 1..1 of v0 overlap device[0]'s (0..1)");
  EXPECT_EQ(check_unique(two_af_xdp("af_xdp:v0", "af_xdp:v0")),
            "device[1].port: \"af_xdp:v0\" is already the port of device[0]");
  EXPECT_EQ(check_unique(two_af_xdp("af_xdp:v0", "af_xdp:v0,queue=0")),
            "device[1].port: \"af_xdp:v0,queue=0\": queues 0..0 of v0 overlap device[0]'s (0..0)");
}

TEST(ParsePort_OtherForms, RingPciVdev) {
  PortSpec p;
  ASSERT_EQ(parse_port("ring:p0", "k", &p), "");
  EXPECT_EQ(p.kind, PortKind::kRing);
  ASSERT_EQ(parse_port("0000:03:00.0", "k", &p), "");
  EXPECT_EQ(p.kind, PortKind::kPci);
  ASSERT_EQ(parse_port("net_af_xdp0,iface=v0", "k", &p), "");
  EXPECT_EQ(p.kind, PortKind::kVdev);
  EXPECT_EQ(p.args, "iface=v0");
}

std::string listen_error(const std::string& s) {
  MetricsListen m;
  return parse_metrics_listen(s, "daemon.metrics_listen", &m);
}

TEST(ParseMetricsListen_Forms, UnixIpv4Ipv6AndOff) {
  MetricsListen m;
  ASSERT_EQ(parse_metrics_listen("unix:/run/uroce/metrics.sock", "k", &m), "");
  EXPECT_EQ(m.kind, MetricsListen::Kind::kUnix);
  EXPECT_EQ(m.path, "/run/uroce/metrics.sock");
  ASSERT_EQ(parse_metrics_listen("127.0.0.1:9464", "k", &m), "");
  EXPECT_EQ(m.kind, MetricsListen::Kind::kTcp4);
  EXPECT_EQ(m.host, "127.0.0.1");
  EXPECT_EQ(m.port, 9464);
  ASSERT_EQ(parse_metrics_listen("127.3.2.1:1", "k", &m), "");  // all of 127/8 is loopback
  EXPECT_EQ(m.kind, MetricsListen::Kind::kTcp4);
  ASSERT_EQ(parse_metrics_listen("[::1]:65535", "k", &m), "");
  EXPECT_EQ(m.kind, MetricsListen::Kind::kTcp6);
  EXPECT_EQ(m.host, "::1");
  EXPECT_EQ(m.port, 65535);
  EXPECT_EQ(m.text, "[::1]:65535");
  ASSERT_EQ(parse_metrics_listen("", "k", &m), "");
  EXPECT_EQ(m.kind, MetricsListen::Kind::kOff);
}

TEST(ParseMetricsListen_NotLoopback, Refused) {
  EXPECT_EQ(listen_error("10.224.0.1:9464"),
            "daemon.metrics_listen: \"10.224.0.1:9464\" is not a loopback address (the metrics "
            "name clients: expected unix:PATH, 127.0.0.1:PORT or [::1]:PORT)");
  EXPECT_EQ(listen_error("0.0.0.0:9464"),
            "daemon.metrics_listen: \"0.0.0.0:9464\" is not a loopback address (the metrics "
            "name clients: expected unix:PATH, 127.0.0.1:PORT or [::1]:PORT)");
  EXPECT_EQ(listen_error("[::]:9464"),
            "daemon.metrics_listen: \"[::]:9464\" is not a loopback address (the metrics "
            "name clients: expected unix:PATH, 127.0.0.1:PORT or [::1]:PORT)");
}

TEST(ParseMetricsListen_Malformed, ExactMessages) {
  EXPECT_EQ(listen_error("localhost:9464"),
            "daemon.metrics_listen: \"localhost:9464\" is not unix:PATH, 127.0.0.1:PORT or "
            "[::1]:PORT");
  EXPECT_EQ(listen_error("::1:9464"),
            "daemon.metrics_listen: \"::1:9464\" is not unix:PATH, 127.0.0.1:PORT or "
            "[::1]:PORT");
  EXPECT_EQ(listen_error("9464"),
            "daemon.metrics_listen: \"9464\" is not unix:PATH, 127.0.0.1:PORT or [::1]:PORT");
  EXPECT_EQ(listen_error("127.0.0.1:0"),
            "daemon.metrics_listen: \"127.0.0.1:0\": the port must be 1..65535");
  EXPECT_EQ(listen_error("127.0.0.1:65536"),
            "daemon.metrics_listen: \"127.0.0.1:65536\": the port must be 1..65535");
  EXPECT_EQ(listen_error("127.0.0.1:"),
            "daemon.metrics_listen: \"127.0.0.1:\": the port must be 1..65535");
  EXPECT_EQ(listen_error("unix:metrics.sock"),
            "daemon.metrics_listen: \"unix:metrics.sock\" must name an absolute path "
            "(unix:/run/uroce/metrics.sock)");
  EXPECT_EQ(listen_error("unix:/" + std::string(107, 'm')),
            "daemon.metrics_listen: \"unix:/" + std::string(107, 'm') +
                "\" is too long (a socket path has at most 107 bytes)");
}

}  // namespace
}  // namespace uroce::daemon::config_detail
