// The Status body (status_json.h) as Prometheus metrics: the text exposition
// format 0.0.4, which `uroce-ctl metrics` prints and uroced's metrics
// listener (metrics_listener.h) serves. docs/metrics.md lists the families.
//
// Every metric's name, HELP and TYPE come from the lists the status is
// written from: the counter sets' field lists (datapath/base/
// counter_fields.h) and the status's own values (status_values.h,
// apps/pfc_status_json.h). A value of section S under key K is
// `uroce_S_K`, with `_total` for a count (a Prometheus counter), as it is
// for a level or a yes/no state (a gauge, 1 for yes); a key ending in `_ns`
// or `_s` becomes `_seconds` (the value in seconds, exactly). Labels: device,
// shard, priority, type and class (the sums by QP class), client, pid and
// uid (per client), uid (per user), lcore, reason (counts by reason).
//
// What the status holds that is configuration or identity (settings,
// limits, the port's description, pids, MTUs) is not a metric; neither are
// the QP lines (their number has no bound: the sums by class stand for
// them). A number the status holds that no list describes is still
// rendered, as a gauge, and named in `undescribed`: the unit test of a full
// status asserts there is none.
//
// Pure functions of the JSON; an older or newer daemon's status renders
// what it has.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "datapath/base/counter_fields.h"

namespace uroce::daemon {

// The Content-Type of the exposition (HTTP).
inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

struct MetricsText {
  std::string text;
  // Status paths ("devices[0].counters.rx_new") rendered without a list
  // that describes them.
  std::vector<std::string> undescribed;
  // Family names that two different descriptions claimed (the second's
  // samples are dropped).
  std::vector<std::string> conflicts;
};

MetricsText metrics_text(const nlohmann::json& status);

// The parts, for the tests.
// "uroce_" + set + "_" + key, the unit suffix made seconds, "_total" for a
// count; characters a metric name cannot hold become '_'.
std::string metric_name(std::string_view set, std::string_view key, counters::Kind kind);
// Whether `key` names nanoseconds (the value is divided by 10^9).
bool key_in_ns(std::string_view key);
// A label value: backslash, double quote and line feed escaped.
std::string escape_label(std::string_view v);
// A HELP text: backslash and line feed escaped.
std::string escape_help(std::string_view v);
// Nanoseconds as seconds in decimal, exactly: 1500 -> "0.0000015".
std::string seconds_text(std::uint64_t ns);

}  // namespace uroce::daemon
