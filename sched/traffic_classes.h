// Eight traffic classes per device (tx_scheduler.h's interface, plus a class
// per flow): strict priority for the classes configured so, deficit round
// robin on bytes for the others, and DRR on bytes among the flows of a class.
//
// A flow (QP) belongs to one class in [0, 8), set by set_class() on the
// control path; the engine derives it from the QP's service level or traffic
// class through the same table PFC uses (pfc::PriorityMap), so a QP's TX
// class and its PFC priority are one number.
//
// One round (one engine iteration):
//   1. Strict classes, highest number first. Each flow queued in the class
//      when its pass begins gets one turn. A class that still has output
//      after its pass ends the round: nothing below it is served while it
//      has something to send.
//   2. Weighted classes share what is left by DRR on bytes: each class
//      queued when the round reaches step 2 gets a pass, adding
//      weight * class_quantum bytes to its deficit and serving its flows in
//      turn while the deficit is positive. What a pass overdraws (the last
//      turn's packets) is owed by the class's next pass; an emptied class
//      starts again from zero.
// A class may have a rate limit (rate_mbps, the config key
// `class_rates_mbps`): a token bucket in time (timing_wheel.h's RateLimit,
// credit the larger of one class quantum and kClassCreditNs of its rate)
// charged with what each of its passes sent. A class over its rate is
// skipped by the round (strict or weighted) until the bucket refills, and a
// strict class skipped so does not hold back the classes below it; the
// engine sets the time before each round (set_now) and, on a virtual clock,
// wakes at next_rate_due(). The QPs keep their places meanwhile.
// A flow's turn adds flow_quantum bytes to its deficit and serves it in
// bursts of at most `burst` frames while the deficit is positive, so two
// backlogged flows of a class send the same bytes over time whatever their
// packet sizes. A flow that sends nothing in a turn (its transport is
// blocked: window full, waiting for an ACK) keeps no deficit, nor does a
// class whose pass sent nothing, as DRR resets an empty queue's: neither
// can save up a burst while blocked.
//
// Storage: per-flow arrays and per-class FIFOs threaded through them
// (next_), all sized at construction; activate, round and active are O(1)
// per flow and never allocate; set_class moves a queued flow (O(class
// size)); remove is O(class size).
//
// Threading: owned by one engine lcore; not thread-safe.
#pragma once

#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <vector>

#include "sched/timing_wheel.h"
#include "sched/tx_scheduler.h"

namespace uroce::sched {

inline constexpr std::uint32_t kNumClasses = 8;

enum class ClassMode : std::uint8_t { kStrict, kWeighted };

struct ClassConfig {
  ClassMode mode = ClassMode::kWeighted;
  std::uint32_t weight = 1;     // weighted classes: share of the bytes, relative
  std::uint32_t rate_mbps = 0;  // the class's rate limit in Mb/s of frames; 0: none
  bool operator==(const ClassConfig&) const = default;
};

// A class's rate limit range (the config key `class_rates_mbps`; 0: none).
inline constexpr std::uint32_t kMaxClassRateMbps = 400'000;
// The credit a rate-limited class keeps (as the pacer's per-QP credit_ns):
// after the engine was off the CPU it catches up on at most this much.
inline constexpr TimeNs kClassCreditNs = 2'000'000;

// A weighted class's weight range (the config key `class_weights`).
inline constexpr std::uint32_t kMaxClassWeight = 65535;
// The range of class_quantum (the config key `class_quantum_bytes`).
inline constexpr std::uint32_t kMinClassQuantum = 1024;
inline constexpr std::uint32_t kMaxClassQuantum = 1u << 20;

struct TrafficClassConfig {
  std::array<ClassConfig, kNumClasses> classes{};
  // Bytes a flow may send per turn (its DRR quantum) and a weighted class
  // per pass per unit of weight. A smaller class quantum interleaves the
  // weighted classes more finely: a window-bound flow (a throughput flow's
  // 128 small WRITEs) waits for at most one pass of each other class
  // between its windows (docs/isolation.md, "Isolation in the testbed").
  std::uint32_t flow_quantum = 16384;
  std::uint32_t class_quantum = 65536;
  // Frames per serve() call, and the bytes a frame is assumed to hold when
  // a deficit is turned into a frame budget (a turn may take several calls;
  // rounded up to a power of two).
  std::uint32_t burst = 32;
  std::uint32_t frame_bytes = 4096;

