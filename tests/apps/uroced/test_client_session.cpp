// ClientSession (and the Server around it) against hostile and normal
// clients, in-process over Vnic<SimPortIo> (sim_daemon.h). Every bad input
// must get its exact error reply while a second client keeps being served.
#include "apps/uroced/client_session.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <nlohmann/json.hpp>

#include <cerrno>

#include "apps/uroced/device_attr.h"
#include "datapath/shm/ring.h"
#include "tests/apps/uroced/sim_daemon.h"

namespace uroce::daemon {
namespace {

using ctl::Op;
using testing::RawClient;
using testing::Reply;
using testing::SimDaemon;

// A second client that must keep getting answers whatever the first sends.
void expect_still_served(RawClient& other) {
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
bool writer_gone(int read_end) {
  pollfd p{read_end, POLLIN, 0};
  if (poll(&p, 1, 2000) <= 0) return false;
  char c;
  return read(read_end, &c, 1) == 0;
}

// An AllocPd request with `n` copies of `fd`, past what ctl::send_msg
// allows, written with sendmsg directly.
bool send_with_fds(int sock, int n, int fd) {
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

TEST_F(ClientSessionTest, CreateCq_AbsurdCqe_Einval) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  ctl::CreateCqReq r{};
  r.cqe = 1u << 30;
  EXPECT_EQ(a_.call(Op::kCreateCq, r).status, EINVAL);
  r.cqe = 0;
  EXPECT_EQ(a_.call(Op::kCreateCq, r).status, EINVAL);
  r.cqe = kMaxCqe + 1;
  EXPECT_EQ(a_.call(Op::kCreateCq, r).status, EINVAL);
  r.cqe = 16;
  r.comp_vector = 1;  // one completion vector only
  EXPECT_EQ(a_.call(Op::kCreateCq, r).status, EINVAL);
  r.comp_vector = 0;
  r.channel_handle = 12345;  // no such channel
  EXPECT_EQ(a_.call(Op::kCreateCq, r).status, ENOENT);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, CreateCq_RingRegionSharedWithClient) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  ctl::CreateCqReq r{};
  r.cqe = 100;
  r.user_handle = 0x1234;
  Reply rep = a_.call(Op::kCreateCq, r);
  ASSERT_EQ(rep.status, 0);
  ASSERT_EQ(rep.fds.size(), 1u);
  const auto c = rep.as<ctl::CreateCqRep>();
  EXPECT_EQ(c.cqe, 127u);  // 128 slots, one kept empty
  EXPECT_EQ(c.log2_slots, 7u);
  EXPECT_EQ(1u << c.log2_elem_size, 64u);  // ib_uverbs_wc (48) rounded up
  EXPECT_EQ(c.ring_bytes, 384u + 128u * 64u);
  EXPECT_EQ(c.region_bytes % 4096, 0u);
  EXPECT_GE(c.region_bytes, c.ring_bytes + ctl::kCqNotifyBytes);
  void* m = mmap(nullptr, c.region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, rep.fds[0], 0);
  ASSERT_NE(m, MAP_FAILED);
  shm::RingGeometry g;
  EXPECT_EQ(shm::read_geometry(m, c.ring_bytes, &g), shm::RingError::kOk);
  EXPECT_EQ(g.log2_slots, c.log2_slots);
  munmap(m, c.region_bytes);
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{c.cq_handle, 0}).status, 0);
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{c.cq_handle, 0}).status, ENOENT);
}

TEST_F(ClientSessionTest, ResizeCq_NewRegion) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  ctl::CreateCqReq r{};
  r.cqe = 16;
  const std::uint32_t cq = a_.call(Op::kCreateCq, r).as<ctl::CreateCqRep>().cq_handle;
  Reply rep = a_.call(Op::kResizeCq, ctl::ResizeCqReq{cq, 64});
  ASSERT_EQ(rep.status, 0);
  ASSERT_EQ(rep.fds.size(), 1u);
  const auto c = rep.as<ctl::ResizeCqRep>();
  EXPECT_EQ(c.cq_handle, cq);
  EXPECT_EQ(c.cqe, 127u);
  EXPECT_EQ(a_.call(Op::kResizeCq, ctl::ResizeCqReq{cq, 0}).status, EINVAL);
  EXPECT_EQ(a_.call(Op::kResizeCq, ctl::ResizeCqReq{cq, 1u << 20}).status, EINVAL);
  EXPECT_EQ(b_.call(Op::kResizeCq, ctl::ResizeCqReq{cq, 64}).status, ENOENT);
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{cq, 0}).status, 0);
}

