// The rdma_cm service's test fixture (test_cm_service.cpp,
// test_ucma_mcast.cpp): two fake devices whose QP1 MADs the test carries by
// hand, and ucma commands as librdmacm writes them.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <limits>
#include <vector>

#include "apps/uroced/cm_service.h"
#include "tests/apps/uroced/fake_device.h"

// Not in an anonymous namespace: both test files' TEST_F(Service, ...) must
// name one fixture class.
namespace uroce::daemon::testing {

inline constexpr std::uint32_t kIp0 = (10u << 24) | 1;
inline constexpr std::uint32_t kIp1 = (10u << 24) | 2;
inline constexpr TimeNs kLater = std::numeric_limits<TimeNs>::max() / 2;

template <class T>
inline ctl::CmCommandReq cmd(std::uint32_t op, const T& body, std::uint16_t out = 0) {
  ctl::CmCommandReq r{};
  r.cmd = op;
  r.in = sizeof(T);
  r.out = out;
  std::memcpy(r.body, &body, sizeof(T));
  return r;
}

inline sockaddr_in6 v4(std::uint32_t ip, std::uint16_t port) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(ip);
  in.sin_port = htons(port);
  sockaddr_in6 s{};
  std::memcpy(&s, &in, sizeof(in));
  return s;
}

struct Service : ::testing::Test {
  FakeDevice d0{"uroce0", 9000, 1};
  FakeDevice d1{"uroce1", 9000, 2};
  CmService cm{{&d0, &d1}};
  std::vector<int> fds;

