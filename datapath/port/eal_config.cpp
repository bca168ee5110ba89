#include "datapath/port/eal_config.h"

namespace uroce::port {

std::vector<std::string> eal_argv(const EalConfig& cfg, const std::string& program) {
  std::vector<std::string> a{program, "-l", cfg.lcores, "-m", std::to_string(cfg.memory_mb)};
  if (cfg.main_lcore >= 0) {
    a.emplace_back("--main-lcore");
    a.push_back(std::to_string(cfg.main_lcore));
  }
  if (cfg.file_prefix.empty()) {
    a.emplace_back("--no-shconf");
  } else {
    a.emplace_back("--file-prefix");
    a.push_back(cfg.file_prefix);
  }
  if (!cfg.hugepages) a.emplace_back("--no-huge");
  if (cfg.hugepages && cfg.in_memory) a.emplace_back("--in-memory");
  if (!cfg.pci) a.emplace_back("--no-pci");
  if (!cfg.telemetry) a.emplace_back("--no-telemetry");
  a.push_back("--log-level=" + cfg.log_level);
  for (const auto& v : cfg.vdevs) a.push_back("--vdev=" + v);
  for (const auto& p : cfg.allow) {
    a.emplace_back("-a");
    a.push_back(p);
  }
  for (const auto& e : cfg.extra_args) a.push_back(e);
  return a;
}

}  // namespace uroce::port
