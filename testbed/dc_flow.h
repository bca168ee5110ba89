// One [[dc_flow]] workload (docs/dc.md): a DCI on the source host fans
// `count` messages out over the DCTs of its target hosts, round robin
// (message i to target i mod T, on stream i mod S), with at most `window`
// WRs outstanding, through the real engines' rings (rc_driver.h).
//
// Setup (time 0): the source registers `window` message slots, creates a CQ
// and a DCI (2^log_streams streams) in RTS and one AH per target; each
// target registers `window` slots, creates an SRQ, a CQ and a DCT (the
// flow's access key) in RTR, and posts `window` receives on the SRQ, so a
// target never runs dry even when every outstanding message is its own.
//
// Every message carries its index in its immediate, so the target checks
// each one where it lands: SEND with immediate into the receive's slot, or
// RDMA WRITE with immediate into a slot of the target's region the source
// picked (the slot rides in the immediate too). A message's bytes are a
// seeded pattern mixed with its index, so a message delivered twice, to the
// wrong target or with another message's bytes is counted, not passed.
// Each WR's completion is counted once per index (a second one is counted
// as a duplicate).
//
// Message completion time = completion seen by the source - post; delivery
// time = receive completion at the target - post. Single-threaded (the
// simulation's thread).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "datapath/base/time.h"
#include "testbed/engine_host.h"
#include "testbed/rc_driver.h"

namespace uroce::testbed {

enum class DcOp : std::uint8_t { kSend = 0, kWrite };

struct DcFlowConfig {
  DcOp op = DcOp::kSend;
  std::uint32_t size_bytes = 4096;
  std::uint64_t count = 1000;
  std::uint32_t window = 16;
  std::uint8_t log_streams = 0;
  TimeNs start_ns = 0;
  wire::PathMtu mtu = wire::PathMtu::k1024;
  std::uint8_t dscp = 0;
  std::uint8_t ttl = 64;
  std::uint8_t timeout = 14;
  std::uint32_t src_psn = 0;
  std::uint64_t key = 1;  // every DCT's access key
  std::uint64_t pattern_seed = 1;
};

// A target host: its driver and the address the source's AH names.
struct DcFlowTarget {
  RcDriver* driver = nullptr;
  wire::MacAddr mac{};
  wire::Ipv4Addr ip{};
};

struct DcTargetStats {
  std::uint64_t recv_completed = 0;    // messages that arrived with the right bytes
  std::uint64_t recv_errors = 0;       // receive completions with an error status
  std::uint64_t payload_mismatch = 0;  // wrong length or bytes
  std::uint64_t misdirected = 0;       // a message meant for another target
  std::uint64_t duplicates = 0;        // a message that had arrived before
  std::uint32_t contexts_peak = 0;     // the host's DC target pool, most contexts open
};

struct DcFlowStats {
  std::uint64_t posted = 0;
  std::uint64_t completed = 0;  // successful send-side completions
  std::uint64_t bytes = 0;
  std::uint64_t errors = 0;
  std::uint32_t first_error = 0;            // its ib_wc_status
  std::uint64_t duplicate_completions = 0;  // a WR completed a second time
  TimeNs first_post_ns = 0;
  TimeNs last_completion_ns = 0;
  std::vector<TimeNs> mct_ns;       // per completed message, in completion order
  std::vector<TimeNs> delivery_ns;  // per arrived message, in arrival order
};

class DcFlow {
 public:
  // Precondition: 1 <= targets.size() <= count's index space (2^20
  // messages, window <= 1024: both travel in the 32-bit immediate).
  static constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 20;
  static constexpr std::uint32_t kMaxWindow = 1024;

  DcFlow(const DcFlowConfig& cfg, RcDriver& src, const std::vector<DcFlowTarget>& targets);
  DcFlow(const DcFlow&) = delete;
  DcFlow& operator=(const DcFlow&) = delete;

  // Creates every object on both sides; 0 or the first errno.
  int setup();
  // Posts the first window (at start_ns). True if anything was posted.
  bool start(TimeNs now);
  // The per-host agents EngineHost::add_app takes: the source's (reaps the
  // DCI's completions, posts more) and target k's (checks, reposts).
  EngineApp* source_app() { return &src_app_; }
  EngineApp* target_app(std::uint32_t k) { return &targets_[k]->app; }

  bool done() const { return st_.completed + st_.errors == cfg_.count; }
  const DcFlowConfig& config() const { return cfg_; }
  const DcFlowStats& stats() const { return st_; }
  std::uint32_t num_targets() const { return static_cast<std::uint32_t>(targets_.size()); }
  const DcTargetStats& target_stats(std::uint32_t k) const { return targets_[k]->st; }
  // The drivers and QP indices, for the report's transport counters.
  RcDriver& src() { return src_; }
  std::uint32_t dci() const { return dci_; }
  RcDriver& target_driver(std::uint32_t k) { return *targets_[k]->end.driver; }
  std::uint32_t dct(std::uint32_t k) const { return targets_[k]->dct; }

 private:
  struct SourceApp final : EngineApp {
    DcFlow* flow = nullptr;
    bool service(TimeNs now) override { return flow->service_src(now); }
  };
  struct Target;
  struct TargetApp final : EngineApp {
    DcFlow* flow = nullptr;
    Target* target = nullptr;
    bool service(TimeNs now) override { return flow->service_target(*target, now); }
  };
  struct Target {
    DcFlowTarget end;
    std::uint32_t index = 0;
    std::vector<std::uint8_t> buf;  // window slots: receives (SEND) or the WRITE region
    std::uint32_t key = 0;
    std::uint64_t iova = 0;
    std::uint32_t cq = 0;
    std::uint32_t srq = 0;
    std::uint32_t dct = 0;
    std::uint32_t dctn = 0;
    std::uint32_t ah = 0;                   // the source's AH toward it
    std::vector<std::uint32_t> free_slots;  // WRITE: region slots no WR holds
    TargetApp app;
    DcTargetStats st;
  };

  bool post_more(TimeNs now);
  bool service_src(TimeNs now);
  bool service_target(Target& t, TimeNs now);
  // Message i's bytes into `out` (size_bytes).
  void fill(std::uint64_t i, std::uint8_t* out) const;
  bool matches(std::uint64_t i, const std::uint8_t* got);

  DcFlowConfig cfg_;
  RcDriver& src_;
  std::vector<std::unique_ptr<Target>> targets_;
  std::vector<std::uint8_t> pattern_;  // size_bytes, seeded
  std::vector<std::uint8_t> src_buf_;  // window message slots
  std::vector<std::uint8_t> scratch_;  // an expected message
  std::uint32_t src_key_ = 0;
  std::uint64_t src_iova_ = 0;
  std::uint32_t src_cq_ = 0;
  std::uint32_t dci_ = 0;
  std::vector<std::uint32_t> src_free_;  // source slots no WR holds
  // Per message: post time, source slot, remote slot (WRITE), and whether
  // it completed at the source and arrived at its target.
  std::vector<TimeNs> post_ns_;
  std::vector<std::uint16_t> src_slot_;
  std::vector<std::uint16_t> dst_slot_;
  std::vector<std::uint8_t> seen_;
  bool started_ = false;
  SourceApp src_app_;
  std::vector<ib_uverbs_wc> wc_;
  DcFlowStats st_;
};

}  // namespace uroce::testbed
