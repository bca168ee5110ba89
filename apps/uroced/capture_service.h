// Live captures for `uroce-ctl capture` (ctl op Capture, protocol.h;
// docs/capture.md): per capture a CaptureTap on the device's port (ethdev
// callbacks on every queue: nothing runs on the packet path while no
// capture does), a CaptureWriter streaming pcapng into the socket the
// client passed, and a thread of its own that moves the one into the other.
// At most one capture per device at a time (the tap's TX mark is one per
// port).
//
// A capture ends when it has written its `count` frames, when the reader
// shuts its end down for writing (the polite stop `uroce-ctl capture` makes
// on Ctrl-C: what the tap already took is still written), when the reader
// closes or dies (a write fails with EPIPE, or the socket hangs up while
// idle; the rest is lost), or at stop(). Ending: the tap's callbacks come
// off, the target's quiesce() waits until no engine lcore can still be
// inside one (DPDK's rule for removed callbacks), what remains is written
// (unless the reader is gone or the count reached), then the statistics
// block, the close, and the tap's memory is freed. One log line says how
// it ended and what it counted.
//
// Threading: start() and stop() from control threads (a client session,
// the signal thread); the captures' own threads do the rest.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "datapath/ctl/protocol.h"
#include "datapath/port/capture_counters.h"

namespace uroce::daemon {

// A device's port as a capture needs it.
struct CaptureTarget {
  std::string device;
  std::uint16_t port_id = 0;
  std::uint16_t queues = 1;
  std::uint32_t max_frame = 0;
  // Returns once every engine lcore running a queue of the port has passed
  // a point outside its bursts (an Engine::call on each). Any thread.
  std::function<void()> quiesce;
};

// A running capture, for status.
struct CaptureStatus {
  std::string device;
  std::uint64_t count = 0;  // 0: no limit
  std::uint32_t snaplen = 0;
  std::uint64_t written = 0;
  port::CaptureCounters counters{};
};

class CaptureService {
 public:
  // `appname` is written into each capture's section header.
  CaptureService(std::vector<CaptureTarget> targets, std::string appname);
  ~CaptureService();
  CaptureService(const CaptureService&) = delete;
  CaptureService& operator=(const CaptureService&) = delete;

  // Starts a capture of `device` into `sock` (taken in every case). 0 with
  // *rep filled, or an errno: ENODEV (no such device), EBUSY (one runs on
  // it), EINVAL (snaplen below ctl::kMinSnaplen), ENOTSOCK (not a stream
  // socket), ENOMEM or another (the tap or the writer could not be made;
  // logged), ESHUTDOWN (after stop()).
  int start(const std::string& device, std::uint64_t count, std::uint32_t snaplen, int sock,
            ctl::CaptureRep* rep);
  // Ends every capture as above and waits for their threads; later starts
  // get ESHUTDOWN. A reader that does not read for kStopGraceMs has its
  // socket shut down, so a blocked write cannot hold the daemon. Needs the
  // engines able to serve Engine::call (running, or stopped). Idempotent.
  void stop();
  static constexpr int kStopGraceMs = 1000;

  std::vector<CaptureStatus> status();

 private:
  struct Capture;
  void reap();

  std::vector<CaptureTarget> targets_;
  std::string appname_;
  std::mutex mu_;
  std::list<std::unique_ptr<Capture>> captures_;
  bool stopped_ = false;
};

}  // namespace uroce::daemon