  void SetUp() override {
    d0.resolvable = true;
    d1.resolvable = true;
  }
  void TearDown() override {
    for (int f : fds) close(f);
  }
  std::uint32_t open() {
    std::uint32_t file = 0;
    int fd = -1;
    EXPECT_EQ(cm.open_file(&file, &fd), 0);
    fds.push_back(fd);
    return file;
  }
  int run(std::uint32_t file, const ctl::CmCommandReq& r, ctl::CmCommandRep* rep = nullptr) {
    ctl::CmCommandRep scratch{};
    return cm.command(file, r, rep != nullptr ? rep : &scratch);
  }
  std::uint32_t create(std::uint32_t file, std::uint64_t uid, std::uint16_t ps = RDMA_PS_TCP,
                       std::uint8_t qp_type = IBV_QPT_RC) {
    rdma_ucm_create_id c{};
    c.uid = uid;
    c.response = 0x1000;
    c.ps = ps;
    c.qp_type = qp_type;
    ctl::CmCommandRep rep{};
    EXPECT_EQ(run(file, cmd(RDMA_USER_CM_CMD_CREATE_ID, c, 4), &rep), 0);
    EXPECT_EQ(rep.response_addr, 0x1000u);
    EXPECT_EQ(rep.resp_len, 4u);
    rdma_ucm_create_id_resp r;
    std::memcpy(&r, rep.resp, sizeof(r));
    return r.id;
  }
  rdma_ucm_event_resp event(std::uint32_t file) {
    rdma_ucm_get_event g{};
    g.response = 0x2000;
    ctl::CmCommandRep rep{};
    EXPECT_EQ(run(file, cmd(RDMA_USER_CM_CMD_GET_EVENT, g, sizeof(rdma_ucm_event_resp)), &rep), 0);
    rdma_ucm_event_resp e{};
    std::memcpy(&e, rep.resp, sizeof(e));
    return e;
  }
  // Carries the MADs each device sent to the other device's QP1.
  void pump() {
    for (auto& m : d0.gsi_out) {
      m.peer_ip = d0.config().ip;
      d1.gsi_in.push_back(m);
    }
    for (auto& m : d1.gsi_out) {
      m.peer_ip = d1.config().ip;
      d0.gsi_in.push_back(m);
    }
    d0.gsi_out.clear();
    d1.gsi_out.clear();
    cm.tick(0);
  }
  // A listener on uroce1 (file s) and a connected id on uroce0 (file c).
  struct Conn {
    std::uint32_t s = 0, c = 0, listener = 0, child = 0, id = 0;
  };
  // The passive side accepts with `resp` responder resources and initiator
  // depth `depth`.
  Conn connect(std::uint8_t resp = 0, std::uint8_t depth = 0) {
    Conn k;
    k.s = open();
    k.c = open();
    k.listener = create(k.s, 0xaaa);
    rdma_ucm_bind_ip b{};
    b.addr = v4(kIp1, 7000);
    b.id = k.listener;
    EXPECT_EQ(run(k.s, cmd(RDMA_USER_CM_CMD_BIND_IP, b)), 0);
    rdma_ucm_listen l{};
    l.id = k.listener;
    EXPECT_EQ(run(k.s, cmd(RDMA_USER_CM_CMD_LISTEN, l)), 0);
    k.id = create(k.c, 0xccc);
    rdma_ucm_resolve_ip ri{};
    ri.dst_addr = v4(kIp1, 7000);
    ri.id = k.id;
    EXPECT_EQ(run(k.c, cmd(RDMA_USER_CM_CMD_RESOLVE_IP, ri)), 0);
    cm.tick(0);
    EXPECT_EQ(event(k.c).event, kEvAddrResolved);
    rdma_ucm_resolve_route rr{};
    rr.id = k.id;
    EXPECT_EQ(run(k.c, cmd(RDMA_USER_CM_CMD_RESOLVE_ROUTE, rr)), 0);
    EXPECT_EQ(event(k.c).event, kEvRouteResolved);
    rdma_ucm_connect cn{};
    cn.id = k.id;
    cn.conn_param.qp_num = 0x11;
    cn.conn_param.responder_resources = 4;
    cn.conn_param.initiator_depth = 2;
    cn.conn_param.retry_count = 7;
    cn.conn_param.rnr_retry_count = 7;
    cn.conn_param.private_data_len = 3;
    std::memcpy(cn.conn_param.private_data, "abc", 3);
    EXPECT_EQ(run(k.c, cmd(RDMA_USER_CM_CMD_CONNECT, cn)), 0);
    EXPECT_EQ(d0.gsi_out.size(), 1u);  // the REQ leaves uroce0 for 10.0.0.2
    pump();
    const rdma_ucm_event_resp req = event(k.s);
    EXPECT_EQ(req.event, kEvConnectRequest);
    EXPECT_EQ(req.uid, 0xaaau);
    EXPECT_EQ(req.param.conn.qp_num, 0x11u);
    EXPECT_EQ(req.param.conn.responder_resources, 2);  // the peer's initiator depth
    EXPECT_EQ(std::memcmp(req.param.conn.private_data, "abc", 3), 0);
    k.child = req.id;
    rdma_ucm_accept a{};
    a.id = k.child;
    a.uid = 0xbbb;
    a.conn_param.qp_num = 0x22;
    a.conn_param.responder_resources = resp;
    a.conn_param.initiator_depth = depth;
    EXPECT_EQ(run(k.s, cmd(RDMA_USER_CM_CMD_ACCEPT, a)), 0);
    pump();
    const rdma_ucm_event_resp rep = event(k.c);
    EXPECT_EQ(rep.event, kEvConnectResponse);
    EXPECT_EQ(rep.uid, 0xcccu);
    EXPECT_EQ(rep.param.conn.qp_num, 0x22u);
    rdma_ucm_accept rtu{};
    rtu.id = k.id;
    EXPECT_EQ(run(k.c, cmd(RDMA_USER_CM_CMD_ACCEPT, rtu)), 0);
    pump();
    const rdma_ucm_event_resp est = event(k.s);
    EXPECT_EQ(est.event, kEvEstablished);
    EXPECT_EQ(est.uid, 0xbbbu);
    return k;
  }
  // DESTROY_ID of `id`: the events_reported it answers.
  std::uint32_t destroy_id(std::uint32_t file, std::uint32_t id) {
    rdma_ucm_destroy_id d{};
    d.response = 0x5000;
    d.id = id;
    ctl::CmCommandRep rep{};
    EXPECT_EQ(run(file, cmd(RDMA_USER_CM_CMD_DESTROY_ID, d, 4), &rep), 0);
    rdma_ucm_destroy_id_resp r;
    std::memcpy(&r, rep.resp, sizeof(r));
    return r.events_reported;
  }
  // INIT_QP_ATTR of `id` for `state`, 0 or the errno.
  int init_attr(std::uint32_t file, std::uint32_t id, std::uint32_t state, ib_uverbs_qp_attr* a) {
    rdma_ucm_init_qp_attr q{};
    q.response = 0x3000;
    q.id = id;
    q.qp_state = state;
    ctl::CmCommandRep rep{};
    const int rc =
        run(file, cmd(RDMA_USER_CM_CMD_INIT_QP_ATTR, q, sizeof(ib_uverbs_qp_attr)), &rep);
    std::memcpy(a, rep.resp, sizeof(*a));
    return rc;
  }
};

}  // namespace uroce::daemon::testing
