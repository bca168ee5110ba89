// uroced's log: spdlog to stderr, one line per event, never per packet.
// Format: "<time> uroced <level>: <message>".
#pragma once

#include <string>

namespace uroce::daemon {

// Installs the stderr logger with `level` (a DaemonConfig::log_level value).
void setup_logging(const std::string& level);

}  // namespace uroce::daemon
