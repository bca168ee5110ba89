// Device (device.h) over a real engine: every operation is one
// Engine::call that runs the Vnic's method on the engine lcore and hands the
// result back. The same template serves the daemon (Engine<EthPortIo,
// TscClock>) and the tests (Engine<SimPortIo, some clock>).
//
// Ownership: the Vnic and the Engine are owned by the caller and outlive
// this object. The Vnic must have been added to the engine.
#pragma once

#include <concepts>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "apps/uroced/device.h"
#include "datapath/policy/homa.h"
#include "datapath/transport/dct_qp.h"

namespace uroce::daemon {

template <class EngineT>
class VnicDevice final : public PortedDevice {
 public:
  using VnicT = typename EngineT::VnicT;

  VnicDevice(VnicT& vnic, EngineT& engine, std::uint32_t index, std::string port_name)
      : PortedDevice(index, std::move(port_name)),
        vnic_(vnic),
        engine_(engine),
        classes_(vnic.config().sched.classes) {}

  const engine::VnicConfig& config() const override { return vnic_.config(); }
  wire::PathMtu active_mtu() const override { return vnic_.active_mtu(); }
  // Set once at start-up: the CPU its engine lcore is pinned to.
  void set_engine_cpu(int cpu) { engine_cpu_ = cpu; }
  int engine_cpu() const override { return engine_cpu_; }

