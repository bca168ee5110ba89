// A CaptureTap's copies as pcapng, written with DPDK's rte_pcapng (the
// library dpdk-dumpcap writes its files with): a section header naming the
// writer; an interface description block per ethdev port of the process,
// numbered as rte_pcapng numbers them; an enhanced packet block per frame
// with its direction, port queue, original length and the TSC reading of
// its burst as UTC nanoseconds (converted here from the TSC and the clock
// read when the writer opened, as the engine's TscClock converts it; not by
// rte_pcapng, below); at the end an interface statistics block
// for the tapped port: frames received by the capture (copies that reached
// its ring) and dropped (ring full, no mbuf, not formatted).
//
// Formatting (rte_pcapng_copy) happens here, on the capture thread, not on
// the lcores. DPDK 22.11's TSC-to-time conversion inside it moves a
// process-wide base forward without a lock, and a TSC reading older than
// that base wraps it for good (every later timestamp of the process is
// then wrong): the frames' own readings, taken on several lcores and
// formatted later, would be such readings. So every call here passes the
// current TSC, under one mutex, and the block's timestamp is overwritten
// with the frame's own time. (dpdk-dumpcap's pdump callbacks call it on
// the lcores with their current TSC, outside that mutex: DPDK's own race.)
//
// Threading: one thread per writer.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>
#include <string>

#include "datapath/port/capture_counters.h"
#include "datapath/port/capture_tap.h"

struct rte_pcapng;

namespace uroce::port {

class CaptureWriter {
 public:
  CaptureWriter() = default;
  ~CaptureWriter();
  CaptureWriter(const CaptureWriter&) = delete;
  CaptureWriter& operator=(const CaptureWriter&) = delete;

  // Takes `fd` (a file, pipe or stream socket; the writer closes it) and
  // writes the section header and the interface blocks. 0 or a negative
  // errno with `error` set; the fd is closed on failure too.
  int open(int fd, const CaptureTap& tap, const std::string& appname, const std::string& comment,
           std::string* error);

  struct Step {
    unsigned taken = 0;  // copies taken from the tap (freed here)
    int err = 0;         // errno of a failed write (EPIPE: the reader is gone)
  };
  // Writes up to min(kBurst, limit) of the tap's queued copies.
  static constexpr unsigned kBurst = 32;
  Step write_some(CaptureTap& tap, std::uint64_t limit);

  // The statistics block (times as UTC nanoseconds) and the close; after a
  // failed write only the close.
  void finish(const CaptureTap& tap, std::uint64_t start_ns, std::uint64_t end_ns);

  // Enhanced packet blocks written, and copies taken but not written (none
  // formatted: the writer's pool ran dry).
  std::uint64_t written() const { return written_; }
  std::uint64_t lost() const { return lost_; }

 private:
  void close();
  // A TSC reading as UTC nanoseconds.
  std::uint64_t utc_ns(std::uint64_t tsc) const;

  rte_pcapng* out_ = nullptr;
  std::uint64_t tsc_hz_ = 1;
  std::uint64_t tsc0_ = 0;
  std::uint64_t utc0_ns_ = 0;
  int fd_ = -1;  // until rte_pcapng_fdopen owns it
  rte_mempool* pool_ = nullptr;
  std::uint16_t port_ = 0;
  bool failed_ = false;
  std::uint64_t written_ = 0;
  std::uint64_t lost_ = 0;
};

// CLOCK_REALTIME in nanoseconds (the statistics block's times).
std::uint64_t utc_now_ns();

}  // namespace uroce::port