TEST_F(ClientSessionTest, Srq_CreateModifyQueryDestroy) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  ctl::CreateSrqReq r{};
  r.pd_handle = a_.alloc_pd();
  r.attr = {100, 2, 10};
  ctl::CreateSrqReq bad = r;
  bad.attr.max_wr = 0;
  EXPECT_EQ(a_.call(Op::kCreateSrq, bad).status, EINVAL);
  bad = r;
  bad.attr.srq_limit = 101;
  EXPECT_EQ(a_.call(Op::kCreateSrq, bad).status, EINVAL);
  bad = r;
  bad.attr.max_sge = 33;
  EXPECT_EQ(a_.call(Op::kCreateSrq, bad).status, EINVAL);
  Reply rep = a_.call(Op::kCreateSrq, r);
  ASSERT_EQ(rep.status, 0);
  ASSERT_EQ(rep.fds.size(), 1u);
  const auto s = rep.as<ctl::CreateSrqRep>();
  EXPECT_EQ(s.attr.max_wr, 127u);
  EXPECT_GE(s.attr.max_sge, 2u);
  EXPECT_EQ(s.attr.srq_limit, 10u);
  // Resizing is not supported (the ring went to the client); the limit is.
  EXPECT_EQ(a_.call(Op::kModifySrq, ctl::ModifySrqReq{s.srq_handle, IBV_SRQ_MAX_WR, {200, 0, 0}})
                .status,
            EINVAL);
  EXPECT_EQ(a_.call(Op::kModifySrq, ctl::ModifySrqReq{s.srq_handle, IBV_SRQ_LIMIT, {0, 0, 20}})
                .status,
            0);
  Reply q = a_.call(Op::kQuerySrq, ctl::QuerySrqReq{s.srq_handle, 0});
  ASSERT_EQ(q.status, 0);
  EXPECT_EQ(q.as<ctl::QuerySrqRep>().attr.srq_limit, 20u);
  EXPECT_EQ(b_.call(Op::kQuerySrq, ctl::QuerySrqReq{s.srq_handle, 0}).status, ENOENT);
  EXPECT_EQ(a_.call(Op::kDestroySrq, ctl::DestroySrqReq{s.srq_handle, 0}).status, 0);
  EXPECT_EQ(a_.call(Op::kDestroySrq, ctl::DestroySrqReq{s.srq_handle, 0}).status, ENOENT);
}

TEST_F(ClientSessionTest, ReregMr_AccessAndTranslation) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  const std::uint32_t pd = a_.alloc_pd();
  auto sealed_memfd = [] {
    const int fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    EXPECT_EQ(ftruncate(fd, 8192), 0);
    EXPECT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
    return fd;
  };
  ctl::RegMrReq r{};
  r.pd_handle = pd;
  r.access = IBV_ACCESS_LOCAL_WRITE;
  r.length = 100;
  r.map_len = 8192;
  r.map_offset = 16;
  int fd = sealed_memfd();
  Reply reg = a_.call(Op::kRegMr, r, {fd});
  close(fd);
  ASSERT_EQ(reg.status, 0);
  const auto mr = reg.as<ctl::RegMrRep>();
  ctl::ReregMrReq rr{};
  rr.mr_handle = mr.mr_handle;
  rr.flags = IBV_REREG_MR_CHANGE_ACCESS;
  rr.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
  Reply rep = a_.call(Op::kReregMr, rr);
  ASSERT_EQ(rep.status, 0);
  EXPECT_EQ(rep.as<ctl::ReregMrRep>().lkey, mr.lkey);
  rr.flags = 0;
  EXPECT_EQ(a_.call(Op::kReregMr, rr).status, EINVAL);
  rr.flags = 1u << 5;
  EXPECT_EQ(a_.call(Op::kReregMr, rr).status, EINVAL);
  rr.flags = IBV_REREG_MR_CHANGE_PD;
  rr.pd_handle = 555555;
  EXPECT_EQ(a_.call(Op::kReregMr, rr).status, ENOENT);
  rr.flags = IBV_REREG_MR_CHANGE_TRANSLATION;
  rr.length = 200;
  rr.map_len = 8192;
  rr.map_offset = 0;
  fd = sealed_memfd();
  rep = a_.call(Op::kReregMr, rr, {fd});
  close(fd);
  EXPECT_EQ(rep.status, 0);
  EXPECT_EQ(a_.call(Op::kDeregMr, ctl::DeregMrReq{mr.mr_handle, 0}).status, 0);
}

