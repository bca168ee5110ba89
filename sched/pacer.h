// Per-flow pacing: the flows (QPs) that have a rate limit, each with its
// RateLimit (timing_wheel.h), and the timing wheel in which a flow that ran
// ahead of its rate waits until it may send again.
//
// How the engine uses it, per turn of a flow f that the TX policy serves:
//   - paced(f) false: nothing to do (one load and a compare per turn: the
//     cost an unpaced flow pays).
//   - may_send(f, now) false: park(f), and the turn ends with the flow out
//     of the policy's set; the wheel's advance() hands it back (the engine
//     re-activates it) when its time comes.
//   - else serve at most burst_frames(f) frames, then sent(f, bytes, now);
//     if the flow still has output but may not send now, park it.
// A flow parked while the policy still holds it (an activate from a doorbell)
// only costs the policy a turn that sends nothing and parks it again.
//
// Entries are allocated on the control path (set) from a free list, and the
// wheel grows with them: the per-flow index is the only state an unpaced
// flow costs (4 bytes), and nothing on the packet path allocates or scans.
//
// Two limits may apply to a flow: the verbs' (set: the application's rate
// limit) and congestion control's (set_cc: DCQCN's current rate, changed on
// the packet path). The flow is paced at the lower of the two. Congestion
// control takes its entries from those reserve() made room for, so it never
// allocates; and a flow it limits keeps one burst of credit (at least a wheel
// slot), not credit_ns: after a stall it must not catch up into the
// congestion that slowed it.
//
// Credit after a stall. A token bucket that only keeps one burst loses the
// time its engine thread spends off the CPU whenever that is longer than the
// burst: beside two busy loops on a 2-core machine the lcore waits for a CPU
// for several ms at a time, and 10 Mb/s with a 10 ms burst got 0.69 of its
// rate, 20 Mb/s with a one-frame burst 0.55. The pacer therefore tells an
// idle flow from a backlogged one. A flow that ran out of output (sent()'s
// `more` false) is idle: when it sends again it keeps only its burst (at
// least credit_ns), as a token bucket does. A flow that still had output,
// or waited in the wheel, was held back, not idle: the time the engine was
// away is owed to it, and it keeps up to backlog_ns of its rate, so that
// over any window its rate is what was asked (it catches up on the
// engine's next turns, sending back to back). A flow that congestion
// control limits never does.
//
// Threading: owned by one engine lcore; not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "datapath/base/time.h"
#include "sched/timing_wheel.h"
#include "sched/tx_scheduler.h"

namespace uroce::sched {

struct PacerConfig {
  TimeNs granularity_ns = 1000;  // width of a wheel slot
  std::uint32_t slots = 4096;    // wheel span = granularity * slots
  // The least time a paced flow may fall behind its rate and still make it
  // up (its credit, when its burst is shorter): a software engine is
  // sometimes descheduled for milliseconds, and a flow that kept only one
  // frame of credit lost that time for good (0.55 of 1 Gb/s with one-frame
  // bursts on the 2-core VM). A flow sends no faster than its burst while
  // it keeps up; only after a stall does it catch up, by at most this long
  // at the rate.
  TimeNs credit_ns = 2'000'000;
  // How far behind its rate a backlogged flow may fall and still make it up
  // (the longest the engine thread may be off the CPU without the flow
  // losing rate; see the header). At least credit_ns.
  TimeNs backlog_ns = 100'000'000;
};

// A flow's rate limit as the verbs give it (ibv_qp_rate_limit_attr): the
// rate, the burst it may send at once and the packet size it mostly sends.
struct PaceSpec {
  std::uint64_t rate_bps = 0;       // 0: not paced
  std::uint32_t burst_bytes = 0;    // 0: one typical packet
  std::uint32_t typical_bytes = 0;  // 0: the caller's default (the path MTU)
};

// What the pacer shows of one paced flow (uroce-ctl sched).
struct PaceStatus {
  PaceSpec spec{};
  std::uint64_t cc_bps = 0;      // congestion control's rate (0: none)
  std::uint64_t parks = 0;       // times it ran ahead of its rate and waited
  std::uint64_t paced_ns = 0;    // total time it waited in the wheel
  std::uint64_t sent_bytes = 0;  // bytes charged to its rate
  bool waiting = false;
};

class Pacer {
 public:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  // Flows are ids in [0, flows).
  Pacer(std::uint32_t flows, const PacerConfig& cfg, TimeNs now)
      : idx_(flows == 0 ? 1 : flows, kNone),
        wheel_(0, cfg.granularity_ns, cfg.slots, now),
        gran_(cfg.granularity_ns),
        slack_(std::max(cfg.granularity_ns, cfg.credit_ns)),
        backlog_(std::max(slack_, cfg.backlog_ns)) {}

