#include "apps/uroced/engine_host.h"

#include <fmt/ranges.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pdump.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>

#include "apps/uroced/config_dc.h"
#include "apps/uroced/ports.h"
#include "apps/uroced/stale_runtime.h"
#include "datapath/port/eal.h"
#include "datapath/port/memif_args.h"
#include "datapath/port/memif_fd_guard.h"
#include "datapath/port/memif_intr_guard.h"
#include "datapath/port/memif_unmap_guard.h"
#include "datapath/port/prefault.h"
#include "datapath/wire/eth.h"

namespace uroce::daemon {

namespace {

// The link speed PFC quanta are timed with: the configured link_mbps, else
// what the port reports, else 10 Gb/s (a link still down at start-up, or a
// virtual port that reports nothing), said in the log.
std::uint64_t link_bps(const DeviceConfig& d, std::uint16_t port_id) {
  if (d.link_mbps != 0) return std::uint64_t{d.link_mbps} * 1'000'000;
  rte_eth_link link{};
  if (rte_eth_link_get_nowait(port_id, &link) == 0 && link.link_speed != RTE_ETH_SPEED_NUM_NONE &&
      link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN) {
    return std::uint64_t{link.link_speed} * 1'000'000;
  }
  if (d.pfc.enable != 0) {
    spdlog::warn(
        "{}: the port reports no link speed; PFC quanta timed at 10000 Mb/s "
        "(set link_mbps)",
        d.name);
  }
  return 10'000'000'000ull;
}

// The one CPU EAL pinned `lcore` to, or -1 (several).
int sole_cpu_of_lcore(unsigned lcore) {
  const rte_cpuset_t set = rte_lcore_cpuset(lcore);
  if (CPU_COUNT(&set) != 1) return -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) return c;
  }
  return -1;
}

// A seed for an MR table's keys that a peer cannot predict (mr_table.h).
std::uint64_t random_key_seed() {
  return (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}();
}

// The Vnic's configuration from the device's keys, each feature that is on
// said in the log.
engine::VnicConfig vnic_config(const DeviceConfig& d, std::uint64_t link) {
  engine::VnicConfig vc;
  vc.name = d.name;
  vc.mac = d.mac;
  vc.ip = d.ipv4;
  vc.ip6 = d.ipv6;
  vc.eth_mtu = d.mtu;
  vc.max_qps = d.max_qps;
  vc.min_ack_timeout = static_cast<std::uint8_t>(d.min_ack_timeout);
  vc.steer_src_port = d.steer_src_port;
  vc.lossy = d.lossy;
  vc.lossy_qps = d.lossy_qps;
  vc.spray_paths = d.spray_paths;
  vc.spray_ecn = d.spray_ecn;
  vc.lossy_cap = d.lossy_cap;
  if (d.lossy) {
    spdlog::info(
        "{}: selective repeat with uroce peers that enable it ({} connections, {} "
        "paths)",
        d.name, d.lossy_qps, d.spray_paths);
  }
  vc.stage_stamps = d.stage_stamps;
  vc.cut_on_completion = d.cut_on_completion;
  if (d.min_ack_timeout != 0) {
    spdlog::info("{}: local ACK timeouts of at least 4.096 us x 2^{}", d.name, d.min_ack_timeout);
  }
  vc.key_seed = random_key_seed();
  vc.impair = d.impair;
  vc.pfc = d.pfc;
  vc.pfc.link_bps = link;
  vc.sched = d.sched;
  vc.pacer = d.pacer;
  vc.port_limit.limit_bytes = d.tx_limit_bytes;
  vc.port_limit.link_bps = link;
  vc.port_limit.overhead_bytes = wire::kEthWireOverheadBytes;
  vc.dcqcn = d.dcqcn;
  vc.dcqcn.rp.line_rate_bps = link;
  if (d.dcqcn.enabled) {
    spdlog::info("{}: DCQCN at {} Mb/s line rate, CNPs at DSCP {} at most every {} us", d.name,
                 link / 1'000'000, d.dcqcn.cnp_dscp, d.dcqcn.cnp_interval_ns / kNsPerUs);
  }
  vc.homa = d.homa;
  apply_dc_keys(d, &vc);
  if (d.homa.enabled) {
    const sched::homa::HomaSettings& h = d.homa;
    spdlog::info(
        "{}: Homa-like scheduler on: {} priorities ({} unscheduled), unscheduled {} B, "
        "RTT {} B, overcommit {}, max incoming {} B, FIFO {} permille, grant resend {} us, "
        "grant timeout {} us",
        d.name, h.priorities, h.unsched_levels(), h.unsched_bytes, h.rtt_bytes, h.overcommit,
        h.max_incoming, h.fifo_permille, h.resend_ns / kNsPerUs, h.grant_timeout_ns / kNsPerUs);
  }
  if (d.sched.isolation != sched::Isolation::kOff) {
    spdlog::info("{}: TX isolation {}", d.name, sched::isolation_name(d.sched.isolation));
  }
  if (d.tx_limit_bytes != 0) {
    spdlog::info("{}: TX port limit {} bytes at {} Mb/s", d.name, d.tx_limit_bytes,
                 link / 1'000'000);
  }
  if (d.pfc.enable != 0) {
    spdlog::info("{}: PFC on priorities mask 0x{:02x} at {} Mb/s, tx_ttl {}", d.name, d.pfc.enable,
                 link / 1'000'000, d.pfc.ttl.tx_ttl);
  }
  if (d.impair.active()) {
    spdlog::warn(
        "{}: loss injection on: drop_tx_every={} drop_rx_every={} drop_tx_rate={} "
        "drop_rx_rate={} drop_seed={} drop_tx_max={} drop_rx_max={}",
        d.name, d.impair.drop_tx_every, d.impair.drop_rx_every, d.impair.drop_tx_rate,
        d.impair.drop_rx_rate, d.impair.drop_seed, d.impair.drop_tx_max, d.impair.drop_rx_max);
  }
  return vc;
}

