// The time-series CSV of a run: one row per sample instant (every
// output.sample_us of virtual time, from 0 to the end), one column per
// quantity, in a fixed order (switches, their ports, link directions,
// hosts, in scenario order), so the same run writes the same bytes.
//
// Columns:
//   time_us                      the sample instant
//   <sw>.buffer_bytes            shared + headroom bytes in use
//   <sw>><peer>.in_bytes         bytes charged to that ingress port
//   <sw>><peer>.out_bytes        bytes queued on that egress port
//   <sw>><peer>.paused           bit mask of priorities the peer pauses
//   <a>-><b>.gbps                what the direction carried since the
//                                previous sample (data and PFC frames)
//   <h>.tx_gbps, <h>.rx_gbps     host data sent / consumed since then
//   deadlocks                    deadlocks active at the instant
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "datapath/base/time.h"

namespace uroce::testbed {

class Simulator;

class Recorder {
 public:
  Recorder() = default;
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Creates (truncates) `path`; 0 or an errno value.
  int open(const std::string& path);
  void sample(const Simulator& sim, TimeNs now);
  // Flushes and closes; 0 or an errno value (also reports write errors).
  int close();
  std::uint64_t rows() const { return rows_; }

 private:
  void header(const Simulator& sim);

  std::FILE* f_ = nullptr;
  bool header_done_ = false;
  bool write_error_ = false;
  TimeNs last_t_ = 0;
  std::uint64_t rows_ = 0;
  std::vector<std::uint64_t> last_dir_bytes_;
  std::vector<std::uint64_t> last_host_tx_;
  std::vector<std::uint64_t> last_host_rx_;
  std::string line_;
};

}  // namespace uroce::testbed
