// rte_pcapng's functions are marked experimental in DPDK 22.11; this file
// is their only user. The macro must come before any DPDK header.
#define ALLOW_EXPERIMENTAL_API 1

#include "datapath/port/capture_writer.h"

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_pcapng.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>

namespace uroce::port {

namespace {

// Every rte_pcapng_copy of this process (the header says why).
std::mutex g_format_mu;
std::atomic<std::uint32_t> g_writer_seq{0};

// Byte offsets in an enhanced packet block (pcapng: block type, total
// length, interface, timestamp high and low, captured length, original
// length), fields in the writer's byte order.
constexpr std::size_t kEpbTimestampHigh = 12;
constexpr std::size_t kEpbTimestampLow = 16;
constexpr std::size_t kEpbOriginalLength = 24;

void put32(rte_mbuf* epb, std::size_t at, std::uint32_t v) {
  std::memcpy(rte_pktmbuf_mtod(epb, std::uint8_t*) + at, &v, sizeof(v));
}

}  // namespace

std::uint64_t utc_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

CaptureWriter::~CaptureWriter() { close(); }

int CaptureWriter::open(int fd, const CaptureTap& tap, const std::string& appname,
                        const std::string& comment, std::string* error) {
  fd_ = fd;
  port_ = tap.port_id();
  // The origin of this capture's timestamps: the tap reads the TSC only
  // after attach(), which follows open().
  tsc_hz_ = rte_get_tsc_hz();
  tsc0_ = rte_get_tsc_cycles();
  utc0_ns_ = utc_now_ns();
  // Formatting takes one batch at a time and frees it after the write:
  // two batches' worth never runs dry.
  const std::string name = "ucap_fmt_" + std::to_string(g_writer_seq.fetch_add(1));
  pool_ = rte_pktmbuf_pool_create(name.c_str(), 2 * kBurst, 0, 0,
                                  static_cast<std::uint16_t>(rte_pcapng_mbuf_size(tap.snaplen())),
                                  static_cast<int>(rte_socket_id()));
  if (pool_ == nullptr) {
    const int err = rte_errno;
    *error = std::string("cannot create the capture's formatting pool: ") + std::strerror(err);
    close();
    return -err;
  }
  utsname u{};
  std::string os;
  if (uname(&u) == 0) os = std::string(u.sysname) + " " + u.release;
  out_ = rte_pcapng_fdopen(fd, os.empty() ? nullptr : os.c_str(), nullptr, appname.c_str(),
                           comment.c_str());
  if (out_ == nullptr) {
    const int err = rte_errno != 0 ? rte_errno : errno;
    *error = std::string("cannot write the pcapng header: ") + std::strerror(err);
    close();
    return -err;
  }
  fd_ = -1;  // rte_pcapng_close closes it
  return 0;
}

CaptureWriter::Step CaptureWriter::write_some(CaptureTap& tap, std::uint64_t limit) {
  Step s;
  if (failed_ || out_ == nullptr) return s;
  rte_mbuf* in[kBurst];
  rte_mbuf* out[kBurst];
  s.taken = tap.take(in, static_cast<unsigned>(std::min<std::uint64_t>(kBurst, limit)));
  if (s.taken == 0) return s;
  std::uint16_t k = 0;
  {
    // rte_pcapng_copy's own timestamp comes from a process-wide TSC base
    // that it moves forward in whole seconds without a lock, and a reading
    // older than that base wraps it for good: it is given the current TSC,
    // read under the mutex (never going back), and the block then gets the
    // frame's own time, converted here.
    std::lock_guard<std::mutex> lk(g_format_mu);
    const std::uint64_t now = rte_get_tsc_cycles();
    for (unsigned i = 0; i < s.taken; ++i) {
      const FrameMeta& m = CaptureTap::meta(in[i]);
      rte_mbuf* f = rte_pcapng_copy(port_, m.queue, in[i], pool_, UINT32_MAX, now,
                                    static_cast<rte_pcapng_direction>(m.direction));
      if (f == nullptr) {
        ++lost_;
        continue;
      }
      const std::uint64_t ns = utc_ns(m.tsc);
      put32(f, kEpbTimestampHigh, static_cast<std::uint32_t>(ns >> 32));
      put32(f, kEpbTimestampLow, static_cast<std::uint32_t>(ns));
      // The copy may be cut to the snaplen: the block says how long the
      // frame was on the wire.
      put32(f, kEpbOriginalLength, m.orig_len);
      out[k++] = f;
    }
  }
  rte_pktmbuf_free_bulk(in, s.taken);
  if (k == 0) return s;
  const ssize_t w = rte_pcapng_write_packets(out_, out, k);
  rte_pktmbuf_free_bulk(out, k);
  if (w < 0) {
    failed_ = true;
    s.err = rte_errno != 0 ? rte_errno : EIO;
    lost_ += k;
    return s;
  }
  written_ += k;
  return s;
}

void CaptureWriter::finish(const CaptureTap& tap, std::uint64_t start_ns, std::uint64_t end_ns) {
  if (out_ != nullptr && !failed_) {
    const CaptureCounters c = tap.counters();
    const std::uint64_t copied = c.rx_frames + c.tx_frames;
    const std::uint64_t kept = copied - std::min(copied, c.ring_full);
    // As dpdk-dumpcap counts: received = what reached the capture,
    // dropped = what it lost on the way.
    // Its block time comes from rte_pcapng's process-wide base (above).
    std::lock_guard<std::mutex> lk(g_format_mu);
    (void)rte_pcapng_write_stats(out_, port_, nullptr, start_ns, end_ns, kept,
                                 c.ring_full + c.no_mbuf + lost_);
  }
  close();
}

std::uint64_t CaptureWriter::utc_ns(std::uint64_t tsc) const {
  const std::uint64_t d = tsc > tsc0_ ? tsc - tsc0_ : 0;
  return utc0_ns_ +
         static_cast<std::uint64_t>(static_cast<unsigned __int128>(d) * 1'000'000'000u / tsc_hz_);
}

void CaptureWriter::close() {
  if (out_ != nullptr) {
    rte_pcapng_close(out_);
    out_ = nullptr;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (pool_ != nullptr) {
    rte_mempool_free(pool_);
    pool_ = nullptr;
  }
}

}  // namespace uroce::port
