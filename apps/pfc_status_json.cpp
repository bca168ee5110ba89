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
    json q;
    q["priority"] = p;
    counters::put(q, PfcPriority{&s, p}, kPfcPriorityValues);
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
  counters::put(j, s, kPfcDeviceValues);
  json bad = json::object();
  for (std::size_t i = 1; i < pfc::kNumPfcParseErrors; ++i) {
    bad[std::string(wire::pfc_parse_error_name(static_cast<wire::PfcParseError>(i)))] =
        s.gate.parse[i];
  }
  bad["empty_class_vector"] = s.gate.empty_class_vector;
  j["rx_bad"] = bad;
  j["ttl"] = s.ttl;
  return j;
}

}  // namespace uroce::engine
