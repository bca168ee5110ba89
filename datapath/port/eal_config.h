// DPDK EAL settings as configuration, and the argv they turn into.
//
// uroce never hard-codes EAL argv: daemons, benchmarks and tests fill an
// EalConfig (uroced from its [eal] table, benchmarks and tests in code) and
// `eal_argv` renders it. The
// defaults are the ones that work on a machine without hugepages or a NIC,
// as the project's lab and CI machines are: no hugepages, no PCI probing, no
// telemetry, 512 MB.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace uroce::port {

struct EalConfig {
  std::string lcores = "0";             // -l
  int main_lcore = -1;                  // --main-lcore; -1: EAL's choice (the lowest)
  std::uint32_t memory_mb = 512;        // -m
  std::string file_prefix;              // --file-prefix; empty -> --no-shconf
  bool hugepages = false;               // false -> --no-huge
  bool in_memory = false;               // --in-memory (only with hugepages)
  bool pci = false;                     // false -> --no-pci
  bool telemetry = false;               // false -> --no-telemetry
  std::string log_level = "notice";     // --log-level
  std::vector<std::string> vdevs;       // each -> --vdev=<string>
  std::vector<std::string> allow;       // each -> -a <pci address> (needs pci)
  std::vector<std::string> extra_args;  // appended verbatim, last
};

// The argv for rte_eal_init, argv[0] = `program`.
std::vector<std::string> eal_argv(const EalConfig& cfg, const std::string& program = "uroce");

}  // namespace uroce::port
