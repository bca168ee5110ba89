// A device served by several engine lcores (eal.lcores; docs/engine.md
// "Several lcores"): one Device per shard (a VnicDevice over shard i's
// Vnic on lcore i), seen by the control plane as one device.
//
// Placement: a client (one provider connection) lives on one shard, the
// one serving the fewest clients when it says Hello (place_client). Its
// doorbell page, QPs, CQs, SRQs, AHs, MRs and MWs are all made there, so
// every shared-memory ring has one engine lcore on its side, a CQ has one
// producer, and an MR or MW key is checked by the lcore that runs the QPs
// of its PD: nothing a packet touches is shared between lcores. Frames for
// a QP of another shard are handed to it (engine::ShardLinks).
//
// The device-wide operations go to shard 0, which owns QP1 and receives
// the frames without an IP header (ARP, PAUSE: RSS hashes them to queue
// 0): neighbour resolution, the CM service's MADs, and the object calls of
// a caller that placed no client (all of them valid on shard 0 alone).
// Status sums the shards and lists each one's share.
//
// Threading: as Device. The placement counts are guarded by a mutex
// (control path only).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "apps/uroced/device.h"

namespace uroce::daemon {

// to += from: every counter summed, object counts added, per-QP lines
// appended; what is the device's rather than a shard's (the PFC status,
// the Homa cutoffs) is kept from `to` (shard 0's).
void add_snapshot(DeviceSnapshot& to, const DeviceSnapshot& from);

class ShardedDevice final : public PortedDevice {
 public:
  // `shards` (at least two) outlive this object; shard i runs on the
  // device's port queue i.
  ShardedDevice(std::vector<Device*> shards, std::uint32_t index, std::string port_name);

  Device& place_client() override;
  void leave_client(Device& placed) override;
  int engine_cpu() const override { return first().engine_cpu(); }

  const engine::VnicConfig& config() const override { return first().config(); }
  wire::PathMtu active_mtu() const override { return first().active_mtu(); }
  const shm::DoorbellGeometry& doorbell_geometry() const override {
    return first().doorbell_geometry();
  }

  int open_client(std::uint32_t client, void* mem, std::size_t bytes) override {
    return first().open_client(client, mem, bytes);
  }
  int close_client(std::uint32_t client) override { return first().close_client(client); }
  int qp_doorbells(engine::ObjId id, std::uint32_t* sq, std::uint32_t* rq) override {
    return first().qp_doorbells(id, sq, rq);
  }
  int srq_doorbell(engine::ObjId id, std::uint32_t* db) override {
    return first().srq_doorbell(id, db);
  }
  int alloc_qpn(std::uint32_t* qpn) override { return first().alloc_qpn(qpn); }
  int create_cq(const engine::CqCreate& c) override { return first().create_cq(c); }
  int destroy_cq(engine::ObjId id) override { return first().destroy_cq(id); }
  int resize_cq(engine::ObjId id, const engine::RingMem& ring, ctl::CqNotify* notify) override {
    return first().resize_cq(id, ring, notify);
  }
  int create_srq(const engine::SrqCreate& c) override { return first().create_srq(c); }
  int modify_srq(engine::ObjId id, std::uint32_t mask, const transport::SrqAttr& a) override {
    return first().modify_srq(id, mask, a);
  }
  int query_srq(engine::ObjId id, transport::SrqAttr* out) override {
    return first().query_srq(id, out);
  }
  int destroy_srq(engine::ObjId id) override { return first().destroy_srq(id); }
  int create_qp(const engine::QpCreate& c) override { return first().create_qp(c); }
  int modify_qp(engine::ObjId id, const engine::QpModify& m) override {
    return first().modify_qp(id, m);
  }
  int set_qp_sched(engine::ObjId id, const engine::QpSched& s) override {
    return first().set_qp_sched(id, s);
  }
  int query_qp(engine::ObjId id, engine::QpQuery* out) override {
    return first().query_qp(id, out);
  }
  int destroy_qp(engine::ObjId id) override { return first().destroy_qp(id); }
  std::uint32_t reg_mr(const engine::MrCreate& m, int* err) override {
    return first().reg_mr(m, err);
  }
  int rereg_mr(std::uint32_t key, const engine::MrCreate& m) override {
    return first().rereg_mr(key, m);
  }
  int dereg_mr(std::uint32_t key) override { return first().dereg_mr(key); }
  std::uint32_t alloc_mw(transport::PdHandle pd, transport::MwType type, int* err) override {
    return first().alloc_mw(pd, type, err);
  }
  int dealloc_mw(std::uint32_t key) override { return first().dealloc_mw(key); }
  int create_ah(const engine::AhCreate& a) override { return first().create_ah(a); }
  int destroy_ah(engine::ObjId id, bool force, std::uint32_t* pending) override {
    return first().destroy_ah(id, force, pending);
  }
  std::uint32_t ud_sends_queued(engine::ObjId qp) override { return first().ud_sends_queued(qp); }
  // A group's packets arrive on whichever lcore's queue RSS picks, not the
  // QP's: no multicast on a device of several lcores (vnic/mcast.h).
  int attach_mcast(engine::ObjId, const wire::Ipv6Addr&) override { return EOPNOTSUPP; }
  int detach_mcast(engine::ObjId, const wire::Ipv6Addr&) override { return EINVAL; }
  bool resolve(wire::Ipv4Addr ip, wire::MacAddr* mac) override { return first().resolve(ip, mac); }
  bool resolve6(const wire::Ipv6Addr& ip, wire::MacAddr* mac) override {
    return first().resolve6(ip, mac);
  }
  void gsi_drain(std::vector<engine::GsiMad>* out) override { first().gsi_drain(out); }
  bool gsi_pending() const override { return first().gsi_pending(); }
  void set_gsi_bell(engine::WakeWord* bell) override { first().set_gsi_bell(bell); }
  int gsi_send(wire::Ipv4Addr ip, wire::MacAddr mac,
               std::span<const std::uint8_t, wire::kMadBytes> mad) override {
    return first().gsi_send(ip, mac, mad);
  }
  // Every shard's, summed (add_snapshot), with each one's share in
  // out->shards.
  void snapshot(bool with_qps, DeviceSnapshot* out) override;
  void drain_pfc_events(std::vector<pfc::PfcEvent>* out) override;
  // Every shard runs its own scheduler: each takes the settings.
  int set_tx_classes(const sched::TrafficClassConfig& classes) override;

 private:
  Device& first() const { return *shards_.front(); }

  std::vector<Device*> shards_;
  mutable std::mutex mu_;
  std::vector<std::uint32_t> clients_;  // per shard, under mu_
};

}  // namespace uroce::daemon
