// The receiver half of the Homa-like scheduler (issue 15; docs/homa.md):
// one GrantScheduler per device decides, across all QPs and peers, which
// incoming messages may send their scheduled bytes, and at which priority.
//
// A sender sends a message's first unsched_bytes at once; the rest waits
// for GRANTs, each naming the offset up to which the sender may send
// (cumulative, so a repeated or late grant is harmless). The receiver:
//   - tracks every incoming message it has seen a packet of (its length is
//     in the first packet) and the bytes received of it;
//   - grants by SRPT: the `overcommit` messages with the fewest bytes still
//     to receive, at most one per peer first (a sender sends one message at
//     a time at full rate; a second of the same peer gets a slot only when
//     no other peer wants one), each kept rtt_bytes ahead of what arrived;
//   - bounds what is granted but not yet received over all messages by
//     max_incoming;
//   - gives fifo_permille of the granted bytes to the oldest message,
//     whatever its length, so a long message cannot starve;
//   - gives each granted message a priority: with k messages granted, the
//     shortest gets scheduled level k-1 and the longest level 0 (the
//     lowest levels while few compete, so a newer, shorter message can
//     preempt at a higher one);
//   - re-sends a grant when a message with granted bytes outstanding
//     received nothing for resend_ns (a lost GRANT, or a sender that
//     restarted: the grant is re-sent, never the data, which RC recovers).
// Priorities: `priorities` network levels, the top unsched_priorities for
// unscheduled packets (by the cutoffs of unsched_cutoffs.h, which the
// receiver computes and publishes), the others for scheduled ones (0 the
// lowest).
//
// A pure state machine: packets' facts and `now` in, grants out; no I/O,
// no clock. Storage is fixed at construction (max_messages); nothing
// allocates after it. poll() looks at the messages for resends only once
// the earliest resend deadline has come, and sorts them (O(n log n) in the
// messages tracked) only when a packet arrived since the last poll; every
// loop runs over the messages tracked, never over the table's capacity.
// Engine thread only.
#pragma once

#include <cstdint>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "sched/tx_scheduler.h"

namespace uroce::sched::homa {

using TimeNs = std::uint64_t;

struct GrantConfig {
  std::uint32_t rtt_bytes = 60'000;       // granted ahead of what arrived, per message
  std::uint32_t unsched_bytes = 60'000;   // what senders send before any grant
  std::uint32_t grant_increment = 4'096;  // the least a new grant advances (a packet)
  std::uint32_t overcommit = 4;           // messages granted at once
  std::uint64_t max_incoming = 400'000;   // granted, not yet received: all messages
  std::uint32_t fifo_permille = 50;       // of granted bytes, to the oldest message
  std::uint8_t priorities = 8;
  std::uint8_t unsched_priorities = 4;
  TimeNs resend_ns = 1'000'000;
  std::uint32_t max_messages = 4'096;
};

// One grant to send: the sender of `key` (at `peer`) may send up to
// `offset` bytes of it, at network priority `priority`.
struct Grant {
  std::uint64_t key = 0;
  std::uint32_t peer = 0;
  std::uint64_t offset = 0;
  std::uint8_t priority = 0;
  bool resend = false;  // the same offset again, after resend_ns of silence
  bool fifo = false;    // given to the oldest message, not by SRPT
};

struct GrantCounters {
  std::uint64_t messages = 0;   // incoming messages tracked, ever
  std::uint64_t completed = 0;  // fully received
  std::uint64_t grants = 0;     // Grants produced, resends included
  std::uint64_t resends = 0;
  std::uint64_t fifo_grants = 0;
  std::uint64_t granted_bytes = 0;
  std::uint64_t table_full = 0;       // a new message found no free entry (not scheduled)
  std::uint64_t bad_length = 0;       // a packet past its message's length, or lengths disagree
  std::uint64_t incoming_capped = 0;  // polls that held a grant back for max_incoming
};

inline constexpr counters::FieldList<GrantCounters, 9> kGrantCounterFields{{
    {"messages", &GrantCounters::messages, "incoming messages tracked, ever"},
    {"completed", &GrantCounters::completed, "fully received"},
    {"grants", &GrantCounters::grants, "Grants produced, resends included"},
    {"resends", &GrantCounters::resends,
     "grants of the same offset again, after resend_ns of silence"},
    {"fifo_grants", &GrantCounters::fifo_grants, "grants given to the oldest message, not by SRPT"},
    {"granted_bytes", &GrantCounters::granted_bytes, "bytes granted"},
    {"table_full", &GrantCounters::table_full, "a new message found no free entry (not scheduled)"},
    {"bad_length", &GrantCounters::bad_length,
     "a packet past its message's length, or lengths disagree"},
    {"incoming_capped", &GrantCounters::incoming_capped,
     "polls that held a grant back for max_incoming"},
}};
static_assert(counters::covers(kGrantCounterFields));
constexpr const auto& counter_fields(const GrantCounters&) { return kGrantCounterFields; }

enum class DataResult : std::uint8_t { kTracked, kCompleted, kTableFull, kBadLength };

class GrantScheduler {
 public:
  explicit GrantScheduler(const GrantConfig& cfg = {});