  bool operator==(const TrafficClassConfig&) const = default;

  // The config key `strict_classes`: the classes in `mask` strict, the
  // others weighted.
  void set_strict(std::uint8_t mask) {
    for (std::uint32_t c = 0; c < kNumClasses; ++c) {
      classes[c].mode = (mask >> c & 1u) != 0 ? ClassMode::kStrict : ClassMode::kWeighted;
    }
  }
};

class TrafficClasses {
 public:
  static constexpr bool kSharesBytes = true;

  // Flows are ids in [0, capacity), all in class 0 until set_class.
  explicit TrafficClasses(std::uint32_t capacity, const TrafficClassConfig& cfg = {});

  void activate(FlowId f);
  void remove(FlowId f);
  bool active(FlowId f) const { return f < queued_.size() && queued_[f] != 0; }
  std::uint32_t size() const { return count_; }

  // Puts `f` in class `c` (ignored when either is out of range). A queued
  // flow moves to the back of its new class with its deficit reset.
  void set_class(FlowId f, std::uint8_t c);
  std::uint8_t class_of(FlowId f) const { return f < cls_.size() ? cls_[f] : 0; }
  std::uint32_t class_size(std::uint8_t c) const { return c < kNumClasses ? q_[c].count : 0; }
  const TrafficClassConfig& config() const { return cfg_; }
  std::uint64_t bad_ids() const { return bad_ids_; }

  // A running scheduler takes new class settings (uroced's SIGHUP: the
  // config keys strict_classes, class_weights, class_rates_mbps and
  // class_quantum_bytes), keeping every queued flow in its place. A class
  // whose rate stays limited owes its wait rescaled to the new rate
  // (RateLimit::set_rate); a newly limited class may send at `now`; one no
  // longer limited sends at once. A class turned strict drops its weighted
  // deficit. flow_quantum, burst and frame_bytes stay as they were.
  void reconfigure(const std::array<ClassConfig, kNumClasses>& classes, std::uint32_t class_quantum,
                   TimeNs now);

  template <class Serve>
  std::uint32_t round(Serve&& serve);

  // Class rate limits: the time the next round() runs at.
  void set_now(TimeNs now) { now_ = now; }
  // The earliest time a class held back by its rate, with flows queued,
  // may send again; the maximum TimeNs when none is.
  TimeNs next_rate_due() const {
    TimeNs t = ~TimeNs{0};
    for (std::uint32_t m = nonempty_ & limited_; m != 0; m &= m - 1) {
      const RateLimit& r = rate_[static_cast<std::uint32_t>(std::countr_zero(m))];
      if (!r.may_send(now_) && r.next_send() < t) t = r.next_send();
    }
    return t;
  }
  // Rounds in which a class was skipped for its rate (per class).
  std::uint64_t rate_skips(std::uint8_t c) const { return c < kNumClasses ? rate_skips_[c] : 0; }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  struct Fifo {
    std::uint32_t head = kNone;
    std::uint32_t tail = kNone;
    std::uint32_t count = 0;
    std::int64_t deficit = 0;  // weighted classes: bytes this pass may still send
  };
  enum class Turn : std::uint8_t { kDone, kMore, kStop };

  void push_back(std::uint8_t c, FlowId f);
  void push_front(std::uint8_t c, FlowId f);
  FlowId pop_front(std::uint8_t c);
  void unlink(std::uint8_t c, FlowId f);
  // One flow's turn; adds the bytes it sent to *bytes and its frames to *frames.
  template <class Serve>
  Turn turn(FlowId f, Serve& serve, std::int64_t* bytes, std::uint32_t* frames);
  // One pass over the flows queued in class c; false when the port stopped.
  template <class Serve>
  bool pass(std::uint8_t c, Serve& serve, bool weighted, std::uint32_t* frames);
  // The classes that may not send now for their rate (bit c), counting the
  // queued ones skipped.
  std::uint32_t over_rate();

