// A UC QP's counters (uc_qp.h) with their field list, and what became of
// each received packet: apart from the QP so that status code can hold
// them without it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "datapath/base/counter_fields.h"

namespace uroce::transport {

// What became of one received packet.
enum class UcRx : std::uint8_t {
  kAccepted = 0,       // placed; the message continues or was a plain WRITE
  kCompleted,          // ended a SEND / WRITE_WITH_IMM: success completion
  kLenErr,             // SEND longer than the receive WR: LOC_LEN_ERR posted
  kProtErr,            // receive SGE invalid: LOC_PROT_ERR posted, QP to ERR
  kDropState,          // QP is not receiving (RESET, INIT, ERR)
  kDropOpcode,         // not a UC opcode
  kDropQpn,            // BTH destination QP is not this QP
  kDropPkey,           // BTH P_Key does not match the QP's
  kDropAddr,           // IPv4 source is not the peer's or destination not ours
  kDropPsnGap,         // not the expected PSN: the message in progress is lost
  kDropRestOfMessage,  // later packet of a message already being dropped
  kDropOpSequence,     // MIDDLE/LAST that continues no message of its kind
  kDropBadLength,      // payload size breaks the MTU rules or the RETH length
  kDropNoRecvWqe,      // no receive WR for a SEND / WRITE_WITH_IMM
  kDropAccess,         // WRITE but the QP lacks IBV_ACCESS_REMOTE_WRITE
  kDropRkey,           // RETH rkey, PD, bounds or MR access check failed
  kCqOverflow,         // the completion did not fit the CQ: QP to ERR
};
inline constexpr std::size_t kNumUcRx = static_cast<std::size_t>(UcRx::kCqOverflow) + 1;
const char* uc_rx_name(UcRx r);

struct UcCounters {
  std::uint64_t tx_packets = 0;
  std::uint64_t tx_payload_bytes = 0;
  std::uint64_t tx_messages = 0;
  std::uint64_t tx_no_buffer = 0;  // tx_alloc gave no room; retried later
  std::uint64_t tx_local_err = 0;  // bad send SGE: LOC_PROT_ERR, QP to SQE
  std::uint64_t rx_abandoned = 0;  // messages begun and never completed
  std::uint64_t cq_overflow = 0;
  std::uint64_t mw_binds = 0;                // BIND_MW WRs executed
  std::uint64_t mw_bind_errors = 0;          // BIND_MW refused: MW_BIND_ERR, QP to ERR
  std::array<std::uint64_t, kNumUcRx> rx{};  // indexed by UcRx
  std::uint64_t rx_count(UcRx r) const { return rx[static_cast<std::size_t>(r)]; }
};

inline constexpr counters::FieldList<UcCounters, 9> kUcCounterFields{{
    {"tx_packets", &UcCounters::tx_packets, "packets sent"},
    {"tx_payload_bytes", &UcCounters::tx_payload_bytes, "payload bytes sent"},
    {"tx_messages", &UcCounters::tx_messages, "messages sent"},
    {"tx_no_buffer", &UcCounters::tx_no_buffer, "tx_alloc gave no room; retried later"},
    {"tx_local_err", &UcCounters::tx_local_err, "bad send SGE: LOC_PROT_ERR, QP to SQE"},
    {"rx_abandoned", &UcCounters::rx_abandoned, "messages begun and never completed"},
    {"cq_overflow", &UcCounters::cq_overflow, "a completion the CQ refused: QP to ERR"},
    {"mw_binds", &UcCounters::mw_binds, "BIND_MW WRs executed"},
    {"mw_bind_errors", &UcCounters::mw_bind_errors, "BIND_MW refused: MW_BIND_ERR, QP to ERR"},
}};
static_assert(counters::covers(kUcCounterFields, &UcCounters::rx));
constexpr const auto& counter_fields(const UcCounters&) { return kUcCounterFields; }

}  // namespace uroce::transport
