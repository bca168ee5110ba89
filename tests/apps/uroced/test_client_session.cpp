// ClientSession (and the Server around it) against hostile and normal
// clients, in-process over Vnic<SimPortIo> (sim_daemon.h). Every bad input
// must get its exact error reply while a second client keeps being served.
#include "tests/apps/uroced/session_test_support.h"

namespace uroce::daemon {
namespace {

TEST_F(ClientSessionTest, Hello_ReportsDeviceAttributes) {
  const Reply r = a_.hello("uroce0");
  ASSERT_EQ(r.status, 0);
  ASSERT_EQ(r.h.op, static_cast<std::uint16_t>(Op::kHello));
  ASSERT_EQ(r.h.length, sizeof(ctl::MsgHeader) + sizeof(ctl::ReplyStatus) + sizeof(ctl::HelloRep));
  const auto rep = r.as<ctl::HelloRep>();
  EXPECT_STREQ(rep.device.fw_ver, "uroce " UROCE_VERSION);
  EXPECT_EQ(rep.device.vendor_id, 0xFFFFFFu);
  EXPECT_EQ(rep.device.phys_port_cnt, 1);
  EXPECT_EQ(rep.device.max_qp_wr, 16384);
  EXPECT_EQ(rep.device.atomic_cap, IBV_ATOMIC_HCA);
  const auto* g = reinterpret_cast<const std::uint8_t*>(&rep.device.node_guid);
  EXPECT_EQ(g[0], 0x00);  // 02 with the U/L bit flipped
  EXPECT_EQ(g[3], 0xff);
  EXPECT_EQ(g[4], 0xfe);
  EXPECT_EQ(g[7], 0x01);
  EXPECT_EQ(rep.device_index, 0u);
  EXPECT_EQ(rep.gid_table_len, 16u);
  // The engine thread of this daemon is not pinned: no CPU to yield to.
  EXPECT_EQ(rep.flags & ctl::kHelloEngineCpu, 0u);
}

TEST(ClientSession, Hello_NamesThePinnedEngineCpu) {
  SimDaemon d({1 * kNsPerMs, 300 * kNsPerMs}, 1);
  ASSERT_EQ(d.listen_rc(), 0);
  RawClient c{d.socket_path()};
  const Reply r = c.hello("uroce0");
  ASSERT_EQ(r.status, 0);
  const auto rep = r.as<ctl::HelloRep>();
  EXPECT_EQ(rep.flags & ctl::kHelloEngineCpu, ctl::kHelloEngineCpu);
  EXPECT_EQ(rep.engine_cpu, 1u);
}

TEST_F(ClientSessionTest, QueryPort_ActiveMtuFollowsEthernetMtu) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  Reply r = a_.call(Op::kQueryPort, ctl::QueryPortReq{1, {}});
  ASSERT_EQ(r.status, 0);
  auto attr = r.as<ctl::QueryPortRep>().attr;
  EXPECT_EQ(attr.active_mtu, IBV_MTU_4096);
  EXPECT_EQ(attr.max_mtu, IBV_MTU_4096);
  EXPECT_EQ(attr.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(attr.phys_state, 5);
  EXPECT_EQ(attr.gid_tbl_len, 16);
  r = b_.call(Op::kQueryPort, ctl::QueryPortReq{1, {}});
  EXPECT_EQ(r.as<ctl::QueryPortRep>().attr.active_mtu, IBV_MTU_1024);  // MTU 1500
  r = a_.call(Op::kQueryPort, ctl::QueryPortReq{2, {}});
  EXPECT_EQ(r.status, EINVAL);
}

TEST_F(ClientSessionTest, BeforeHello_Eproto) {
  const Reply r = a_.call(Op::kAllocPd, ctl::AllocPdReq{});
  EXPECT_EQ(r.status, EPROTO);
  EXPECT_EQ(r.h.op, static_cast<std::uint16_t>(Op::kAllocPd));
  EXPECT_EQ(r.h.seq, a_.last_seq());
  expect_still_served(b_);
  // The connection stays usable: Hello now works.
  EXPECT_EQ(a_.hello("uroce0").status, 0);
}

// Capture goes anywhere, as Status does; this daemon has no capture
// service (root gets EOPNOTSUPP, anyone else EPERM first), and the
// socket passed with it is not kept.
TEST_F(ClientSessionTest, Capture_BeforeHelloWithoutServiceRefused) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  ctl::CaptureReq req{};
  std::strcpy(req.device, "uroce0");
  const Reply r = a_.call(Op::kCapture, req, {sv[1]});
  close(sv[1]);
  EXPECT_EQ(r.status, geteuid() == 0 ? EOPNOTSUPP : EPERM);
  EXPECT_EQ(r.h.op, static_cast<std::uint16_t>(Op::kCapture));
  EXPECT_TRUE(writer_gone(sv[0]));
  close(sv[0]);
  EXPECT_EQ(a_.hello("uroce0").status, 0);
}

TEST_F(ClientSessionTest, SecondHello_Eproto) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  EXPECT_EQ(a_.hello("uroce1").status, EPROTO);
}