  int alloc_qpn(std::uint32_t* qpn) override {
    return on_engine([&] { return vnic_.alloc_qpn(qpn); });
  }
  int create_cq(const engine::CqCreate& c) override {
    return on_engine([&] { return vnic_.create_cq(c); });
  }
  int destroy_cq(engine::ObjId id) override {
    return on_engine([&] { return vnic_.destroy_cq(id); });
  }
  int resize_cq(engine::ObjId id, const engine::RingMem& ring, ctl::CqNotify* notify) override {
    return on_engine([&] { return vnic_.resize_cq(id, ring, notify); });
  }
  int create_srq(const engine::SrqCreate& c) override {
    return on_engine([&] { return vnic_.create_srq(c); });
  }
  int modify_srq(engine::ObjId id, std::uint32_t mask, const transport::SrqAttr& a) override {
    return on_engine([&] { return vnic_.modify_srq(id, mask, a); });
  }
  int query_srq(engine::ObjId id, transport::SrqAttr* out) override {
    return on_engine([&] { return vnic_.query_srq(id, out); });
  }
  int destroy_srq(engine::ObjId id) override {
    return on_engine([&] { return vnic_.destroy_srq(id); });
  }
  int create_qp(const engine::QpCreate& c) override {
    return on_engine([&] { return vnic_.create_qp(c); });
  }
  const shm::DoorbellGeometry& doorbell_geometry() const override {
    return vnic_.doorbell_geometry();
  }
  int open_client(std::uint32_t client, void* mem, std::size_t bytes) override {
    return on_engine([&] { return vnic_.open_client(client, mem, bytes); });
  }
  int close_client(std::uint32_t client) override {
    return on_engine([&] { return vnic_.close_client(client); });
  }
  int qp_doorbells(engine::ObjId id, std::uint32_t* sq, std::uint32_t* rq) override {
    return on_engine([&] { return vnic_.qp_doorbells(id, sq, rq); });
  }
  int srq_doorbell(engine::ObjId id, std::uint32_t* db) override {
    return on_engine([&] { return vnic_.srq_doorbell(id, db); });
  }
  int modify_qp(engine::ObjId id, const engine::QpModify& m) override {
    return on_engine([&] { return vnic_.modify_qp(id, m); });
  }
  int set_qp_sched(engine::ObjId id, const engine::QpSched& s) override {
    return on_engine([&] { return vnic_.set_qp_sched(id, s); });
  }
  int query_qp(engine::ObjId id, engine::QpQuery* out) override {
    return on_engine([&] { return vnic_.query_qp(id, out); });
  }
  int destroy_qp(engine::ObjId id) override {
    return on_engine([&] { return vnic_.destroy_qp(id); });
  }
  std::uint32_t reg_mr(const engine::MrCreate& m, int* err) override {
    std::uint32_t key = 0;
    engine_.call([&] { key = vnic_.reg_mr(m, err); });
    return key;
  }
  int rereg_mr(std::uint32_t key, const engine::MrCreate& m) override {
    return on_engine([&] { return vnic_.rereg_mr(key, m); });
  }
  int dereg_mr(std::uint32_t key) override {
    return on_engine([&] { return vnic_.dereg_mr(key); });
  }
  std::uint32_t alloc_mw(transport::PdHandle pd, transport::MwType type, int* err) override {
    std::uint32_t key = 0;
    engine_.call([&] { key = vnic_.alloc_mw(pd, type, err); });
    return key;
  }
  int dealloc_mw(std::uint32_t key) override {
    return on_engine([&] { return vnic_.dealloc_mw(key); });
  }
  int create_ah(const engine::AhCreate& a) override {
    return on_engine([&] { return vnic_.create_ah(a); });
  }
  int destroy_ah(engine::ObjId id, bool force, std::uint32_t* pending) override {
    return on_engine([&] { return vnic_.destroy_ah(id, force, pending); });
  }
  std::uint32_t ud_sends_queued(engine::ObjId qp) override {
    return on_engine([&] { return vnic_.ud_sends_queued(qp); });
  }
  int attach_mcast(engine::ObjId qp, const wire::Ipv6Addr& gid) override {
    return on_engine([&] { return vnic_.attach_mcast(qp, gid); });
  }
  int detach_mcast(engine::ObjId qp, const wire::Ipv6Addr& gid) override {
    return on_engine([&] { return vnic_.detach_mcast(qp, gid); });
  }
  bool resolve(wire::Ipv4Addr ip, wire::MacAddr* mac) override {
    bool ok = false;
    engine_.call([&] { ok = vnic_.resolve(ip, vnic_.last_now(), mac); });
    return ok;
  }
  bool resolve6(const wire::Ipv6Addr& ip, wire::MacAddr* mac) override {
    bool ok = false;
    engine_.call([&] { ok = vnic_.resolve6(ip, vnic_.last_now(), mac); });
    return ok;
  }
  void snapshot(bool with_qps, DeviceSnapshot* out) override {
    engine_.call([&] {
      out->counters = vnic_.counters();
      out->policy = vnic_.policy_counters();
      out->arp = vnic_.arp_counters();
      out->qps = vnic_.qp_count();
      out->cqs = vnic_.cq_count();
      out->srqs = vnic_.srq_count();
      out->ahs = vnic_.ah_count();
      out->mrs = vnic_.mr_count();
      out->mw = vnic_.mw_counters();
      out->has_classes = true;
      out->classes = classes_;
      if (vnic_.config().stage_stamps) out->stages.push_back(vnic_.stage_report());
      if (with_qps) vnic_.qp_status(&out->qp_status);
      out->pfc = vnic_.pfc_status();
      if constexpr (std::is_same_v<std::decay_t<decltype(vnic_.io().tx().counters())>,
                                   engine::MbufTxCounters>) {
        out->has_port_tx = true;
        out->port_tx = vnic_.io().tx().counters();
      }
      if constexpr (requires {
                      { vnic_.io().rx_counters() } -> std::same_as<const engine::EthRxCounters&>;
                    }) {
        out->has_port_rx = true;
        out->port_rx = vnic_.io().rx_counters();
      }
      const uroce::policy::Homa& homa = vnic_.template policy<uroce::policy::Homa>();
      if (const sched::homa::GrantScheduler* g = homa.grant_scheduler()) {
        out->has_homa = true;
        out->homa.grants = g->counters();
        out->homa.tracked = g->tracked();
        out->homa.outstanding = g->outstanding();
        out->homa.cutoffs = homa.cutoffs();
        out->homa.generation = homa.generation();
      }
      out->dc_sr = vnic_.dc_sr_counters();
      if (const transport::DcTargetPool* p = vnic_.dc_pool()) {
        out->has_dc_pool = true;
        out->dc_pool.counters = p->table().counters();
        out->dc_pool.open = p->table().size();
        out->dc_pool.capacity = p->table().capacity();
        out->dc_pool.bytes = p->memory_bytes();
      }
    });
  }
  void gsi_drain(std::vector<engine::GsiMad>* out) override {
    engine_.call([&] { (void)vnic_.gsi_drain(out); });
  }
  bool gsi_pending() const override { return vnic_.gsi_pending(); }
  void set_gsi_bell(engine::WakeWord* bell) override { vnic_.set_gsi_bell(bell); }
  int gsi_send(wire::Ipv4Addr ip, wire::MacAddr mac,
               std::span<const std::uint8_t, wire::kMadBytes> mad) override {
    return on_engine([&] { return vnic_.gsi_send(ip, mac, mad); });
  }
  void drain_pfc_events(std::vector<pfc::PfcEvent>* out) override {
    engine_.call([&] { vnic_.drain_pfc_events(out); });
  }
  int set_tx_classes(const sched::TrafficClassConfig& classes) override {
    return on_engine([&] {
      const int rc = vnic_.set_tx_classes(classes);
      if (rc == 0) classes_ = classes;
      return rc;
    });
  }

 private:
  template <class Fn>
  int on_engine(Fn&& fn) {
    int rc = 0;
    engine_.call([&] { rc = fn(); });
    return rc;
  }

  VnicT& vnic_;
  EngineT& engine_;
  int engine_cpu_ = -1;
  // The class settings as configured (status), the engine's: written and
  // read only inside engine calls.
  sched::TrafficClassConfig classes_;
};

}  // namespace uroce::daemon
