// Test main of the engine tests (not a source mirror): the mbuf and ethdev
// tests need DPDK's EAL, which a process initialises once. No hugepages, no
// PCI, no shared config, so tests run side by side without clashing.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "datapath/port/eal.h"
#include "datapath/port/eal_config.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  uroce::port::EalConfig eal;
  eal.lcores = "0";
  eal.memory_mb = 128;
  eal.log_level = "error";
  std::string err;
  if (uroce::port::eal_init(eal, &err) != 0) {
    std::fprintf(stderr, "EAL init failed: %s\n", err.c_str());
    return 1;
  }
  const int rc = RUN_ALL_TESTS();
  uroce::port::eal_cleanup();
  return rc;
}