TEST_F(ClientSessionTest, Hello_BadDeviceOrFd) {
  EXPECT_EQ(a_.hello("uroce9").status, ENODEV);
  ctl::HelloReq unterminated;
  std::memset(unterminated.ibdev, 'x', sizeof(unterminated.ibdev));
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  EXPECT_EQ(a_.call(Op::kHello, unterminated, {p[1]}).status, EINVAL);
  // The read end of a pipe is not where events can be written.
  ctl::HelloReq ok{};
  std::strcpy(ok.ibdev, "uroce0");
  EXPECT_EQ(a_.call(Op::kHello, ok, {p[0]}).status, EINVAL);
  // Nor is a socket.
  EXPECT_EQ(a_.call(Op::kHello, ok, {a_.fd()}).status, EINVAL);
  close(p[0]);
  close(p[1]);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, Truncated_Ebadmsg) {
  const std::uint32_t magic = ctl::kMagic;
  ASSERT_TRUE(a_.send_raw(&magic, sizeof(magic)));
  const Reply r = a_.recv();
  EXPECT_EQ(r.status, EBADMSG);
  EXPECT_EQ(r.h.op, 0);
  EXPECT_EQ(r.h.seq, 0u);
  EXPECT_EQ(r.h.magic, ctl::kMagic);
  expect_still_served(b_);
  EXPECT_EQ(a_.hello("uroce0").status, 0);  // still connected
}

