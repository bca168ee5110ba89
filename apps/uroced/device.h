// One virtual NIC as uroced's control plane sees it: the engine operations a
// client session needs, each run on the engine lcore, plus the device's
// static description. The server and the client sessions talk only to this
// interface, so they run unchanged over the daemon's Vnic<EthPortIo> and,
// in tests, over a Vnic<SimPortIo> (vnic_device.h implements it for both).
//
// Threading: any control thread may call any method; the implementation
// funnels each into Engine::call, which serialises them with the engine's
// iterations. A virtual call per control operation is fine: none of this is
// on the packet path.
//
// Every int return is 0 or a positive errno value (vnic.h documents which).
#pragma once

// Before anything that reaches <rdma/rdma_user_rxe.h> (which pulls
// <linux/in.h>): glibc's <netinet/in.h> must come first for the two to
// coexist, and the engine headers include it later.
#include <netinet/in.h>

#include <atomic>
#include <cassert>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "datapath/engine/eth_rx_counters.h"
#include "datapath/engine/gsi_queue.h"
#include "datapath/engine/mbuf_tx_counters.h"
#include "datapath/engine/stage_stamps.h"
#include "datapath/engine/vnic_api.h"
#include "datapath/engine/vnic_types.h"
#include "datapath/policy/policies.h"
#include "datapath/port/arp_agent.h"
#include "datapath/port/port_info.h"
#include "datapath/port/port_stats.h"
#include "datapath/shm/doorbell.h"
#include "datapath/transport/mr_table.h"
#include "datapath/wire/addr.h"
#include "datapath/wire/opcodes.h"
#include "sched/grant_scheduler.h"
#include "sched/traffic_classes.h"
#include "sched/unsched_cutoffs.h"

namespace uroce::daemon {

// The Homa-like scheduler's receiver side of one device (datapath/policy/homa.h):
// its GrantScheduler's counters and load, and the unscheduled cutoffs it
// publishes to its peers with their generation.
struct HomaReceiverStatus {
  sched::homa::GrantCounters grants{};
  std::uint32_t tracked = 0;      // incoming messages being scheduled now
  std::uint64_t outstanding = 0;  // granted bytes not yet received, all of them
  sched::homa::Cutoffs cutoffs{};
  std::uint32_t generation = 0;
};

// The DC target's context pool of one device (transport/dc_target.h), once
// its first DCT made it.
struct DcPoolStatus {
  transport::DcTargetCounters counters{};
  std::uint32_t open = 0;      // contexts serving a connection now
  std::uint32_t capacity = 0;  // dc_contexts
  std::uint64_t bytes = 0;     // the table and the contexts
};

// What a Status request shows of one device, read in one engine call.
struct DeviceSnapshot {
  engine::VnicCounters counters{};
  // The QP extensions' counters (DCQCN, Homa: datapath/policy/policies.h),
  // shown among the device's counters.
  policy::RegisteredCounters policy{};
  port::ArpCounters arp{};
  std::uint32_t qps = 0, cqs = 0, srqs = 0, ahs = 0, mrs = 0;
  std::vector<engine::QpStatus> qp_status;  // filled only when asked
  engine::PfcStatus pfc{};                  // PFC and TTL (pfc_endpoint.h)
  // The port's TX sink (mbuf_tx_counters.h) where the port has one: frames the
  // PMD refused (its ring was full), bursts, mbufs it could not get.
  bool has_port_tx = false;
  engine::MbufTxCounters port_tx{};
  // The port's RX side (eth_port_io.h): frames, bursts, chained frames.
  bool has_port_rx = false;
  engine::EthRxCounters port_rx{};
  // The Homa-like scheduler, when the device runs it (config().homa.enabled).
  bool has_homa = false;
  HomaReceiverStatus homa{};
  bool has_dc_pool = false;
  DcPoolStatus dc_pool{};
  // Selective repeat on DC: the device's DCIs' and DCTs' counters summed,
  // destroyed ones included (docs/lossy-dc.md).
  transport::RcSrCounters dc_sr{};
  // Memory windows: binds and invalidations, and those refused by reason.
  transport::MwCounters mw{};
  // The TX class settings as configured now (a SIGHUP may have changed them
  // since config().sched): set by devices that run an engine.
  bool has_classes = false;
  sched::TrafficClassConfig classes{};
  // A device of several engine lcores (sharded_device.h): each shard's
  // share, in shard order; the fields above are the sums over them.
  struct Shard {
    std::uint32_t clients = 0;  // clients placed on it
    std::uint32_t qps = 0;
    std::uint64_t queue_frames = 0;  // frames its own queue of the port received
    std::uint64_t rx_frames = 0, tx_frames = 0;
    std::uint64_t rx_handoff = 0;  // frames it handed to another shard
    std::uint64_t handed_in = 0;   // frames other shards handed to it
  };
  std::vector<Shard> shards;
  // The stage stamps (engine/stage_stamps.h) of each of the device's
  // engines, in shard order; empty when the device keeps none.
  std::vector<engine::StageReport> stages;
};

class Device {
 public:
  virtual ~Device() = default;

