// TTL at the endpoint: the TX TTL we stamp, and loop signals read from the
// TTL of what we receive. Three signals, each counted and logged at most
// once per log interval (with the number suppressed in between):
//
//   own packet   source MAC or source IP is ours: a frame we sent came back
//                (a forwarding loop through the fabric). Such packets are not
//                fed to the other two detectors.
//   replay       the same (source IP, destination QPN, PSN) arrives again
//                within replay_window with a LOWER TTL than last time: the
//                same packet took a longer path, typically one more lap of a
//                loop. The same TTL is an ordinary retransmission or
//                duplicate (counted, not a signal); a higher one is a route
//                that got shorter (counted).
//   outlier      the TTL differs by >= outlier_delta from the peer's usual
//                TTL, once that is known with confidence >= min_samples.
//
// Bounded memory, allocated once at construction: a direct-mapped table of
// recent (source, QPN, PSN) -> TTL (a colliding key replaces the old one and
// is counted), and a direct-mapped table of peers keyed by source IP. The
// usual TTL per peer is a majority vote: equal samples add confidence
// (capped at 2 x min_samples), others take one away and replace the usual
// TTL when it reaches 0; so a lasting route change is adopted after at most
// 2 x min_samples packets, while a looping minority never displaces it.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "datapath/wire/addr.h"
#include "datapath/wire/parser.h"
#include "pfc/events.h"
#include "pfc/sinks.h"

namespace uroce::pfc {

inline constexpr std::uint8_t kDefaultTxTtl = 64;

struct TtlMonitorConfig {
  std::uint8_t tx_ttl = kDefaultTxTtl;
  wire::MacAddr own_mac{};            // zero: not checked
  wire::Ipv4Addr own_ip{};            // 0.0.0.0: not checked
  std::uint32_t replay_slots = 1024;  // power of two
  TimeNs replay_window_ns = 10 * kNsPerMs;
  std::uint32_t peer_slots = 256;  // power of two
  std::uint8_t outlier_delta = 2;
  std::uint8_t min_samples = 8;  // 1..64
  TimeNs log_interval_ns = kNsPerSec;
};

enum class TtlMonitorConfigError : std::uint8_t {
  kOk = 0,
  kZeroTxTtl,
  kBadReplaySlots,  // 0, not a power of two, or above 2^20
  kZeroReplayWindow,
  kBadPeerSlots,  // 0, not a power of two, or above 2^20
  kZeroOutlierDelta,
  kBadMinSamples,  // 0 or above 64
};
std::string_view ttl_monitor_config_error_name(TtlMonitorConfigError e);

// Bits of on_rx()'s result.
enum LoopSignal : std::uint8_t {
  kLoopNone = 0,
  kLoopOwnPacket = 1,
  kLoopReplayLowerTtl = 2,
  kLoopTtlOutlierLow = 4,
  kLoopTtlOutlierHigh = 8,
};

struct RxTtlInfo {
  wire::MacAddr src_mac{};
  wire::Ipv4Addr src_ip{};
  std::uint32_t qpn = 0;  // destination QPN (BTH)
  std::uint32_t psn = 0;
  std::uint8_t ttl = 0;
};

struct TtlCounters {
  std::uint64_t rx_checked = 0;
  std::uint64_t own_packets = 0;
  std::uint64_t replay_lower_ttl = 0;
  std::uint64_t replay_same_ttl = 0;
  std::uint64_t replay_higher_ttl = 0;
  std::uint64_t replay_evictions = 0;  // a live entry replaced by another key
  std::uint64_t outliers_low = 0;
  std::uint64_t outliers_high = 0;
  std::uint64_t peer_evictions = 0;
  std::uint64_t events_logged = 0;
  std::uint64_t events_suppressed = 0;
};

inline constexpr counters::FieldList<TtlCounters, 11> kTtlCounterFields{{
    {"rx_checked", &TtlCounters::rx_checked, "RoCEv2 packets whose TTL was checked"},
    {"own_packets", &TtlCounters::own_packets,
     "packets from our own MAC or IP: a frame we sent came back (loop signal)"},
    {"replay_lower_ttl", &TtlCounters::replay_lower_ttl,
     "the same packet again with a lower TTL (loop signal)"},
    {"replay_same_ttl", &TtlCounters::replay_same_ttl,
     "the same packet again with the same TTL (a retransmission or duplicate)"},
    {"replay_higher_ttl", &TtlCounters::replay_higher_ttl,
     "the same packet again with a higher TTL (a route that got shorter)"},
    {"replay_evictions", &TtlCounters::replay_evictions, "a live entry replaced by another key"},
    {"outliers_low", &TtlCounters::outliers_low,
     "TTLs below the peer's usual one by outlier_delta or more (loop signal)"},
    {"outliers_high", &TtlCounters::outliers_high,
     "TTLs above the peer's usual one by outlier_delta or more"},
    {"peer_evictions", &TtlCounters::peer_evictions,
     "a peer entry replaced by another source address"},
    {"events_logged", &TtlCounters::events_logged, "loop signals logged"},
    {"events_suppressed", &TtlCounters::events_suppressed,
     "loop signals not logged: within the log interval"},
}};
static_assert(counters::covers(kTtlCounterFields));
constexpr const auto& counter_fields(const TtlCounters&) { return kTtlCounterFields; }

class TtlMonitor {
 public:
  static TtlMonitorConfigError check(const TtlMonitorConfig& cfg);