TEST_F(ClientSessionTest, CompChannel_InUseIsBusy) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  Reply ch = a_.call(Op::kCreateCompChannel, ctl::CreateCompChannelReq{}, {p[1]});
  close(p[1]);
  ASSERT_EQ(ch.status, 0);
  const std::uint32_t h = ch.as<ctl::CreateCompChannelRep>().channel_handle;
  ctl::CreateCqReq r{};
  r.cqe = 8;
  r.channel_handle = h;
  Reply cq = a_.call(Op::kCreateCq, r);
  ASSERT_EQ(cq.status, 0);
  EXPECT_EQ(a_.call(Op::kDestroyCompChannel, ctl::DestroyCompChannelReq{h, 0}).status, EBUSY);
  const std::uint32_t cqh = cq.as<ctl::CreateCqRep>().cq_handle;
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{cqh, 0}).status, 0);
  EXPECT_EQ(a_.call(Op::kDestroyCompChannel, ctl::DestroyCompChannelReq{h, 0}).status, 0);
  // The daemon held the only write end: the channel reads end of file now.
  EXPECT_TRUE(writer_gone(p[0]));
  close(p[0]);
}

TEST_F(ClientSessionTest, RegMr_BadMappings_Einval) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  const std::uint32_t pd = a_.alloc_pd();
  ctl::RegMrReq r{};
  r.pd_handle = pd;
  r.access = IBV_ACCESS_LOCAL_WRITE;
  r.length = 4096;
  r.map_len = 4096;
  r.map_offset = 1;  // offset + length past the mapping
  const int sealed = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_EQ(ftruncate(sealed, 8192), 0);
  ASSERT_EQ(fcntl(sealed, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
  EXPECT_EQ(a_.call(Op::kRegMr, r, {sealed}).status, EINVAL);
  r.map_offset = 0;
  r.access = IBV_ACCESS_REMOTE_WRITE;  // without LOCAL_WRITE
  EXPECT_EQ(a_.call(Op::kRegMr, r, {sealed}).status, EINVAL);
  r.access = IBV_ACCESS_LOCAL_WRITE;
  r.map_len = 4000;  // not whole pages
  EXPECT_EQ(a_.call(Op::kRegMr, r, {sealed}).status, EINVAL);
  r.map_len = 4096;
  // A memfd that can still shrink: refused (SIGBUS protection).
  const int unsealed = memfd_create("u", MFD_CLOEXEC);
  ASSERT_EQ(ftruncate(unsealed, 4096), 0);
  EXPECT_EQ(a_.call(Op::kRegMr, r, {unsealed}).status, EINVAL);
  // Not a memory file at all.
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  EXPECT_EQ(a_.call(Op::kRegMr, r, {p[0]}).status, EINVAL);
  // Another client's PD.
  r.pd_handle = b_.alloc_pd();
  EXPECT_EQ(a_.call(Op::kRegMr, r, {sealed}).status, ENOENT);
  r.pd_handle = pd;
  const Reply ok = a_.call(Op::kRegMr, r, {sealed});
  ASSERT_EQ(ok.status, 0);
  const auto mr = ok.as<ctl::RegMrRep>();
  EXPECT_NE(mr.lkey, 0u);
  EXPECT_EQ(mr.lkey, mr.rkey);
  EXPECT_EQ(a_.call(Op::kDeallocPd, ctl::DeallocPdReq{pd, 0}).status, EBUSY);
  EXPECT_EQ(a_.call(Op::kDeregMr, ctl::DeregMrReq{mr.mr_handle, 0}).status, 0);
  EXPECT_EQ(a_.call(Op::kDeallocPd, ctl::DeallocPdReq{pd, 0}).status, 0);
  close(sealed);
  close(unsealed);
  close(p[0]);
  close(p[1]);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, CreateQp_BadArguments) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  const std::uint32_t pd = a_.alloc_pd();
  ctl::CreateCqReq cr{};
  cr.cqe = 16;
  const std::uint32_t cq = a_.call(Op::kCreateCq, cr).as<ctl::CreateCqRep>().cq_handle;
  ctl::CreateQpReq q{};
  q.pd_handle = pd;
  q.send_cq_handle = cq;
  q.recv_cq_handle = cq;
  q.qp_type = IBV_QPT_RC;
  q.cap.max_send_wr = 16;
  q.cap.max_recv_wr = 16;
  q.cap.max_send_sge = 1;
  q.cap.max_recv_sge = 1;
  ctl::CreateQpReq bad = q;
  bad.qp_type = IBV_QPT_RAW_PACKET;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, EINVAL);
  bad = q;
  bad.cap.max_send_wr = 1u << 20;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, EINVAL);
  bad = q;
  bad.cap.max_send_sge = 33;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, EINVAL);
  bad = q;
  bad.cap.max_inline_data = 100000;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, EINVAL);
  bad = q;
  bad.recv_cq_handle = 777777;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, ENOENT);
  bad = q;
  bad.srq_handle = 777777;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, ENOENT);
  bad = q;
  bad.sq_sig_all = 2;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, EINVAL);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, CreateQp_RingsAndQpn) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  const std::uint32_t pd = a_.alloc_pd();
  ctl::CreateCqReq cr{};
  cr.cqe = 16;
  const std::uint32_t cq = a_.call(Op::kCreateCq, cr).as<ctl::CreateCqRep>().cq_handle;
  ctl::CreateQpReq q{};
  q.pd_handle = pd;
  q.send_cq_handle = cq;
  q.recv_cq_handle = cq;
  q.qp_type = IBV_QPT_RC;
  q.cap = {10, 20, 2, 1, 64};
  Reply r = a_.call(Op::kCreateQp, q);
  ASSERT_EQ(r.status, 0);
  ASSERT_EQ(r.fds.size(), 2u);
  const auto rep = r.as<ctl::CreateQpRep>();
  EXPECT_GE(rep.qpn, 2u);
  EXPECT_LE(rep.qpn, 0xffffffu);
  EXPECT_EQ(rep.cap.max_send_wr, 15u);
  EXPECT_EQ(rep.cap.max_recv_wr, 31u);
  EXPECT_GE(rep.cap.max_send_sge, 2u);
  EXPECT_GE(rep.cap.max_inline_data, 64u);
  EXPECT_GT(rep.sq_bytes, 0u);
  EXPECT_GT(rep.rq_bytes, 0u);
  // Query returns what was granted.
  Reply qq = a_.call(Op::kQueryQp, ctl::QueryQpReq{rep.qp_handle, 0});
  ASSERT_EQ(qq.status, 0);
  EXPECT_EQ(qq.as<ctl::QueryQpRep>().attr.qp_state, IBV_QPS_RESET);
  EXPECT_EQ(qq.as<ctl::QueryQpRep>().cap.max_send_wr, 15u);
  // The CQ is in use.
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{cq, 0}).status, EBUSY);
  EXPECT_EQ(a_.call(Op::kDestroyQp, ctl::DestroyQpReq{rep.qp_handle, 0}).status, 0);
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{cq, 0}).status, 0);
}