// The link probe's lock (it serializes every reader, below) and the state
// it saw last.
struct ProbeState {
  std::mutex mu;
  bool was_up = false;
};

void prefault_shared(const std::string& device) {
  const auto t0 = std::chrono::steady_clock::now();
  const port::PrefaultResult r = port::prefault_memif_regions();
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  if (r.skipped) {
    spdlog::info("{}: link up; a memif peer is leaving, its regions not populated", device);
    return;
  }
  if (r.error != 0) {
    spdlog::warn(
        "{}: link up; populating the memif regions failed ({}): the first lap round "
        "its rings takes page faults",
        device, std::strerror(r.error));
  }
  spdlog::info("{}: link up; {} memif region{} populated ({} KiB, {} us)", device, r.regions,
               r.regions == 1 ? "" : "s", r.bytes / 1024, us);
}

}  // namespace

std::string EngineHost::open(const DaemonConfig& cfg, const std::string& runtime_record,
                             std::chrono::steady_clock::time_point port_wait_until) {
  port::EalConfig eal;
  if (std::string err = make_eal_config(cfg, static_cast<int>(getpid()), &eal); !err.empty()) {
    return err;
  }
  std::string err;
  if (port::eal_init(eal, &err) != 0) return err;
  eal_active_ = true;
  file_prefix_ = eal.file_prefix;
  const std::string runtime_dir = rte_eal_get_runtime_dir();
  if (runtime_dir.ends_with("/" + eal.file_prefix)) {
    runtime_dir_ = runtime_dir;
    if (!runtime_record.empty()) {
      if (std::string e =
              write_runtime_record(runtime_record, static_cast<long>(getpid()), runtime_dir);
          !e.empty()) {
        spdlog::warn("{}; a successor will not find this EAL runtime directory", e);
      } else {
        record_ = runtime_record;
      }
    }
  }

  // Before a memif port is probed: a server's PMD starts accepting peers
  // then and may leave a closed peer's callback registered with EAL
  // (port/memif_intr_guard.h); a zero-copy client's PMD closes EAL's memory
  // descriptors with its regions (port/memif_fd_guard.h).
  const bool memif = std::any_of(cfg.devices.begin(), cfg.devices.end(), [](const auto& d) {
    return d.port_spec.kind == PortKind::kVdev &&
           port::parse_memif_args(d.port_spec.name, d.port_spec.args).has_value();
  });
  // The fd guard first: the intr guard's table forgets a descriptor when
  // the fd guard sees the PMD close it, and without that it could name a
  // number since reused (a handle freed after its descriptor was closed
  // would have the guard close it again).
  std::string fd_err;
  if (memif && port::install_memif_fd_guard(&fd_err) != 0) {
    spdlog::warn(
        "memif: cannot guard the PMD's closes ({}): a zero-copy client may offer a closed "
        "descriptor as a region when it connects again, and a peer that connects and leaves "
        "at once may make EAL panic",
        fd_err);
  } else if (std::string e; memif && port::install_memif_intr_guard(&e) != 0) {
    spdlog::warn(
        "memif: cannot guard the PMD's interrupt callbacks ({}): a peer that connects and "
        "leaves at once may make EAL panic",
        e);
  }
  lcore_ids_ = engine_lcores(cfg);
  const auto n = static_cast<std::uint16_t>(lcore_ids_.size());
  if (open_ports(cfg, n, &ports_, &err, port_wait_until) != 0) return err;
  clock_ = std::make_unique<engine::TscClock>(engine::TscClock::from_eal());
  engine::EngineConfig ecfg;
  ecfg.mode = cfg.poll == PollMode::kBusy    ? engine::PollMode::kBusy
              : cfg.poll == PollMode::kYield ? engine::PollMode::kYield
                                             : engine::PollMode::kBackoff;
  ecfg.backoff_max_us = cfg.backoff_max_us;
  for (const auto& p : ports_) ecfg.tx_burst_syscall |= port::tx_burst_is_syscall(p->info());
  for (std::uint16_t k = 0; k < n; ++k)
    engines_.push_back(std::make_unique<EngineT>(ecfg, *clock_));
  for (std::size_t i = 0; i < cfg.devices.size(); ++i) {
    const DeviceConfig& d = cfg.devices[i];
    engine::VnicConfig vc = vnic_config(d, link_bps(d, ports_[i]->port_id()));
    engine::ShardLinks* links = nullptr;
    if (n > 1) {
      links_.push_back(std::make_unique<engine::ShardLinks>());
      if (links_.back()->open("hand" + std::to_string(i), n, engine::ShardLinks::kDefaultDepth,
                              &err) != 0) {
        return d.name + ": " + err + " (uroced: raise \"-m\" in eal.args)";
      }
      links = links_.back().get();
      spdlog::info("{}: {} shards on lcores {}", d.name, n, fmt::join(lcore_ids_, ","));
    }
    std::vector<Device*> parts;
    for (std::uint16_t k = 0; k < n; ++k) {
      vc.shard = k;
      vc.shards = n;
      if (k != 0) vc.key_seed = random_key_seed();
      ios_.push_back(std::make_unique<engine::EthPortIo>(*ports_[i], k, links));
      // A sendto per TX burst: a burst of nothing but ACKs may wait while
      // the stream goes on (engine/ack_hold.h). The next iteration comes
      // soon: Engine::run's loop runs it at once; in an embedded engine the
      // application's next call does, or, once it stops calling, the
      // progress thread after a nap that is short while bursts are kept
      // (EngineConfig::held_nap_max_ns).
      engine::AckHoldConfig hold;
      hold.enabled = port::tx_burst_is_syscall(ports_[i]->info()) && d.ack_hold >= 2;
      hold.max_frames = static_cast<std::uint16_t>(std::max<std::uint32_t>(d.ack_hold, 2));
      ios_.back()->set_ack_hold(hold);
      vnics_.push_back(std::make_unique<VnicT>(vc, *ios_.back()));
      engines_[k]->add_vnic(vnics_.back().get());
      shards_.push_back(std::make_unique<VnicDevice<EngineT>>(*vnics_.back(), *engines_[k],
                                                              static_cast<std::uint32_t>(i),
                                                              d.port));
      if (n > 1) shards_.back()->set_engine_cpu(sole_cpu_of_lcore(lcore_ids_[k]));
      parts.push_back(shards_.back().get());
    }
    // Without link-state interrupts rte_eth_link_get_nowait runs the PMD's
    // link_update, which may read the hardware (net_e1000_em reads the PHY
    // and sets and tests a "get link status" flag of its own): not safe from
    // two threads at once, and the accept thread's link watch and the
    // workers' ibv_query_port both ask. Unserialized, a loaded e1000e guest
    // saw the link down during runs (perftest: "Port number 1 state is
    // Down"). The engine never reads the link, so a lock on the control
    // path serializes every reader.
    //
    // A memif link that comes up has just mapped its region, which the data
    // path would otherwise fault in page by page on its first lap round the
    // rings (port/prefault.h): the probe that first sees it up populates it.
    auto state = std::make_shared<ProbeState>();
    auto probe = [pid = ports_[i]->port_id(), name = d.name,
                  memif = ports_[i]->info().driver == "net_memif", state] {
      std::lock_guard<std::mutex> lk(state->mu);
      rte_eth_link link{};
      const bool up =
          rte_eth_link_get_nowait(pid, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
      if (up && !state->was_up && memif) prefault_shared(name);
      state->was_up = up;
      return up;
    };
    if (n > 1) {
      sharded_.push_back(
          std::make_unique<ShardedDevice>(std::move(parts), static_cast<std::uint32_t>(i), d.port));
    }
    PortedDevice& dev = n > 1 ? static_cast<PortedDevice&>(*sharded_.back()) : *shards_.back();
    dev.set_link_probe(probe);
    // The PMD's stats under the link probe's lock, for the same reason.
    dev.set_counts_probe([port = ports_[i].get(), state] {
      std::lock_guard<std::mutex> lk(state->mu);
      Device::PortCounts c{.stats = port->stats()};
      port::XdpStats x;
      if (port->xdp_stats(&x)) c.xdp = x;
      return c;
    });
    dev.set_port_mode(ports_[i]->xdp_mode());
    dev.set_port_info(ports_[i]->info());
    device_ptrs_.push_back(&dev);
  }
  guard_memif_unmaps();
  return "";
}

void EngineHost::guard_memif_unmaps() {
  const bool memif = std::any_of(ports_.begin(), ports_.end(),
                                 [](const auto& p) { return p->info().driver == "net_memif"; });
  if (!memif) return;
  if (std::string err; port::install_memif_unmap_guard(&err) != 0) {
    spdlog::warn(
        "memif: cannot guard the PMD's unmaps ({}): a peer that leaves may crash this process "
        "while an engine is preempted in a burst",
        err);
    return;
  }
  // On EAL's interrupt thread, when a memif peer left (port/memif_unmap_guard.h).
  port::set_memif_unmap_quiesce([this] {
    const auto t0 = std::chrono::steady_clock::now();
    for (auto& e : engines_) e->barrier();
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    spdlog::info(
        "memif: a peer left; {} engine(s) outside their bursts before the PMD unmapped "
        "its region ({} us)",
        engines_.size(), us);
  });
  guarding_ = true;
}

void EngineHost::set_uverbs(std::size_t i, std::uint32_t n) {
  const std::size_t k = lcore_ids_.size();
  for (std::size_t s = 0; s < k; ++s) shards_[i * k + s]->set_uverbs(n);
  if (k > 1) sharded_[i]->set_uverbs(n);
}

namespace {

struct LcoreRun {
  EngineHost::EngineT* engine = nullptr;
  const std::atomic<bool>* stop = nullptr;
  const EngineHost::Loop* loop = nullptr;
};

void run_loop(const LcoreRun& r) {
  if (*r.loop) {
    (*r.loop)(*r.engine, *r.stop);
  } else {
    r.engine->run(*r.stop);
  }
}

int run_lcore(void* arg) {
  run_loop(*static_cast<const LcoreRun*>(arg));
  return 0;
}

}  // namespace

void EngineHost::run(const std::atomic<bool>& stop, const Loop& loop) {
  std::vector<LcoreRun> runs(engines_.size());
  std::vector<unsigned> launched;
  for (std::size_t k = 0; k < engines_.size(); ++k) runs[k] = {engines_[k].get(), &stop, &loop};
  for (std::size_t k = 1; k < engines_.size(); ++k) {
    const unsigned id = lcore_ids_[k];
    if (const int rc = rte_eal_remote_launch(run_lcore, &runs[k], id); rc != 0) {
      // The lcore was made by rte_eal_init from eal.lcores and nothing else
      // launches on it: a refusal is a broken EAL, said and survived (its
      // shard's QPs stall; status shows the lcore idle).
      spdlog::error("cannot start the engine on lcore {}: {}", id, std::strerror(-rc));
      continue;
    }
    launched.push_back(id);
  }
  run_loop(runs.front());
  for (const unsigned id : launched) (void)rte_eal_wait_lcore(id);
}

engine::EngineRunCounters EngineHost::engine_counters() {
  engine::EngineRunCounters sum{};
  for (auto& e : engines_) {
    engine::EngineRunCounters c;
    e->call([&] { c = e->counters(); });
    counters::add(sum, c);
  }
  return sum;
}

std::vector<engine::LoopHistograms> EngineHost::loop_histograms() {
  std::vector<engine::LoopHistograms> out(engines_.size());
  for (std::size_t k = 0; k < engines_.size(); ++k) {
    engines_[k]->call([&] { out[k] = engines_[k]->loop_histograms(); });
  }
  return out;
}

std::vector<CaptureTarget> EngineHost::capture_targets() {
  std::vector<CaptureTarget> out;
  const std::size_t k = lcore_ids_.size();
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    const port::EthPort& p = *ports_[i];
    out.push_back({.device = shards_[i * k]->config().name,
                   .port_id = p.port_id(),
                   .queues = p.queues(),
                   .max_frame = p.max_frame(),
                   .quiesce = [this] {
                     for (auto& e : engines_) e->call([] {});
                   }});
  }
  return out;
}

