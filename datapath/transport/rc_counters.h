// An RC QP's counters (rc_core.h, rc_qp.h), those of its Homa sender
// (rc_homa.h) and of its selective repeat (rc_sr.h), with their field lists: apart from the transport so that
// status and configuration code can hold them without the QP's code.
#pragma once

#include <cstdint>

#include "datapath/base/counter_fields.h"

namespace uroce::transport {

// Every drop, NAK and retry, by reason. Plain integers: one lcore owns them.
struct RcCounters {
  // Requester.
  std::uint64_t tx_requests = 0;        // request packets sent, retransmissions included
  std::uint64_t tx_retransmits = 0;     // request packets sent for a PSN sent before
  std::uint64_t tx_no_buffer = 0;       // tx_alloc gave no room (any packet type)
  std::uint64_t tx_build_errors = 0;    // 0: RC frames are written unchecked (rc_packet.h)
  std::uint64_t wait_window = 0;        // send stopped: PSN window full
  std::uint64_t wait_fence = 0;         // send stopped: fenced WR waits for READ/atomics
  std::uint64_t wait_rd_atomic = 0;     // send stopped: max_rd_atomic outstanding
  std::uint64_t wait_local_inv = 0;     // send stopped: LOCAL_INV waits for earlier WQEs
  std::uint64_t local_errors = 0;       // gather from a bad SGE: LOC_PROT_ERR
  std::uint64_t local_invalidates = 0;  // LOCAL_INV WRs executed
  std::uint64_t local_inv_errors = 0;   // LOCAL_INV of a bad key: LOC_QP_OP_ERR
  std::uint64_t mw_binds = 0;           // BIND_MW WRs executed
  std::uint64_t mw_bind_errors = 0;     // BIND_MW refused: MW_BIND_ERR
  // Completer.
  std::uint64_t rx_acks = 0;
  std::uint64_t rx_read_responses = 0;
  std::uint64_t rx_atomic_acks = 0;
  std::uint64_t rx_seq_naks = 0;
  std::uint64_t rx_rnr_naks = 0;
  std::uint64_t rx_error_naks = 0;  // invalid request / remote access / remote op
  std::uint64_t timeouts = 0;       // retransmission timer expiries that retried
  std::uint64_t go_back_n = 0;      // rewinds started by a NAK or a response gap
  std::uint64_t retry_exceeded = 0;
  std::uint64_t rnr_retry_exceeded = 0;
  std::uint64_t drop_stale_ack = 0;      // ACK/response for PSNs already acknowledged
  std::uint64_t drop_ghost_ack = 0;      // ACK/response for a PSN never sent
  std::uint64_t drop_response_gap = 0;   // READ response / atomic ACK after a lost one
  std::uint64_t drop_bad_response = 0;   // wrong opcode or length for the WQE it names
  std::uint64_t drop_duplicate_nak = 0;  // NAK while the rewind it asks for is under way
  std::uint64_t drop_reserved_aeth = 0;
  std::uint64_t rx_reserved_naks = 0;        // NAK code 4..31: REM_OP_ERR, as rxe
  std::uint64_t rx_bad_response_opcode = 0;  // READ response of the wrong position: BAD_RESP_ERR
  // Responder.
  std::uint64_t rx_requests = 0;  // in-order request packets executed
  std::uint64_t rx_duplicates = 0;
  std::uint64_t drop_out_of_sequence = 0;  // after the one NAK of a gap
  std::uint64_t drop_dup_unknown = 0;      // duplicate READ/atomic with no resource left
  std::uint64_t drop_no_resource = 0;      // READ/atomic while every resource is busy
  std::uint64_t tx_acks = 0;
  std::uint64_t tx_read_responses = 0;
  std::uint64_t tx_atomic_acks = 0;
  std::uint64_t tx_seq_naks = 0;
  std::uint64_t tx_rnr_naks = 0;
  std::uint64_t tx_nak_invalid_request = 0;
  std::uint64_t tx_nak_remote_access = 0;
  std::uint64_t tx_nak_remote_op = 0;
  std::uint64_t rx_unsupported_ops = 0;  // FLUSH, ATOMIC_WRITE: NAKed invalid request
  std::uint64_t atomics_executed = 0;
  std::uint64_t atomics_replayed = 0;
  std::uint64_t reads_replayed = 0;
  std::uint64_t rx_invalidates = 0;  // SEND_WITH_INV that invalidated a window
  std::uint64_t rx_inv_refused = 0;  // SEND_WITH_INV naming no window of ours: NAK
  // Either side.
  std::uint64_t drop_state = 0;   // packet in a state that takes none
  std::uint64_t drop_not_rc = 0;  // not an RC opcode
  std::uint64_t drop_qpn = 0;     // BTH destination QP is not this QP
  std::uint64_t drop_pkey = 0;
  std::uint64_t drop_addr = 0;    // IPv4 source not the peer's / destination not ours
  std::uint64_t cq_overflow = 0;  // a completion the CQ refused: QP to ERR
};

inline constexpr counters::FieldList<RcCounters, 56> kRcCounterFields{{
    {"tx_requests", &RcCounters::tx_requests, "request packets sent, retransmissions included"},
    {"tx_retransmits", &RcCounters::tx_retransmits, "request packets sent for a PSN sent before"},
    {"tx_no_buffer", &RcCounters::tx_no_buffer, "tx_alloc gave no room (any packet type)"},
    {"tx_build_errors", &RcCounters::tx_build_errors,
     "0: RC frames are written unchecked (rc_packet.h)"},
    {"wait_window", &RcCounters::wait_window, "send stopped: PSN window full"},
    {"wait_fence", &RcCounters::wait_fence, "send stopped: fenced WR waits for READ/atomics"},
    {"wait_rd_atomic", &RcCounters::wait_rd_atomic, "send stopped: max_rd_atomic outstanding"},
    {"wait_local_inv", &RcCounters::wait_local_inv,
     "send stopped: LOCAL_INV waits for earlier WQEs"},
    {"local_errors", &RcCounters::local_errors, "gather from a bad SGE: LOC_PROT_ERR"},
    {"local_invalidates", &RcCounters::local_invalidates, "LOCAL_INV WRs executed"},
    {"local_inv_errors", &RcCounters::local_inv_errors, "LOCAL_INV of a bad key: LOC_QP_OP_ERR"},
    {"mw_binds", &RcCounters::mw_binds, "BIND_MW WRs executed"},
    {"mw_bind_errors", &RcCounters::mw_bind_errors, "BIND_MW refused: MW_BIND_ERR"},
    {"rx_acks", &RcCounters::rx_acks, "ACKs received"},
    {"rx_read_responses", &RcCounters::rx_read_responses, "READ response packets received"},
    {"rx_atomic_acks", &RcCounters::rx_atomic_acks, "atomic ACKs received"},
    {"rx_seq_naks", &RcCounters::rx_seq_naks, "PSN sequence error NAKs received"},
    {"rx_rnr_naks", &RcCounters::rx_rnr_naks, "RNR NAKs received"},
    {"rx_error_naks", &RcCounters::rx_error_naks, "invalid request / remote access / remote op"},
    {"timeouts", &RcCounters::timeouts, "retransmission timer expiries that retried"},
    {"go_back_n", &RcCounters::go_back_n, "rewinds started by a NAK or a response gap"},
    {"retry_exceeded", &RcCounters::retry_exceeded,
     "WRs completed RETRY_EXC_ERR: retry_cnt used up"},
    {"rnr_retry_exceeded", &RcCounters::rnr_retry_exceeded,
     "WRs completed RNR_RETRY_EXC_ERR: rnr_retry used up"},
    {"drop_stale_ack", &RcCounters::drop_stale_ack, "ACK/response for PSNs already acknowledged"},
    {"drop_ghost_ack", &RcCounters::drop_ghost_ack, "ACK/response for a PSN never sent"},
    {"drop_response_gap", &RcCounters::drop_response_gap,
     "READ response / atomic ACK after a lost one"},
    {"drop_bad_response", &RcCounters::drop_bad_response,
     "wrong opcode or length for the WQE it names"},
    {"drop_duplicate_nak", &RcCounters::drop_duplicate_nak,
     "NAK while the rewind it asks for is under way"},
    {"drop_reserved_aeth", &RcCounters::drop_reserved_aeth,
     "ACKs with a reserved AETH syndrome, dropped"},
    {"rx_reserved_naks", &RcCounters::rx_reserved_naks, "NAK code 4..31: REM_OP_ERR, as rxe"},
    {"rx_bad_response_opcode", &RcCounters::rx_bad_response_opcode,
     "READ response of the wrong position: BAD_RESP_ERR"},
    {"rx_requests", &RcCounters::rx_requests, "in-order request packets executed"},
    {"rx_duplicates", &RcCounters::rx_duplicates,
     "duplicate request packets (answered again or acknowledged)"},
    {"drop_out_of_sequence", &RcCounters::drop_out_of_sequence, "after the one NAK of a gap"},
    {"drop_dup_unknown", &RcCounters::drop_dup_unknown,
     "duplicate READ/atomic with no resource left"},
    {"drop_no_resource", &RcCounters::drop_no_resource, "READ/atomic while every resource is busy"},
    {"tx_acks", &RcCounters::tx_acks, "ACKs sent"},
    {"tx_read_responses", &RcCounters::tx_read_responses, "READ response packets sent"},
    {"tx_atomic_acks", &RcCounters::tx_atomic_acks, "atomic ACKs sent"},
    {"tx_seq_naks", &RcCounters::tx_seq_naks, "PSN sequence error NAKs sent"},
    {"tx_rnr_naks", &RcCounters::tx_rnr_naks, "RNR NAKs sent"},
    {"tx_nak_invalid_request", &RcCounters::tx_nak_invalid_request, "invalid request NAKs sent"},
    {"tx_nak_remote_access", &RcCounters::tx_nak_remote_access, "remote access error NAKs sent"},
    {"tx_nak_remote_op", &RcCounters::tx_nak_remote_op, "remote operational error NAKs sent"},
    {"rx_unsupported_ops", &RcCounters::rx_unsupported_ops,
     "FLUSH, ATOMIC_WRITE: NAKed invalid request"},
    {"atomics_executed", &RcCounters::atomics_executed, "atomic requests executed"},
    {"atomics_replayed", &RcCounters::atomics_replayed,
     "duplicate atomic requests answered from the saved result"},
    {"reads_replayed", &RcCounters::reads_replayed, "duplicate READ requests answered again"},
    {"rx_invalidates", &RcCounters::rx_invalidates, "SEND_WITH_INV that invalidated a window"},
    {"rx_inv_refused", &RcCounters::rx_inv_refused, "SEND_WITH_INV naming no window of ours: NAK"},
    {"drop_state", &RcCounters::drop_state, "packet in a state that takes none"},
    {"drop_not_rc", &RcCounters::drop_not_rc, "not an RC opcode"},
    {"drop_qpn", &RcCounters::drop_qpn, "BTH destination QP is not this QP"},
    {"drop_pkey", &RcCounters::drop_pkey, "packets with a P_Key other than the QP's"},
    {"drop_addr", &RcCounters::drop_addr, "IPv4 source not the peer's / destination not ours"},
    {"cq_overflow", &RcCounters::cq_overflow, "a completion the CQ refused: QP to ERR"},
}};
static_assert(counters::covers(kRcCounterFields));
constexpr const auto& counter_fields(const RcCounters&) { return kRcCounterFields; }

// A selective-repeat connection's counters (rc_sr.h, docs/lossy.md): with
// its state, so that a QP without selective repeat pays nothing for them.
struct RcSrCounters {
  // Responder.
  std::uint64_t sr_rx_held = 0;         // SR packets placed and held beyond the expected PSN
  std::uint64_t sr_rx_dup = 0;          // SR packets already held: not placed again
  std::uint64_t sr_drop_window = 0;     // SR packets beyond the window: dropped
  std::uint64_t sr_drop_unplaced = 0;   // out of order, failed a check or no receive WQE yet
  std::uint64_t sr_drop_rd_atomic = 0;  // READ/atomic beyond the expected PSN: runs in order
  std::uint64_t tx_sacks = 0;           // SACKs sent (acknowledgements with a bitmap)
  // Requester.
  std::uint64_t sr_tx_resends = 0;   // SR packets sent again alone, deemed lost
  std::uint64_t sr_tx_lost = 0;      // PSNs the loss signal deemed lost
  std::uint64_t sr_tx_probes = 0;    // tail-loss probes
  std::uint64_t sr_tx_spurious = 0;  // a retransmission not needed (SACK DUP, READ response twice)
  std::uint64_t sr_rx_sacks = 0;     // SACKs received
  // The requester's READ responses (docs/lossy.md "READ responses").
  std::uint64_t sr_rd_placed = 0;       // placed beyond the oldest missing response PSN
  std::uint64_t sr_rd_rereqs = 0;       // READ requests sent again for missing responses
  std::uint64_t sr_rd_rereq_psns = 0;   // response PSNs those re-requests asked for
  std::uint64_t sr_rd_dup = 0;          // responses placed already: dropped
  std::uint64_t sr_rd_drop_window = 0;  // responses for PSNs not asked for: dropped
  // Spraying over several UDP source ports (rc_sr_spray.h).
  std::uint64_t sr_spray_tx = 0;          // SEND/WRITE packets sent by a spraying connection
  std::uint64_t sr_spray_avoided = 0;     // times a path began to be avoided
  std::uint64_t sr_spray_losses = 0;      // losses charged to a path
  std::uint64_t sr_spray_acks = 0;        // acknowledgements rotated over the paths
  std::uint64_t sr_rx_ce = 0;             // responder: a spraying peer's requests marked CE
  std::uint64_t sr_spray_ce = 0;          // CE echoes (SACK with ECE) charged to a path
  std::uint64_t sr_spray_ce_avoided = 0;  // times a path began to be avoided for a CE mark
  std::uint64_t sr_spray_ack_copies = 0;  // answers to duplicates sent again on further paths
};

inline constexpr counters::FieldList<RcSrCounters, 24> kRcSrCounterFields{{
    {"sr_rx_held", &RcSrCounters::sr_rx_held, "SR packets placed and held beyond the expected PSN"},
    {"sr_rx_dup", &RcSrCounters::sr_rx_dup, "SR packets already held: not placed again"},
    {"sr_drop_window", &RcSrCounters::sr_drop_window, "SR packets beyond the window: dropped"},
    {"sr_drop_unplaced", &RcSrCounters::sr_drop_unplaced,
     "out of order, failed a check or no receive WQE yet"},
    {"sr_drop_rd_atomic", &RcSrCounters::sr_drop_rd_atomic,
     "READ/atomic beyond the expected PSN: runs in order"},
    {"tx_sacks", &RcSrCounters::tx_sacks, "SACKs sent (acknowledgements with a bitmap)"},
    {"sr_tx_resends", &RcSrCounters::sr_tx_resends, "SR packets sent again alone, deemed lost"},
    {"sr_tx_lost", &RcSrCounters::sr_tx_lost, "PSNs the loss signal deemed lost"},
    {"sr_tx_probes", &RcSrCounters::sr_tx_probes, "tail-loss probes"},
    {"sr_tx_spurious", &RcSrCounters::sr_tx_spurious,
     "retransmissions not needed: SACKs with DUP, READ responses that came twice"},
    {"sr_rx_sacks", &RcSrCounters::sr_rx_sacks, "SACKs received"},
    {"sr_rd_placed", &RcSrCounters::sr_rd_placed,
     "READ responses placed beyond the oldest missing response PSN"},
    {"sr_rd_rereqs", &RcSrCounters::sr_rd_rereqs,
     "READ requests sent again for missing responses alone"},
    {"sr_rd_rereq_psns", &RcSrCounters::sr_rd_rereq_psns,
     "READ response PSNs those re-requests asked for"},
    {"sr_rd_dup", &RcSrCounters::sr_rd_dup, "READ responses placed already: dropped"},
    {"sr_rd_drop_window", &RcSrCounters::sr_rd_drop_window,
     "READ responses for PSNs not asked for (beyond the window): dropped"},
    {"sr_spray_tx", &RcSrCounters::sr_spray_tx,
     "SEND/WRITE packets sent by connections spraying over several UDP source ports"},
    {"sr_spray_avoided", &RcSrCounters::sr_spray_avoided,
     "times a spraying connection began to avoid a path charged with a loss"},
    {"sr_spray_losses", &RcSrCounters::sr_spray_losses,
     "losses (SACK holes, timeouts) charged to the path their packet took"},
    {"sr_spray_acks", &RcSrCounters::sr_spray_acks,
     "acknowledgements a spraying connection sent, rotated over its paths"},
    {"sr_rx_ce", &RcSrCounters::sr_rx_ce,
     "requests of a spraying peer that arrived marked CE (echoed in a SACK with ECE)"},
    {"sr_spray_ce", &RcSrCounters::sr_spray_ce,
     "CE echoes (SACKs with ECE) charged to the path their packet took"},
    {"sr_spray_ce_avoided", &RcSrCounters::sr_spray_ce_avoided,
     "times a spraying connection began to avoid a path for a CE mark"},
    {"sr_spray_ack_copies", &RcSrCounters::sr_spray_ack_copies,
     "answers to duplicate requests sent again on further paths of a spraying connection"},
}};
static_assert(counters::covers(kRcSrCounterFields));
constexpr const auto& counter_fields(const RcSrCounters&) { return kRcSrCounterFields; }

struct RcHomaCounters {
  std::uint64_t gated = 0;        // messages that needed grants
  std::uint64_t mlen = 0;         // MLENs sent (first packets and grant timeouts)
  std::uint64_t wait_grant = 0;   // sends stopped: the next byte is not granted yet
  std::uint64_t grants = 0;       // GRANTs that allowed more
  std::uint64_t grant_stale = 0;  // GRANTs for another message, or allowing nothing
  std::uint64_t timeouts = 0;     // grant timeouts (MLEN sent again)
  std::uint64_t fallbacks = 0;    // messages sent ungated after max_timeouts
  std::uint64_t prio_capped = 0;  // packets sent lower than asked, to stay in order
};

inline constexpr counters::FieldList<RcHomaCounters, 8> kRcHomaCounterFields{{
    {"gated", &RcHomaCounters::gated, "messages that needed grants"},
    {"mlen", &RcHomaCounters::mlen, "MLENs sent (first packets and grant timeouts)"},
    {"wait_grant", &RcHomaCounters::wait_grant, "sends stopped: the next byte is not granted yet"},
    {"grants", &RcHomaCounters::grants, "GRANTs that allowed more"},
    {"grant_stale", &RcHomaCounters::grant_stale,
     "GRANTs for another message, or allowing nothing"},
    {"timeouts", &RcHomaCounters::timeouts, "grant timeouts (MLEN sent again)"},
    {"fallbacks", &RcHomaCounters::fallbacks, "messages sent ungated after max_timeouts"},
    {"prio_capped", &RcHomaCounters::prio_capped,
     "packets sent lower than asked, to stay in order"},
}};
static_assert(counters::covers(kRcHomaCounterFields));
constexpr const auto& counter_fields(const RcHomaCounters&) { return kRcHomaCounterFields; }

}  // namespace uroce::transport