  // Control path. Sets (rate_bps != 0) or clears (rate_bps == 0) f's limit;
  // a cleared flow that was waiting is handed to `release` at once so that
  // it is served again. `default_typical` stands in for spec.typical_bytes
  // 0. Returns false for an id out of range.
  template <class Release>
  bool set(FlowId f, const PaceSpec& spec, std::uint32_t default_typical, TimeNs now,
           Release&& release) {
    if (f >= idx_.size()) return false;
    if (spec.rate_bps == 0 && (idx_[f] == kNone || entry(f).cc_bps == 0)) {
      clear(f, std::forward<Release>(release));
      return true;
    }
    if (idx_[f] == kNone) acquire(f);
    Entry& e = entry(f);
    e.spec = spec;
    if (e.spec.typical_bytes == 0)
      e.spec.typical_bytes = std::max<std::uint32_t>(default_typical, 1);
    if (e.spec.burst_bytes == 0) e.spec.burst_bytes = e.spec.typical_bytes;
    e.burst_frames = std::max<std::uint32_t>(e.spec.burst_bytes / e.spec.typical_bytes, 1);
    e.limit.set(effective(e), e.spec.burst_bytes, now, slack(e));
    return true;
  }

  // Room for `flows` entries without allocating (congestion control's
  // set_cc runs on the packet path). Control path.
  void reserve(std::uint32_t flows) {
    entries_.reserve(flows);
    free_.reserve(flows);
    wheel_.grow(flows);
  }

  // Packet path: congestion control's rate for f (0: none; the flow keeps
  // its verbs limit, or is no longer paced). A waiting flow whose rate rose
  // stays in its slot; the wait it owes is rescaled (RateLimit::set_rate).
  // Returns false, changing nothing, when a new entry would need memory
  // reserve() did not set aside.
  template <class Release>
  bool set_cc(FlowId f, std::uint64_t cc_bps, std::uint32_t default_typical, TimeNs now,
              Release&& release) {
    if (f >= idx_.size()) return false;
    if (idx_[f] == kNone) {
      if (cc_bps == 0) return true;
      if (free_.empty() && entries_.size() == entries_.capacity()) return false;
      acquire(f);
      Entry& e = entry(f);
      e.spec.typical_bytes = std::max<std::uint32_t>(default_typical, 1);
      e.spec.burst_bytes = e.spec.typical_bytes;
      e.cc_bps = cc_bps;
      e.limit.set(cc_bps, e.spec.burst_bytes, now, slack(e));
      return true;
    }
    Entry& e = entry(f);
    if (cc_bps == 0 && e.spec.rate_bps == 0) {
      clear(f, std::forward<Release>(release));
      return true;
    }
    e.cc_bps = cc_bps;
    e.limit.set_rate(effective(e), e.spec.burst_bytes, now, slack(e));
    return true;
  }

  // Forgets f (its QP is gone, or its limit cleared); a waiting flow is
  // handed to `release` (pass a no-op when the flow is gone).
  template <class Release>
  void clear(FlowId f, Release&& release) {
    if (f >= idx_.size() || idx_[f] == kNone) return;
    const std::uint32_t i = idx_[f];
    const bool was_waiting = wheel_.waiting(i);
    wheel_.remove(i);
    idx_[f] = kNone;
    free_.push_back(i);
    --count_;
    if (was_waiting) release(f);
  }

  bool paced(FlowId f) const { return idx_[f] != kNone; }
  // The flows with a limit, and those waiting in the wheel now.
  std::uint32_t count() const { return count_; }
  std::uint32_t waiting() const { return wheel_.size(); }