// An RC QP of client `c` moved to INIT; 0 on failure.
std::uint32_t init_qp(RawClient& c) {
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
ctl::ModifyQpReq to_rtr(std::uint32_t qp, const char* dip) {
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

TEST_F(ModifyQpTest, AvRules_Einval) {
  ctl::ModifyQpReq m = to_rtr(qp_, "10.0.0.2");
  m.attr.ah_attr.is_global = 0;
  EXPECT_EQ(a_.call(Op::kModifyQp, m).status, EINVAL);
  m = to_rtr(qp_, "10.0.0.2");
  m.attr.ah_attr.grh.dgid.raw[10] = 0;  // not ::ffff:a.b.c.d
  EXPECT_EQ(a_.call(Op::kModifyQp, m).status, EINVAL);
  m = to_rtr(qp_, "10.0.0.2");
  m.attr.ah_attr.grh.sgid_index = 0;  // the IPv6 link-local GID
  EXPECT_EQ(a_.call(Op::kModifyQp, m).status, EINVAL);
  m = to_rtr(qp_, "224.0.0.1");
  EXPECT_EQ(a_.call(Op::kModifyQp, m).status, EINVAL);
  m = to_rtr(qp_, "10.0.0.2");
  m.attr.path_mtu = static_cast<ibv_mtu>(6);
  EXPECT_EQ(a_.call(Op::kModifyQp, m).status, EINVAL);
  m = to_rtr(qp_, "10.0.0.2");
  m.attr_mask |= IBV_QP_ALT_PATH;
  EXPECT_EQ(a_.call(Op::kModifyQp, m).status, EINVAL);
  EXPECT_EQ(a_.call(Op::kModifyQp, ctl::ModifyQpReq{999999, IBV_QP_STATE, {}}).status, ENOENT);
  expect_still_served(b_);
}

TEST_F(ModifyQpTest, UnansweredArp_Ehostunreach) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(a_.call(Op::kModifyQp, to_rtr(qp_, "10.0.0.77")).status, EHOSTUNREACH);
  // The test daemon waits 300 ms (the real one 3 s).
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));
  expect_still_served(b_);
}

