// Stage stamps of a round trip (issue 31's tail profile, docs/tails.md
// "Stage stamps"): where a message's time goes inside the engine and on the
// wire, in log2 histograms (loop_histogram.h's buckets) and in a ring of the
// last tracked messages, from which the slowest ones are read.
//
// Off unless a device's `stage_stamps` key is on; the engine then reads its
// clock at these points of an iteration (Vnic::poll): as the RX phase asks
// the port for its burst, for each send WQE the doorbell phase takes, after
// a TX burst that carried a tracked WQE's first packet, and when a
// completion is written. Off, the packet path pays
// one test per completion, per WQE taken and per QP served, and the
// iteration one per RX phase and per flush: no clock read.
//
// What is stamped, per QP slot (the recorder never sees a packet):
//   app_ns     a QP's completion written -> its next WQE seen: the
//              application's turn (polling, its work, posting) plus the
//              engine's delay in seeing the post;
//   seen_tx_ns WQE seen -> the TX burst that carried its first packet;
//   tx_rx_ns   that TX burst -> the RX burst that held the packet which
//              completed it (an ACK, a READ response, an atomic ACK): the
//              wire both ways and the peer's engine;
//   rx_cqe_ns  an RX burst -> a completion it caused written (sends and
//              receives, every QP kind);
//   total_ns   WQE seen -> its completion written.
// seen_tx, tx_rx and total follow one tracked WQE per QP at a time: a
// signalled RC send WQE posted while the QP's send queue was empty (so the
// QP's next packet is its own), until its completion. Each completed
// tracked WQE also leaves a StageRecord in a ring of the last kRecent.
//
// I/O free: the caller passes every time. Engine lcore only.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <span>
#include <vector>

#include "datapath/base/time.h"
#include "datapath/engine/loop_histogram.h"

namespace uroce::engine {

struct StageHistograms {
  LoopBuckets app_ns{};
  LoopBuckets seen_tx_ns{};
  LoopBuckets tx_rx_ns{};
  LoopBuckets rx_cqe_ns{};
  LoopBuckets total_ns{};
};

inline void add(StageHistograms& to, const StageHistograms& from) {
  add(to.app_ns, from.app_ns);
  add(to.seen_tx_ns, from.seen_tx_ns);
  add(to.tx_rx_ns, from.tx_rx_ns);
  add(to.rx_cqe_ns, from.rx_cqe_ns);
  add(to.total_ns, from.total_ns);
}

// One completed tracked WQE; app_ns is 0 when no completion preceded it.
struct StageRecord {
  TimeNs app_ns = 0;
  TimeNs seen_tx_ns = 0;
  TimeNs tx_rx_ns = 0;
  TimeNs rx_cqe_ns = 0;
  TimeNs total_ns = 0;
};

// The slowest `fraction` of `records` by total_ns (at least one when there
// are any): how many, and the mean and maximum of each stage over them.
struct StageWorst {
  std::uint64_t count = 0;
  StageRecord mean{};
  StageRecord max{};
};

// Every field of a StageRecord, for folds over them.
inline constexpr TimeNs StageRecord::*kStageFields[] = {&StageRecord::app_ns,
                                                        &StageRecord::seen_tx_ns,
                                                        &StageRecord::tx_rx_ns,
                                                        &StageRecord::rx_cqe_ns,
                                                        &StageRecord::total_ns};

inline StageWorst slowest(std::span<const StageRecord> records, double fraction) {
  StageWorst w;
  if (records.empty()) return w;
  std::vector<StageRecord> v(records.begin(), records.end());
  auto n = static_cast<std::size_t>(fraction * static_cast<double>(v.size()));
  n = std::clamp<std::size_t>(n, 1, v.size());
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n - 1), v.end(),
                   [](const StageRecord& a, const StageRecord& b) {
                     return a.total_ns > b.total_ns;
                   });
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto f : kStageFields) {
      w.mean.*f += v[i].*f;
      w.max.*f = std::max(w.max.*f, v[i].*f);
    }
  }
  for (const auto f : kStageFields) w.mean.*f /= n;
  w.count = n;
  return w;
}

// What a Vnic reports: empty `recent` and zero histograms when off.
struct StageReport {
  bool on = false;
  StageHistograms hist{};
  std::vector<StageRecord> recent;  // oldest first
  std::uint64_t untracked = 0;      // tracked WQEs given up (see on_served)
};

class StageRecorder {
 public:
  static constexpr std::uint32_t kRecent = 1024;
  // QPs served in one pump whose first packet waits for the TX burst.
  static constexpr std::uint32_t kPendingTx = 64;

