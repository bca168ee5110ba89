#include "tests/datapath/port/eal_once.h"

#include <gtest/gtest.h>
#include <rte_alarm.h>

#include <atomic>
#include <chrono>
#include <thread>

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

void set_flag(void* arg) { static_cast<std::atomic<bool>*>(arg)->store(true); }

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

bool interrupt_thread_runs() {
  std::atomic<bool> ran{false};
  if (rte_eal_alarm_set(1, set_flag, &ran) != 0) return false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!ran.load() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Not run in time: cancelled, or waited for if it runs now (`ran` lives
  // until then).
  if (!ran.load()) (void)rte_eal_alarm_cancel(set_flag, &ran);
  return ran.load();
}

}  // namespace uroce::port::test
