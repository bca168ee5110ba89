// PFC honouring at the endpoint: per-priority TX gates driven by received
// 802.1Qbb frames (decoded by datapath/wire/pfc.h).
//
// A frame pausing priority p for q quanta closes p's gate until
// now + q x 512 / link_bps seconds (rounded up to whole ns, so a pause never
// ends early); a later frame for p replaces that deadline, and q = 0 opens
// the gate at once. Only priorities whose class-enable bit is set in the
// frame are touched, and only those enabled locally for PFC: a pause for a
// lossy priority is counted and ignored. Nothing else is ever stopped.
//
// The gate always tracks what the peer asked for (the "peer pause"), even
// while the storm watchdog overrides it, so that the watchdog can see when
// the peer stops pausing:
//   kDropTraffic   gate forced open and every packet of p dropped (counted)
//   kIgnorePauses  gate forced open; pauses still tracked and counted
//
// Time paused per priority is the union of the peer-pause intervals, exact
// to the ns. A pause that arrives while the previous one is still in effect
// (or at the instant it ends) extends one continuous interval; the watchdog
// uses its start.
//
// Bad input never throws or reads outside the frame: every codec error is
// counted under the codec's own code.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "datapath/wire/pfc.h"
#include "pfc/priority_map.h"

namespace uroce::pfc {

// Number of wire::PfcParseError values (kOk included).
inline constexpr std::size_t kNumPfcParseErrors = 5;
static_assert(static_cast<std::size_t>(wire::PfcParseError::kBadDstMac) + 1 == kNumPfcParseErrors);

struct PauseGateConfig {
  std::uint8_t pfc_enable = 0x08;  // bit p: pauses for priority p are honoured
  std::uint64_t link_bps = 100'000'000'000ull;
  // Quanta above this are treated as this much (and counted): a guard
  // against a peer freezing a priority for an absurd time on a slow link.
  std::uint16_t max_quanta = 0xffff;
};

enum class PauseGateConfigError : std::uint8_t {
  kOk = 0,
  kZeroLinkSpeed,
  kZeroMaxQuanta,
};
std::string_view pause_gate_config_error_name(PauseGateConfigError e);

enum class GateOverride : std::uint8_t { kNone = 0, kDropTraffic, kIgnorePauses };

enum class TxVerdict : std::uint8_t {
  kSend = 0,
  kWait,  // paused: keep the packet queued until resume_at()
  kDrop,  // stormed with action drop: discard the packet (counted)
};

struct PauseGatePrioCounters {
  std::uint64_t pause_rx = 0;         // non-zero quanta honoured or tracked
  std::uint64_t resume_rx = 0;        // zero quanta
  std::uint64_t disabled_rx = 0;      // class bit set, priority not PFC-enabled
  std::uint64_t quanta_clamped = 0;   // above max_quanta
  std::uint64_t ignored_stormed = 0;  // pauses overridden by kIgnorePauses
  std::uint64_t storm_drops = 0;      // packets dropped under kDropTraffic
};

inline constexpr counters::FieldList<PauseGatePrioCounters, 6> kPauseGatePrioCounterFields{{
    {"pause_rx", &PauseGatePrioCounters::pause_rx, "non-zero quanta honoured or tracked"},
    {"resume_rx", &PauseGatePrioCounters::resume_rx, "zero quanta"},
    {"disabled_rx", &PauseGatePrioCounters::disabled_rx, "class bit set, priority not PFC-enabled"},
    {"quanta_clamped", &PauseGatePrioCounters::quanta_clamped, "above max_quanta"},
    {"ignored_stormed", &PauseGatePrioCounters::ignored_stormed,
     "pauses overridden by kIgnorePauses"},
    {"storm_drops", &PauseGatePrioCounters::storm_drops, "packets dropped under kDropTraffic"},
}};
static_assert(counters::covers(kPauseGatePrioCounterFields));
constexpr const auto& counter_fields(const PauseGatePrioCounters&) {
  return kPauseGatePrioCounterFields;
}

struct PauseGateCounters {
  std::array<PauseGatePrioCounters, kNumPriorities> prio{};
  std::uint64_t frames_rx = 0;  // every frame handed to on_frame()
  // Indexed by wire::PfcParseError; [kOk] counts frames that parsed.
  std::array<std::uint64_t, kNumPfcParseErrors> parse{};
  std::uint64_t parse_unknown = 0;       // a codec error this table does not know
  std::uint64_t empty_class_vector = 0;  // parsed, but no class bit set
};

inline constexpr counters::FieldList<PauseGateCounters, 3> kPauseGateCounterFields{{
    {"frames_rx", &PauseGateCounters::frames_rx, "every frame handed to on_frame()"},
    {"parse_unknown", &PauseGateCounters::parse_unknown, "a codec error this table does not know"},
    {"empty_class_vector", &PauseGateCounters::empty_class_vector, "parsed, but no class bit set"},
}};
static_assert(counters::covers(kPauseGateCounterFields, &PauseGateCounters::prio,
                               &PauseGateCounters::parse));
constexpr const auto& counter_fields(const PauseGateCounters&) { return kPauseGateCounterFields; }

class PauseGate {
 public:
  static PauseGateConfigError check(const PauseGateConfig& cfg);

