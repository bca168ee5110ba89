#include "verbs-provider/ctl_client.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "tests/verbs-provider/fake_daemon.h"

namespace uroce::provider {
namespace {

using testing::FakeServer;
using testing::Reply;
using testing::Request;

int open_fd_count() {
  DIR* d = opendir("/proc/self/fd");
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// Blocks until the server finished with every earlier request (closing the
// fds it sent): one more exchange, which these servers answer with no fds.
void sync_server(CtlClient& c) {
  ctl::DeallocPdReq req{};
  c.call<ctl::Op::kDeallocPd>(req, nullptr);
}

int memfd() {
  shm::SharedRegion r;
  if (!shm::SharedRegion::create("t", 4096, &r).ok()) std::abort();
  return ::dup(r.fd());
}

// A client connected to a server answering every request with `reply`.
struct Rig {
  explicit Rig(std::function<Reply(const Request&)> h) : server(std::move(h)) {
    client.adopt(server.take_client());
  }
  FakeServer server;
  CtlClient client;
};

int alloc_pd(CtlClient& c, std::uint32_t* handle = nullptr) {
  ctl::AllocPdReq req{};
  ctl::AllocPdRep rep{};
  const int rc = c.call<ctl::Op::kAllocPd>(req, &rep);
  if (handle != nullptr) *handle = rep.pd_handle;
  return rc;
}

Reply pd_reply(std::uint32_t h = 42) {
  ctl::AllocPdRep rep{};
  rep.pd_handle = h;
  return Reply::of(rep);
}

TEST(CtlClientCall_Ok, ReplyBodyIsCopiedOut) {
  Rig rig([](const Request& r) {
    EXPECT_EQ(r.op, ctl::Op::kAllocPd);
    EXPECT_EQ(r.body.size(), sizeof(ctl::AllocPdReq));
    return pd_reply(42);
  });
  std::uint32_t h = 0;
  EXPECT_EQ(alloc_pd(rig.client, &h), 0);
  EXPECT_EQ(h, 42u);
  EXPECT_FALSE(rig.client.dead());
}

TEST(CtlClientCall_Ok, NoReplyOpAndRequestFds) {
  Rig rig([](const Request& r) {
    EXPECT_EQ(r.op, ctl::Op::kCreateCompChannel);
    EXPECT_EQ(r.fds.size(), 1u);
    ctl::CreateCompChannelRep rep{};
    rep.channel_handle = 9;
    return Reply::of(rep);
  });
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ctl::CreateCompChannelReq req{};
  ctl::CreateCompChannelRep rep{};
  const int fds[1] = {p[1]};
  EXPECT_EQ(rig.client.call<ctl::Op::kCreateCompChannel>(req, &rep, fds), 0);
  EXPECT_EQ(rep.channel_handle, 9u);
  close(p[0]);
  close(p[1]);
}

TEST(CtlClientCall_Ok, ReplyFdsAreHandedToTheCaller) {
  Rig rig([](const Request&) {
    ctl::CreateCqRep rep{};
    rep.cq_handle = 5;
    return Reply::of(rep, {memfd()});
  });
  ctl::CreateCqReq req{};
  ctl::CreateCqRep rep{};
  int fd = -1;
  ASSERT_EQ(rig.client.call<ctl::Op::kCreateCq>(req, &rep, {}, {&fd, 1}, 1), 0);
  struct stat st {};
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  close(fd);
}

// Runs `f` with RLIMIT_NOFILE's soft limit at 0: no new descriptor can be
// had, as in a client at its fd limit (the fds already open stay usable).
template <class F>
void without_new_fds(F f) {
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit none = old;
  none.rlim_cur = 0;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &none), 0);
  f();
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
}

// Only Hello's (and CmOpen's) reply carries an fd: its connection is
// closed by the caller, so nothing is undone on the socket.
TEST(CtlClientCall_FdLimit, UndeliverableReplyFdsGiveEmfile) {
  const int arena = memfd();  // made before the limit: the server needs no new fd
  std::vector<ctl::Op> seen;
  Rig rig([&](const Request& r) {
    seen.push_back(r.op);
    if (r.op == ctl::Op::kDeallocPd) return Reply::ok();  // sync_server
    ctl::HelloRep rep{};
    return Reply::of(rep, {arena});
  });
  const int before = open_fd_count();
  ctl::HelloReq req{};
  ctl::HelloRep rep{};
  int fd = -1;
  int rc = 0;
  without_new_fds([&] { rc = rig.client.call<ctl::Op::kHello>(req, &rep, {}, {&fd, 1}, 1); });
  EXPECT_EQ(rc, EMFILE);
  EXPECT_EQ(fd, -1);
  EXPECT_EQ(seen, (std::vector<ctl::Op>{ctl::Op::kHello}));
  // Nothing leaked on our side; the server closed `arena` once it was sent.
  sync_server(rig.client);
  EXPECT_EQ(open_fd_count(), before - 1);
  EXPECT_FALSE(rig.client.dead());
}

// The refusal notice (protocol.h) of a connection the daemon has no thread
// or descriptor for.
std::vector<std::byte> refusal_notice(int status) {
  const ctl::MsgHeader h{ctl::kMagic, ctl::kVersion, ctl::kRefusedOp,
                         sizeof(ctl::MsgHeader) + sizeof(ctl::ReplyStatus), 0};
  const ctl::ReplyStatus st{status, 0};
  std::vector<std::byte> m(sizeof(h) + sizeof(st));
  std::memcpy(m.data(), &h, sizeof(h));
  std::memcpy(m.data() + sizeof(h), &st, sizeof(st));
  return m;
}

TEST(CtlClientCall_Refused, NoticeBeforeTheRequestGivesItsStatus) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  // The daemon sends the notice and closes before the client's Hello.
  ASSERT_TRUE(ctl::send_msg(sv[1], refusal_notice(EMFILE)).ok());
  ::close(sv[1]);
  CtlClient client;
  client.adopt(sv[0]);
  ctl::HelloReq req{};
  ctl::HelloRep rep{};
  int fd = -1;
  EXPECT_EQ(client.call<ctl::Op::kHello>(req, &rep, {}, {&fd, 1}, 1), EMFILE);
  EXPECT_TRUE(client.dead());
  EXPECT_EQ(alloc_pd(client), EIO);
}

