#include "apps/pfc_status_json.h"

#include <string>

#include "datapath/wire/pfc.h"

namespace uroce::engine {

nlohmann::json pfc_status_json(const PfcStatus& s) {
  using nlohmann::json;
  json j;
  json en = json::array();
  for (std::uint8_t p = 0; p < kNumPfcPrio; ++p) {
    if (((s.enable >> p) & 1) != 0) en.push_back(p);
  }
  j["enabled_priorities"] = en;
  j["link_mbps"] = s.link_bps / 1'000'000;
  j["tx_ttl"] = s.tx_ttl;
  json prios = json::array();
  for (std::uint8_t p = 0; p < kNumPfcPrio; ++p) {
    const pfc::IngressPrioCounters& in = s.ingress.prio[p];
    const pfc::PauseGatePrioCounters& g = s.gate.prio[p];
    const PfcEnginePrioCounters& e = s.engine.prio[p];
    json q;
    q["priority"] = p;
    q["lossless"] = ((s.enable >> p) & 1) != 0;
    // Generation (we pause the peer).
    q["xoff_sent"] = in.xoff_sent;
    q["refresh_sent"] = in.refresh_sent;
    q["xon_sent"] = in.xon_sent;
    q["refresh_late"] = in.refresh_late;
    q["asserted"] = s.asserted[p];
    q["asserted_ns"] = s.asserted_ns[p];
    q["occupied_bytes"] = s.occupied[p];
    q["peak_bytes"] = in.peak_bytes;
    q["staged"] = e.staged;
    q["processed"] = e.processed;
    q["rx_while_paused"] = e.rx_while_paused;
    q["drop_stage_full"] = e.stage_full;
    q["drop_admit"] = e.admit_drops;
    q["drop_lossy_full"] = in.drops_lossy_full;
    q["drop_headroom_full"] = in.drops_headroom_full;
    // Honouring (the peer pauses us).
    q["pause_rx"] = g.pause_rx;
    q["resume_rx"] = g.resume_rx;
    q["paused"] = s.peer_paused[p];
    q["paused_ns"] = s.paused_ns[p];
    q["disabled_rx"] = g.disabled_rx;
    q["quanta_clamped"] = g.quanta_clamped;
    q["pump_skips"] = e.pump_skips;
    q["tx_held"] = e.tx_held;
    q["tx_released"] = e.tx_released;
    q["held"] = s.held[p];
    q["drop_hold_full"] = e.tx_hold_full;
    // Storm watchdog.
    q["stormed"] = s.stormed[p];
    q["storms_detected"] = s.storm[p].storms_detected;
    q["storms_restored"] = s.storm[p].storms_restored;
    q["stormed_ns"] = s.stormed_ns[p];
    q["ignored_stormed"] = g.ignored_stormed;
    q["storm_drops"] = e.tx_storm_drops;
    prios.push_back(q);
  }
  j["priorities"] = prios;
  // Sums over the priorities, for a one-line summary.
  std::uint64_t xoff = 0, xon = 0, pause_rx = 0, asserted = 0, paused = 0;
  for (std::uint8_t p = 0; p < kNumPfcPrio; ++p) {
    xoff += s.ingress.prio[p].xoff_sent;
    xon += s.ingress.prio[p].xon_sent;
    pause_rx += s.gate.prio[p].pause_rx;
    asserted += s.asserted_ns[p];
    paused += s.paused_ns[p];
  }
  j["totals"] = {{"xoff_sent", xoff},
                 {"xon_sent", xon},
                 {"pause_rx", pause_rx},
                 {"asserted_ns", asserted},
                 {"paused_ns", paused}};
  j["frames_sent"] = s.ingress.frames_sent;
  j["tx_no_buffer"] = s.ingress.tx_no_buffer;
  j["frames_committed"] = s.engine.pfc_tx;
  j["frames_committed_no_buffer"] = s.engine.pfc_tx_no_buffer;
  j["mac_control_rx"] = s.engine.mac_control_rx;
  j["frames_rx"] = s.gate.frames_rx;
  j["frames_parsed"] = s.gate.parse[static_cast<std::size_t>(wire::PfcParseError::kOk)];
  json bad = json::object();
  for (std::size_t i = 1; i < pfc::kNumPfcParseErrors; ++i) {
    bad[std::string(wire::pfc_parse_error_name(static_cast<wire::PfcParseError>(i)))] =
        s.gate.parse[i];
  }
  bad["empty_class_vector"] = s.gate.empty_class_vector;
  j["rx_bad"] = bad;
  j["events_lost"] = s.engine.events_lost;
  const pfc::TtlCounters& t = s.ttl;
  j["ttl"] = {{"rx_checked", t.rx_checked},
              {"own_packets", t.own_packets},
              {"replay_lower_ttl", t.replay_lower_ttl},
              {"replay_same_ttl", t.replay_same_ttl},
              {"replay_higher_ttl", t.replay_higher_ttl},
              {"outliers_low", t.outliers_low},
              {"outliers_high", t.outliers_high},
              {"replay_evictions", t.replay_evictions},
              {"peer_evictions", t.peer_evictions},
              {"events_logged", t.events_logged},
              {"events_suppressed", t.events_suppressed}};
  return j;
}

}  // namespace uroce::engine
