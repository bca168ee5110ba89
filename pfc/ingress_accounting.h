// PFC generation at the endpoint: per-priority accounting of bytes received
// and not yet processed, and the XOFF / refresh / XON frames that follow.
//
// The engine calls on_rx() when a packet of priority p enters the device
// (RX burst) and on_processed() when it has been consumed (responder done,
// mbuf freed); occupied(p) is the difference. After each change every
// PFC-enabled priority is re-evaluated, because under the dynamic threshold
// one priority's bytes move every other priority's threshold.
//
// Thresholds (all in bytes; q = occupied(p), O = total occupied over all 8
// priorities, E = number of PFC-enabled priorities):
//   shared = buffer - E x headroom         (headroom is reserved per lossless
//                                            priority for in-flight bytes
//                                            after an XOFF)
//   static:   XOFF when q > xoff_bytes;  XON when q <= xon_bytes
//   dynamic:  T = floor(alpha_num x max(shared - O, 0) / alpha_den)
//             XOFF when q > T;           XON when q + xon_offset <= T
// A paused priority whose q has not fallen to XON is refreshed with a new
// XOFF once refresh_percent of the pause time has passed since the last one,
// so the peer's pause never lapses while we are above XON (the XOFF /
// refresh / XON state is pfc/pause_assertion.h, which the testbed's switch
// buffer runs too).
//
// Admission: a lossless (PFC-enabled) priority may use the whole buffer,
// headroom included; a lossy one only the shared part. Past that the packet
// is refused (the caller drops it) and counted by reason.
//
// Frames: one PFC frame per evaluation carries every priority whose state
// changes (XOFF and refresh with xoff_quanta, XON with 0 quanta), class-enable
// bits set for exactly those. If the sink has no buffer nothing changes, and
// the next poll() (or packet) retries.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "datapath/wire/addr.h"
#include "datapath/wire/pfc.h"
#include "pfc/pause_assertion.h"
#include "pfc/priority_map.h"
#include "pfc/sinks.h"

namespace uroce::pfc {

enum class ThresholdMode : std::uint8_t { kStatic, kDynamic };

struct IngressConfig {
  wire::MacAddr src_mac{};         // source of the PFC frames we send
  std::uint8_t pfc_enable = 0x08;  // bit p: priority p is lossless
  ThresholdMode mode = ThresholdMode::kDynamic;
  std::uint64_t buffer_bytes = 1u << 20;
  std::uint64_t headroom_bytes = 64u << 10;  // per lossless priority
  std::uint64_t xoff_bytes = 256u << 10;     // static mode
  std::uint64_t xon_bytes = 192u << 10;      // static mode
  std::uint32_t alpha_num = 1;               // dynamic mode: alpha = num/den
  std::uint32_t alpha_den = 1;
  std::uint64_t xon_offset_bytes = 16u << 10;  // dynamic mode hysteresis
  std::uint16_t xoff_quanta = 0xffff;
  std::uint64_t link_bps = 100'000'000'000ull;
  std::uint32_t refresh_percent = 50;  // of the pause time, 1..99
};

enum class IngressConfigError : std::uint8_t {
  kOk = 0,
  kZeroLinkSpeed,
  kZeroQuanta,
  kBadRefreshPercent,      // not in 1..99
  kPauseTooShort,          // the refresh interval rounds to 0 ns
  kBadBufferSize,          // 0 or above 1 TiB
  kHeadroomExceedsBuffer,  // E x headroom >= buffer: no shared space
  kBadStaticThresholds,    // xon >= xoff, or xoff > shared
  kBadAlpha,               // num or den 0, or above 65536
};
std::string_view ingress_config_error_name(IngressConfigError e);

enum class RxAdmit : std::uint8_t {
  kAccepted = 0,
  kDropBadPriority,   // priority >= 8 (caller bug or corrupt metadata)
  kDropLossyFull,     // lossy priority, shared space exhausted
  kDropHeadroomFull,  // lossless priority, whole buffer exhausted: the peer
                      // kept sending past our XOFF by more than the headroom
};

struct IngressPrioCounters {
  std::uint64_t rx_packets = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t processed_bytes = 0;
  std::uint64_t drops_lossy_full = 0;
  std::uint64_t drops_headroom_full = 0;
  std::uint64_t xoff_sent = 0;
  std::uint64_t refresh_sent = 0;
  std::uint64_t xon_sent = 0;
  std::uint64_t refresh_late = 0;  // refresh sent after the pause had lapsed
  std::uint64_t peak_bytes = 0;
};

inline constexpr counters::FieldList<IngressPrioCounters, 10> kIngressPrioCounterFields{{
    {"rx_packets", &IngressPrioCounters::rx_packets, "packets accounted to the priority"},
    {"rx_bytes", &IngressPrioCounters::rx_bytes, "bytes accounted to the priority"},
    {"processed_bytes", &IngressPrioCounters::processed_bytes,
     "accounted bytes handed on (released)"},
    {"drops_lossy_full", &IngressPrioCounters::drops_lossy_full,
     "lossy packets dropped: shared buffer full"},
    {"drops_headroom_full", &IngressPrioCounters::drops_headroom_full,
     "lossless packets dropped: headroom full"},
    {"xoff_sent", &IngressPrioCounters::xoff_sent, "pause (XOFF) frames sent for the priority"},
    {"refresh_sent", &IngressPrioCounters::refresh_sent,
     "pause refreshes sent while still over XON"},
    {"xon_sent", &IngressPrioCounters::xon_sent, "resume (XON, zero quanta) frames sent"},
    {"refresh_late", &IngressPrioCounters::refresh_late, "refresh sent after the pause had lapsed"},
    {"peak_bytes", &IngressPrioCounters::peak_bytes, "the highest occupancy seen (bytes)",
     counters::Kind::kLevel},
}};
static_assert(counters::covers(kIngressPrioCounterFields));
constexpr const auto& counter_fields(const IngressPrioCounters&) {
  return kIngressPrioCounterFields;
}

struct IngressCounters {
  std::array<IngressPrioCounters, kNumPriorities> prio{};
  std::uint64_t frames_sent = 0;
  std::uint64_t tx_no_buffer = 0;
  std::uint64_t bad_priority = 0;
  std::uint64_t release_underflow = 0;  // on_processed() beyond occupied()
};

inline constexpr counters::FieldList<IngressCounters, 4> kIngressCounterFields{{
    {"frames_sent", &IngressCounters::frames_sent, "PFC frames generated"},
    {"tx_no_buffer", &IngressCounters::tx_no_buffer, "PFC frames not generated: no TX buffer"},
    {"bad_priority", &IngressCounters::bad_priority,
     "packets accounted to a priority out of range"},
    {"release_underflow", &IngressCounters::release_underflow, "on_processed() beyond occupied()"},
}};
static_assert(counters::covers(kIngressCounterFields, &IngressCounters::prio));
constexpr const auto& counter_fields(const IngressCounters&) { return kIngressCounterFields; }

class IngressAccounting {
 public:
  static IngressConfigError check(const IngressConfig& cfg);

