// The DC QPs' counters (dci_qp.h, dct_qp.h) with their field lists: apart
// from the QPs so that status code can hold them without them.
#pragma once

#include <cstdint>

#include "datapath/base/counter_fields.h"

namespace uroce::transport {

struct DciCounters {
  std::uint64_t bad_lane = 0;           // a response naming a lane the DCI lacks
  std::uint64_t bad_status = 0;         // a reserved DCAETH status
  std::uint64_t stream_recoveries = 0;  // a lane in ERR flushed and restarted
  std::uint64_t other_conn = 0;         // an OK/BUSY/KEY_VIOLATION answer of another connection
};

inline constexpr counters::FieldList<DciCounters, 4> kDciCounterFields{{
    {"bad_lane", &DciCounters::bad_lane, "a response naming a lane the DCI lacks"},
    {"bad_status", &DciCounters::bad_status, "a reserved DCAETH status"},
    {"stream_recoveries", &DciCounters::stream_recoveries, "a lane in ERR flushed and restarted"},
    {"other_conn", &DciCounters::other_conn,
     "an OK/BUSY/KEY_VIOLATION answer of another connection"},
}};
static_assert(counters::covers(kDciCounterFields));
constexpr const auto& counter_fields(const DciCounters&) { return kDciCounterFields; }

struct DctCounters {
  std::uint64_t rx_requests = 0;
  std::uint64_t key_violations = 0;
  std::uint64_t drop_state = 0;       // a request while the DCT is not in RTR
  std::uint64_t drop_not_dc = 0;      // not a DC request
  std::uint64_t drop_other_dct = 0;   // the identity's context serves another DCT
  std::uint64_t drop_stale = 0;       // an older connection than the context's
  std::uint64_t drop_busy_later = 0;  // a later packet of a connection told BUSY
  std::uint64_t tx_gone = 0;          // GONE answers and notices
  std::uint64_t tx_unknown = 0;
  std::uint64_t tx_busy = 0;
  std::uint64_t tx_key_violation = 0;
  std::uint64_t tx_no_buffer = 0;  // an answer the TX sink had no room for
  std::uint64_t tx_no_sr = 0;      // NO_SR answers (dc_sr.h)
  std::uint64_t drop_no_sr_later = 0;
  std::uint64_t drop_sr_mismatch = 0;
};

inline constexpr counters::FieldList<DctCounters, 15> kDctCounterFields{{
    {"rx_requests", &DctCounters::rx_requests, "DC request packets executed"},
    {"key_violations", &DctCounters::key_violations, "requests with a wrong DC access key"},
    {"drop_state", &DctCounters::drop_state, "a request while the DCT is not in RTR"},
    {"drop_not_dc", &DctCounters::drop_not_dc, "not a DC request"},
    {"drop_other_dct", &DctCounters::drop_other_dct, "the identity's context serves another DCT"},
    {"drop_stale", &DctCounters::drop_stale, "an older connection than the context's"},
    {"drop_busy_later", &DctCounters::drop_busy_later, "a later packet of a connection told BUSY"},
    {"tx_gone", &DctCounters::tx_gone, "GONE answers and notices"},
    {"tx_unknown", &DctCounters::tx_unknown, "UNKNOWN answers sent"},
    {"tx_busy", &DctCounters::tx_busy, "BUSY answers sent"},
    {"tx_key_violation", &DctCounters::tx_key_violation, "KEY_VIOLATION answers sent"},
    {"tx_no_buffer", &DctCounters::tx_no_buffer, "an answer the TX sink had no room for"},
    {"tx_no_sr", &DctCounters::tx_no_sr,
     "NO_SR answers: a connection's opening request asked for selective repeat, which this "
     "device does not run"},
    {"drop_no_sr_later", &DctCounters::drop_no_sr_later,
     "a later selective-repeat request of a connection told NO_SR"},
    {"drop_sr_mismatch", &DctCounters::drop_sr_mismatch,
     "a request whose selective-repeat flag differs from its connection's"},
}};
static_assert(counters::covers(kDctCounterFields));
constexpr const auto& counter_fields(const DctCounters&) { return kDctCounterFields; }

}  // namespace uroce::transport
