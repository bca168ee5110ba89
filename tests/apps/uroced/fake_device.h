// Test helper (not a source mirror): a Device with a fixed description and
// no engine behind it, for code that only reads what a device is.
#pragma once

#include <atomic>

#include <cerrno>
#include <optional>
#include <string>

#include "apps/uroced/device.h"
#include "datapath/engine/vnic_types.h"

namespace uroce::daemon::testing {

class FakeDevice final : public Device {
 public:
  FakeDevice(const char* name, std::uint32_t eth_mtu, std::uint8_t last = 1) {
    cfg_.name = name;
    cfg_.mac = wire::MacAddr{{0x02, 0, 0, 0, 0, last}};
    cfg_.ip = wire::Ipv4Addr{(10u << 24) | last};
    cfg_.eth_mtu = eth_mtu;
  }
  DeviceSnapshot snap;  // what snapshot() hands out

  const engine::VnicConfig& config() const override { return cfg_; }
  engine::VnicConfig& mutable_config() { return cfg_; }
  wire::PathMtu active_mtu() const override {
    return wire::path_mtu_for_eth_mtu(cfg_.eth_mtu).value();
  }
  std::uint32_t index() const override { return 3; }
  std::uint32_t uverbs() const override { return 7; }
  const std::string& port_name() const override { return port_; }
  std::string mode;  // what port_mode() reports
  const std::string& port_mode() const override { return mode; }
  std::atomic<bool> link{true};  // what link_up() reports
  bool link_up() const override { return link.load(); }
  std::optional<PortCounts> counts;  // what port_counts() reports
  std::optional<PortCounts> port_counts() const override { return counts; }
  // A page of 64 doorbells; opening and closing clients always succeeds
  // (the sessions these tests drive create no QP or SRQ).
  const shm::DoorbellGeometry& doorbell_geometry() const override {
    static const shm::DoorbellGeometry g = [] {
      shm::DoorbellGeometry x;
      shm::make_doorbell_geometry(64, &x);
      return x;
    }();
    return g;
  }
  int open_client(std::uint32_t, void*, std::size_t) override { return 0; }
  int close_client(std::uint32_t) override { return 0; }
  int qp_doorbells(engine::ObjId, std::uint32_t*, std::uint32_t*) override { return ENOSYS; }
  int srq_doorbell(engine::ObjId, std::uint32_t*) override { return ENOSYS; }
  int alloc_qpn(std::uint32_t*) override { return ENOSYS; }
  int create_cq(const engine::CqCreate&) override { return ENOSYS; }
  int destroy_cq(engine::ObjId) override { return ENOSYS; }
  int resize_cq(engine::ObjId, const engine::RingMem&, ctl::CqNotify*) override { return ENOSYS; }
  int create_srq(const engine::SrqCreate&) override { return ENOSYS; }
  int modify_srq(engine::ObjId, std::uint32_t, const transport::SrqAttr&) override {
    return ENOSYS;
  }
  int query_srq(engine::ObjId, transport::SrqAttr*) override { return ENOSYS; }
  int destroy_srq(engine::ObjId) override { return ENOSYS; }
  int create_qp(const engine::QpCreate&) override { return ENOSYS; }
  int modify_qp(engine::ObjId, const engine::QpModify&) override { return ENOSYS; }
  int set_qp_sched(engine::ObjId, const engine::QpSched&) override { return ENOSYS; }
  int query_qp(engine::ObjId, engine::QpQuery*) override { return ENOSYS; }
  int destroy_qp(engine::ObjId) override { return ENOSYS; }
  std::uint32_t reg_mr(const engine::MrCreate&, int* err) override {
    *err = ENOSYS;
    return 0;
  }
  int rereg_mr(std::uint32_t, const engine::MrCreate&) override { return ENOSYS; }
  int dereg_mr(std::uint32_t) override { return ENOSYS; }
  std::uint32_t alloc_mw(transport::PdHandle, transport::MwType, int* err) override {
    *err = ENOSYS;
    return 0;
  }
  int dealloc_mw(std::uint32_t) override { return ENOSYS; }
  int create_ah(const engine::AhCreate&) override { return ENOSYS; }
  int destroy_ah(engine::ObjId, bool, std::uint32_t*) override { return ENOSYS; }
  std::uint32_t ud_sends_queued(engine::ObjId) override { return 0; }
  int attach_mcast(engine::ObjId, const wire::Ipv6Addr&) override { return ENOSYS; }
  int detach_mcast(engine::ObjId, const wire::Ipv6Addr&) override { return ENOSYS; }
  // Neighbours: none unless `resolvable`, then 02:00:00:00:00:<last byte>.
  bool resolvable = false;
  bool resolve6(const wire::Ipv6Addr& ip, wire::MacAddr* mac) override {
    if (!resolvable) return false;
    *mac = wire::MacAddr{{0x02, 0, 0, 0, 0, ip.b[15]}};
    return true;
  }
  bool resolve(wire::Ipv4Addr ip, wire::MacAddr* mac) override {
    if (!resolvable) return false;
    *mac = wire::MacAddr{{0x02, 0, 0, 0, 0, static_cast<std::uint8_t>(ip.v)}};
    return true;
  }
  // QP1: what a test queued for the CM service, and what it sent.
  std::vector<engine::GsiMad> gsi_in;
  std::vector<engine::GsiMad> gsi_out;
  int gsi_drains = 0;
  engine::WakeWord* gsi_bell = nullptr;
  void gsi_drain(std::vector<engine::GsiMad>* out) override {
    ++gsi_drains;
    out->insert(out->end(), gsi_in.begin(), gsi_in.end());
    gsi_in.clear();
  }
  bool gsi_pending() const override { return !gsi_in.empty(); }
  void set_gsi_bell(engine::WakeWord* bell) override { gsi_bell = bell; }
  int gsi_send(wire::Ipv4Addr ip, wire::MacAddr mac,
               std::span<const std::uint8_t, wire::kMadBytes> mad) override {
    engine::GsiMad m;
    m.peer_ip = ip;
    m.peer_mac = mac;
    m.src_qp = wire::kGsiQpn;
    std::copy(mad.begin(), mad.end(), m.mad.begin());
    gsi_out.push_back(m);
    return 0;
  }
  void snapshot(bool, DeviceSnapshot* out) override { *out = snap; }
  std::vector<pfc::PfcEvent> events;  // what drain_pfc_events() hands out
  void drain_pfc_events(std::vector<pfc::PfcEvent>* out) override {
    out->insert(out->end(), events.begin(), events.end());
    events.clear();
  }

 private:
  engine::VnicConfig cfg_;
  std::string port_ = "ring:p0";
};

}  // namespace uroce::daemon::testing
