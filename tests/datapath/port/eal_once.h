// DPDK's EAL for the port tests that need it. A process starts EAL once,
// and gtest runs every suite of the binary in one process: the first test
// that needs it starts it (no hugepages, PCI or shared configuration, so
// the binary runs beside other DPDK processes), and a test environment
// cleans it up when all tests are done.
#pragma once

#include <string>

namespace uroce::port::test {

// "" once EAL runs (started now or before), else why it could not start.
std::string start_eal_once();

}  // namespace uroce::port::test