TEST_F(ModifyQpTest, ToRtr_ResolvesPeerOverTheLink) {
  ASSERT_EQ(a_.call(Op::kModifyQp, to_rtr(qp_, "10.0.0.2")).status, 0);
  Reply q = a_.call(Op::kQueryQp, ctl::QueryQpReq{qp_, 0});
  ASSERT_EQ(q.status, 0);
  const ibv_qp_attr attr = q.as<ctl::QueryQpRep>().attr;
  EXPECT_EQ(attr.qp_state, IBV_QPS_RTR);
  EXPECT_EQ(attr.dest_qp_num, 0x123u);
  EXPECT_EQ(attr.path_mtu, IBV_MTU_1024);
  EXPECT_EQ(attr.ah_attr.is_global, 1);
  EXPECT_EQ(attr.ah_attr.grh.sgid_index, 1);
  EXPECT_EQ(attr.ah_attr.grh.dgid.raw[15], 2);
}

TEST_F(ModifyQpTest, PathMtuAboveActive_Einval) {
  // uroce1 has Ethernet MTU 1500: active MTU 1024, so 2048 is refused (as
  // rxe does), before any ARP.
  const std::uint32_t qp = init_qp(b_);
  ASSERT_NE(qp, 0u);
  ctl::ModifyQpReq m = to_rtr(qp, "10.0.0.1");
  m.attr.path_mtu = IBV_MTU_2048;
  EXPECT_EQ(b_.call(Op::kModifyQp, m).status, EINVAL);
  m.attr.path_mtu = IBV_MTU_1024;
  EXPECT_EQ(b_.call(Op::kModifyQp, m).status, 0);
}

TEST_F(ClientSessionTest, CreateAh_ResolvesAndNumbers) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  ctl::CreateAhReq r{};
  r.pd_handle = a_.alloc_pd();
  r.attr = to_rtr(0, "10.0.0.2").attr.ah_attr;
  Reply rep = a_.call(Op::kCreateAh, r);
  ASSERT_EQ(rep.status, 0);
  const std::uint32_t ah = rep.as<ctl::CreateAhRep>().ah_handle;
  EXPECT_NE(ah, 0u);
  r.attr.is_global = 0;
  EXPECT_EQ(a_.call(Op::kCreateAh, r).status, EINVAL);
  EXPECT_EQ(b_.call(Op::kDestroyAh, ctl::DestroyAhReq{ah, 0}).status, ENOENT);
  EXPECT_EQ(a_.call(Op::kDestroyAh, ctl::DestroyAhReq{ah, 0}).status, 0);
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

TEST_F(ClientSessionTest, Disconnect_ReclaimsEverything) {
  {
    RawClient c(d_.socket_path());
    ASSERT_EQ(c.hello("uroce0").status, 0);
    const std::uint32_t pd = c.alloc_pd();
    ctl::CreateCqReq cr{};
    cr.cqe = 16;
    const std::uint32_t cq = c.call(Op::kCreateCq, cr).as<ctl::CreateCqRep>().cq_handle;
    ctl::CreateQpReq q{};
    q.pd_handle = pd;
    q.send_cq_handle = cq;
    q.recv_cq_handle = cq;
    q.qp_type = IBV_QPT_UD;
    q.cap = {4, 4, 1, 1, 0};
    ASSERT_EQ(c.call(Op::kCreateQp, q).status, 0);
    Reply s = b_.call(Op::kStatus, ctl::StatusReq{ctl::kStatusClients, 0});
    const auto j = nlohmann::json::parse(s.text());
    EXPECT_EQ(j["devices"][0]["objects"]["qps"], 1);
    EXPECT_EQ(j["devices"][0]["objects"]["cqs"], 1);
  }
  // The connection is gone: its QP, CQ and PD go with it.
  for (int i = 0; i < 200; ++i) {
    Reply s = b_.call(Op::kStatus, ctl::StatusReq{ctl::kStatusClients, 0});
    const auto j = nlohmann::json::parse(s.text());
    if (j["clients"].size() == 2u && j["devices"][0]["objects"]["qps"] == 0 &&
        j["devices"][0]["objects"]["cqs"] == 0) {
      SUCCEED();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "the closed client's objects were not reclaimed";
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

}  // namespace
}  // namespace uroce::daemon
