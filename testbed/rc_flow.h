// One [[rc_flow]] workload: `count` messages of `size_bytes` from a QP on
// the source host to a QP on the destination host, as SENDs (the receiver
// keeps receives posted) or RDMA WRITEs (into a region the receiver
// registered), with at most `window` WRs outstanding, through the real
// engines' rings (rc_driver.h).
//
// Setup (at simulation construction, time 0): each side registers its
// buffer, creates a CQ and an RC QP, and both QPs are connected to each
// other with the PSNs the scenario seed gave this flow; the receiver posts
// `window` receives (SEND). At start_ns the source posts its first window;
// from then on, whenever its CQ yields completions, it posts more until
// `count` have been posted. The payload is a seeded pattern; the receiver
// checks every SEND it completes (and, for WRITE, the target region at the
// end) against it, so a completion is counted only for the right bytes.
//
// Message completion time = completion seen by the source - post.
// Single-threaded (the simulation's thread).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datapath/base/time.h"
#include "testbed/rc_driver.h"

namespace uroce::testbed {

enum class RcOp : std::uint8_t { kSend = 0, kWrite };

struct RcFlowConfig {
  RcOp op = RcOp::kSend;
  std::uint32_t size_bytes = 65536;
  std::uint64_t count = 100;
  std::uint32_t window = 8;
  TimeNs start_ns = 0;
  RcConnect path;           // src -> dst: dmac, dip, dscp, ttl, mtu, timeout
  wire::MacAddr src_mac{};  // for the reverse path
  wire::Ipv4Addr src_ip{};
  std::uint32_t src_psn = 0;  // first PSN of each direction (seeded)
  std::uint32_t dst_psn = 0;
  std::uint64_t pattern_seed = 1;
};

struct RcFlowStats {
  std::uint64_t posted = 0;
  std::uint64_t completed = 0;       // successful send-side completions
  std::uint64_t bytes = 0;           // of those
  std::uint64_t errors = 0;          // completions with an error status
  std::uint32_t first_error = 0;     // its ib_wc_status
  std::uint64_t recv_completed = 0;  // SEND: receive completions with the right bytes
  std::uint64_t recv_bytes = 0;
  std::uint64_t payload_mismatch = 0;  // received bytes that differ from what was sent
  TimeNs first_post_ns = 0;
  TimeNs last_completion_ns = 0;
  std::vector<TimeNs> mct_ns;  // per completed message, in order
};

class RcFlow {
 public:
  RcFlow(const RcFlowConfig& cfg, RcDriver& src, RcDriver& dst);
  RcFlow(const RcFlow&) = delete;
  RcFlow& operator=(const RcFlow&) = delete;

  // Creates and connects both QPs; 0 or the first errno.
  int setup();
  // Posts the first window (at start_ns). True if anything was posted.
  bool start(TimeNs now);
  // Reaps the source's completions and posts more. True if it posted.
  bool service_src(TimeNs now);
  // Reaps the receiver's completions (checks, reposts). True if it posted.
  bool service_dst(TimeNs now);
  // WRITE: compares the target region with the pattern once (at the end of
  // the run); counts a mismatch per differing message-sized region.
  void finish();

  bool done() const { return st_.completed + st_.errors == cfg_.count; }
  const RcFlowConfig& config() const { return cfg_; }
  const RcFlowStats& stats() const { return st_; }
  RcDriver& src() { return src_; }
  RcDriver& dst() { return dst_; }
  std::uint32_t src_qp() const { return src_qp_; }
  std::uint32_t dst_qp() const { return dst_qp_; }

 private:
  bool post_more(TimeNs now);

  RcFlowConfig cfg_;
  RcDriver& src_;
  RcDriver& dst_;
  std::vector<std::uint8_t> src_buf_;  // the pattern
  std::vector<std::uint8_t> dst_buf_;  // receive / WRITE target
  std::uint32_t src_key_ = 0;
  std::uint32_t dst_key_ = 0;
  std::uint64_t src_iova_ = 0;
  std::uint64_t dst_iova_ = 0;
  std::uint32_t src_cq_ = 0;
  std::uint32_t dst_cq_ = 0;
  std::uint32_t src_qp_ = 0;
  std::uint32_t dst_qp_ = 0;
  bool started_ = false;
  std::vector<TimeNs> post_ns_;  // by message index mod window
  std::vector<ib_uverbs_wc> wc_;
  RcFlowStats st_;
};

}  // namespace uroce::testbed