  // Allocates everything it will use: `slots` QP slots.
  explicit StageRecorder(std::uint32_t slots) : track_(slots), ring_(kRecent) {}

  // The doorbell phase took a send WQE of slot `slot` at `t`. `trackable`:
  // a signalled RC WQE and the QP's send queue was empty before it.
  void on_post(std::uint32_t slot, std::uint64_t wr_id, bool trackable, TimeNs t) {
    Track& k = track_[slot];
    TimeNs app = 0;
    if (k.last_cqe != 0) {
      app = since(k.last_cqe, t);
      put(hist_.app_ns, app);
      k.last_cqe = 0;
    }
    if (k.state != State::kIdle || !trackable) return;
    k = Track{State::kSeen, wr_id, t, 0, app, 0};
  }

  // The pump sent packets of `slot`: its tracked WQE, if not sent yet, left
  // in this iteration's TX burst. Beyond kPendingTx such QPs in one pump the
  // WQE is no longer tracked (counted).
  void on_served(std::uint32_t slot) {
    Track& k = track_[slot];
    if (k.state != State::kSeen) return;
    if (pending_n_ == kPendingTx) {
      k.state = State::kIdle;
      ++untracked_;
      return;
    }
    k.state = State::kServed;
    pending_[pending_n_++] = slot;
  }

  // Tracked WQEs whose first packet waits for this iteration's TX burst.
  bool waiting_tx() const { return pending_n_ != 0; }

  // The TX burst returned at `t`.
  void on_flushed(TimeNs t) {
    for (std::uint32_t i = 0; i < pending_n_; ++i) {
      Track& k = track_[pending_[i]];
      if (k.state != State::kServed) continue;  // reset since
      k.state = State::kSent;
      k.tx = t;
      put(hist_.seen_tx_ns, since(k.seen, t));
    }
    pending_n_ = 0;
  }

  // A completion of `slot` written at `t`; `rx` the RX burst that caused it
  // (0: written outside the RX phase). `send`: a send-queue completion, of
  // WR `wr_id`.
  void on_cqe(std::uint32_t slot, bool send, std::uint64_t wr_id, TimeNs rx, TimeNs t) {
    Track& k = track_[slot];
    k.last_cqe = t;
    if (rx != 0) put(hist_.rx_cqe_ns, since(rx, t));
    if (!send || k.state == State::kIdle || k.wr_id != wr_id) return;
    if (k.state == State::kSent) {
      StageRecord r;
      r.app_ns = k.app;
      r.seen_tx_ns = since(k.seen, k.tx);
      r.total_ns = since(k.seen, t);
      if (rx != 0) {
        r.tx_rx_ns = since(k.tx, rx);
        r.rx_cqe_ns = since(rx, t);
        put(hist_.tx_rx_ns, r.tx_rx_ns);
      }
      put(hist_.total_ns, r.total_ns);
      ring_[ring_next_ % kRecent] = r;
      ++ring_next_;
    }
    k.state = State::kIdle;
  }

  // The QP left the slot or went back to RESET: nothing of it carries on.
  void on_reset(std::uint32_t slot) { track_[slot] = Track{}; }

  StageReport report() const {
    StageReport r;
    r.on = true;
    r.hist = hist_;
    r.untracked = untracked_;
    const std::uint64_t n = std::min<std::uint64_t>(ring_next_, kRecent);
    r.recent.reserve(n);
    for (std::uint64_t i = ring_next_ - n; i < ring_next_; ++i)
      r.recent.push_back(ring_[i % kRecent]);
    return r;
  }

 private:
  enum class State : std::uint8_t { kIdle, kSeen, kServed, kSent };
  struct Track {
    State state = State::kIdle;
    std::uint64_t wr_id = 0;
    TimeNs seen = 0;
    TimeNs tx = 0;
    TimeNs app = 0;
    TimeNs last_cqe = 0;
  };

  // Stamps come from one clock, read in order; a later stamp is never
  // earlier, but a caller's 0 ("none") must not wrap.
  static TimeNs since(TimeNs from, TimeNs to) { return to > from ? to - from : 0; }
  static void put(LoopBuckets& h, TimeNs v) { ++h[loop_bucket(v)]; }

  std::vector<Track> track_;
  std::vector<StageRecord> ring_;
  std::uint64_t ring_next_ = 0;
  std::uint32_t pending_[kPendingTx]{};
  std::uint32_t pending_n_ = 0;
  std::uint64_t untracked_ = 0;
  StageHistograms hist_{};
};

}  // namespace uroce::engine