// The daemon closed with something of ours unread: the kernel reports
// ECONNRESET first, the notice is still queued behind it.
TEST(CtlClientCall_Refused, NoticeBehindAResetGivesItsStatus) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  const std::byte early[4] = {};
  ASSERT_TRUE(ctl::send_msg(sv[0], early).ok());
  ASSERT_TRUE(ctl::send_msg(sv[1], refusal_notice(ENFILE)).ok());
  ::close(sv[1]);
  CtlClient client;
  client.adopt(sv[0]);
  EXPECT_EQ(alloc_pd(client), ENFILE);
  EXPECT_TRUE(client.dead());
}

TEST(CtlClientCall_Refused, NoticeInPlaceOfTheReplyGivesItsStatus) {
  Rig rig([](const Request&) {
    Reply r = Reply::error(EAGAIN);
    r.tamper = [](std::vector<std::byte>& m) { m = refusal_notice(EAGAIN); };
    return r;
  });
  EXPECT_EQ(alloc_pd(rig.client), EAGAIN);
  EXPECT_TRUE(rig.client.dead());
}

TEST(CtlClientCall_Refused, ClosedWithoutNoticeGivesEio) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  ::close(sv[1]);
  CtlClient client;
  client.adopt(sv[0]);
  EXPECT_EQ(alloc_pd(client), EIO);
}

TEST(CtlClientCall_FdLimit, ErrorReplyNeedsNoRollBack) {
  std::vector<ctl::Op> seen;
  Rig rig([&](const Request& r) {
    seen.push_back(r.op);
    return Reply::error(ENOMEM);
  });
  ctl::CreateQpReq req{};
  ctl::CreateQpRep rep{};
  int fds[2] = {-1, -1};
  int rc = 0;
  without_new_fds([&] { rc = rig.client.call<ctl::Op::kCreateQp>(req, &rep, {}, fds, 2); });
  EXPECT_EQ(rc, ENOMEM);
  EXPECT_EQ(seen, (std::vector<ctl::Op>{ctl::Op::kCreateQp}));
}

TEST(CtlClientCall_Status, DaemonErrnoIsReturned) {
  Rig rig([](const Request&) { return Reply::error(ENOENT); });
  EXPECT_EQ(alloc_pd(rig.client), ENOENT);
  EXPECT_FALSE(rig.client.dead());
}

