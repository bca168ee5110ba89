// Test support for the ClientSession tests (test_client_session.cpp and
// test_session_*.cpp, one per source file of the session): two raw clients
// of an in-process daemon over Vnic<SimPortIo> (sim_daemon.h), and helpers.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <vector>

#include "apps/uroced/client_session.h"
#include "apps/uroced/device_attr.h"
#include "datapath/shm/ring.h"
#include "tests/apps/uroced/sim_daemon.h"

namespace uroce::daemon {

using ctl::Op;
using testing::RawClient;
using testing::Reply;
using testing::SimDaemon;

// A second client that must keep getting answers whatever the first sends.
inline void expect_still_served(RawClient& other) {
  const Reply r = other.call(Op::kQueryPort, ctl::QueryPortReq{1, {}});
  ASSERT_TRUE(r.received);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.as<ctl::QueryPortRep>().attr.state, IBV_PORT_ACTIVE);
}

class ClientSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(d_.listen_rc(), 0);
    ASSERT_TRUE(a_.connected());
    ASSERT_TRUE(b_.connected());
    ASSERT_EQ(b_.hello("uroce1").status, 0);
  }

  SimDaemon d_;
  RawClient a_{d_.socket_path()};
  RawClient b_{d_.socket_path()};
};

// True when the daemon holds no copy of the pipe's write end any more: our
// read end sees end of file once the last writer is gone.
inline bool writer_gone(int read_end) {
  pollfd p{read_end, POLLIN, 0};
  if (poll(&p, 1, 2000) <= 0) return false;
  char c;
  return read(read_end, &c, 1) == 0;
}

// An AllocPd request with `n` copies of `fd`, past what ctl::send_msg
// allows, written with sendmsg directly.
inline bool send_with_fds(int sock, int n, int fd) {
  struct {
    ctl::MsgHeader h;
    ctl::AllocPdReq r;
  } m{};
  m.h = {ctl::kMagic, ctl::kVersion, static_cast<std::uint16_t>(Op::kAllocPd), sizeof(m), 77};
  iovec iov{&m, sizeof(m)};
  std::vector<char> control(CMSG_SPACE(sizeof(int) * static_cast<std::size_t>(n)));
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control.data();
  mh.msg_controllen = control.size();
  cmsghdr* c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) std::memcpy(CMSG_DATA(c) + i * sizeof(int), &fd, sizeof(int));
  return sendmsg(sock, &mh, 0) == static_cast<ssize_t>(sizeof(m));
}

// An RC QP of client `c` moved to INIT; 0 on failure.
inline std::uint32_t init_qp(RawClient& c) {
  const std::uint32_t pd = c.alloc_pd();
  ctl::CreateCqReq cr{};
  cr.cqe = 16;
  const std::uint32_t cq = c.call(Op::kCreateCq, cr).as<ctl::CreateCqRep>().cq_handle;
  ctl::CreateQpReq q{};
  q.pd_handle = pd;
  q.send_cq_handle = cq;
  q.recv_cq_handle = cq;
  q.qp_type = IBV_QPT_RC;
  q.cap = {4, 4, 1, 1, 0};
  Reply r = c.call(Op::kCreateQp, q);
  if (r.status != 0) return 0;
  const std::uint32_t qp = r.as<ctl::CreateQpRep>().qp_handle;
  ctl::ModifyQpReq m{};
  m.qp_handle = qp;
  m.attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  m.attr.qp_state = IBV_QPS_INIT;
  m.attr.port_num = 1;
  m.attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  return c.call(Op::kModifyQp, m).status == 0 ? qp : 0;
}

// INIT -> RTR toward ::ffff:`dip`, path MTU 1024.
inline ctl::ModifyQpReq to_rtr(std::uint32_t qp, const char* dip) {
  ctl::ModifyQpReq m{};
  m.qp_handle = qp;
  m.attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  m.attr.qp_state = IBV_QPS_RTR;
  m.attr.path_mtu = IBV_MTU_1024;
  m.attr.dest_qp_num = 0x123;
  m.attr.max_dest_rd_atomic = 1;
  m.attr.min_rnr_timer = 12;
  m.attr.ah_attr.is_global = 1;
  m.attr.ah_attr.port_num = 1;
  m.attr.ah_attr.grh.sgid_index = 1;
  m.attr.ah_attr.grh.hop_limit = 1;
  const auto ip = *wire::Ipv4Addr::parse(dip);
  std::uint8_t* g = m.attr.ah_attr.grh.dgid.raw;
  g[10] = 0xff;
  g[11] = 0xff;
  g[12] = static_cast<std::uint8_t>(ip.v >> 24);
  g[13] = static_cast<std::uint8_t>(ip.v >> 16);
  g[14] = static_cast<std::uint8_t>(ip.v >> 8);
  g[15] = static_cast<std::uint8_t>(ip.v);
  return m;
}

class ModifyQpTest : public ClientSessionTest {
 protected:
  void SetUp() override {
    ClientSessionTest::SetUp();
    ASSERT_EQ(a_.hello("uroce0").status, 0);
    qp_ = init_qp(a_);
    ASSERT_NE(qp_, 0u);
  }
  std::uint32_t qp_ = 0;
};

}  // namespace uroce::daemon
