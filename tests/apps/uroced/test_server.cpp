#include "apps/uroced/server.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "tests/apps/uroced/fake_device.h"
#include "tests/apps/uroced/sim_daemon.h"

namespace uroce::daemon {
namespace {

using testing::FakeDevice;
using testing::RawClient;

class ServerTest : public ::testing::Test {
 protected:
  ServerTest() {
    char tmpl[] = "/tmp/uroce_test_server.XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/uroced.sock";
  }
  ~ServerTest() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string dir_, path_;
  FakeDevice dev_{"uroce0", 9000};
};

TEST_F(ServerTest, Listen_LiveDaemon_Eaddrinuse) {
  Server first({&dev_}, DaemonInfo{});
  std::string err;
  ASSERT_EQ(first.listen(path_, &err), 0) << err;
  ASSERT_EQ(first.start(nullptr), 0);
  Server second({&dev_}, DaemonInfo{});
  EXPECT_EQ(second.listen(path_, &err), EADDRINUSE);
  EXPECT_EQ(err, "address in use: another uroced serves " + path_ +
                     "; stop it or give this one another --run-dir");
  // The first still serves.
  RawClient c(path_);
  EXPECT_EQ(c.call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).status, 0);
}

TEST_F(ServerTest, Listen_StaleSocket_Replaced) {
  // A socket file nobody listens on, as a killed daemon leaves it.
  const int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strcpy(a.sun_path, path_.c_str());
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  close(s);
  Server srv({&dev_}, DaemonInfo{});
  std::string err;
  ASSERT_EQ(srv.listen(path_, &err), 0) << err;
  ASSERT_EQ(srv.start(nullptr), 0);
  RawClient c(path_);
  EXPECT_EQ(c.call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).status, 0);
}

TEST_F(ServerTest, Listen_NotASocket_Eexist) {
  std::ofstream(path_) << "x";
  Server srv({&dev_}, DaemonInfo{});
  std::string err;
  EXPECT_EQ(srv.listen(path_, &err), EEXIST);
  EXPECT_EQ(err, path_ + " exists and is not a socket: remove it or choose another run directory");
}

TEST_F(ServerTest, Stop_ClosesClientsAndRemovesSocket) {
  Server srv({&dev_}, DaemonInfo{});
  std::string err;
  ASSERT_EQ(srv.listen(path_, &err), 0);
  ASSERT_EQ(srv.start(nullptr), 0);
  RawClient c(path_);
  ASSERT_EQ(c.call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).status, 0);
  EXPECT_EQ(srv.client_count(), 1u);
  srv.stop();
  EXPECT_TRUE(c.recv().closed);
  EXPECT_FALSE(std::filesystem::exists(path_));
  srv.stop();  // idempotent
}

TEST_F(ServerTest, Status_CountsClientsAndDevices) {
  DaemonInfo info;
  info.version = "v";
  Server srv({&dev_}, info);
  std::string err;
  ASSERT_EQ(srv.listen(path_, &err), 0);
  ASSERT_EQ(srv.start(nullptr), 0);
  RawClient a(path_), b(path_);
  ASSERT_EQ(a.call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).status, 0);
  const auto r = b.call(ctl::Op::kStatus, ctl::StatusReq{ctl::kStatusClients, 0});
  const auto j = nlohmann::json::parse(r.text());
  EXPECT_EQ(j["daemon"]["clients"], 2);
  EXPECT_EQ(j["daemon"]["socket"], path_);
  EXPECT_EQ(j["clients"].size(), 2u);
  EXPECT_EQ(j["devices"][0]["name"], "uroce0");
}

TEST_F(ServerTest, AcceptPending_OverConnectionLimit_OnlyRootStatusAnswered) {
  Server srv({&dev_}, DaemonInfo{});
  Limits limits;
  limits.connections = 1;
  srv.set_limits(limits);
  std::string err;
  ASSERT_EQ(srv.listen(path_, &err), 0);
  ASSERT_EQ(srv.start(nullptr), 0);
  RawClient first(path_);
  ASSERT_EQ(first.call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).status, 0);
  // The second connection gets no thread: root's Status is answered
  // inline, anything else of root's is refused with EAGAIN, and any other
  // user's connection is closed at once.
  RawClient second(path_);
  RawClient third(path_);
  if (geteuid() == 0) {
    EXPECT_EQ(second.call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).status, 0);
    EXPECT_EQ(third.call(ctl::Op::kAllocPd, ctl::AllocPdReq{}).status, EAGAIN);
  } else {
    EXPECT_TRUE(second.recv().closed);
  }
  EXPECT_EQ(srv.client_count(), 1u);
  // The first connection is still served.
  EXPECT_EQ(first.call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).status, 0);
}

