// What goes into and out of the I/O-free connection manager (machine.h):
// MADs with their addresses, the parameters a connection carries, the
// events the ucma layer turns into rdma_cm events, and the drop counters.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "datapath/wire/mad.h"

namespace uroce::cm {

// One MAD as it travels in a GSI datagram's payload.
struct Mad {
  std::array<std::uint8_t, wire::kMadBytes> b{};
  std::uint8_t* data() { return b.data() + wire::MadHdr::kSize; }
  const std::uint8_t* data() const { return b.data() + wire::MadHdr::kSize; }
};

// Where a MAD comes from or goes to: the local device (an index the caller
// chose) and IPv4 addresses in host order (RoCEv2 GIDs are ::ffff:IPv4).
struct Path {
  std::uint32_t device = 0;
  std::uint32_t local_ip = 0;
  std::uint32_t remote_ip = 0;
};

struct OutMad {
  Path path;
  Mad mad;
};

// Connection identifiers: the local Communication ID (never 0) and the
// listener ids the caller assigns.
using ConnId = std::uint32_t;
using ListenId = std::uint64_t;

// The transport parameters one side announces in its REQ or REP.
struct QpParams {
  std::uint32_t qpn = 0;
  std::uint32_t psn = 0;   // starting PSN (24 bits)
  std::uint32_t qkey = 0;  // UD only
  std::uint64_t ca_guid = 0;
  std::uint8_t responder_resources = 0;
  std::uint8_t initiator_depth = 0;
  std::uint8_t flow_control = 1;
  std::uint8_t retry_count = 7;
  std::uint8_t rnr_retry_count = 7;
  std::uint8_t srq = 0;
  std::uint8_t path_mtu = 0;  // IBTA MTU code (1 = 256 .. 5 = 4096)
  std::uint8_t local_ack_timeout = 0;
};

inline constexpr std::size_t kMaxPrivateBytes = 224;

struct PrivateData {
  std::array<std::uint8_t, kMaxPrivateBytes> b{};
  std::uint8_t len = 0;
};

enum class EventType : std::uint8_t {
  kConnectRequest,   // passive: a REQ matched a listener (new ConnId)
  kConnectResponse,  // active: REP received; accept() sends the RTU
  kEstablished,      // passive: RTU received
  kRejected,         // REJ received; status = the IBTA reason
  kUnreachable,      // active: no answer to the REQ after every retry
  kConnectError,     // passive: no RTU after every REP retry
  kDisconnected,     // DREQ received, DREP received, or DREQ timed out
  kSidrRequest,      // passive: a SIDR_REQ matched a UDP listener (new ConnId)
  kSidrReply,        // active: SIDR_REP; status = its Status (0: remote.qpn/qkey)
};

struct Event {
  EventType type{};
  ConnId conn = 0;
  ListenId listener = 0;  // kConnectRequest only
  int status = 0;         // kRejected: the reason; timeouts: ETIMEDOUT
  QpParams remote{};      // the peer's REQ/REP parameters, when it sent one
  std::uint16_t remote_port = 0;
  std::uint16_t local_port = 0;
  PrivateData private_data{};
};

// Everything one call produced; the caller sends the MADs and delivers the
// events, then clears it.
struct Output {
  std::vector<OutMad> mads;
  std::vector<Event> events;
  void clear() {
    mads.clear();
    events.clear();
  }
};

// Every MAD the machine does not act on, by reason.
struct Counters {
  std::uint64_t rx_mads = 0;
  std::uint64_t tx_mads = 0;
  std::uint64_t retransmits = 0;
  std::uint64_t drop_bad_header = 0;    // base version, class, class version, method
  std::uint64_t drop_unknown_attr = 0;  // an attribute uroce does not serve (LAP, ...)
  std::uint64_t drop_unknown_conn = 0;  // names no connection of ours
  std::uint64_t drop_wrong_state = 0;   // a valid message the state does not expect
  std::uint64_t drop_bad_req = 0;       // REQ not IP-addressed, not RC, bad IP header
  std::uint64_t duplicates = 0;         // duplicate REQ/REP/DREQ answered again
  std::uint64_t rej_no_listener = 0;    // REQs rejected with "invalid Service ID"
  std::uint64_t timeouts = 0;           // connections given up after every retry
};

inline constexpr counters::FieldList<Counters, 11> kCounterFields{{
    {"rx_mads", &Counters::rx_mads, "CM MADs received on QP1"},
    {"tx_mads", &Counters::tx_mads, "CM MADs sent, retransmissions included"},
    {"retransmits", &Counters::retransmits, "CM MADs sent again after their timeout"},
    {"drop_bad_header", &Counters::drop_bad_header, "base version, class, class version, method"},
    {"drop_unknown_attr", &Counters::drop_unknown_attr,
     "an attribute uroce does not serve (LAP, ...)"},
    {"drop_unknown_conn", &Counters::drop_unknown_conn, "names no connection of ours"},
    {"drop_wrong_state", &Counters::drop_wrong_state, "a valid message the state does not expect"},
    {"drop_bad_req", &Counters::drop_bad_req, "REQ not IP-addressed, not RC, bad IP header"},
    {"duplicates", &Counters::duplicates, "duplicate REQ/REP/DREQ answered again"},
    {"rej_no_listener", &Counters::rej_no_listener, "REQs rejected with \"invalid Service ID\""},
    {"timeouts", &Counters::timeouts, "connections given up after every retry"},
}};
static_assert(counters::covers(kCounterFields));
constexpr const auto& counter_fields(const Counters&) { return kCounterFields; }

}  // namespace uroce::cm