  TrafficClassConfig cfg_;
  std::vector<std::uint8_t> cls_;
  std::vector<std::uint8_t> queued_;
  std::vector<std::uint32_t> next_;
  std::vector<std::int64_t> deficit_;
  std::array<Fifo, kNumClasses> q_{};
  std::uint32_t strict_ = 0;    // bit c: class c is strict
  std::uint32_t nonempty_ = 0;  // bit c: class c has queued flows
  std::uint32_t frame_shift_ = 0;
  std::uint32_t count_ = 0;
  std::uint8_t next_weighted_ = 0;  // where step 2 starts its rotation
  std::uint64_t bad_ids_ = 0;
  std::uint32_t limited_ = 0;  // bit c: class c has a rate limit
  std::array<RateLimit, kNumClasses> rate_{};
  std::array<std::uint64_t, kNumClasses> rate_skips_{};
  TimeNs now_ = 0;
};

inline TrafficClasses::TrafficClasses(std::uint32_t capacity, const TrafficClassConfig& cfg)
    : cfg_(cfg),
      cls_(capacity == 0 ? 1 : capacity, 0),
      queued_(cls_.size(), 0),
      next_(cls_.size(), kNone),
      deficit_(cls_.size(), 0) {
  if (cfg_.burst == 0) cfg_.burst = 1;
  cfg_.frame_bytes = std::bit_ceil(cfg_.frame_bytes == 0 ? 1u : cfg_.frame_bytes);
  frame_shift_ = static_cast<std::uint32_t>(std::countr_zero(cfg_.frame_bytes));
  if (cfg_.flow_quantum == 0) cfg_.flow_quantum = 1;
  // The class settings as a running scheduler takes them, from nothing.
  reconfigure(cfg.classes, cfg.class_quantum, 0);
}

inline void TrafficClasses::reconfigure(const std::array<ClassConfig, kNumClasses>& classes,
                                        std::uint32_t class_quantum, TimeNs now) {
  cfg_.class_quantum = class_quantum;
  for (std::uint32_t c = 0; c < kNumClasses; ++c) {
    ClassConfig& k = cfg_.classes[c];
    const ClassConfig& n = classes[c];
    k.mode = n.mode;
    k.weight = n.weight == 0 ? 1 : n.weight;
    const std::uint32_t bit = 1u << c;
    if (n.mode == ClassMode::kStrict) {
      strict_ |= bit;
      q_[c].deficit = 0;
    } else {
      strict_ &= ~bit;
    }
    const std::uint64_t bps = std::uint64_t{n.rate_mbps} * 1'000'000;
    if (n.rate_mbps == 0) {
      limited_ &= ~bit;
      rate_[c] = RateLimit();
    } else if ((limited_ & bit) != 0) {
      rate_[c].set_rate(bps, class_quantum, now, kClassCreditNs);
    } else {
      limited_ |= bit;
      rate_[c].set(bps, class_quantum, now, kClassCreditNs);
    }
    k.rate_mbps = n.rate_mbps;
    assert(((strict_ >> c) & 1u) == (k.mode == ClassMode::kStrict ? 1u : 0u));
    assert(((limited_ >> c) & 1u) == (k.rate_mbps != 0 ? 1u : 0u));
  }
}

inline std::uint32_t TrafficClasses::over_rate() {
  std::uint32_t over = 0;
  for (std::uint32_t m = nonempty_ & limited_; m != 0; m &= m - 1) {
    const auto c = static_cast<std::uint32_t>(std::countr_zero(m));
    if (!rate_[c].may_send(now_)) {
      over |= 1u << c;
      ++rate_skips_[c];
    }
  }
  return over;
}

inline void TrafficClasses::activate(FlowId f) {
  if (f >= queued_.size()) {
    ++bad_ids_;
    return;
  }
  if (queued_[f] != 0) return;
  queued_[f] = 1;
  ++count_;
  push_back(cls_[f], f);
}

inline void TrafficClasses::remove(FlowId f) {
  if (f >= queued_.size() || queued_[f] == 0) return;
  unlink(cls_[f], f);
  queued_[f] = 0;
  deficit_[f] = 0;
  if (q_[cls_[f]].count == 0) q_[cls_[f]].deficit = 0;
  --count_;
}

inline void TrafficClasses::set_class(FlowId f, std::uint8_t c) {
  if (f >= cls_.size() || c >= kNumClasses) {
    ++bad_ids_;
    return;
  }
  if (cls_[f] == c) return;
  if (queued_[f] != 0) {
    unlink(cls_[f], f);
    deficit_[f] = 0;
    push_back(c, f);
  }
  cls_[f] = c;
}

inline void TrafficClasses::push_back(std::uint8_t c, FlowId f) {
  Fifo& q = q_[c];
  next_[f] = kNone;
  if (q.tail == kNone) {
    q.head = f;
  } else {
    next_[q.tail] = f;
  }
  q.tail = f;
  ++q.count;
  nonempty_ |= 1u << c;
}

inline void TrafficClasses::push_front(std::uint8_t c, FlowId f) {
  Fifo& q = q_[c];
  next_[f] = q.head;
  q.head = f;
  if (q.tail == kNone) q.tail = f;
  ++q.count;
  nonempty_ |= 1u << c;
}

inline FlowId TrafficClasses::pop_front(std::uint8_t c) {
  Fifo& q = q_[c];
  const FlowId f = q.head;
  q.head = next_[f];
  if (q.head == kNone) q.tail = kNone;
  next_[f] = kNone;
  if (--q.count == 0) nonempty_ &= ~(1u << c);
  return f;
}

inline void TrafficClasses::unlink(std::uint8_t c, FlowId f) {
  Fifo& q = q_[c];
  std::uint32_t prev = kNone;
  for (std::uint32_t g = q.head; g != kNone; prev = g, g = next_[g]) {
    if (g != f) continue;
    if (prev == kNone) {
      q.head = next_[g];
    } else {
      next_[prev] = next_[g];
    }
    if (q.tail == g) q.tail = prev;
    next_[g] = kNone;
    if (--q.count == 0) nonempty_ &= ~(1u << c);
    return;
  }
}

template <class Serve>
TrafficClasses::Turn TrafficClasses::turn(FlowId f, Serve& serve, std::int64_t* bytes,
                                          std::uint32_t* frames) {
  const std::int64_t quantum = cfg_.flow_quantum;
  std::int64_t& d = deficit_[f];
  // A turn ends with d <= 0 (quantum used, or reset when the flow blocked)
  // unless a full port cut it short: then it resumes with what is left and
  // no new quantum. Adding one at every resumption let the flow at the front
  // of a port that takes one frame per round keep its turn for ever.
  if (d <= 0) d += quantum;
  while (d > 0) {
    const std::uint64_t want =
        (static_cast<std::uint64_t>(d) + cfg_.frame_bytes - 1) >> frame_shift_;
    const auto budget = static_cast<std::uint32_t>(want < cfg_.burst ? want : cfg_.burst);
    const ServeResult r = serve(f, budget);
    *frames += r.sent;
    *bytes += static_cast<std::int64_t>(r.bytes);
    d -= static_cast<std::int64_t>(r.bytes);
    if (r.stop) return Turn::kStop;
    if (!r.more) {
      d = 0;
      return Turn::kDone;
    }
    if (r.sent == 0) {
      d = 0;
      return Turn::kMore;
    }
  }
  return Turn::kMore;
}

template <class Serve>
bool TrafficClasses::pass(std::uint8_t c, Serve& serve, bool weighted, std::uint32_t* frames) {
  Fifo& q = q_[c];
  const std::int64_t share = static_cast<std::int64_t>(cfg_.classes[c].weight) * cfg_.class_quantum;
  // Likewise per class: a pass ends with deficit <= 0 (overdrawn, or reset)
  // unless a full port cut it short, and a cut pass resumes (round() starts
  // the next rotation at its class) without a new share. Adding one at
  // every resumption starved the other weighted classes while the port
  // stayed full.
  if (weighted && q.deficit <= 0) q.deficit += share;
  // A strict pass gives each flow queued at its start one turn. A weighted
  // pass goes round its flows while the class's deficit lasts, or until a
  // whole cycle of turns sent nothing (every flow blocked).
  std::uint32_t turns = q.count;
  std::uint32_t idle = 0;
  std::int64_t pass_bytes = 0;
  while (q.count != 0 && idle < q.count && (weighted ? q.deficit > 0 : turns-- != 0)) {
    const FlowId f = pop_front(c);
    // queued_[f] stays set during the turn, so an activate(f) from inside
    // serve cannot queue f twice.
    std::int64_t bytes = 0;
    const Turn r = turn(f, serve, &bytes, frames);
    if (weighted) q.deficit -= bytes;
    pass_bytes += bytes;
    idle = bytes == 0 ? idle + 1 : 0;
    if (r == Turn::kStop) {
      // The port is full: f keeps its place for the next round while its
      // turn has deficit left; a turn the cut ended goes to the back.
      if (deficit_[f] > 0) {
        push_front(c, f);
      } else {
        push_back(c, f);
      }
      if ((limited_ >> c & 1u) != 0) rate_[c].sent(static_cast<std::uint64_t>(pass_bytes), now_);
      return false;
    }
    if (r == Turn::kMore) {
      push_back(c, f);
    } else {
      queued_[f] = 0;
      --count_;
    }
  }
  // An emptied class, or one whose flows were all blocked, keeps no
  // deficit (DRR's rule for an empty queue): it cannot save up a burst.
  if (q.count == 0 || pass_bytes == 0) q.deficit = 0;
  if ((limited_ >> c & 1u) != 0) rate_[c].sent(static_cast<std::uint64_t>(pass_bytes), now_);
  return true;
}

template <class Serve>
std::uint32_t TrafficClasses::round(Serve&& serve) {
  if (nonempty_ == 0) return 0;
  std::uint32_t frames = 0;
  // Classes over their rate sit this round out (one test when none has a
  // limit).
  const std::uint32_t over = limited_ == 0 ? 0 : over_rate();
  // Strict classes, highest first; each pass may empty its class. One that
  // still has output ends the round, unless its rate now holds it back.
  for (std::uint32_t m = nonempty_ & strict_ & ~over; m != 0;) {
    const auto k = static_cast<std::uint8_t>(31 - std::countl_zero(m));
    if (!pass(k, serve, false, &frames)) return frames;
    if (q_[k].count != 0 && rate_[k].may_send(now_)) return frames;
    m = nonempty_ & strict_ & ~over & ((1u << k) - 1);
  }
  // Weighted classes, in rotation from next_weighted_ (the set bits of the
  // non-empty weighted classes, rotated so that bit 0 is next_weighted_).
  const std::uint32_t w = nonempty_ & ~strict_ & ~over & 0xffu;
  if (w == 0) return frames;
  const std::uint32_t start = next_weighted_;
  std::uint32_t rot = ((w >> start) | (w << (kNumClasses - start))) & 0xffu;
  while (rot != 0) {
    const auto k = static_cast<std::uint8_t>((start + std::countr_zero(rot)) % kNumClasses);
    rot &= rot - 1;
    if (q_[k].count == 0) continue;
    if (!pass(k, serve, true, &frames)) {
      // The next round resumes k's pass if it has deficit left; a pass the
      // cut ended hands over to the next class, or k would start a new pass
      // at every round of a full port and starve the others.
      next_weighted_ = q_[k].deficit > 0 ? k : static_cast<std::uint8_t>((k + 1) % kNumClasses);
      return frames;
    }
  }
  next_weighted_ = static_cast<std::uint8_t>((start + 1) % kNumClasses);
  return frames;
}

static_assert(TxScheduler<TrafficClasses> && kSharesBytes<TrafficClasses>);

}  // namespace uroce::sched
