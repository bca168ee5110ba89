// A UD QP's counters (ud_qp.h) with their field list, and what became of
// each received packet: apart from the QP so that status code can hold
// them without it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "datapath/base/counter_fields.h"

namespace uroce::transport {

// What became of one received packet.
enum class UdRx : std::uint8_t {
  kDelivered = 0,  // placed; IBV_WC_SUCCESS completion posted
  kLenErr,         // receive WR too short: IBV_WC_LOC_LEN_ERR posted
  kProtErr,        // receive SGE invalid: IBV_WC_LOC_PROT_ERR, QP to ERR
  kDropState,      // QP is not receiving (RESET, INIT, ERR)
  kDropOpcode,     // not a UD opcode
  kDropQpn,        // BTH destination QP is not this QP
  kDropPkey,       // BTH P_Key does not match the QP's
  kDropQkey,       // DETH Q_Key is not the QP's
  kDropNoRecvWqe,  // no receive WR posted
  kCqOverflow,     // the completion did not fit the CQ: QP to ERR
};
inline constexpr std::size_t kNumUdRx = static_cast<std::size_t>(UdRx::kCqOverflow) + 1;
const char* ud_rx_name(UdRx r);

struct UdCounters {
  std::uint64_t tx_packets = 0;
  std::uint64_t tx_payload_bytes = 0;
  std::uint64_t tx_too_long = 0;             // WRs over the port MTU: no packet sent
  std::uint64_t tx_no_buffer = 0;            // tx_alloc gave no room; retried later
  std::uint64_t tx_local_err = 0;            // gather failed: LOC_PROT_ERR, QP to SQE
  std::uint64_t cq_overflow = 0;             // completions a CQ refused
  std::array<std::uint64_t, kNumUdRx> rx{};  // indexed by UdRx
  std::uint64_t rx_count(UdRx r) const { return rx[static_cast<std::size_t>(r)]; }
};

inline constexpr counters::FieldList<UdCounters, 6> kUdCounterFields{{
    {"tx_packets", &UdCounters::tx_packets, "packets sent"},
    {"tx_payload_bytes", &UdCounters::tx_payload_bytes, "payload bytes sent"},
    {"tx_too_long", &UdCounters::tx_too_long, "WRs over the port MTU: no packet sent"},
    {"tx_no_buffer", &UdCounters::tx_no_buffer, "tx_alloc gave no room; retried later"},
    {"tx_local_err", &UdCounters::tx_local_err, "gather failed: LOC_PROT_ERR, QP to SQE"},
    {"cq_overflow", &UdCounters::cq_overflow, "completions a CQ refused"},
}};
static_assert(counters::covers(kUdCounterFields, &UdCounters::rx));
constexpr const auto& counter_fields(const UdCounters&) { return kUdCounterFields; }

}  // namespace uroce::transport