  // `bytes` new bytes of message `key` (total `length`, from `peer`)
  // arrived at `now`. The caller counts each byte once (RC delivers in
  // order; a duplicate packet is not reported). A message whose length is
  // within unsched_bytes needs no grant and is not tracked (kCompleted).
  DataResult on_data(std::uint64_t key, std::uint32_t peer, std::uint64_t length,
                     std::uint64_t bytes, TimeNs now);
  // Forgets `key` (its QP was destroyed or went to error).
  void drop(std::uint64_t key);

  // Appends the grants due at `now` to *out (cleared first): SRPT grants,
  // a FIFO grant when due, resends. At most overcommit + 1 + the resends.
  void poll(TimeNs now, std::vector<Grant>* out);
  // When poll() next has something to do without a new packet: the
  // earliest resend deadline (never later; possibly earlier, when data
  // moved it since), or UINT64_MAX.
  TimeNs next_timer() const { return next_resend_; }

  // The network priority of scheduled level `level` (0 = lowest) and the
  // number of scheduled levels.
  std::uint8_t scheduled_levels() const { return sched_levels_; }
  std::uint32_t tracked() const { return static_cast<std::uint32_t>(live_list_.size()); }
  // The offset granted so far to `key` (at least its unscheduled bytes),
  // or 0 when it is not tracked.
  std::uint64_t granted(std::uint64_t key) const {
    const std::uint32_t i = find(key);
    return i == kNone ? 0 : msgs_[i].granted;
  }
  std::uint64_t outstanding() const { return outstanding_; }
  const GrantCounters& counters() const { return ctr_; }
  const GrantConfig& config() const { return cfg_; }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  static constexpr std::uint32_t kMaxOvercommit = 64;
  struct Msg {
    std::uint64_t key = 0;
    std::uint64_t length = 0;
    std::uint64_t received = 0;
    std::uint64_t granted = 0;  // offset granted so far (at least unsched_bytes)
    TimeNs first_ns = 0;        // when its first packet arrived (FIFO age)
    TimeNs last_data_ns = 0;    // when data last arrived, or the grant was re-sent
    std::uint32_t peer = 0;
    std::uint32_t live_pos = 0;  // its place in live_list_
  };

  std::uint32_t find(std::uint64_t key) const;
  std::uint32_t insert(std::uint64_t key);
  void erase(std::uint32_t idx);
  std::uint64_t remaining(const Msg& m) const { return m.length - m.received; }
  // Grants m up to min(length, received + rtt_bytes) within the incoming
  // budget; false if nothing was granted.
  bool grant(Msg& m, std::uint8_t priority, bool fifo, std::vector<Grant>* out);

  GrantConfig cfg_;
  std::uint8_t sched_levels_ = 1;
  std::vector<Msg> msgs_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> slots_;  // open addressing: key hash -> msgs_ index
  std::uint32_t slot_mask_ = 0;
  std::vector<std::uint32_t> live_list_;  // msgs_ indices in use (dense)
  std::vector<std::uint32_t> order_;      // poll()'s scratch: live indices
  std::vector<std::uint32_t> peers_;      // poll()'s scratch: peers granted this poll
  std::uint64_t outstanding_ = 0;         // sum over messages of granted - received
  std::uint64_t fifo_credit_ = 0;         // granted bytes since the last FIFO grant
  // No resend is due before this (a lower bound: data arriving only moves
  // deadlines later; each grant lowers it to its message's deadline).
  TimeNs next_resend_ = ~TimeNs{0};
  bool dirty_ = false;  // a packet arrived since the last poll
  GrantCounters ctr_;
};

}  // namespace uroce::sched::homa
