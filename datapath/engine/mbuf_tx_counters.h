// What an MbufTxSink (mbuf_tx_sink.h) counts, apart from the sink so that
// status code (uroced's DeviceSnapshot) can hold it without DPDK's headers.
#pragma once

#include <cstdint>

#include "datapath/base/counter_fields.h"

namespace uroce::engine {

struct MbufTxCounters {
  std::uint64_t committed = 0;   // frames handed over by tx_commit
  std::uint64_t sent = 0;        // frames the PMD accepted
  std::uint64_t bursts = 0;      // tx_burst calls (flushes with work)
  std::uint64_t refused = 0;     // frame refusals by the PMD (kept, retried)
  std::uint64_t no_mbuf = 0;     // tx_alloc: mempool empty
  std::uint64_t oversize = 0;    // tx_alloc: frame larger than the data room
  std::uint64_t burst_full = 0;  // tx_alloc: kBurst frames pending
  std::uint64_t bad_commit = 0;  // tx_commit without a staged mbuf (a bug)
  std::uint64_t discarded = 0;   // pending frames freed by discard()
  std::uint64_t streamed = 0;    // frames moved into their mbuf with streaming stores
  std::uint64_t ack_holds = 0;   // end-of-iteration flushes put off: only ACKs pending
  // ACKs copied over a pending ACK of their QP; counted in committed too, so
  // committed = sent + acks_coalesced + discarded + what is pending.
  std::uint64_t acks_coalesced = 0;
};

inline constexpr counters::FieldList<MbufTxCounters, 12> kMbufTxCounterFields{{
    {"committed", &MbufTxCounters::committed, "frames handed over by tx_commit"},
    {"sent", &MbufTxCounters::sent, "frames the PMD accepted"},
    {"bursts", &MbufTxCounters::bursts, "tx_burst calls (flushes with work)"},
    {"refused", &MbufTxCounters::refused, "frame refusals by the PMD (kept, retried)"},
    {"no_mbuf", &MbufTxCounters::no_mbuf, "tx_alloc: mempool empty"},
    {"oversize", &MbufTxCounters::oversize, "tx_alloc: frame larger than the data room"},
    {"burst_full", &MbufTxCounters::burst_full, "tx_alloc: kBurst frames pending"},
    {"bad_commit", &MbufTxCounters::bad_commit, "tx_commit without a staged mbuf (a bug)"},
    {"discarded", &MbufTxCounters::discarded, "pending frames freed by discard()"},
    {"streamed", &MbufTxCounters::streamed, "frames moved into their mbuf with streaming stores"},
    {"ack_holds", &MbufTxCounters::ack_holds,
     "end-of-iteration flushes put off: only ACKs pending (engine/ack_hold.h)"},
    {"acks_coalesced", &MbufTxCounters::acks_coalesced,
     "ACKs copied over a pending ACK of their QP (engine/ack_hold.h)"},
}};
static_assert(counters::covers(kMbufTxCounterFields));
constexpr const auto& counter_fields(const MbufTxCounters&) { return kMbufTxCounterFields; }

}  // namespace uroce::engine
