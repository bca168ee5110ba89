// One engine, its devices and their DPDK ports, built from a DaemonConfig:
// what uroced runs on its main lcore (main.cpp) and what the embedded
// engine library runs in an application's process (embedded_engine.cpp,
// docs/embedded.md). One place builds the Vnics, so both modes run the
// same engine with the same device keys.
//
// open() calls rte_eal_init: the calling thread becomes EAL's main lcore
// (and is pinned to it). Destruction closes the ports, then cleans EAL up
// and removes its runtime directory and the record of it (stale_runtime.h).
// A Server built on devices() must be destroyed first.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/uroced/config.h"
#include "apps/uroced/device.h"
#include "apps/uroced/vnic_device.h"
#include "datapath/engine/engine.h"
#include "datapath/engine/eth_port_io.h"
#include "datapath/engine/tsc_clock.h"
#include "datapath/port/eth_port.h"

namespace uroce::daemon {

class EngineHost {
 public:
  using EngineT = engine::Engine<engine::EthPortIo, engine::TscClock>;
  using VnicT = EngineT::VnicT;

  EngineHost() = default;
  ~EngineHost();
  EngineHost(const EngineHost&) = delete;
  EngineHost& operator=(const EngineHost&) = delete;

  // EAL (file prefix from `cfg`, its runtime directory recorded in
  // `runtime_record` when not empty), the ports, and a Vnic and a Device
  // per configured device, in order. "" or what failed (one line saying
  // what to do); what was built stays for the destructor. A memif client
  // port whose server does not listen yet is waited for until
  // `port_wait_until` (open_ports, ports.h); the default waits for nothing.
  std::string open(const DaemonConfig& cfg, const std::string& runtime_record,
                   std::chrono::steady_clock::time_point port_wait_until = {});

  EngineT& engine() { return *eng_; }
  const std::vector<Device*>& devices() const { return device_ptrs_; }
  // Names the device's /dev/infiniband/uverbsN (before clients connect).
  void set_uverbs(std::size_t i, std::uint32_t n) { devices_[i]->set_uverbs(n); }
  // Stops every port before any is closed: stopping a memif port makes its
  // peer (possibly another port of this process) handle a disconnect in
  // EAL's interrupt thread, which must not find the other side's memory
  // already gone. After the engine stopped.
  void stop_ports();

 private:
  bool eal_active_ = false;
  std::string runtime_dir_;
  std::string record_;
  std::vector<std::unique_ptr<port::EthPort>> ports_;
  std::vector<std::unique_ptr<engine::EthPortIo>> ios_;
  std::unique_ptr<engine::TscClock> clock_;
  std::vector<std::unique_ptr<VnicT>> vnics_;
  std::unique_ptr<EngineT> eng_;
  std::vector<std::unique_ptr<VnicDevice<EngineT>>> devices_;
  std::vector<Device*> device_ptrs_;
};

}  // namespace uroce::daemon
