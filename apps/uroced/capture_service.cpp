#include "apps/uroced/capture_service.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "datapath/port/capture_tap.h"
#include "datapath/port/capture_writer.h"

namespace uroce::daemon {

namespace {

// How long the capture thread waits on its socket when the tap had nothing:
// a short nap, so that a busy port's copies never pile up for long.
constexpr int kIdleWaitMs = 1;

enum class End { kCount, kReaderStop, kReaderGone, kWriteFailed, kDaemonStop };

const char* end_text(End e) {
  switch (e) {
    case End::kCount: return "its frame count reached";
    case End::kReaderStop: return "stopped by the reader";
    case End::kReaderGone: return "the reader went away";
    case End::kWriteFailed: return "a write failed";
    case End::kDaemonStop: return "the daemon stops";
  }
  return "";
}

bool is_stream_socket(int fd) {
  int type = 0;
  socklen_t len = sizeof(type);
  return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM;
}

}  // namespace

struct CaptureService::Capture {
  const CaptureTarget* target = nullptr;
  std::uint64_t count = 0;
  int sock = -1;  // closed after the thread is joined; the writer has a dup
  port::CaptureTap tap;
  port::CaptureWriter writer;
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> written{0};
  std::thread thread;

  ~Capture() {
    if (thread.joinable()) thread.join();
    if (sock >= 0) close(sock);
  }

