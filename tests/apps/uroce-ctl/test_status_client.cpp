#include "apps/uroce-ctl/status_client.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "datapath/ctl/protocol.h"
#include "datapath/ctl/socket.h"

namespace uroce::ctl_tool {
namespace {

// A one-request daemon on the other end of a socket pair: checks the
// request and answers with `status` and `body` (or a raw `reply`).
class FakeDaemon {
 public:
  FakeDaemon() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds_), 0); }
  ~FakeDaemon() {
    if (t_.joinable()) t_.join();
    close(fds_[0]);
    close(fds_[1]);
  }
  int client() const { return fds_[0]; }

  void answer(int status, const std::string& body, bool corrupt_seq = false) {
    t_ = std::thread([=, this] {
      std::vector<std::byte> buf(ctl::kMaxMessageBytes);
      int fds[4];
      const ctl::IoResult r = ctl::recv_msg(fds_[1], buf, fds);
      ASSERT_TRUE(r.ok());
      ASSERT_EQ(r.bytes, ctl::request_bytes(ctl::Op::kStatus));
      ctl::MsgHeader h;
      std::memcpy(&h, buf.data(), sizeof(h));
      std::memcpy(&req_, buf.data() + sizeof(h), sizeof(req_));
      EXPECT_EQ(h.magic, ctl::kMagic);
      EXPECT_EQ(h.op, static_cast<std::uint16_t>(ctl::Op::kStatus));
      std::vector<std::byte> out(sizeof(h) + sizeof(ctl::ReplyStatus) + body.size());
      h.length = static_cast<std::uint32_t>(out.size());
      if (corrupt_seq) h.seq += 1;
      const ctl::ReplyStatus st{status, 0};
      std::memcpy(out.data(), &h, sizeof(h));
      std::memcpy(out.data() + sizeof(h), &st, sizeof(st));
      std::memcpy(out.data() + sizeof(h) + sizeof(st), body.data(), body.size());
      ctl::send_msg(fds_[1], out);
    });
  }
  ctl::StatusReq req_{};

 private:
  int fds_[2];
  std::thread t_;
};

TEST(QueryStatus_Ok, ReturnsBodyAndSendsFlags) {
  FakeDaemon d;
  d.answer(0, "{\"a\":1}");
  std::string json, err;
  ASSERT_EQ(query_status(d.client(), ctl::kStatusQps, &json, &err), 0) << err;
  EXPECT_EQ(json, "{\"a\":1}");
  EXPECT_EQ(d.req_.flags, ctl::kStatusQps);
}

TEST(QueryStatus_DaemonError, ItsErrno) {
  FakeDaemon d;
  d.answer(EINVAL, "");
  std::string json, err;
  EXPECT_EQ(query_status(d.client(), 0, &json, &err), EINVAL);
  EXPECT_EQ(err, "the daemon refused the status request: Invalid argument");
}

TEST(QueryStatus_WrongSeq, Eproto) {
  FakeDaemon d;
  d.answer(0, "{}", true);
  std::string json, err;
  EXPECT_EQ(query_status(d.client(), 0, &json, &err), EPROTO);
  EXPECT_EQ(err, "malformed status reply (a daemon of another version?)");
}

TEST(FetchStatus_NoDaemon, SaysWhatToTry) {
  std::string json, err;
  EXPECT_EQ(fetch_status("/tmp/uroce_no_such_dir/uroced.sock", 0, &json, &err), ENOENT);
  EXPECT_EQ(err,
            "cannot connect to /tmp/uroce_no_such_dir/uroced.sock: No such file or directory "
            "(is uroced running with this run directory? try --run-dir or --socket)");
}

}  // namespace
}  // namespace uroce::ctl_tool