TEST(CtlClientCall_Status, ErrorWithFdsGivesStatusAndClosesThem) {
  Rig rig([](const Request& q) {
    if (q.op == ctl::Op::kDeallocPd) return Reply::ok();
    Reply r = Reply::error(EINVAL);
    r.fds = {memfd()};
    r.fds_with_error = true;
    return r;
  });
  const int before = open_fd_count();
  EXPECT_EQ(alloc_pd(rig.client), EINVAL);
  sync_server(rig.client);
  EXPECT_EQ(open_fd_count(), before);
}

TEST(CtlClientCall_Status, NegativeStatusGivesEproto) {
  Rig rig([](const Request&) { return Reply::error(-5); });
  EXPECT_EQ(alloc_pd(rig.client), EPROTO);
}

TEST(CtlClientCall_Status, ErrorStatusWithABodyGivesEproto) {
  Rig rig([](const Request&) {
    Reply r = Reply::error(EINVAL);
    r.tamper = [](std::vector<std::byte>& m) {
      m.resize(m.size() + 8);
      ctl::MsgHeader h;
      std::memcpy(&h, m.data(), sizeof(h));
      h.length = static_cast<std::uint32_t>(m.size());
      std::memcpy(m.data(), &h, sizeof(h));
    };
    return r;
  });
  EXPECT_EQ(alloc_pd(rig.client), EPROTO);
}

// Each of these breaks one rule of protocol.h in an otherwise good reply.
void header_field(std::vector<std::byte>& m, std::size_t off, std::uint32_t v, std::size_t n) {
  std::memcpy(m.data() + off, &v, n);
}

TEST(CtlClientCall_Malformed, BadMagicVersionOpSeqLengthGiveEproto) {
  const std::vector<std::function<void(std::vector<std::byte>&)>> breaks = {
      [](auto& m) { header_field(m, offsetof(ctl::MsgHeader, magic), 0x1234, 4); },
      [](auto& m) { header_field(m, offsetof(ctl::MsgHeader, version), ctl::kVersion + 1, 2); },
      [](auto& m) {
        header_field(m, offsetof(ctl::MsgHeader, op),
                     static_cast<std::uint16_t>(ctl::Op::kDeallocPd), 2);
      },
      [](auto& m) {
        std::uint32_t seq;
        std::memcpy(&seq, m.data() + offsetof(ctl::MsgHeader, seq), 4);
        header_field(m, offsetof(ctl::MsgHeader, seq), seq + 1, 4);
      },
      [](auto& m) { header_field(m, offsetof(ctl::MsgHeader, length), 7, 4); },
  };
  for (std::size_t i = 0; i < breaks.size(); ++i) {
    Rig rig([&](const Request&) {
      Reply r = pd_reply();
      r.tamper = breaks[i];
      return r;
    });
    EXPECT_EQ(alloc_pd(rig.client), EPROTO) << "break " << i;
    EXPECT_FALSE(rig.client.dead());
  }
}

TEST(CtlClientCall_Malformed, ShortAndLongBodiesGiveEproto) {
  for (int delta : {-4, +4, +1000}) {
    Rig rig([&](const Request&) {
      Reply r = pd_reply();
      r.tamper = [delta](std::vector<std::byte>& m) {
        m.resize(static_cast<std::size_t>(static_cast<int>(m.size()) + delta));
        header_field(m, offsetof(ctl::MsgHeader, length), static_cast<std::uint32_t>(m.size()), 4);
      };
      return r;
    });
    EXPECT_EQ(alloc_pd(rig.client), EPROTO) << delta;
  }
}

TEST(CtlClientCall_Malformed, ShorterThanAHeaderGivesEproto) {
  Rig rig([](const Request&) {
    Reply r = pd_reply();
    r.tamper = [](std::vector<std::byte>& m) { m.resize(10); };
    return r;
  });
  EXPECT_EQ(alloc_pd(rig.client), EPROTO);
}

TEST(CtlClientCall_Fds, MissingReplyFdGivesEproto) {
  Rig rig([](const Request&) {
    ctl::CreateCqRep rep{};
    return Reply::of(rep);
  });
  ctl::CreateCqReq req{};
  ctl::CreateCqRep rep{};
  int fd = -1;
  EXPECT_EQ(rig.client.call<ctl::Op::kCreateCq>(req, &rep, {}, {&fd, 1}, 1), EPROTO);
  EXPECT_EQ(fd, -1);
}

