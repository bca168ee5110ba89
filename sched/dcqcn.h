// DCQCN (Zhu et al., SIGCOMM 2015) for fabrics of plain RoCE peers: the
// reaction point (a sender's rate, per QP) and the notification point's CNP
// limiter (a receiver's, per QP). I/O-free: CNPs, bytes sent and `now` in;
// a rate and the next deadline out. The pacer applies the rate; the engine
// sends the CNPs the limiter admits.
//
// Reaction point (per QP), with the rate Rc, the target rate Rt and alpha:
//   - A CNP (at most one acted on per rate_reduce_period):
//       Rt = Rc;  Rc = Rc * (1 - alpha / 2);  alpha = (1 - g) * alpha + g;
//       the increase stages restart (timer and byte counter at 0).
//   - Every alpha_period without a CNP: alpha = (1 - g) * alpha.
//   - Increase events: every increase_period (timer stage T) and every
//     byte_stage bytes sent (byte-counter stage B). At each event, with F
//     fast_recovery_stages:
//       max(T, B) < F:          fast recovery,   Rc = (Rt + Rc) / 2
//       min(T, B) > F:          hyper increase,  Rt += (min(T, B) - F) * hai;
//                                                Rc = (Rt + Rc) / 2
//       otherwise:              additive,        Rt += ai;  Rc = (Rt + Rc) / 2
//   Rt and Rc stay within [min_rate, line_rate]. Before the first CNP the
//   QP sends at line rate and no timer runs.
// alpha is fixed point (kAlphaOne = 1.0) and g = 2^-g_shift, so every
// update is integer arithmetic a test can compute by hand; (Rt + Rc) / 2 is
// rounded up so that Rc reaches Rt.
//
// Defaults: the reduce period, AI and HAI rates and g are the NIC defaults
// (4 us, 5 Mb/s, 50 Mb/s, 1/256); alpha_period, increase_period, byte_stage
// and F are the paper's (55 us, 55 us, 10 MB, 5).
//
// Threading: owned by one engine lcore; not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"

namespace uroce::sched {

inline constexpr std::uint32_t kAlphaOne = 1024;

struct DcqcnConfig {
  std::uint64_t line_rate_bps = 100'000'000'000;
  std::uint64_t min_rate_bps = 10'000'000;
  TimeNs rate_reduce_period_ns = 4'000;
  TimeNs alpha_period_ns = 55'000;
  TimeNs increase_period_ns = 55'000;
  std::uint64_t byte_stage = 10'000'000;
  std::uint32_t fast_recovery_stages = 5;
  std::uint64_t ai_bps = 5'000'000;
  std::uint64_t hai_bps = 50'000'000;
  std::uint32_t g_shift = 8;
  std::uint32_t initial_alpha = kAlphaOne;
};

// What a device enables (uroced's `dcqcn` device keys, a testbed engine
// host's `dcqcn`). With `enabled`, the engine marks its RC and UC data ECT(0)
// and runs both roles per connected QP: the notification point answers
// CE-marked packets with CNPs (at most one per QP per cnp_interval_ns, at
// DSCP cnp_dscp: 48, priority 6 in the default map), and the reaction point
// paces the QP at DcqcnRp's rate from the first CNP it receives until the
// rate is back at rp.line_rate_bps (the device's link rate). The CNP
// interval is the paper's 50 us.
struct DcqcnSettings {
  bool enabled = false;
  TimeNs cnp_interval_ns = 50'000;
  std::uint8_t cnp_dscp = 48;
  DcqcnConfig rp{};
};

struct DcqcnCounters {
  std::uint64_t cnps = 0;          // CNPs received
  std::uint64_t cnps_ignored = 0;  // within the reduce period of the last decrease
  std::uint64_t decreases = 0;
  std::uint64_t fast_recovery = 0;  // increase events by stage
  std::uint64_t additive = 0;
  std::uint64_t hyper = 0;
};

inline constexpr counters::FieldList<DcqcnCounters, 6> kDcqcnCounterFields{{
    {"cnps", &DcqcnCounters::cnps, "CNPs received"},
    {"cnps_ignored", &DcqcnCounters::cnps_ignored, "within the reduce period of the last decrease"},
    {"decreases", &DcqcnCounters::decreases, "rate decreases"},
    {"fast_recovery", &DcqcnCounters::fast_recovery, "increase events by stage"},
    {"additive", &DcqcnCounters::additive, "increase events in additive increase"},
    {"hyper", &DcqcnCounters::hyper, "increase events in hyper increase"},
}};
static_assert(counters::covers(kDcqcnCounterFields));
constexpr const auto& counter_fields(const DcqcnCounters&) { return kDcqcnCounterFields; }

class DcqcnRp {
 public:
  explicit DcqcnRp(const DcqcnConfig& cfg)
      : cfg_(cfg), rc_(cfg.line_rate_bps), rt_(cfg.line_rate_bps), alpha_(cfg.initial_alpha) {}

  // Rc: the rate the pacer applies.
  std::uint64_t rate_bps() const { return rc_; }
  std::uint64_t target_bps() const { return rt_; }
  std::uint32_t alpha() const { return alpha_; }
  // True once a CNP has been acted on and until the rate is back at line
  // rate with nothing left to recover.
  bool limited() const { return limited_; }
  const DcqcnCounters& counters() const { return ctr_; }