  // Precondition: check(cfg) == kOk. Allocates both tables; nothing after.
  explicit TtlMonitor(const TtlMonitorConfig& cfg);

  std::uint8_t tx_ttl() const { return cfg_.tx_ttl; }

  // One received RoCE packet; returns its LoopSignal bits.
  template <EventSink E>
  std::uint8_t on_rx(const RxTtlInfo& rx, TimeNs now, E& events) {
    std::array<PfcEvent, 2> ev;
    std::size_t n = 0;
    const std::uint8_t s = classify(rx, now, ev, n);
    for (std::size_t i = 0; i < n; ++i) events.event(ev[i]);
    return s;
  }
  template <EventSink E>
  std::uint8_t on_rx(const wire::ParsedPacket& p, TimeNs now, E& events) {
    return on_rx(RxTtlInfo{p.eth.src(), p.ip.src(), p.bth.dest_qp(), p.bth.psn(), p.ip.ttl()}, now,
                 events);
  }

  // The usual TTL of `ip` and its confidence; false if the peer is unknown.
  bool peer_usual_ttl(wire::Ipv4Addr ip, std::uint8_t& ttl, std::uint8_t& confidence) const;

  const TtlCounters& counters() const { return c_; }

 private:
  struct ReplayEntry {
    std::uint32_t ip = 0;
    std::uint32_t qpn = 0;
    std::uint32_t psn = 0;
    TimeNs at = 0;
    std::uint8_t ttl = 0;
    bool valid = false;
  };
  struct PeerEntry {
    std::uint32_t ip = 0;
    std::uint8_t usual = 0;
    std::uint8_t confidence = 0;
    bool valid = false;
  };
  static constexpr std::size_t kKinds = 3;  // own packet, replay, outlier

  std::uint8_t classify(const RxTtlInfo& rx, TimeNs now, std::array<PfcEvent, 2>& ev,
                        std::size_t& n);
  // Fills `e` and returns true if this kind may be logged now.
  bool admit_log(std::size_t kind, TimeNs now, PfcEvent& e);

  TtlMonitorConfig cfg_;
  std::vector<ReplayEntry> replay_;
  std::vector<PeerEntry> peers_;
  std::uint8_t max_confidence_ = 0;
  std::array<bool, kKinds> logged_{};
  std::array<TimeNs, kKinds> last_log_{};
  std::array<std::uint64_t, kKinds> suppressed_{};
  TtlCounters c_;
};

}  // namespace uroce::pfc
