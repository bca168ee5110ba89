#include "apps/uroce-ctl/capture_client.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "apps/uroce-ctl/cli.h"
#include "apps/uroce-ctl/pcapng_blocks.h"
#include "datapath/ctl/protocol.h"
#include "datapath/ctl/socket.h"

namespace uroce::ctl_tool {

namespace {

// The socket the daemon writes to, for the signal handler.
volatile sig_atomic_t g_stream = -1;

// The first SIGINT/SIGTERM asks the daemon to stop (SA_RESETHAND: the
// second one ends the tool). shutdown is async-signal-safe.
void on_stop_signal(int) {
  if (g_stream >= 0) (void)shutdown(g_stream, SHUT_WR);
}

void say(const std::string& s) { std::fprintf(stderr, "uroce-ctl: capture: %s\n", s.c_str()); }

bool write_all(int fd, const std::uint8_t* p, std::size_t n) {
  while (n != 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Sends the request with `stream` and reads the reply: 0 with *rep, or the
// errno (the daemon's, or a transport error, said in *error).
int request(const std::string& socket_path, const ctl::CaptureReq& r, int stream,
            ctl::CaptureRep* rep, std::string* error) {
  const int sock = ctl::connect_to(socket_path.c_str());
  if (sock < 0) {
    const int err = errno;
    *error = "cannot connect to " + socket_path + ": " + std::strerror(err);
    if (err == ENOENT || err == ECONNREFUSED) {
      *error += " (is uroced running with this run directory? try --run-dir or --socket)";
    }
    return err;
  }
  struct {
    ctl::MsgHeader h;
    ctl::CaptureReq r;
  } req{};
  constexpr std::uint32_t kSeq = 1;
  req.h = {ctl::kMagic, ctl::kVersion, static_cast<std::uint16_t>(ctl::Op::kCapture),
           static_cast<std::uint32_t>(sizeof(req)), kSeq};
  req.r = r;
  const int fds[1] = {stream};
  ctl::IoResult s =
      ctl::send_msg(sock,
                    std::span<const std::byte>(reinterpret_cast<const std::byte*>(&req),
                                               sizeof(req)),
                    std::span<const int>(fds, 1));
  if (!s.ok()) {
    close(sock);
    *error = std::string("cannot send the capture request: ") + std::strerror(s.sys_errno);
    return s.sys_errno != 0 ? s.sys_errno : EIO;
  }
  std::vector<std::byte> buf(ctl::kMaxMessageBytes);
  int in_fds[ctl::kMaxFds];
  const ctl::IoResult got = ctl::recv_msg(sock, buf, in_fds);
  close(sock);
  for (int i = 0; i < got.nfds; ++i) close(in_fds[i]);
  constexpr std::size_t kHead = sizeof(ctl::MsgHeader) + sizeof(ctl::ReplyStatus);
  if (!got.ok() || got.bytes < kHead) {
    *error = std::string("no reply to the capture request: ") + ctl::to_string(got.err);
    return EPROTO;
  }
  ctl::MsgHeader h;
  ctl::ReplyStatus st;
  std::memcpy(&h, buf.data(), sizeof(h));
  std::memcpy(&st, buf.data() + sizeof(h), sizeof(st));
  // A daemon of another protocol version answers EPROTONOSUPPORT in its
  // own version's header.
  if (h.magic == ctl::kMagic && st.status == EPROTONOSUPPORT) return EPROTONOSUPPORT;
  if (h.magic != ctl::kMagic || h.version != ctl::kVersion || h.length != got.bytes ||
      h.seq != kSeq || (st.status == 0 && got.bytes != kHead + sizeof(ctl::CaptureRep))) {
    *error = "malformed reply to the capture request (a daemon of another version?)";
    return EPROTO;
  }
  if (st.status != 0) return st.status;
  std::memcpy(rep, buf.data() + kHead, sizeof(*rep));
  return 0;
}

}  // namespace

std::string capture_refusal(int err, const std::string& device) {
  switch (err) {
    case ENODEV: return "uroced has no device " + device;
    case EBUSY: return "a capture of " + device + " already runs (one per device at a time)";
    case EPERM: return "only root may capture (a capture shows every client's payload)";
    case EINVAL:
      return "uroced refused the request: snaplen below " + std::to_string(ctl::kMinSnaplen) +
             " bytes, or a device name of " + std::to_string(ctl::kNameBytes) + " bytes or more";
    case EOPNOTSUPP: return "this uroced does not capture";
    case ESHUTDOWN: return "uroced is stopping";
    case ENOMEM:
      return "uroced has no memory for the capture's buffers (a smaller --snaplen needs less; its "
             "log says more)";
    case EPROTONOSUPPORT:
      return "uroced speaks another control protocol version (install uroce-ctl and uroced "
             "together)";
    default: return std::string("uroced refused the capture: ") + std::strerror(err);
  }
}

int run_capture(const Options& o) {
  if (o.device.size() >= ctl::kNameBytes) {
    say(capture_refusal(EINVAL, o.device));
    return 2;
  }
  int out = STDOUT_FILENO;
  const bool to_stdout = o.write.empty() || o.write == "-";
  if (to_stdout && isatty(STDOUT_FILENO) != 0) {
    say("standard output is a terminal: give -w FILE, or pipe it (| tshark -r -)");
    return 2;
  }
  if (!to_stdout) {
    out = open(o.write.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0) {
      say("cannot write " + o.write + ": " + std::strerror(errno));
      return 2;
    }
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    say(std::string("socketpair: ") + std::strerror(errno));
    return 1;
  }
  ctl::CaptureReq r{};
  std::memcpy(r.device, o.device.data(), o.device.size());
  r.count = o.count;
  r.snaplen = o.snaplen;
  ctl::CaptureRep rep{};
  std::string error;
  const int rc = request(socket_path(o), r, sv[1], &rep, &error);
  close(sv[1]);
  if (rc != 0) {
    say(error.empty() ? capture_refusal(rc, o.device) : error);
    close(sv[0]);
    if (!to_stdout) close(out);
    return 1;
  }
  std::fprintf(stderr, "uroce-ctl: capturing %s (DPDK port %u, %u queue%s, snaplen %u)%s\n",
               o.device.c_str(), rep.port_id, rep.queues, rep.queues == 1 ? "" : "s", rep.snaplen,
               o.count != 0 ? (", " + std::to_string(o.count) + " frames").c_str()
                            : "; Ctrl-C stops");
  std::fflush(stderr);

  g_stream = sv[0];
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sa.sa_flags = SA_RESETHAND;  // no SA_RESTART: read() returns EINTR, then goes on
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  PcapngBlocks blocks;
  std::vector<std::uint8_t> buf(256 * 1024);
  int status = 0;
  for (;;) {
    const ssize_t n = read(sv[0], buf.data(), buf.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      say(std::string("reading the stream: ") + std::strerror(errno));
      status = 1;
      break;
    }
    blocks.feed(std::span<const std::uint8_t>(buf.data(), static_cast<std::size_t>(n)));
    if (!write_all(out, buf.data(), static_cast<std::size_t>(n))) {
      // The output's reader went away (a pipe) or the disk is full: the
      // daemon sees the socket close and ends the capture.
      const int err = errno;
      if (err != EPIPE) {
        say("writing " + (to_stdout ? std::string("standard output") : o.write) + ": " +
            std::strerror(err));
        status = 1;
      }
      break;
    }
  }
  g_stream = -1;
  close(sv[0]);
  if (!to_stdout && close(out) != 0 && status == 0) {
    say("writing " + o.write + ": " + std::strerror(errno));
    status = 1;
  }
  if (status == 0 && !blocks.error().empty()) {
    say("the daemon's stream: " + blocks.error());
    status = 1;
  } else if (status == 0 && !blocks.between_blocks()) {
    say("the stream ended inside a block (uroced died?)");
    status = 1;
  }
  const std::string drops = blocks.dropped()
                                ? std::to_string(*blocks.dropped()) + " dropped by uroced"
                                : "no statistics block (the capture did not end cleanly)";
  std::fprintf(stderr, "uroce-ctl: %llu frames captured, %s\n",
               static_cast<unsigned long long>(blocks.packets()), drops.c_str());
  return status;
}

}  // namespace uroce::ctl_tool