TEST_F(ClientSessionTest, WrongMagic_EprotonosupportAndClosed) {
  struct {
    ctl::MsgHeader h;
    ctl::AllocPdReq r;
  } m{};
  m.h = {0xdeadbeef, ctl::kVersion, static_cast<std::uint16_t>(Op::kAllocPd), sizeof(m), 7};
  ASSERT_TRUE(a_.send_raw(&m, sizeof(m)));
  const Reply r = a_.recv();
  EXPECT_EQ(r.status, EPROTONOSUPPORT);
  EXPECT_EQ(r.h.seq, 7u);
  EXPECT_TRUE(a_.recv().closed);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, WrongVersion_EprotonosupportAndClosed) {
  struct {
    ctl::MsgHeader h;
    ctl::AllocPdReq r;
  } m{};
  m.h = {ctl::kMagic, ctl::kVersion + 1, static_cast<std::uint16_t>(Op::kAllocPd), sizeof(m), 8};
  ASSERT_TRUE(a_.send_raw(&m, sizeof(m)));
  EXPECT_EQ(a_.recv().status, EPROTONOSUPPORT);
  EXPECT_TRUE(a_.recv().closed);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, LengthFieldMismatch_Ebadmsg) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  struct {
    ctl::MsgHeader h;
    ctl::AllocPdReq r;
  } m{};
  m.h = {ctl::kMagic, ctl::kVersion, static_cast<std::uint16_t>(Op::kAllocPd), sizeof(m) + 8, 9};
  ASSERT_TRUE(a_.send_raw(&m, sizeof(m)));
  const Reply r = a_.recv();
  EXPECT_EQ(r.status, EBADMSG);
  EXPECT_EQ(r.h.seq, 9u);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, WrongSizeForOp_Ebadmsg) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  // A consistent header around a body 8 bytes too long for AllocPd.
  struct {
    ctl::MsgHeader h;
    std::uint64_t body[2];
  } m{};
  m.h = {ctl::kMagic, ctl::kVersion, static_cast<std::uint16_t>(Op::kAllocPd), sizeof(m), 10};
  ASSERT_TRUE(a_.send_raw(&m, sizeof(m)));
  EXPECT_EQ(a_.recv().status, EBADMSG);
  // And one too short for CreateQp.
  m.h = {ctl::kMagic, ctl::kVersion, static_cast<std::uint16_t>(Op::kCreateQp), sizeof(m), 11};
  ASSERT_TRUE(a_.send_raw(&m, sizeof(m)));
  EXPECT_EQ(a_.recv().status, EBADMSG);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, UnknownOp_Eopnotsupp) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  ctl::MsgHeader h{ctl::kMagic, ctl::kVersion, 99, sizeof(ctl::MsgHeader), 12};
  ASSERT_TRUE(a_.send_raw(&h, sizeof(h)));
  const Reply r = a_.recv();
  EXPECT_EQ(r.status, EOPNOTSUPP);
  EXPECT_EQ(r.h.op, 99);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, TooManyFds_EbadmsgAndFdsClosed) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  // AllocPd carries no fd.
  EXPECT_EQ(a_.call(Op::kAllocPd, ctl::AllocPdReq{}, {p[1]}).status, EBADMSG);
  // RegMr carries exactly one.
  EXPECT_EQ(a_.call(Op::kRegMr, ctl::RegMrReq{}, {p[1], p[1]}).status, EBADMSG);
  EXPECT_EQ(a_.call(Op::kRegMr, ctl::RegMrReq{}).status, EBADMSG);
  close(p[1]);
  EXPECT_TRUE(writer_gone(p[0])) << "the daemon kept a refused fd";
  close(p[0]);
  // More fds than any message may carry: the kernel cuts the message.
  int q[2];
  ASSERT_EQ(pipe(q), 0);
  // 16 fds arrive (the most a message may carry) and are refused...
  ASSERT_TRUE(a_.send(Op::kAllocPd, ctl::AllocPdReq{}, std::vector<int>(16, q[1])));
  EXPECT_EQ(a_.recv().status, EBADMSG);
  // ...and 20 do not even fit: the kernel cuts the control data (MSG_CTRUNC).
  ASSERT_TRUE(send_with_fds(a_.fd(), 20, q[1]));
  const Reply r = a_.recv();
  EXPECT_EQ(r.status, EBADMSG);
  EXPECT_EQ(r.h.op, 0);
  close(q[1]);
  EXPECT_TRUE(writer_gone(q[0]));
  close(q[0]);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, OversizedMessage_Ebadmsg) {
  std::vector<std::byte> big(ctl::kMaxMessageBytes + 100);
  ctl::MsgHeader h{ctl::kMagic, ctl::kVersion, static_cast<std::uint16_t>(Op::kAllocPd),
                   static_cast<std::uint32_t>(big.size()), 13};
  std::memcpy(big.data(), &h, sizeof(h));
  ASSERT_TRUE(a_.send_raw(big.data(), big.size()));
  EXPECT_EQ(a_.recv().status, EBADMSG);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, AnotherClientsHandle_Enoent) {
  ASSERT_EQ(a_.hello("uroce1").status, 0);
  const std::uint32_t pd_b = b_.alloc_pd();
  ASSERT_NE(pd_b, 0u);
  EXPECT_EQ(a_.call(Op::kDeallocPd, ctl::DeallocPdReq{pd_b, 0}).status, ENOENT);
  ctl::CreateCqReq cq{};
  cq.cqe = 16;
  ASSERT_EQ(b_.call(Op::kCreateCq, cq).status, 0);
  // B's PD stays B's: B can still free it, once; afterwards it is gone for
  // B too.
  EXPECT_EQ(b_.call(Op::kDeallocPd, ctl::DeallocPdReq{pd_b, 0}).status, 0);
  EXPECT_EQ(b_.call(Op::kDeallocPd, ctl::DeallocPdReq{pd_b, 0}).status, ENOENT);
  // A handle never issued, and a handle of the wrong kind.
  EXPECT_EQ(a_.call(Op::kDeallocPd, ctl::DeallocPdReq{0xfffffff0u, 0}).status, ENOENT);
  const std::uint32_t pd_a = a_.alloc_pd();
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{pd_a, 0}).status, ENOENT);
}