  // Precondition: check(cfg) == kOk.
  explicit PauseGate(const PauseGateConfig& cfg) : cfg_(cfg) {}

  // A received MAC Control frame, whole (Ethernet header first). Returns the
  // codec's verdict; on kOk the frame has been applied.
  wire::PfcParseError on_frame(std::span<const std::uint8_t> frame, TimeNs now);
  // An already decoded frame.
  void on_pfc(const wire::PfcFrame& f, TimeNs now);

  // Per packet (or per burst of one priority): may `prio` be sent now?
  // Counts the drop when the answer is kDrop. prio >= 8 is never paused.
  TxVerdict tx_verdict(std::uint8_t prio, TimeNs now) {
    if (prio >= kNumPriorities) return TxVerdict::kSend;
    const GateOverride o = override_[prio];
    if (o == GateOverride::kDropTraffic) {
      ++c_.prio[prio].storm_drops;
      return TxVerdict::kDrop;
    }
    if (o == GateOverride::kNone && now < until_[prio]) return TxVerdict::kWait;
    return TxVerdict::kSend;
  }
  // Bit p set: priority p is held (kWait) at `now`.
  std::uint8_t blocked_mask(TimeNs now) const;

  // The peer's pause, regardless of any override.
  bool peer_paused(std::uint8_t prio, TimeNs now) const { return now < until_[prio & 7]; }
  // When the peer's latest pause ends (or ended).
  TimeNs resume_at(std::uint8_t prio) const { return until_[prio & 7]; }
  // Start of the current continuous peer pause; meaningful while paused.
  TimeNs pause_started(std::uint8_t prio) const { return start_[prio & 7]; }
  // Total time the peer has held `prio` paused, up to `now`.
  TimeNs paused_ns(std::uint8_t prio, TimeNs now) const;

  void set_override(std::uint8_t prio, GateOverride o) { override_[prio & 7] = o; }
  GateOverride override_of(std::uint8_t prio) const { return override_[prio & 7]; }

  const PauseGateCounters& counters() const { return c_; }
  const PauseGateConfig& config() const { return cfg_; }

 private:
  void apply(std::uint8_t prio, std::uint16_t quanta, TimeNs now);

  PauseGateConfig cfg_;
  // Invariant per priority: start_ <= until_; [start_, until_) is the
  // current (or last) continuous peer pause, closed_ns_ all earlier ones.
  std::array<TimeNs, kNumPriorities> start_{};
  std::array<TimeNs, kNumPriorities> until_{};
  std::array<TimeNs, kNumPriorities> closed_ns_{};
  std::array<GateOverride, kNumPriorities> override_{};
  PauseGateCounters c_;
};

}  // namespace uroce::pfc