  // ---- Packet path (paced(f) must hold) -----------------------------------
  bool may_send(FlowId f, TimeNs now) const { return entry(f).limit.may_send(now); }
  std::uint32_t burst_frames(FlowId f) const { return entry(f).burst_frames; }
  // Charges `bytes` f sent at `now`; `more`: f still has output after them
  // (it stays backlogged; false: it is idle until it has output again).
  void sent(FlowId f, std::uint64_t bytes, TimeNs now, bool more = false) {
    Entry& e = entry(f);
    e.limit.sent(bytes, now, e.backlogged && !cc_limited(e) ? backlog_ : 0);
    e.backlogged = more;
    e.sent_bytes += bytes;
  }
  // f waits until its rate allows it to send again, or until `wake_by` if
  // that is sooner (congestion control's next rate change). A parked flow
  // has output: it is backlogged until a sent() says otherwise.
  void park(FlowId f, TimeNs now, TimeNs wake_by = ~TimeNs{0}) {
    Entry& e = entry(f);
    ++e.parks;
    e.backlogged = true;
    e.parked_at = now;
    wheel_.insert(idx_[f], std::min(e.limit.next_send(), wake_by));
  }
  // Hands every flow whose time has come to release(FlowId). Cheap when
  // nothing waits (the engine checks waiting() first).
  template <class Release>
  std::uint32_t advance(TimeNs now, Release&& release) {
    return wheel_.advance(now, [&](std::uint32_t i) {
      Entry& e = entries_[i];
      e.paced_ns += now - std::min(now, e.parked_at);
      release(e.flow);
    });
  }
  // For a caller on a virtual clock: when the next waiting flow is due.
  TimeNs next_due(TimeNs none) const { return wheel_.next_due(none); }

  // Control path: f's state, or false when it is not paced.
  bool status(FlowId f, PaceStatus* out) const {
    if (f >= idx_.size() || idx_[f] == kNone) return false;
    const Entry& e = entries_[idx_[f]];
    out->spec = e.spec;
    out->cc_bps = e.cc_bps;
    out->parks = e.parks;
    out->paced_ns = e.paced_ns;
    out->sent_bytes = e.sent_bytes;
    out->waiting = wheel_.waiting(idx_[f]);
    return true;
  }

 private:
  struct Entry {
    FlowId flow = 0;
    PaceSpec spec{};           // the verbs limit (rate 0: none)
    std::uint64_t cc_bps = 0;  // congestion control's (0: none)
    std::uint32_t burst_frames = 1;
    bool backlogged = false;  // had output when last served or parked
    RateLimit limit{};
    TimeNs parked_at = 0;
    std::uint64_t parks = 0;
    std::uint64_t paced_ns = 0;
    std::uint64_t sent_bytes = 0;
  };
  // A fresh entry for f, from the free list or a new one.
  void acquire(FlowId f) {
    std::uint32_t i;
    if (free_.empty()) {
      i = static_cast<std::uint32_t>(entries_.size());
      entries_.emplace_back();
      wheel_.grow(static_cast<std::uint32_t>(entries_.size()));
    } else {
      i = free_.back();
      free_.pop_back();
    }
    entries_[i] = Entry{};
    entries_[i].flow = f;
    idx_[f] = i;
    ++count_;
  }
  static std::uint64_t effective(const Entry& e) {
    if (e.cc_bps == 0) return e.spec.rate_bps;
    if (e.spec.rate_bps == 0) return e.cc_bps;
    return std::min(e.cc_bps, e.spec.rate_bps);
  }
  // The verbs limit keeps credit_ns of credit; a congestion-control limit
  // only one slot (see the header).
  static bool cc_limited(const Entry& e) { return e.cc_bps != 0 && effective(e) == e.cc_bps; }
  TimeNs slack(const Entry& e) const { return cc_limited(e) ? gran_ : slack_; }
  Entry& entry(FlowId f) { return entries_[idx_[f]]; }
  const Entry& entry(FlowId f) const { return entries_[idx_[f]]; }

  std::vector<std::uint32_t> idx_;  // flow -> entry, kNone when unpaced
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> free_;
  TimingWheel wheel_;  // keyed by entry index
  TimeNs gran_;
  TimeNs slack_;
  TimeNs backlog_;
  std::uint32_t count_ = 0;
};

}  // namespace uroce::sched