TEST(CtlClientCall_Fds, SurplusReplyFdsGiveEprotoAndAreClosed) {
  Rig rig([](const Request& q) {
    if (q.op == ctl::Op::kDeallocPd) return Reply::ok();
    ctl::AllocPdRep rep{};
    return Reply::of(rep, {memfd(), memfd()});
  });
  const int before = open_fd_count();
  EXPECT_EQ(alloc_pd(rig.client), EPROTO);
  sync_server(rig.client);
  EXPECT_EQ(open_fd_count(), before);
}

TEST(CtlClientCall_Fds, MoreFdsThanTheProtocolCarriesAreClosed) {
  Rig rig([](const Request& q) {
    if (q.op == ctl::Op::kDeallocPd) return Reply::ok();
    ctl::CreateCqRep rep{};
    std::vector<int> fds;
    for (int i = 0; i < ctl::kMaxFds + 2; ++i) fds.push_back(memfd());
    return Reply::of(rep, fds);
  });
  const int before = open_fd_count();
  ctl::CreateCqReq req{};
  ctl::CreateCqRep rep{};
  int fd = -1;
  EXPECT_EQ(rig.client.call<ctl::Op::kCreateCq>(req, &rep, {}, {&fd, 1}, 1), EPROTO);
  sync_server(rig.client);
  EXPECT_EQ(open_fd_count(), before);
}

TEST(CtlClientCall_Dead, HangUpGivesEioAndStaysDead) {
  Rig rig([](const Request&) { return pd_reply(); });
  ASSERT_EQ(alloc_pd(rig.client), 0);
  rig.server.hang_up();
  EXPECT_EQ(alloc_pd(rig.client), EIO);
  EXPECT_TRUE(rig.client.dead());
  const auto ops_before = rig.server.ops().size();
  EXPECT_EQ(alloc_pd(rig.client), EIO);
  EXPECT_EQ(rig.server.ops().size(), ops_before);  // nothing more was sent
}

TEST(CtlClientCall_Dead, MarkDeadFailsCallsWithoutSending) {
  Rig rig([](const Request&) { return pd_reply(); });
  rig.client.mark_dead();
  EXPECT_EQ(alloc_pd(rig.client), EIO);
  EXPECT_TRUE(rig.server.ops().empty());
}

TEST(CtlClientCall_Dead, NotConnectedGivesEio) {
  CtlClient c;
  EXPECT_EQ(alloc_pd(c), EIO);
}

TEST(CtlClientCall_Args, OversizedReplyOrFdCountGivesEinval) {
  Rig rig([](const Request&) { return pd_reply(); });
  std::byte big[CtlClient::kMaxReplyBody + 1];
  ctl::AllocPdReq req{};
  EXPECT_EQ(rig.client.call(ctl::Op::kAllocPd, &req, sizeof(req), big, sizeof(big), {}, {}, 0),
            EINVAL);
  int fd;
  EXPECT_EQ(rig.client.call(ctl::Op::kAllocPd, &req, sizeof(req), big, 8, {}, {&fd, 1}, 2), EINVAL);
  std::byte big_req[CtlClient::kMaxRequestBody + 1] = {};
  EXPECT_EQ(rig.client.call(ctl::Op::kAllocPd, big_req, sizeof(big_req), big, 8, {}, {}, 0),
            EINVAL);
  EXPECT_TRUE(rig.server.ops().empty());
}

TEST(CtlClientCall_Threads, ConcurrentCallersGetTheirOwnReplies) {
  Rig rig([](const Request& r) {
    const auto req = r.as<ctl::DeallocPdReq>();
    ctl::AllocPdRep rep{};
    rep.pd_handle = req.pd_handle * 2;  // echo something request-specific
    Reply out = Reply::of(rep);
    return out;
  });
  // DeallocPd's request carries a handle; reuse it as a typed echo through
  // the generic call (reply body of AllocPdRep size).
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::uint32_t i = 0; i < 200; ++i) {
        ctl::DeallocPdReq req{};
        req.pd_handle = static_cast<std::uint32_t>(t) * 1000 + i;
        ctl::AllocPdRep rep{};
        const int rc =
            rig.client.call(ctl::Op::kDeallocPd, &req, sizeof(req), &rep, sizeof(rep), {}, {}, 0);
        if (rc != 0 || rep.pd_handle != req.pd_handle * 2) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(CtlClientConnect_Errors, MissingSocketGivesErrno) {
  CtlClient c;
  EXPECT_EQ(c.connect("/nonexistent-uroce-dir/uroced.sock"), ENOENT);
  EXPECT_EQ(c.fd(), -1);
}

}  // namespace
}  // namespace uroce::provider
