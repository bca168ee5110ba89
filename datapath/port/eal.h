// Process-wide DPDK EAL bring-up and tear-down. EAL can be initialised once
// per process; these calls are for main() of daemons, benchmarks and tests,
// never for the data path.
#pragma once

#include <string>

#include "datapath/port/eal_config.h"

namespace uroce::port {

// Runs rte_eal_init with eal_argv(cfg). Returns 0, or a negative errno with
// `error` set to a sentence saying what failed and what to try.
int eal_init(const EalConfig& cfg, std::string* error = nullptr);

// rte_eal_cleanup; call after every port is closed. Then removes the
// process's EAL runtime directory (/var/run/dpdk/<file prefix>) if it is
// empty, as it is with --no-shconf: EAL creates it and never removes it.
// A directory with files (another process's, or a shared config) stays.
void eal_cleanup();

}  // namespace uroce::port
