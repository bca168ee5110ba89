// The PFC and TTL state of one Vnic (PfcStatus, pfc_endpoint.h) as JSON: the
// one serialisation uroced's status (uroce-ctl pfc) and the testbed's
// summary.json both use, so a counter has one name everywhere
// (docs/pfc.md lists them). Off the data path: allocates.
//
// The values of each priority and of the device are lists (counters::Value)
// that the JSON writer and the metrics (apps/uroced/metrics_text.h) both
// read: a value's key, meaning and kind are written once, here.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string_view>

#include "apps/counters_json.h"
#include "datapath/engine/pfc_endpoint.h"
#include "datapath/wire/pfc.h"

namespace uroce::engine {

nlohmann::json pfc_status_json(const PfcStatus& s);

// One priority of a status, as the per-priority list reads it.
struct PfcPriority {
  const PfcStatus* s = nullptr;
  std::uint8_t p = 0;
};

namespace pfc_json_detail {
// The help of a counter-set field, for a value that shows it under its own
// key.
template <class S, std::size_t N>
consteval std::string_view help(const counters::FieldList<S, N>& list, std::string_view name) {
  return counters::field(list, name).help;
}
using Q = PfcPriority;
using K = counters::Kind;
}  // namespace pfc_json_detail

// Each entry of "priorities" (with its "priority", the label): generation
// (we pause the peer), honouring (the peer pauses us), the storm watchdog.
inline constexpr counters::ValueList<PfcPriority, 33> kPfcPriorityValues{{
    {"lossless",
     [](const pfc_json_detail::Q& q) -> std::uint64_t { return (q.s->enable >> q.p) & 1; },
     "PFC is enabled on the priority (lossless)", pfc_json_detail::K::kFlag},
    // Generation.
    {"xoff_sent", [](const pfc_json_detail::Q& q) { return q.s->ingress.prio[q.p].xoff_sent; },
     pfc_json_detail::help(pfc::kIngressPrioCounterFields, "xoff_sent")},
    {"refresh_sent",
     [](const pfc_json_detail::Q& q) { return q.s->ingress.prio[q.p].refresh_sent; },
     pfc_json_detail::help(pfc::kIngressPrioCounterFields, "refresh_sent")},
    {"xon_sent", [](const pfc_json_detail::Q& q) { return q.s->ingress.prio[q.p].xon_sent; },
     pfc_json_detail::help(pfc::kIngressPrioCounterFields, "xon_sent")},
    {"refresh_late",
     [](const pfc_json_detail::Q& q) { return q.s->ingress.prio[q.p].refresh_late; },
     pfc_json_detail::help(pfc::kIngressPrioCounterFields, "refresh_late")},
    {"asserted", [](const pfc_json_detail::Q& q) -> std::uint64_t { return q.s->asserted[q.p]; },
     "we hold the peer paused on the priority now", pfc_json_detail::K::kFlag},
    {"asserted_ns", [](const pfc_json_detail::Q& q) { return q.s->asserted_ns[q.p]; },
     "time we held the peer paused (ns)"},
    {"occupied_bytes", [](const pfc_json_detail::Q& q) { return q.s->occupied[q.p]; },
     "bytes accounted to the priority now", pfc_json_detail::K::kLevel},
    {"peak_bytes", [](const pfc_json_detail::Q& q) { return q.s->ingress.prio[q.p].peak_bytes; },
     pfc_json_detail::help(pfc::kIngressPrioCounterFields, "peak_bytes"),
     pfc_json_detail::K::kLevel},
    {"staged", [](const pfc_json_detail::Q& q) { return q.s->engine.prio[q.p].staged; },
     pfc_json_detail::help(kPfcEnginePrioCounterFields, "staged")},
    {"processed", [](const pfc_json_detail::Q& q) { return q.s->engine.prio[q.p].processed; },
     pfc_json_detail::help(kPfcEnginePrioCounterFields, "processed")},
    {"rx_while_paused",
     [](const pfc_json_detail::Q& q) { return q.s->engine.prio[q.p].rx_while_paused; },
     pfc_json_detail::help(kPfcEnginePrioCounterFields, "rx_while_paused")},
    {"drop_stage_full",
     [](const pfc_json_detail::Q& q) { return q.s->engine.prio[q.p].stage_full; },
     pfc_json_detail::help(kPfcEnginePrioCounterFields, "stage_full")},
    {"drop_admit", [](const pfc_json_detail::Q& q) { return q.s->engine.prio[q.p].admit_drops; },
     pfc_json_detail::help(kPfcEnginePrioCounterFields, "admit_drops")},
    {"drop_lossy_full",
     [](const pfc_json_detail::Q& q) { return q.s->ingress.prio[q.p].drops_lossy_full; },
     pfc_json_detail::help(pfc::kIngressPrioCounterFields, "drops_lossy_full")},
    {"drop_headroom_full",
     [](const pfc_json_detail::Q& q) { return q.s->ingress.prio[q.p].drops_headroom_full; },
     pfc_json_detail::help(pfc::kIngressPrioCounterFields, "drops_headroom_full")},
    // Honouring.
    {"pause_rx", [](const pfc_json_detail::Q& q) { return q.s->gate.prio[q.p].pause_rx; },
     pfc_json_detail::help(pfc::kPauseGatePrioCounterFields, "pause_rx")},
    {"resume_rx", [](const pfc_json_detail::Q& q) { return q.s->gate.prio[q.p].resume_rx; },
     pfc_json_detail::help(pfc::kPauseGatePrioCounterFields, "resume_rx")},
    {"paused", [](const pfc_json_detail::Q& q) -> std::uint64_t { return q.s->peer_paused[q.p]; },
     "the peer holds us paused on the priority now", pfc_json_detail::K::kFlag},
    {"paused_ns", [](const pfc_json_detail::Q& q) { return q.s->paused_ns[q.p]; },
     "time the peer held us paused (ns)"},
    {"disabled_rx", [](const pfc_json_detail::Q& q) { return q.s->gate.prio[q.p].disabled_rx; },
     pfc_json_detail::help(pfc::kPauseGatePrioCounterFields, "disabled_rx")},
    {"quanta_clamped",
     [](const pfc_json_detail::Q& q) { return q.s->gate.prio[q.p].quanta_clamped; },
     pfc_json_detail::help(pfc::kPauseGatePrioCounterFields, "quanta_clamped")},
    {"pump_skips", [](const pfc_json_detail::Q& q) { return q.s->engine.prio[q.p].pump_skips; },
     pfc_json_detail::help(kPfcEnginePrioCounterFields, "pump_skips")},
    {"tx_held", [](const pfc_json_detail::Q& q) { return q.s->engine.prio[q.p].tx_held; },
     pfc_json_detail::help(kPfcEnginePrioCounterFields, "tx_held")},
    {"tx_released", [](const pfc_json_detail::Q& q) { return q.s->engine.prio[q.p].tx_released; },
     pfc_json_detail::help(kPfcEnginePrioCounterFields, "tx_released")},
    {"held", [](const pfc_json_detail::Q& q) -> std::uint64_t { return q.s->held[q.p]; },
     "frames in the hold queue now", pfc_json_detail::K::kLevel},
    {"drop_hold_full",
     [](const pfc_json_detail::Q& q) { return q.s->engine.prio[q.p].tx_hold_full; },
     pfc_json_detail::help(kPfcEnginePrioCounterFields, "tx_hold_full")},
    // Storm watchdog.
    {"stormed", [](const pfc_json_detail::Q& q) -> std::uint64_t { return q.s->stormed[q.p]; },
     "a pause storm is under way on the priority now", pfc_json_detail::K::kFlag},
    {"storms_detected", [](const pfc_json_detail::Q& q) { return q.s->storm[q.p].storms_detected; },
     pfc_json_detail::help(pfc::kStormPrioCounterFields, "storms_detected")},
    {"storms_restored", [](const pfc_json_detail::Q& q) { return q.s->storm[q.p].storms_restored; },
     pfc_json_detail::help(pfc::kStormPrioCounterFields, "storms_restored")},
    {"stormed_ns", [](const pfc_json_detail::Q& q) { return q.s->stormed_ns[q.p]; },
     "time the priority spent in a pause storm (ns)"},
    {"ignored_stormed",
     [](const pfc_json_detail::Q& q) { return q.s->gate.prio[q.p].ignored_stormed; },
     pfc_json_detail::help(pfc::kPauseGatePrioCounterFields, "ignored_stormed")},
    {"storm_drops",
     [](const pfc_json_detail::Q& q) { return q.s->engine.prio[q.p].tx_storm_drops; },
     pfc_json_detail::help(kPfcEnginePrioCounterFields, "tx_storm_drops")},
}};
static_assert(counters::well_formed(kPfcPriorityValues));

// The device's PFC frames (beside "rx_bad", by reason, and "ttl").
inline constexpr counters::ValueList<PfcStatus, 8> kPfcDeviceValues{{
    {"frames_sent", [](const PfcStatus& s) { return s.ingress.frames_sent; },
     pfc_json_detail::help(pfc::kIngressCounterFields, "frames_sent")},
    {"tx_no_buffer", [](const PfcStatus& s) { return s.ingress.tx_no_buffer; },
     pfc_json_detail::help(pfc::kIngressCounterFields, "tx_no_buffer")},
    {"frames_committed", [](const PfcStatus& s) { return s.engine.pfc_tx; },
     pfc_json_detail::help(kPfcEngineCounterFields, "pfc_tx")},
    {"frames_committed_no_buffer", [](const PfcStatus& s) { return s.engine.pfc_tx_no_buffer; },
     pfc_json_detail::help(kPfcEngineCounterFields, "pfc_tx_no_buffer")},
    {"mac_control_rx", [](const PfcStatus& s) { return s.engine.mac_control_rx; },
     pfc_json_detail::help(kPfcEngineCounterFields, "mac_control_rx")},
    {"frames_rx", [](const PfcStatus& s) { return s.gate.frames_rx; },
     pfc_json_detail::help(pfc::kPauseGateCounterFields, "frames_rx")},
    {"frames_parsed",
     [](const PfcStatus& s) {
       return s.gate.parse[static_cast<std::size_t>(wire::PfcParseError::kOk)];
     },
     "MAC Control frames that parsed as PFC"},
    {"events_lost", [](const PfcStatus& s) { return s.engine.events_lost; },
     pfc_json_detail::help(kPfcEngineCounterFields, "events_lost")},
}};
static_assert(counters::well_formed(kPfcDeviceValues));

}  // namespace uroce::engine