  // Precondition: check(cfg) == kOk.
  explicit IngressAccounting(const IngressConfig& cfg);

  template <FrameSink Tx>
  RxAdmit on_rx(std::uint8_t prio, std::uint32_t bytes, TimeNs now, Tx& tx) {
    const RxAdmit r = admit(prio, bytes);
    if (r == RxAdmit::kAccepted) evaluate(now, tx);
    return r;
  }

  template <FrameSink Tx>
  void on_processed(std::uint8_t prio, std::uint32_t bytes, TimeNs now, Tx& tx) {
    if (release(prio, bytes)) evaluate(now, tx);
  }

  // Sends due refreshes and retries a frame the sink had no room for.
  template <FrameSink Tx>
  void poll(TimeNs now, Tx& tx) {
    if (now >= next_deadline()) evaluate(now, tx);
  }

  // Earliest time poll() has work: a refresh, or 0 when a frame is waiting
  // for a TX buffer; kNoDeadline when no priority is paused.
  TimeNs next_deadline() const;

  std::uint64_t occupied(std::uint8_t prio) const { return occ_[prio & 7]; }
  std::uint64_t total_occupied() const { return total_; }
  // Current thresholds, the same for every lossless priority (dynamic ones
  // move with the total occupancy O).
  std::uint64_t xoff_threshold() const;
  std::uint64_t xon_threshold() const;
  // True while the peer has been told to pause `prio`.
  bool asserted(std::uint8_t prio) const { return pause_.asserted(prio); }
  // Total time `prio` has been held paused by us, up to `now`.
  TimeNs asserted_ns(std::uint8_t prio, TimeNs now) const { return pause_.asserted_ns(prio, now); }
  TimeNs pause_ns() const { return pause_.pause_ns(); }
  TimeNs refresh_ns() const { return pause_.refresh_ns(); }
  std::uint64_t shared_bytes() const { return shared_; }
  const IngressCounters& counters() const { return c_; }

 private:
  RxAdmit admit(std::uint8_t prio, std::uint32_t bytes);
  bool release(std::uint8_t prio, std::uint32_t bytes);

  template <FrameSink Tx>
  void evaluate(TimeNs now, Tx& tx) {
    const std::uint64_t xoff = xoff_threshold();
    const std::uint64_t xon = xon_threshold();
    PausePlan p;
    if (!pause_.plan(
            now, [&](std::uint8_t prio) { return occ_[prio] > xoff; },
            [&](std::uint8_t prio) { return occ_[prio] <= xon; }, p)) {
      retry_ = false;
      return;
    }
    if (!pause_.send(p, cfg_.src_mac, now, tx,
                     [&](std::uint8_t prio) -> IngressPrioCounters& { return c_.prio[prio]; })) {
      ++c_.tx_no_buffer;
      retry_ = true;
      return;
    }
    retry_ = false;
    ++c_.frames_sent;
  }

  IngressConfig cfg_;
  PauseAssertion pause_;
  std::uint64_t shared_ = 0;
  std::uint64_t total_ = 0;
  bool retry_ = false;
  std::array<std::uint64_t, kNumPriorities> occ_{};
  IngressCounters c_;
};

}  // namespace uroce::pfc