  // The engine's configuration of this device (name, MAC, IPv4, MTU,
  // object limits). Immutable after start-up: readable from any thread.
  virtual const engine::VnicConfig& config() const = 0;
  // The largest IB path MTU its Ethernet MTU carries.
  virtual wire::PathMtu active_mtu() const = 0;
  // Position in the daemon's device list (HelloRep.device_index).
  virtual std::uint32_t index() const = 0;
  // N of /dev/infiniband/uverbsN (status only; 0 before registration).
  virtual std::uint32_t uverbs() const = 0;
  // The configured port string, for status.
  virtual const std::string& port_name() const = 0;
  // How the port runs where its kind has modes (af_xdp: "zero-copy" or
  // "copy", docs/nic.md); empty otherwise. Immutable after start-up.
  virtual const std::string& port_mode() const {
    static const std::string kNone;
    return kNone;
  }
  // The port as its PMD described it at open (driver, descriptors, MTU,
  // RX buffers, offloads); nullptr for a device without a DPDK port.
  // Immutable after start-up.
  virtual const port::PortInfo* port_info() const { return nullptr; }
  // Whether the port's link is up now (any thread; no engine call: it reads
  // the ethdev's link status). Drives ibv_query_port's state and the
  // PORT_ACTIVE / PORT_ERR async events.
  virtual bool link_up() const = 0;
  // What the port's PMD, pools and (af_xdp) sockets count now
  // (port_stats.h); nullopt for a device without a DPDK port. Any thread.
  struct PortCounts {
    port::PortStats stats;
    std::optional<port::XdpStats> xdp;  // af_xdp ports only
  };
  virtual std::optional<PortCounts> port_counts() const { return std::nullopt; }

  // Where a new client's objects live (docs/engine.md "Several lcores"):
  // this device, or, on an engine of several lcores, the shard serving the
  // fewest clients. The session makes every object call on the device
  // returned, and gives it back with leave_client once its objects are
  // gone. Control path.
  virtual Device& place_client() { return *this; }
  virtual void leave_client(Device& placed) { static_cast<void>(placed); }
  // The CPU of the engine lcore that runs this device's packets, or -1
  // when unknown (told to clients in Hello). Immutable after start-up.
  virtual int engine_cpu() const { return -1; }

  // The geometry of every client's doorbell page (datapath/shm/doorbell.h).
  // Immutable after start-up: readable from any thread.
  virtual const shm::DoorbellGeometry& doorbell_geometry() const = 0;
  // A client's doorbell page: the engine reads it from open_client until
  // close_client returns (the caller keeps it mapped meanwhile).
  virtual int open_client(std::uint32_t client, void* mem, std::size_t bytes) = 0;
  virtual int close_client(std::uint32_t client) = 0;
  // The doorbells of a QP's SQ and RQ rings, and of an SRQ's ring.
  virtual int qp_doorbells(engine::ObjId id, std::uint32_t* sq, std::uint32_t* rq) = 0;
  virtual int srq_doorbell(engine::ObjId id, std::uint32_t* db) = 0;