  void run();
  // The reader's end: kReaderStop (shut down for writing, or data), kReaderGone
  // (hung up), or nothing yet.
  bool reader_done(int wait_ms, End* why) const;
};

bool CaptureService::Capture::reader_done(int wait_ms, End* why) const {
  pollfd p{sock, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, wait_ms) <= 0) return false;
  if ((p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
    *why = End::kReaderGone;
  } else {
    *why = End::kReaderStop;
  }
  return true;
}

void CaptureService::Capture::run() {
  const std::uint64_t start_ns = port::utc_now_ns();
  End why = End::kDaemonStop;
  auto left = [this] {
    return count == 0 ? UINT64_MAX : count - std::min(count, writer.written());
  };
  for (;;) {
    if (stop.load(std::memory_order_acquire)) {
      why = End::kDaemonStop;
      break;
    }
    const port::CaptureWriter::Step s = writer.write_some(tap, left());
    written.store(writer.written(), std::memory_order_relaxed);
    if (s.err != 0) {
      why = s.err == EPIPE || s.err == ECONNRESET ? End::kReaderGone : End::kWriteFailed;
      break;
    }
    if (left() == 0) {
      why = End::kCount;
      break;
    }
    if (reader_done(s.taken == 0 ? kIdleWaitMs : 0, &why)) break;
  }
  tap.detach();
  target->quiesce();
  // What the tap took before its callbacks came off, unless nobody reads it
  // any more or the count is reached.
  if (why == End::kReaderStop || why == End::kDaemonStop) {
    for (;;) {
      const port::CaptureWriter::Step s = writer.write_some(tap, left());
      if (s.taken == 0 || s.err != 0 || left() == 0) break;
    }
  }
  writer.finish(tap, start_ns, port::utc_now_ns());
  // The writer closed its duplicate; `sock` stays open until the join (the
  // number must not be reused under stop()'s shutdown), so the reader's
  // end of file comes from here.
  (void)shutdown(sock, SHUT_RDWR);
  written.store(writer.written(), std::memory_order_relaxed);
  const port::CaptureCounters c = tap.counters();
  tap.release();
  spdlog::info(
      "{}: capture ended, {}: {} frames written; copied {} received and {} sent frames; "
      "dropped {} (ring full), {} (no mbuf), {} (not written)",
      target->device, end_text(why), writer.written(), c.rx_frames, c.tx_frames, c.ring_full,
      c.no_mbuf, writer.lost());
  done.store(true, std::memory_order_release);
}

CaptureService::CaptureService(std::vector<CaptureTarget> targets, std::string appname)
    : targets_(std::move(targets)), appname_(std::move(appname)) {}

CaptureService::~CaptureService() { stop(); }

void CaptureService::reap() {
  for (auto it = captures_.begin(); it != captures_.end();) {
    if ((*it)->done.load(std::memory_order_acquire)) {
      it = captures_.erase(it);  // joins
    } else {
      ++it;
    }
  }
}

int CaptureService::start(const std::string& device, std::uint64_t count, std::uint32_t snaplen,
                          int sock, ctl::CaptureRep* rep) {
  std::lock_guard<std::mutex> lk(mu_);
  auto refuse = [sock](int err) {
    close(sock);
    return err;
  };
  if (stopped_) return refuse(ESHUTDOWN);
  reap();
  const CaptureTarget* t = nullptr;
  for (const CaptureTarget& c : targets_) {
    if (c.device == device) t = &c;
  }
  if (t == nullptr) return refuse(ENODEV);
  if (snaplen != 0 && snaplen < ctl::kMinSnaplen) return refuse(EINVAL);
  if (!is_stream_socket(sock)) return refuse(ENOTSOCK);
  for (const auto& c : captures_) {
    if (c->target == t) return refuse(EBUSY);
  }
  auto cap = std::make_unique<Capture>();
  cap->target = t;
  cap->count = count;
  cap->sock = sock;
  std::string err;
  int rc = cap->tap.open({.port_id = t->port_id,
                          .queues = t->queues,
                          .snaplen = snaplen,
                          .max_frame = t->max_frame,
                          .ring_size = port::capture_ring_size(snaplen, t->max_frame)},
                         &err);
  if (rc == 0) {
    const int out = fcntl(sock, F_DUPFD_CLOEXEC, 0);
    rc = out < 0 ? -errno : 0;
    if (rc == 0) {
      const std::string comment = t->device + ": DPDK port " + std::to_string(t->port_id) + ", " +
                                  std::to_string(t->queues) + " queue(s), snaplen " +
                                  std::to_string(cap->tap.snaplen());
      rc = cap->writer.open(out, cap->tap, appname_, comment, &err);
    } else {
      err = std::string("cannot duplicate the reader's socket: ") + std::strerror(errno);
    }
  }
  if (rc == 0) rc = cap->tap.attach(&err);
  if (rc != 0) {
    spdlog::warn("{}: capture not started: {}", device, err);
    // Whatever attach installed came off again; it may still run once.
    t->quiesce();
    cap->tap.release();
    return -rc;
  }
  rep->port_id = t->port_id;
  rep->queues = t->queues;
  rep->snaplen = cap->tap.snaplen();
  spdlog::info("{}: capture started (port {}, {} queue(s), snaplen {}, {})", device, t->port_id,
               t->queues, cap->tap.snaplen(),
               count == 0 ? std::string("no frame limit") : std::to_string(count) + " frames");
  Capture* c = cap.get();
  captures_.push_back(std::move(cap));
  c->thread = std::thread([c] { c->run(); });
  return 0;
}

void CaptureService::stop() {
  std::list<std::unique_ptr<Capture>> all;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stopped_) return;
    stopped_ = true;
    all.swap(captures_);
  }
  for (auto& c : all) c->stop.store(true, std::memory_order_release);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(kStopGraceMs);
  for (auto& c : all) {
    while (!c->done.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // A reader that does not read holds the thread in a write: this ends it
    // (the socket stays open until the join below, so the number is ours).
    if (!c->done.load(std::memory_order_acquire)) (void)shutdown(c->sock, SHUT_RDWR);
  }
  all.clear();  // joins
}

std::vector<CaptureStatus> CaptureService::status() {
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<CaptureStatus> out;
  for (const auto& c : captures_) {
    if (c->done.load(std::memory_order_acquire)) continue;
    out.push_back({.device = c->target->device,
                   .count = c->count,
                   .snaplen = c->tap.snaplen(),
                   .written = c->written.load(std::memory_order_relaxed),
                   .counters = c->tap.counters()});
  }
  return out;
}

}  // namespace uroce::daemon
