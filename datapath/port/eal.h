// Process-wide DPDK EAL bring-up and tear-down. EAL can be initialised once
// per process; these calls are for main() of daemons, benchmarks and tests,
// never for the data path.
#pragma once

#include <string>
#include <string_view>

#include "datapath/port/eal_config.h"

namespace uroce::port {

// Runs rte_eal_init with eal_argv(cfg). Returns 0, or a negative errno with
// `error` set to a sentence saying what failed and what to try.
int eal_init(const EalConfig& cfg, std::string* error = nullptr);

// rte_eal_cleanup; call after every port is closed. Then removes the
// process's EAL runtime directory (/var/run/dpdk/<file prefix>) if it is
// empty, as it is with --no-shconf: EAL creates it and never removes it.
// A directory with files (another process's, or a shared config) stays.
// With hugepages (and without --in-memory) EAL backs its memory with files
// on hugetlbfs, <hugedir>/<file prefix>map_<n>, and leaves them behind
// (DPDK 22.11): the pages stay taken from the host until something removes
// them (a later primary process clears unlocked ones on its mount when it
// starts). The files this process mapped are removed here too.
void eal_cleanup();

// The file a /proc/self/maps line maps, when its name is one of EAL's
// hugepage files of `prefix` ("<prefix>map_..."); "" otherwise. Whether it
// is on hugetlbfs is the caller's to check.
std::string eal_hugepage_file(std::string_view maps_line, std::string_view prefix);

}  // namespace uroce::port
