// Scenario files: TOML (toml++) into a testbed::Scenario, strictly.
//
// Every table accepts a fixed set of keys; an unknown key, a value of the
// wrong type or out of range is an error that names the table path and the
// key ("switch[1].alpha: ...", "link[0]: unknown key 'rate' (did you mean
// 'rate_gbps'?)"). Units are part of the key names (rate_gbps, delay_us,
// duration_ms, ...). The full format, with examples, is in docs/testbed.md;
// testbed/scenarios/ holds working files.
//
// These functions check syntax, types and per-value ranges; relations
// between entries (names, topology, routes) are checked by resolve().
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pfc/alpha.h"

#include "testbed/scenario.h"

namespace uroce::testbed {

// Parses `text` (named `source` in messages). Returns "" on success, else
// the first problem; `out` is then unspecified.
std::string scenario_from_toml(std::string_view text, std::string_view source, Scenario& out);

// Reads and parses the file at `path`.
std::string scenario_from_file(const std::string& path, Scenario& out);

// The same, after `overrides` changed the file's TOML: each is
// PATH=VALUE, PATH a dotted path of tables and a key
// ("defaults.host.dcqcn", "scenario.duration_ms"; missing tables are
// created) and VALUE a TOML value ("false", "40", "\"1/8\"", "[3, 4]").
// The result is read as the file would be, with the same checks.
std::string scenario_from_file(const std::string& path, const std::vector<std::string>& overrides,
                               Scenario& out);

// The alpha grammar is pfc/alpha.h's, shared with uroced's configuration.
using pfc::parse_alpha;

}  // namespace uroce::testbed
