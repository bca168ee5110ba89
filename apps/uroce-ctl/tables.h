// Human-readable views of the daemon's Status JSON (status_json.h in
// apps/uroced documents its fields): aligned text tables, one per command.
// Pure functions of the JSON; missing fields print as "-", so an older or
// newer daemon still gives a readable table.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace uroce::ctl_tool {

// Columns padded to their widest cell, two spaces apart, a header line
// first; numbers right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// `uroce-ctl status`: the daemon line and one row per device.
std::string render_status(const nlohmann::json& j);
// Part of render_status: a row per engine lcore from the status JSON's
// daemon.engine_loops (engine/loop_histogram.h): quantiles and maxima of
// the intervals after work and after idle spins (as bucket bounds), how
// many were 8 us (2^13 ns) and 65 us (2^16 ns) or more, and the backoff
// sleeps' lateness.
std::string render_loops(const nlohmann::json& loops);
// `uroce-ctl stages`: per device and shard, each stage of the stage stamps
// (engine/stage_stamps.h): how many, quantiles and maximum as bucket
// bounds, and the mean and maximum over the slowest recent messages.
std::string render_stages(const nlohmann::json& j);
// `uroce-ctl counters`: per device, every counter as name/value rows
// (arrays by reason flattened to name.reason; zero counters omitted).
std::string render_counters(const nlohmann::json& j);
// `uroce-ctl qps`: one row per QP.
std::string render_qps(const nlohmann::json& j);
// DC (docs/dc.md), part of render_qps: each device's context pool, every
// DCI stream and every DCT; empty without any.
std::string render_dc(const nlohmann::json& j);
// `uroce-ctl pfc`: per device, one row per priority (PFC frames sent and
// received, time paused each way, storm state, frames held), then the bad
// PFC input and the TTL loop signals.
std::string render_pfc(const nlohmann::json& j);
// `uroce-ctl sched`: per device its isolation mode, one row per traffic
// class (mode, weight, the QPs in it), then one row per QP: class and where
// it comes from (pinned or the DSCP), rate limit, burst, times parked, time
// paced, bytes charged to the rate, send queue depth.
std::string render_sched(const nlohmann::json& j);
// `uroce-ctl homa`: per device the Homa-like scheduler's settings, its
// receiver (messages, grants, the cutoffs it publishes) and its packet
// counters; then one row per RC QP: whether its peer runs the scheduler
// too and the sender's counters (messages gated, MLENs, waits for grants,
// grants, timeouts, fallbacks).
std::string render_homa(const nlohmann::json& j);
// `uroce-ctl clients`: one row per client connection.
std::string render_clients(const nlohmann::json& j);
// `uroce-ctl metrics`: the status as Prometheus text (metrics_text.h); the
// clients a reply left out to fit one message (their series are missing;
// the daemon's metrics listener serves them all) named in a comment line.
std::string render_metrics(const nlohmann::json& j);

}  // namespace uroce::ctl_tool