TEST_F(ServerTest, Adopt_SocketpairServedWithoutListening) {
  // Embedded mode: no socket file, connections handed in by the library.
  Server srv({&dev_}, DaemonInfo{});
  Limits limits;
  limits.connections = 1;
  srv.set_limits(limits);
  ASSERT_EQ(srv.start(nullptr), 0);
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  ASSERT_EQ(srv.adopt(sv[0]), 0);
  RawClient c(sv[1]);
  const auto r = c.call(ctl::Op::kStatus, ctl::StatusReq{ctl::kStatusClients, 0});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(nlohmann::json::parse(r.text())["daemon"]["clients"], 1);
  // Over the connection limit: refused, the descriptor closed.
  int sv2[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv2), 0);
  EXPECT_EQ(srv.adopt(sv2[0]), EAGAIN);
  RawClient refused(sv2[1]);
  EXPECT_TRUE(refused.recv().closed);
  srv.stop();
  int sv3[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv3), 0);
  EXPECT_EQ(srv.adopt(sv3[0]), ESHUTDOWN);
  RawClient late(sv3[1]);
  EXPECT_TRUE(late.recv().closed);
}

TEST_F(ServerTest, AcceptPending_ConnectionsOneAfterAnother_WorkersReused) {
  Server srv({&dev_}, DaemonInfo{});
  std::string err;
  ASSERT_EQ(srv.listen(path_, &err), 0);
  ASSERT_EQ(srv.start(nullptr), 0);
  RawClient asker(path_);
  ASSERT_EQ(asker.call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).status, 0);
  // 200 connections, each served, closed and its session over before the
  // next; with a thread per connection 201 threads would have been started.
  for (int i = 0; i < 200; ++i) {
    {
      RawClient c(path_);
      ASSERT_EQ(c.call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).status, 0);
    }
    for (int k = 0; k < 5000 && srv.client_count() > 1; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(srv.client_count(), 1u);
  }
  const auto j = nlohmann::json::parse(asker.call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).text());
  const auto& w = j["daemon"]["workers"];
  EXPECT_EQ(w["tasks"], 201);
  // The asker's worker and the one the others share. A session is over
  // (client_count) a few instructions before its worker waits again; a
  // connection accepted while that worker is preempted there starts one
  // more, which needs the preemption to last a whole connection: rare, and
  // each time leaves one more worker to reuse.
  EXPECT_LE(w["started"].get<int>(), 4) << w;
  EXPECT_GE(w["workers"].get<int>(), 2) << w;
}

TEST_F(ServerTest, StatusFor_NonRoot_OnlyOwnClientsRootAndGroupSeeAll) {
  Server srv({&dev_}, DaemonInfo{});
  std::string err;
  ASSERT_EQ(srv.listen(path_, &err), 0);
  ASSERT_EQ(srv.start(nullptr), 0);
  RawClient a(path_), b(path_);
  ASSERT_EQ(a.call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).status, 0);
  ASSERT_EQ(b.call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).status, 0);
  const uid_t me = geteuid();
  const uid_t other = me + 4242;
  auto clients_seen = [&](const ctl::PeerCred& asker) {
    return nlohmann::json::parse(srv.status_for(ctl::kStatusClients, asker))["clients"].size();
  };
  EXPECT_EQ(clients_seen({1, me, 100}), 2u);     // the clients' own user
  EXPECT_EQ(clients_seen({1, other, 100}), 0u);  // anyone else: nothing of theirs
  EXPECT_EQ(clients_seen({1, 0, 0}), 2u);        // root
  srv.set_status_group(100);
  EXPECT_EQ(clients_seen({1, other, 100}), 2u);  // the status group
  EXPECT_EQ(clients_seen({1, other, 101}), 0u);
}

// The metrics' view: the sums by QP class over every QP whoever asks (they
// name no client), the clients only to their user (or root), no QP lines;
// a peer without credentials (TCP) sees no client and no user's line.
TEST_F(ServerTest, MetricsStatus_ClassesForAllClientsForTheirUserOnly) {
  engine::QpStatus q;
  q.type = transport::QpType::kRc;
  q.client = 1;  // the first connection's id
  q.engine.tx_packets = 7;
  dev_.snap.qp_status.push_back(q);
  Server srv({&dev_}, DaemonInfo{});
  std::string err;
  ASSERT_EQ(srv.listen(path_, &err), 0);
  ASSERT_EQ(srv.start(nullptr), 0);
  RawClient a(path_);
  ASSERT_EQ(a.call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).status, 0);
  const uid_t me = geteuid();
  const ctl::PeerCred mine{1, me, 100};
  const nlohmann::json own = nlohmann::json::parse(srv.metrics_status(&mine));
  ASSERT_EQ(own["qp_classes"].size(), 1u);
  EXPECT_EQ(own["qp_classes"][0]["qps"], 1);
  EXPECT_EQ(own["qp_classes"][0]["engine"]["tx_packets"], 7);
  ASSERT_EQ(own["clients"].size(), 1u);
  EXPECT_EQ(own["clients"][0]["qp_engine"]["tx_packets"], 7);
  EXPECT_FALSE(own.contains("qps"));
  const ctl::PeerCred other{1, me + 4242, 100};
  const nlohmann::json theirs = nlohmann::json::parse(srv.metrics_status(&other));
  EXPECT_EQ(theirs["qp_classes"].size(), 1u);
  EXPECT_EQ(theirs["clients"].size(), 0u);
  const nlohmann::json anon = nlohmann::json::parse(srv.metrics_status(nullptr));
  EXPECT_EQ(anon["qp_classes"].size(), 1u);
  EXPECT_EQ(anon["clients"].size(), 0u);
  EXPECT_EQ(anon["daemon"]["users"].size(), 0u);
  EXPECT_FALSE(anon["daemon"].contains("qp_classes_omitted"));
  // Over the limit the sums are left out (reading every QP's status at each
  // scrape would cost the engine lcore more the more QPs there are).
  dev_.snap.qps = Server::kMetricsQpLimit + 1;
  const nlohmann::json many = nlohmann::json::parse(srv.metrics_status(nullptr));
  EXPECT_FALSE(many.contains("qp_classes"));
  EXPECT_EQ(many["daemon"]["qp_classes_omitted"], Server::kMetricsQpLimit + 1);
}

