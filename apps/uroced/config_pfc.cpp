// The [device.pfc] key set: PFC generation and honouring, the ingress
// accounting's thresholds, the storm watchdog and the priority map of one
// device (docs/pfc.md). File only: --device gives the lossless priorities
// alone (its `pfc` key, config_keys_device.cpp).
#include <cstdint>
#include <string>

#include "apps/uroced/config_keys.h"
#include "apps/uroced/config_values.h"
#include "pfc/alpha.h"

namespace uroce::daemon {

using namespace config_detail;

namespace {

using D = DeviceConfig;
using KD = KeyDesc<DeviceConfig>;
using engine::PfcEndpointConfig;
using pfc::IngressConfig;
using pfc::StormWatchdogConfig;
constexpr std::int64_t kTiB = std::int64_t{1} << 40;

// A file-only key of the set.
constexpr KD in_file(KD k) {
  k.sources = kInFile;
  return k;
}

constexpr KeyChoices<pfc::ThresholdMode, 2> kThresholdModes{"a mode",
                                                            {{{"static",
                                                               pfc::ThresholdMode::kStatic},
                                                              {"dynamic",
                                                               pfc::ThresholdMode::kDynamic}}}};
constexpr KeyChoices<pfc::StormAction, 2> kStormActions{"an action",
                                                        {{{"drop", pfc::StormAction::kDrop},
                                                          {"ignore", pfc::StormAction::kIgnore}}}};

// One of the priority map's tables as a list: entry i of the list is the
// table's entry i; entries not given keep their defaults.
template <std::size_t N, std::int64_t Hi, auto Set, auto Get>
constexpr KD map_key(std::string_view name, std::string_view help, std::string_view note,
                     std::string_view example) {
  return {.name = name,
          .type = KeyType::kIntList,
          .lo = 0,
          .hi = Hi,
          .help = help,
          .set =
              [](const KeyValue& v, const std::string&, D* d) {
                for (std::size_t i = 0; i < v.list.size(); ++i) {
                  (d->pfc.map.*Set)(static_cast<unsigned>(i), static_cast<unsigned>(v.list[i]));
                }
                return std::string();
              },
          .get =
              [](const D& d) {
                std::vector<std::int64_t> l;
                for (std::size_t i = 0; i < N; ++i) {
                  l.push_back((d.pfc.map.*Get)(static_cast<std::uint8_t>(i)));
                }
                return KeyValue::of_list(std::move(l));
              },
          .note = note,
          .sources = kInFile,
          .noun = "integers",
          .max_len = N,
          .example = example};
}

const KD kPfcTableKeys[] = {
    lossless_priorities_key("priorities", kInFile,
                            "the lossless priorities (--device: the `pfc` key)"),
    in_file(
        choice_key<D, kThresholdModes, &D::pfc, &PfcEndpointConfig::ingress, &IngressConfig::mode>(
            "mode", "the ingress thresholds: static (xoff/xon bytes) or dynamic (alpha)")),
    in_file(integer_key<D, &D::pfc, &PfcEndpointConfig::ingress, &IngressConfig::buffer_bytes>(
        "buffer_bytes", 0, kTiB, "the receive buffer the thresholds share")),
    in_file(integer_key<D, &D::pfc, &PfcEndpointConfig::ingress, &IngressConfig::headroom_bytes>(
        "headroom_bytes", 0, kTiB, "the headroom kept per lossless priority")),
    in_file(integer_key<D, &D::pfc, &PfcEndpointConfig::ingress, &IngressConfig::xoff_bytes>(
        "xoff_bytes", 0, kTiB, "static mode: a priority's bytes that send XOFF")),
    in_file(integer_key<D, &D::pfc, &PfcEndpointConfig::ingress, &IngressConfig::xon_bytes>(
        "xon_bytes", 0, kTiB, "static mode: the bytes below which XON is sent")),
    in_file(integer_key<D, &D::pfc, &PfcEndpointConfig::ingress, &IngressConfig::xon_offset_bytes>(
        "xon_offset_bytes", 0, kTiB, "dynamic mode: XON this far below the threshold")),
    {.name = "alpha",
     .type = KeyType::kText,
     .help = "dynamic mode: a priority's share of the free buffer (\"1/16\", 2, 0.5)",
     .set =
         [](const KeyValue& v, const std::string& key, D* d) {
           IngressConfig& in = d->pfc.ingress;
           std::string e = pfc::parse_alpha(v.text, in.alpha_num, in.alpha_den);
           return e.empty() ? e : key + ": " + e;
         },
     .get =
         [](const D& d) {
           return KeyValue::of_text(std::to_string(d.pfc.ingress.alpha_num) + "/" +
                                    std::to_string(d.pfc.ingress.alpha_den));
         },
     .sources = kInFile,
     .scalar = "a fraction such as \"1/16\" or a number"},
    in_file(integer_key<D, &D::pfc, &PfcEndpointConfig::ingress, &IngressConfig::xoff_quanta>(
        "xoff_quanta", 1, 65535, "the pause time an XOFF asks for (512-bit times)")),
    in_file(integer_key<D, &D::pfc, &PfcEndpointConfig::max_quanta>(
        "max_quanta", 1, 65535, "the longest pause honoured from a peer (512-bit times)")),
    in_file(integer_key<D, &D::pfc, &PfcEndpointConfig::ingress, &IngressConfig::refresh_percent>(
        "refresh_percent", 1, 99, "an XOFF is sent again after this share of its pause time")),
    in_file(switch_key<D, &D::pfc, &PfcEndpointConfig::storm_watchdog>(
        "storm_watchdog", "watch for pause storms (a priority paused too long)")),
    in_file(
        scaled_key<D, kNsPerMs, &D::pfc, &PfcEndpointConfig::storm,
                   &StormWatchdogConfig::detection_ns>("storm_detection_ms", 1, 3'600'000,
                                                       "a priority paused this long is a storm")),
    in_file(scaled_key<D, kNsPerMs, &D::pfc, &PfcEndpointConfig::storm,
                       &StormWatchdogConfig::restoration_ns>(
        "storm_restoration_ms", 1, 3'600'000, "a storm ends after this long without pauses")),
    in_file(choice_key<D, kStormActions, &D::pfc, &PfcEndpointConfig::storm,
                       &StormWatchdogConfig::action>(
        "storm_action", "in a storm: drop the priority's frames, or ignore the pauses")),
    in_file(integer_key<D, &D::pfc, &PfcEndpointConfig::stage_slots>(
        "stage_slots", 1, 65536, "received lossless frames held for the next RX phase")),
    in_file(integer_key<D, &D::pfc, &PfcEndpointConfig::rx_budget>(
        "rx_budget", 1, 65536, "staged frames handed to the transports per RX phase")),
    in_file(integer_key<D, &D::pfc, &PfcEndpointConfig::hold_slots>(
        "hold_slots", 1, 65536, "frames of paused priorities held for sending")),
    map_key<pfc::kNumServiceLevels, 7, &pfc::PriorityMap::set_sl_priority,
            &pfc::PriorityMap::priority_of_sl>("sl_priority", "the priority of each service level",
                                               "the priorities of service levels 0.. in order",
                                               "0,1,2,3"),
    map_key<pfc::kNumPriorities, 63, &pfc::PriorityMap::set_priority_dscp,
            &pfc::PriorityMap::dscp_of_priority>("priority_dscp",
                                                 "the DSCP each priority is sent with",
                                                 "the DSCPs of priorities 0.. in order", "0,8,16"),
    map_key<pfc::kNumDscp, 7, &pfc::PriorityMap::set_dscp_priority,
            &pfc::PriorityMap::priority_of_dscp>("dscp_priority",
                                                 "the priority a received DSCP counts in",
                                                 "the priorities of DSCPs 0.. in order",
                                                 "0,0,0,0,0,0,0,0,1"),
};

}  // namespace

const KeySet<DeviceConfig>& pfc_table_key_set() {
  static const KeySet<DeviceConfig> set{"[device.pfc]: PFC, ingress thresholds, storms, priorities",
                                        "docs/pfc.md", kPfcTableKeys};
  return set;
}

}  // namespace uroce::daemon
