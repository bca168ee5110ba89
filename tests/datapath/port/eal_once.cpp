#include "tests/datapath/port/eal_once.h"

#include <gtest/gtest.h>

#include "datapath/port/eal.h"
#include "datapath/port/eal_config.h"

namespace uroce::port::test {

namespace {

bool g_started = false;

class EalCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    if (g_started) eal_cleanup();
  }
};
[[maybe_unused]] ::testing::Environment* const g_cleanup =
    ::testing::AddGlobalTestEnvironment(new EalCleanup);

}  // namespace

std::string start_eal_once() {
  if (g_started) return "";
  EalConfig eal;
  eal.lcores = "0";
  eal.memory_mb = 256;
  eal.log_level = "error";
  std::string err;
  if (eal_init(eal, &err) != 0) return err;
  g_started = true;
  return "";
}

}  // namespace uroce::port::test