// A few hundred clients: a Status reply keeps the first that fit one
// message and counts the rest (it was refused with EMSGSIZE before), and
// the metrics listener's body, which has no such bound, keeps them all.
TEST_F(ServerTest, MetricsStatus_KeepsEveryClientAStatusReplyLeavesOut) {
  Server srv({&dev_}, DaemonInfo{});
  std::string err;
  ASSERT_EQ(srv.listen(path_, &err), 0);
  ASSERT_EQ(srv.start(nullptr), 0);
  constexpr std::size_t kClients = 250;  // the default limit is 256
  std::vector<std::unique_ptr<RawClient>> conns;
  for (std::size_t i = 0; i < kClients; ++i) {
    conns.push_back(std::make_unique<RawClient>(path_));
    ASSERT_EQ(conns.back()->call(ctl::Op::kStatus, ctl::StatusReq{0, 0}).status, 0) << i;
  }
  EXPECT_EQ(conns[0]->call(ctl::Op::kStatus, ctl::StatusReq{ctl::kStatusClients, 0}).status, 0);
  const ctl::PeerCred root{1, 0, 0};
  const nlohmann::json cut = nlohmann::json::parse(srv.status_for(ctl::kStatusClients, root));
  ASSERT_TRUE(cut.contains("clients_omitted")) << cut.dump().size();
  EXPECT_GT(cut["clients_omitted"].get<std::size_t>(), 0u);
  EXPECT_EQ(cut["clients"].size() + cut["clients_omitted"].get<std::size_t>(), kClients);
  const nlohmann::json all = nlohmann::json::parse(srv.metrics_status(&root));
  EXPECT_EQ(all["clients"].size(), kClients);
  EXPECT_FALSE(all.contains("clients_omitted"));
  EXPECT_FALSE(all.contains("client_objects_truncated"));
}

// Reads one async record from `fd` within `ms`; false on timeout.
bool read_async(int fd, ib_uverbs_async_event_desc* d, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, ms) != 1) return false;
  return read(fd, d, sizeof(*d)) == static_cast<ssize_t>(sizeof(*d));
}

TEST_F(ServerTest, LinkChange_PortEventsToTheDevicesClientsAndQueryPortState) {
  FakeDevice other{"uroce1", 9000, 2};
  Server srv({&dev_, &other}, DaemonInfo{});
  std::string err;
  ASSERT_EQ(srv.listen(path_, &err), 0);
  ASSERT_EQ(srv.start(nullptr), 0);
  RawClient a(path_), b(path_);
  ASSERT_EQ(a.hello("uroce0").status, 0);
  ASSERT_EQ(b.hello("uroce1").status, 0);

  dev_.link = false;
  ib_uverbs_async_event_desc d{};
  ASSERT_TRUE(read_async(a.async_fd(), &d, 2000));
  EXPECT_EQ(d.event_type, static_cast<std::uint32_t>(IBV_EVENT_PORT_ERR));
  EXPECT_EQ(d.element, 1u);  // the port number
  auto q = a.call(ctl::Op::kQueryPort, ctl::QueryPortReq{1, {}});
  ASSERT_EQ(q.status, 0);
  EXPECT_EQ(q.as<ctl::QueryPortRep>().attr.state, IBV_PORT_DOWN);

  dev_.link = true;
  ASSERT_TRUE(read_async(a.async_fd(), &d, 2000));
  EXPECT_EQ(d.event_type, static_cast<std::uint32_t>(IBV_EVENT_PORT_ACTIVE));
  q = a.call(ctl::Op::kQueryPort, ctl::QueryPortReq{1, {}});
  EXPECT_EQ(q.as<ctl::QueryPortRep>().attr.state, IBV_PORT_ACTIVE);
  // The other device's client heard nothing.
  EXPECT_FALSE(read_async(b.async_fd(), &d, 300));
}

TEST(SocketIsLive, NoFileNoListener) {
  EXPECT_FALSE(socket_is_live("/tmp/uroce_no_such_socket_at_all"));
}

}  // namespace
}  // namespace uroce::daemon