  virtual int alloc_qpn(std::uint32_t* qpn) = 0;
  virtual int create_cq(const engine::CqCreate& c) = 0;
  virtual int destroy_cq(engine::ObjId id) = 0;
  virtual int resize_cq(engine::ObjId id, const engine::RingMem& ring, ctl::CqNotify* notify) = 0;
  virtual int create_srq(const engine::SrqCreate& c) = 0;
  virtual int modify_srq(engine::ObjId id, std::uint32_t mask, const transport::SrqAttr& a) = 0;
  virtual int query_srq(engine::ObjId id, transport::SrqAttr* out) = 0;
  virtual int destroy_srq(engine::ObjId id) = 0;
  virtual int create_qp(const engine::QpCreate& c) = 0;
  virtual int modify_qp(engine::ObjId id, const engine::QpModify& m) = 0;
  virtual int set_qp_sched(engine::ObjId id, const engine::QpSched& s) = 0;
  virtual int query_qp(engine::ObjId id, engine::QpQuery* out) = 0;
  virtual int destroy_qp(engine::ObjId id) = 0;
  // The key (lkey == rkey), or 0 with *err set.
  virtual std::uint32_t reg_mr(const engine::MrCreate& m, int* err) = 0;
  virtual int rereg_mr(std::uint32_t key, const engine::MrCreate& m) = 0;
  virtual int dereg_mr(std::uint32_t key) = 0;
  // Memory windows: the key, or 0 with *err set; dealloc EINVAL (unknown).
  virtual std::uint32_t alloc_mw(transport::PdHandle pd, transport::MwType type, int* err) = 0;
  virtual int dealloc_mw(std::uint32_t key) = 0;
  virtual int create_ah(const engine::AhCreate& a) = 0;
  // EBUSY unless `force`: QPs of its client still hold *pending sends in
  // their rings that may name it (Vnic::destroy_ah); try again.
  virtual int destroy_ah(engine::ObjId id, bool force, std::uint32_t* pending) = 0;
  // Vnic::ud_sends_queued.
  virtual std::uint32_t ud_sends_queued(engine::ObjId qp) = 0;
  // UD QP `qp` joins or leaves multicast group `gid` (Vnic::attach_mcast).
  virtual int attach_mcast(engine::ObjId qp, const wire::Ipv6Addr& gid) = 0;
  virtual int detach_mcast(engine::ObjId qp, const wire::Ipv6Addr& gid) = 0;
  // One non-blocking neighbour lookup at the engine's current time: true
  // with *mac when known; otherwise ARP resolution is started or continues.
  virtual bool resolve(wire::Ipv4Addr ip, wire::MacAddr* mac) = 0;
  // The same for an IPv6 address (neighbour discovery).
  virtual bool resolve6(const wire::Ipv6Addr& ip, wire::MacAddr* mac) = 0;
  // QP1 (the GSI) for the CM service: the MADs received since the last
  // drain (appended), and one MAD sent to QP1 of (ip, mac) (ENOBUFS).
  virtual void gsi_drain(std::vector<engine::GsiMad>* out) = 0;
  // Any thread, without the engine: whether gsi_drain would find a MAD,
  // and the bell the arrival of one rings (nullptr: none; the bell must
  // outlive the device or be replaced first).
  virtual bool gsi_pending() const = 0;
  virtual void set_gsi_bell(engine::WakeWord* bell) = 0;
  virtual int gsi_send(wire::Ipv4Addr ip, wire::MacAddr mac,
                       std::span<const std::uint8_t, wire::kMadBytes> mad) = 0;
  // Counters and object counts; the per-QP lines only when `with_qps`.
  virtual void snapshot(bool with_qps, DeviceSnapshot* out) = 0;
  // Appends the PFC/TTL events (storms, loop signals) the engine recorded
  // since the last call, for the log.
  virtual void drain_pfc_events(std::vector<pfc::PfcEvent>* out) = 0;
  // New TX class settings (Vnic::set_tx_classes; uroced's SIGHUP): 0, or
  // EOPNOTSUPP where the device has no engine scheduler to take them.
  virtual int set_tx_classes(const sched::TrafficClassConfig& classes) {
    static_cast<void>(classes);
    return EOPNOTSUPP;
  }

  // The device's protection domains, counted across all its clients (a PD
  // is only a handle in the daemon; ibv_device_attr.max_pd is the device's,
  // as rxe's PD pool is): take_pd() false once `max` are taken. Any thread.
  bool take_pd(std::uint32_t max) {
    std::uint32_t n = pds_.load(std::memory_order_relaxed);
    do {
      if (n >= max) return false;
    } while (!pds_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
    return true;
  }
  void give_pd() {
    [[maybe_unused]] const std::uint32_t was = pds_.fetch_sub(1, std::memory_order_relaxed);
    assert(was != 0);
  }
  std::uint32_t pds() const { return pds_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint32_t> pds_{0};
};

// What a device says of itself and of its port, set once at start-up
// (before clients connect) and read from any thread: the part every device
// over a DPDK port has, whether over one Vnic (vnic_device.h) or several
// (sharded_device.h).
class PortedDevice : public Device {
 public:
  PortedDevice(std::uint32_t index, std::string port_name)
      : index_(index), port_name_(std::move(port_name)) {}

  // Set once the sysfs tree names the node.
  void set_uverbs(std::uint32_t n) { uverbs_ = n; }
  // How to read the link state; without one the link is always up (the
  // simulated ports of the tests).
  void set_link_probe(std::function<bool()> probe) { link_probe_ = std::move(probe); }
  // port::EthPort::xdp_mode.
  void set_port_mode(std::string mode) { port_mode_ = std::move(mode); }
  void set_port_info(port::PortInfo info) { port_info_ = std::move(info); }
  // How to read the port's counts; without one there are none.
  void set_counts_probe(std::function<PortCounts()> probe) { counts_probe_ = std::move(probe); }

  std::uint32_t index() const override { return index_; }
  std::uint32_t uverbs() const override { return uverbs_; }
  const std::string& port_name() const override { return port_name_; }
  bool link_up() const override { return link_probe_ ? link_probe_() : true; }
  const std::string& port_mode() const override { return port_mode_; }
  const port::PortInfo* port_info() const override { return port_info_ ? &*port_info_ : nullptr; }
  std::optional<PortCounts> port_counts() const override {
    if (!counts_probe_) return std::nullopt;
    return counts_probe_();
  }

 private:
  std::uint32_t index_;
  std::uint32_t uverbs_ = 0;
  std::string port_name_;
  std::function<bool()> link_probe_;
  std::function<PortCounts()> counts_probe_;
  std::string port_mode_;
  std::optional<port::PortInfo> port_info_;
};

}  // namespace uroce::daemon
