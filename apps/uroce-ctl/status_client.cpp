#include "apps/uroce-ctl/status_client.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "datapath/ctl/protocol.h"
#include "datapath/ctl/socket.h"

namespace uroce::ctl_tool {

int query_status(int sock, std::uint32_t flags, std::string* json, std::string* error) {
  struct {
    ctl::MsgHeader h;
    ctl::StatusReq r;
  } req{};
  static_assert(sizeof(req) == sizeof(ctl::MsgHeader) + sizeof(ctl::StatusReq));
  constexpr std::uint32_t kSeq = 1;
  req.h = {ctl::kMagic, ctl::kVersion, static_cast<std::uint16_t>(ctl::Op::kStatus),
           static_cast<std::uint32_t>(sizeof(req)), kSeq};
  req.r.flags = flags;
  const ctl::IoResult s =
      ctl::send_msg(sock, std::span<const std::byte>(reinterpret_cast<const std::byte*>(&req),
                                                     sizeof(req)));
  if (!s.ok()) {
    *error = std::string("cannot send the status request: ") + std::strerror(s.sys_errno);
    return s.sys_errno != 0 ? s.sys_errno : EIO;
  }
  std::vector<std::byte> buf(ctl::kMaxMessageBytes);
  int fds[4];
  const ctl::IoResult r = ctl::recv_msg(sock, buf, fds);
  for (int i = 0; i < r.nfds; ++i) close(fds[i]);
  if (!r.ok()) {
    *error = std::string("no status reply: ") + ctl::to_string(r.err);
    return r.sys_errno != 0 ? r.sys_errno : EPROTO;
  }
  constexpr std::size_t kHead = sizeof(ctl::MsgHeader) + sizeof(ctl::ReplyStatus);
  ctl::MsgHeader h;
  ctl::ReplyStatus st;
  if (r.bytes < kHead) {
    *error = "status reply too short";
    return EPROTO;
  }
  std::memcpy(&h, buf.data(), sizeof(h));
  std::memcpy(&st, buf.data() + sizeof(h), sizeof(st));
  if (h.magic != ctl::kMagic || h.version != ctl::kVersion || h.length != r.bytes ||
      h.op != static_cast<std::uint16_t>(ctl::Op::kStatus) || h.seq != kSeq) {
    *error = "malformed status reply (a daemon of another version?)";
    return EPROTO;
  }
  if (st.status != 0) {
    *error = std::string("the daemon refused the status request: ") + std::strerror(st.status);
    return st.status;
  }
  json->assign(reinterpret_cast<const char*>(buf.data()) + kHead, r.bytes - kHead);
  return 0;
}

int fetch_status(const std::string& socket_path, std::uint32_t flags, std::string* json,
                 std::string* error) {
  const int sock = ctl::connect_to(socket_path.c_str());
  if (sock < 0) {
    const int err = errno;
    *error = "cannot connect to " + socket_path + ": " + std::strerror(err);
    if (err == ENOENT || err == ECONNREFUSED) {
      *error += " (is uroced running with this run directory? try --run-dir or --socket)";
    }
    return err;
  }
  const int rc = query_status(sock, flags, json, error);
  close(sock);
  return rc;
}

}  // namespace uroce::ctl_tool