TEST_F(ClientSessionTest, Status_JsonWithClientsAndDevices) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  const std::uint32_t pd = a_.alloc_pd();
  Reply r = a_.call(Op::kStatus, ctl::StatusReq{ctl::kStatusClients | ctl::kStatusQps, 0});
  ASSERT_EQ(r.status, 0);
  const auto j = nlohmann::json::parse(r.text());
  ASSERT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(j["devices"][0]["name"], "uroce0");
  EXPECT_EQ(j["devices"][1]["active_mtu"], 1024);
  EXPECT_EQ(j["daemon"]["clients"], 2);
  bool found = false;
  for (const auto& c : j["clients"]) {
    if (c["device"] == "uroce0") {
      found = true;
      EXPECT_EQ(c["pid"], getpid());
      EXPECT_EQ(c["objects"]["pds"], std::vector<std::uint32_t>{pd});
    }
  }
  EXPECT_TRUE(found);
  EXPECT_TRUE(j["qps"].is_array());
  EXPECT_EQ(a_.call(Op::kStatus, ctl::StatusReq{1u << 7, 0}).status, EINVAL);
}

TEST_F(ClientSessionTest, Status_NeedsNoHello) {
  RawClient c(d_.socket_path());
  const Reply r = c.call(Op::kStatus, ctl::StatusReq{0, 0});
  ASSERT_EQ(r.status, 0);
  EXPECT_FALSE(nlohmann::json::parse(r.text(), nullptr, false).is_discarded());
}

TEST_F(ClientSessionTest, Flood_StillServesOthers) {
  // Many bad requests in a row: each answered, the other client unaffected.
  for (int i = 0; i < 50; ++i) {
    ctl::MsgHeader h{ctl::kMagic, ctl::kVersion, 200, sizeof(ctl::MsgHeader),
                     static_cast<std::uint32_t>(i + 1)};
    ASSERT_TRUE(a_.send_raw(&h, sizeof(h)));
    const Reply r = a_.recv();
    ASSERT_EQ(r.status, EOPNOTSUPP);
    ASSERT_EQ(r.h.seq, static_cast<std::uint32_t>(i + 1));
  }
  expect_still_served(b_);
  Reply s = b_.call(Op::kStatus, ctl::StatusReq{ctl::kStatusClients, 0});
  const auto j = nlohmann::json::parse(s.text());
  bool seen = false;
  for (const auto& c : j["clients"]) {
    if (c["bad_requests"] == 50) seen = true;
  }
  EXPECT_TRUE(seen);
}

TEST_F(ClientSessionTest, Serve_StatusRightAfterAReply_ShowsItsEffect) {
  // The summary Status reads is refreshed before the reply goes out, so a
  // status asked for as soon as a reply arrived never shows the state
  // before it. The soak hit the race once (a rolled-back CQ still listed);
  // in-process the window is narrow, so this guards the ordering rather
  // than reproducing it every time.
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  auto pds_of_a = [&] {
    const auto j = nlohmann::json::parse(d_.server().status(ctl::kStatusClients));
    for (const auto& c : j["clients"]) {
      if (c["device"] == "uroce0") return c["objects"]["pds"].size();
    }
    return std::size_t{99};
  };
  for (int i = 0; i < 200; ++i) {
    const std::uint32_t pd = a_.alloc_pd();
    ASSERT_NE(pd, 0u);
    ASSERT_EQ(pds_of_a(), 1u) << "after AllocPd, try " << i;
    ASSERT_EQ(a_.call(Op::kDeallocPd, ctl::DeallocPdReq{pd, 0}).status, 0);
    ASSERT_EQ(pds_of_a(), 0u) << "after DeallocPd, try " << i;
  }
}

}  // namespace
}  // namespace uroce::daemon
