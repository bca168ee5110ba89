// Completion-event records held back to the end of an engine iteration and
// written one write(2) per comp channel: one wake-up of the application per
// iteration however many of its CQs fired, and the wake-up after the
// iteration's ACKs and responses are sent. In daemon mode the application
// often shares the engine's core; a record written in the RX phase lets the
// kernel run it at once, before the engine finished the iteration, and a
// second record later in the same iteration costs a second switch.
//
// While open (Vnic::poll, from its first phase to its end) add() queues a
// record; close() writes what is queued, grouped by fd, in the order each
// fd was first added, and closes the batch. Outside an iteration (a control
// operation that completes WRs in error) add() writes at once, so a record
// never waits for an iteration that may not come, and none can outlive its
// channel's fd (control operations run between iterations).
//
// A full batch (kMaxRecords) is written out before the next record is
// queued. One write holds at most kMaxRecords * 8 bytes, far below PIPE_BUF,
// so each write is all-or-nothing (event_fd.h); a failed write drops its
// records and counts each.
//
// Engine thread only; not thread-safe; no allocation.
#pragma once

#include <rdma/ib_user_verbs.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "datapath/base/counter_fields.h"
#include "datapath/engine/event_fd.h"

namespace uroce::engine {

struct CompEventCounters {
  std::uint64_t records = 0;  // records written
  std::uint64_t writes = 0;   // write(2) calls that carried them
  std::uint64_t errors = 0;   // records lost to failed writes
};

inline constexpr counters::FieldList<CompEventCounters, 3> kCompEventCounterFields{{
    {"records", &CompEventCounters::records, "records written"},
    {"writes", &CompEventCounters::writes, "write(2) calls that carried them"},
    {"errors", &CompEventCounters::errors, "records lost to failed writes"},
}};
static_assert(counters::covers(kCompEventCounterFields));
constexpr const auto& counter_fields(const CompEventCounters&) { return kCompEventCounterFields; }

class CompEventBatch {
 public:
  static constexpr std::size_t kMaxRecords = 32;

  // `ctr` (the Vnic's counters) must outlive the batch.
  explicit CompEventBatch(CompEventCounters* ctr) : ctr_(*ctr) {}
  CompEventBatch(const CompEventBatch&) = delete;
  CompEventBatch& operator=(const CompEventBatch&) = delete;

  void open() { open_ = true; }
  bool is_open() const { return open_; }

  // One record {cq_handle} for the channel `fd` (>= 0).
  void add(int fd, std::uint64_t cq_handle) {
    if (!open_) {
      count(write_comp_event(fd, cq_handle), 1);
      return;
    }
    if (n_ == kMaxRecords) flush();
    fds_[n_] = fd;
    handles_[n_] = cq_handle;
    ++n_;
  }

  // Writes what is queued and closes the batch.
  void close() {
    flush();
    open_ = false;
  }

  std::size_t queued() const { return n_; }

 private:
  void flush() {
    // Group by fd: a quadratic pass over at most kMaxRecords entries, done
    // is marked by fd -1.
    for (std::size_t i = 0; i < n_; ++i) {
      const int fd = fds_[i];
      if (fd < 0) continue;
      std::array<ib_uverbs_comp_event_desc, kMaxRecords> out{};
      std::size_t k = 0;
      for (std::size_t j = i; j < n_; ++j) {
        if (fds_[j] != fd) continue;
        out[k++].cq_handle = handles_[j];
        fds_[j] = -1;
      }
      write_group(fd, out.data(), k);
    }
    n_ = 0;
  }

  void write_group(int fd, const ib_uverbs_comp_event_desc* d, std::size_t k) {
    count(write_record(fd, d, k * sizeof(*d)), k);
  }
  void count(FdWrite r, std::size_t k) {
    if (r == FdWrite::kOk) {
      ++ctr_.writes;
      ctr_.records += k;
    } else {
      ctr_.errors += k;
    }
  }

  std::array<int, kMaxRecords> fds_{};
  std::array<std::uint64_t, kMaxRecords> handles_{};
  std::size_t n_ = 0;
  bool open_ = false;
  CompEventCounters& ctr_;
};

}  // namespace uroce::engine