std::string EngineHost::enable_pdump() {
  if (runtime_dir_.empty()) return "EAL runs without a shared configuration (no file prefix)";
  // Succeeds without shared files too (the request channel is then just
  // not there): dumpcap_blocker (config.h) tells that case apart.
  if (rte_pdump_init() != 0) {
    return std::string("rte_pdump_init failed: ") + std::strerror(rte_errno);
  }
  pdump_ = true;
  return "";
}

void EngineHost::stop_ports() {
  // What an engine's last iteration left in its TX burst leaves first: an
  // ACK held for the next iteration (engine/ack_hold.h) is the one a peer
  // waits for when this process received its last message and exits.
  for (auto& io : ios_) (void)io->flush();
  for (auto& p : ports_) p->stop();
}

EngineHost::~EngineHost() {
  // Before the engines go: a guarded unmap running now finishes first.
  if (guarding_) port::set_memif_unmap_quiesce({});
  device_ptrs_.clear();
  sharded_.clear();
  shards_.clear();
  // The worker lcores have stopped: their Vnics become this thread's.
  for (auto& e : engines_) e->call([] {});
  engines_.clear();
  vnics_.clear();
  ios_.clear();
  links_.clear();
  if (pdump_) (void)rte_pdump_uninit();
  ports_.clear();
  if (!eal_active_) return;
  port::eal_cleanup();
  std::error_code ec;
  if (!runtime_dir_.empty()) std::filesystem::remove_all(runtime_dir_, ec);
  if (!record_.empty()) std::filesystem::remove(record_, ec);
}

}  // namespace uroce::daemon
