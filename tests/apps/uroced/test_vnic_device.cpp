// VnicDevice (vnic_device.h) over a real Vnic<SimPortIo> and Engine: what
// snapshot() reads of the device in its one engine call.
#include "apps/uroced/vnic_device.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/apps/uroced/sim_daemon.h"

namespace uroce::daemon {
namespace {

using testing::SimEngine;

// One device on one end of a simulated link, its engine on a thread.
class OneDevice {
 public:
  explicit OneDevice(const sched::homa::HomaSettings& homa)
      : link_(port::SimLinkConfig{}), port_(link_, 0), io_(port_), engine_(backoff(), clock_) {
    engine::VnicConfig c;
    c.name = "uroce0";
    c.mac = wire::MacAddr{{0x02, 0, 0, 0, 0, 1}};
    c.ip = wire::Ipv4Addr{(10u << 24) | 1};
    c.eth_mtu = 9000;
    c.homa = homa;
    vnic_ = std::make_unique<SimEngine::VnicT>(c, io_);
    engine_.add_vnic(vnic_.get());
    device_ = std::make_unique<VnicDevice<SimEngine>>(*vnic_, engine_, 0, "sim:0");
    thread_ = std::thread([this] { engine_.run(stop_); });
  }
  ~OneDevice() {
    stop_.store(true);
    thread_.join();
  }
  Device& device() { return *device_; }

 private:
  static engine::EngineConfig backoff() {
    engine::EngineConfig c;
    c.mode = engine::PollMode::kBackoff;
    return c;
  }
  port::SimLink link_;
  port::SimPort port_;
  engine::SimPortIo io_;
  testing::SteadyClock clock_;
  SimEngine engine_;
  std::unique_ptr<SimEngine::VnicT> vnic_;
  std::unique_ptr<VnicDevice<SimEngine>> device_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(VnicDevice_Snapshot, NoHomaWhenOff) {
  OneDevice d(sched::homa::HomaSettings{});
  DeviceSnapshot s;
  d.device().snapshot(false, &s);
  EXPECT_FALSE(s.has_homa);
}

TEST(VnicDevice_Snapshot, HomaReceiverWhenOn) {
  sched::homa::HomaSettings h;
  h.enabled = true;
  h.unsched_priorities = 3;
  OneDevice d(h);
  DeviceSnapshot s;
  d.device().snapshot(false, &s);
  ASSERT_TRUE(s.has_homa);
  // Fresh: nothing received yet, the first generation of cutoffs with the
  // configured number of unscheduled levels.
  EXPECT_EQ(s.homa.tracked, 0u);
  EXPECT_EQ(s.homa.outstanding, 0u);
  EXPECT_EQ(s.homa.grants.messages, 0u);
  EXPECT_EQ(s.homa.generation, 1u);
  EXPECT_EQ(s.homa.cutoffs.levels, 3u);
  EXPECT_EQ(d.device().config().homa.unsched_priorities, 3);
}

}  // namespace
}  // namespace uroce::daemon