  void on_cnp(TimeNs now) {
    advance(now);
    ++ctr_.cnps;
    if (limited_ && now - last_decrease_ < cfg_.rate_reduce_period_ns) {
      ++ctr_.cnps_ignored;
      return;
    }
    ++ctr_.decreases;
    rt_ = rc_;
    rc_ = clamp(rc_ - rc_ * alpha_ / (2 * kAlphaOne));
    alpha_ = alpha_ - (alpha_ >> cfg_.g_shift) + (kAlphaOne >> cfg_.g_shift);
    limited_ = true;
    last_decrease_ = now;
    next_alpha_ = now + cfg_.alpha_period_ns;
    next_increase_ = now + cfg_.increase_period_ns;
    t_stage_ = 0;
    b_stage_ = 0;
    bytes_ = 0;
  }

  // Bytes the QP sent: the byte-counter stage advances every byte_stage.
  void on_sent(std::uint64_t bytes, TimeNs now) {
    advance(now);
    if (!limited_) return;
    bytes_ += bytes;
    while (limited_ && bytes_ >= cfg_.byte_stage) {
      bytes_ -= cfg_.byte_stage;
      ++b_stage_;
      increase();
    }
  }

  // Runs the timers due by `now` (alpha decay, timer-stage increases).
  void advance(TimeNs now) {
    while (limited_) {
      const TimeNs due = std::min(next_alpha_, next_increase_);
      if (due > now) return;
      if (next_alpha_ == due) {
        alpha_ -= alpha_ >> cfg_.g_shift;
        next_alpha_ += cfg_.alpha_period_ns;
      }
      if (next_increase_ == due) {
        ++t_stage_;
        next_increase_ += cfg_.increase_period_ns;
        increase();
      }
    }
  }

  // When advance() next has something to do; 0 when no timer runs.
  TimeNs next_deadline() const { return limited_ ? std::min(next_alpha_, next_increase_) : 0; }

 private:
  std::uint64_t clamp(std::uint64_t r) const {
    return std::clamp(r, cfg_.min_rate_bps, cfg_.line_rate_bps);
  }

  void increase() {
    const std::uint32_t f = cfg_.fast_recovery_stages;
    const std::uint32_t hi = std::max(t_stage_, b_stage_);
    const std::uint32_t lo = std::min(t_stage_, b_stage_);
    if (hi < f) {
      ++ctr_.fast_recovery;
    } else if (lo > f) {
      ++ctr_.hyper;
      rt_ = clamp(rt_ + static_cast<std::uint64_t>(lo - f) * cfg_.hai_bps);
    } else {
      ++ctr_.additive;
      rt_ = clamp(rt_ + cfg_.ai_bps);
    }
    // Rounded up, so that Rc reaches Rt (rounding down stops one short).
    rc_ = clamp((rt_ + rc_ + 1) / 2);
    // Back at line rate with nothing to recover: stop the timers (an idle
    // QP at line rate costs nothing).
    if (rc_ == cfg_.line_rate_bps && rt_ == cfg_.line_rate_bps) limited_ = false;
  }

  DcqcnConfig cfg_;
  std::uint64_t rc_;
  std::uint64_t rt_;
  std::uint32_t alpha_;
  bool limited_ = false;
  TimeNs last_decrease_ = 0;
  TimeNs next_alpha_ = 0;
  TimeNs next_increase_ = 0;
  std::uint32_t t_stage_ = 0;
  std::uint32_t b_stage_ = 0;
  std::uint64_t bytes_ = 0;
  DcqcnCounters ctr_{};
};

// The notification point's rule, per QP: a data packet that arrives with
// ECN CE asks for a CNP, and at most one is sent per `interval_ns`.
class CnpLimiter {
 public:
  explicit CnpLimiter(TimeNs interval_ns) : interval_(interval_ns) {}

  // A CE-marked packet at `now`: true when a CNP goes out for it.
  bool on_ce(TimeNs now) {
    ++ce_;
    if (sent_ != 0 && now - last_ < interval_) {
      ++suppressed_;
      return false;
    }
    last_ = now;
    ++sent_;
    return true;
  }

  std::uint64_t ce_packets() const { return ce_; }
  std::uint64_t cnps() const { return sent_; }
  std::uint64_t suppressed() const { return suppressed_; }

 private:
  TimeNs interval_;
  TimeNs last_ = 0;
  std::uint64_t ce_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t suppressed_ = 0;
};

// One connected QP's DCQCN state as uroce-ctl and the testbed show it.
struct DcqcnStatus {
  std::uint64_t rate_bps = 0;    // Rc (line rate when not limited)
  std::uint64_t target_bps = 0;  // Rt
  std::uint32_t alpha = 0;       // of kAlphaOne
  bool limited = false;
  DcqcnCounters rp{};                 // CNPs received and what they did
  std::uint64_t ce_packets = 0;       // CE-marked packets received
  std::uint64_t cnps_sent = 0;        // notification point
  std::uint64_t cnps_suppressed = 0;  // CE within the CNP interval
};

}  // namespace uroce::sched
