// One engine, its devices and their DPDK ports, built from a DaemonConfig:
// what uroced runs on its main lcore (main.cpp) and what the embedded
// engine library runs in an application's process (embedded_engine.cpp,
// docs/embedded.md). One place builds the Vnics, so both modes run the
// same engine with the same device keys.
//
// open() calls rte_eal_init: the calling thread becomes EAL's main lcore
// (and is pinned to it). With several engine lcores (eal.lcores) there is
// an engine per lcore, each device is a Vnic shard on each (its port with
// a queue per lcore, hand-off rings between the shards) and the control
// plane sees a ShardedDevice (docs/engine.md "Several lcores"). Destruction closes the ports, then cleans EAL up
// and removes its runtime directory and the record of it (stale_runtime.h).
// A Server built on devices() must be destroyed first.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "apps/uroced/capture_service.h"
#include "apps/uroced/config.h"
#include "apps/uroced/device.h"
#include "apps/uroced/sharded_device.h"
#include "apps/uroced/vnic_device.h"
#include "datapath/engine/engine.h"
#include "datapath/engine/eth_port_io.h"
#include "datapath/engine/shard_links.h"
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

  // The engine of the first (EAL's main) lcore; with one lcore, the engine.
  EngineT& engine() { return *engines_.front(); }
  // The engine of lcore `k` (< lcores()), which runs shard k of every
  // device. The set is fixed once open() returned: any thread may ask.
  EngineT& engine(std::size_t k) { return *engines_[k]; }
  // The engine lcores (eal.lcores), each running shard i of every device.
  std::size_t lcores() const { return engines_.size(); }
  // What runs one engine until `stop` reads true: Engine::run in uroced
  // (the default), Engine::run_progress in an embedded engine.
  using Loop = std::function<void(EngineT&, const std::atomic<bool>&)>;
  // Runs every engine's loop until `stop` reads true: the first on this
  // thread (EAL's main lcore), the others on their EAL worker lcores, which
  // have stopped when it returns.
  void run(const std::atomic<bool>& stop, const Loop& loop = {});
  // The engines' iteration counters, summed (any thread).
  engine::EngineRunCounters engine_counters();
  // Each engine's loop histograms, in lcores' order (any thread).
  std::vector<engine::LoopHistograms> loop_histograms();
  const std::vector<Device*>& devices() const { return device_ptrs_; }
  // Names the device's /dev/infiniband/uverbsN (before clients connect).
  void set_uverbs(std::size_t i, std::uint32_t n);
  // Each device's port for a capture (capture_service.h), in the devices'
  // order; quiesce() makes a call on every engine.
  std::vector<CaptureTarget> capture_targets();
  // Enables DPDK's packet capture framework (rte_pdump) so that the stock
  // dpdk-dumpcap, a DPDK secondary process, can tap the ports
  // (docs/capture.md). Needs EAL's shared configuration (a file prefix);
  // "" or why it is not available. Undone by the destructor.
  std::string enable_pdump();
  // EAL's --file-prefix (after open()).
  const std::string& file_prefix() const { return file_prefix_; }
  // Stops every port before any is closed: stopping a memif port makes its
  // peer (possibly another port of this process) handle a disconnect in
  // EAL's interrupt thread, which must not find the other side's memory
  // already gone. After the engine stopped; the engines' pending TX bursts
  // are sent first.
  void stop_ports();

 private:
  // With a memif port: the PMD's unmaps on EAL's interrupt thread wait for
  // the engines to leave their bursts (port/memif_unmap_guard.h).
  void guard_memif_unmaps();

  bool eal_active_ = false;
  bool pdump_ = false;
  bool guarding_ = false;
  std::string runtime_dir_;
  std::string file_prefix_;
  std::string record_;
  std::vector<std::uint32_t> lcore_ids_;
  std::vector<std::unique_ptr<port::EthPort>> ports_;
  // Per device, with several lcores: its hand-off rings.
  std::vector<std::unique_ptr<engine::ShardLinks>> links_;
  std::vector<std::unique_ptr<engine::EthPortIo>> ios_;
  std::unique_ptr<engine::TscClock> clock_;
  std::vector<std::unique_ptr<VnicT>> vnics_;
  std::vector<std::unique_ptr<EngineT>> engines_;
  // A Device per Vnic (device-major: device d's shard i is d * lcores + i),
  // and with several lcores a ShardedDevice over each device's shards.
  std::vector<std::unique_ptr<VnicDevice<EngineT>>> shards_;
  std::vector<std::unique_ptr<ShardedDevice>> sharded_;
  std::vector<Device*> device_ptrs_;
};

}  // namespace uroce::daemon
