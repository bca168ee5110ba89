#include "apps/uroced/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace uroce::daemon {

void setup_logging(const std::string& level) {
  // Again after an embedded engine failed to start (its process may open
  // another device): spdlog refuses a second logger of the same name.
  spdlog::drop("uroced");
  auto logger = spdlog::stderr_logger_mt("uroced");
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e uroced %l: %v");
  logger->set_level(spdlog::level::from_str(level));
  // Lines reach stderr as they are written (scripts wait for them).
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

}  // namespace uroce::daemon
