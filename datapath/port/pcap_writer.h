// A pcap (libpcap classic format, nanosecond timestamps, LINKTYPE_ETHERNET)
// file writer. Used off the data path: captures from the simulated link and
// tests, and `uroce-ctl capture` later. Timestamps come from the caller (a
// virtual clock in simulations), never from the wall clock, so the same run
// gives the same file byte for byte.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "datapath/base/time.h"

namespace uroce::port {

class PcapWriter {
 public:
  PcapWriter() = default;
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // Creates (truncates) `path` and writes the file header. Returns 0 or an
  // errno value.
  int open(const std::string& path, std::uint32_t snaplen = 65535);
  // Appends one frame captured at `ts`; frames longer than the snaplen are
  // truncated in the file (orig_len keeps the real length). Returns 0 or errno.
  int write(TimeNs ts, std::span<const std::uint8_t> frame);
  // Flushes and closes; returns 0 or errno. Safe to call twice.
  int close();
  bool is_open() const { return f_ != nullptr; }
  std::uint64_t frames_written() const { return frames_; }

 private:
  std::FILE* f_ = nullptr;
  std::uint32_t snaplen_ = 0;
  std::uint64_t frames_ = 0;
};

}  // namespace uroce::port
