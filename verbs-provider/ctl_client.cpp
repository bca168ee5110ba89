#include "verbs-provider/ctl_client.h"

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "datapath/ctl/socket.h"

namespace uroce::provider {

namespace {

constexpr std::size_t kReplyHead = sizeof(ctl::MsgHeader) + sizeof(ctl::ReplyStatus);

static_assert(sizeof(ctl::ModifyQpReq) <= CtlClient::kMaxRequestBody &&
                  sizeof(ctl::CreateAhReq) <= CtlClient::kMaxRequestBody &&
                  sizeof(ctl::HelloRep) <= CtlClient::kMaxReplyBody &&
                  sizeof(ctl::QueryQpRep) <= CtlClient::kMaxReplyBody &&
                  sizeof(ctl::QueryPortRep) <= CtlClient::kMaxReplyBody,
              "every protocol message fits the client's buffers");

void close_fds(std::span<int> fds, int n) {
  for (int i = 0; i < n; ++i) ::close(fds[static_cast<std::size_t>(i)]);
}

// The status of a refusal notice (protocol.h), 0 for any other message.
int refusal_status(const ctl::MsgHeader& rh, const ctl::ReplyStatus& st, std::size_t bytes) {
  if (rh.magic != ctl::kMagic || rh.version != ctl::kVersion || rh.op != ctl::kRefusedOp ||
      rh.seq != 0 || rh.length != kReplyHead || bytes != kReplyHead || st.status <= 0) {
    return 0;
  }
  return st.status;
}

// The connection is gone for good when a send or receive fails like this.
bool is_disconnect(int err) {
  return err == EPIPE || err == ECONNRESET || err == ENOTCONN || err == ECONNREFUSED;
}

}  // namespace

int CtlClient::read_refusal_locked() {
  alignas(8) std::byte in[kReplyHead + 1];
  int fds[ctl::kMaxFds];
  // A peer that closes with our request unread leaves ECONNRESET pending on
  // this socket, which the first receive reports instead of what is still
  // queued; the second one reads it.
  ctl::IoResult got = ctl::recv_msg(fd_, in, fds);
  if (got.err == ctl::IoError::kSys && got.sys_errno == ECONNRESET)
    got = ctl::recv_msg(fd_, in, fds);
  if (got.err != ctl::IoError::kOk || got.bytes < kReplyHead) return 0;
  close_fds(fds, got.nfds);
  ctl::MsgHeader rh;
  ctl::ReplyStatus st;
  std::memcpy(&rh, in, sizeof(rh));
  std::memcpy(&st, in + sizeof(rh), sizeof(st));
  return refusal_status(rh, st, got.bytes);
}

CtlClient::~CtlClient() {
  if (fd_ >= 0) ::close(fd_);
  pthread_mutex_destroy(&mu_);
}

int CtlClient::connect(const char* path) {
  const int fd = ctl::connect_to(path);
  if (fd < 0) return errno;
  fd_ = fd;
  return 0;
}

int CtlClient::call(ctl::Op op, const void* req, std::size_t req_len, void* rep,
                    std::size_t rep_len, std::span<const int> fds_in, std::span<int> fds_out,
                    int want_fds) {
  if (rep_len > kMaxReplyBody || req_len > kMaxRequestBody || want_fds < 0 ||
      static_cast<std::size_t>(want_fds) > fds_out.size()) {
    return EINVAL;
  }
  if (dead() || inherited() || fd_ < 0) return EIO;
  pthread_mutex_lock(&mu_);
  const int rc = exchange_locked(op, req, req_len, rep, rep_len, fds_in, fds_out, want_fds);
  pthread_mutex_unlock(&mu_);
  return rc;
}

int CtlClient::exchange_locked(ctl::Op op, const void* req, std::size_t req_len, void* rep,
                               std::size_t rep_len, std::span<const int> fds_in,
                               std::span<int> fds_out, int want_fds) {
  const std::uint32_t seq = ++seq_;
  alignas(8) std::byte out[sizeof(ctl::MsgHeader) + kMaxRequestBody];
  ctl::MsgHeader h{};
  h.magic = ctl::kMagic;
  h.version = ctl::kVersion;
  h.op = static_cast<std::uint16_t>(op);
  h.length = static_cast<std::uint32_t>(sizeof(h) + req_len);
  h.seq = seq;
  std::memcpy(out, &h, sizeof(h));
  if (req_len != 0) std::memcpy(out + sizeof(h), req, req_len);
  const ctl::IoResult sent = ctl::send_msg(fd_, {out, sizeof(h) + req_len}, fds_in);
  if (!sent.ok()) {
    if (sent.err == ctl::IoError::kSys && is_disconnect(sent.sys_errno)) {
      mark_dead();
      // The daemon may have refused the connection (protocol.h, refusal
      // notice) and closed it before our request: the notice is still
      // queued here (the peer is gone, so this read does not wait).
      const int why = read_refusal_locked();
      return why != 0 ? why : EIO;
    }
    return sent.err == ctl::IoError::kSys ? sent.sys_errno : EPROTO;
  }

  // One byte more than the largest valid reply: a longer one arrives
  // truncated and is refused.
  alignas(8) std::byte in[kReplyHead + kMaxReplyBody + 1];
  int fds[ctl::kMaxFds];
  const ctl::IoResult got = ctl::recv_msg(fd_, {in, kReplyHead + rep_len + 1}, fds);
  if (got.err == ctl::IoError::kFdsLost) {
    // The reply arrived, its descriptors could not: at our fd limit. Only
    // Hello's and CmOpen's replies carry one, and each opens a connection
    // of its own, which the caller then closes (the daemon reclaims with
    // it); the verb fails as a kernel verb does when it cannot install an
    // fd.
    return EMFILE;
  }
  if (!got.ok()) {
    if (got.err == ctl::IoError::kClosed ||
        (got.err == ctl::IoError::kSys && is_disconnect(got.sys_errno))) {
      mark_dead();
      // A reset reported before a refusal notice still queued (see
      // read_refusal_locked).
      const int why = got.err == ctl::IoError::kSys ? read_refusal_locked() : 0;
      return why != 0 ? why : EIO;
    }
    return got.err == ctl::IoError::kSys ? got.sys_errno : EPROTO;
  }
  const std::span<int> got_fds{fds, static_cast<std::size_t>(got.nfds)};
  ctl::MsgHeader rh;
  ctl::ReplyStatus st;
  if (got.bytes < kReplyHead) {
    close_fds(got_fds, got.nfds);
    return EPROTO;
  }
  std::memcpy(&rh, in, sizeof(rh));
  std::memcpy(&st, in + sizeof(rh), sizeof(st));
  if (const int why = refusal_status(rh, st, got.bytes); why != 0) {
    close_fds(got_fds, got.nfds);
    mark_dead();
    return why;
  }
  if (rh.magic != ctl::kMagic || rh.version != ctl::kVersion ||
      rh.op != static_cast<std::uint16_t>(op) || rh.seq != seq || rh.length != got.bytes) {
    close_fds(got_fds, got.nfds);
    return EPROTO;
  }
  if (st.status != 0) {
    close_fds(got_fds, got.nfds);
    // A status must be a positive errno value; anything else is garbage.
    return st.status > 0 && got.bytes == kReplyHead ? st.status : EPROTO;
  }
  if (got.bytes != kReplyHead + rep_len || got.nfds != want_fds) {
    close_fds(got_fds, got.nfds);
    return EPROTO;
  }
  if (rep_len != 0) std::memcpy(rep, in + kReplyHead, rep_len);
  for (int i = 0; i < got.nfds; ++i) fds_out[static_cast<std::size_t>(i)] = fds[i];
  return 0;
}

}  // namespace uroce::provider
