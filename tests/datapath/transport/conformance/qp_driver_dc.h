// The DC QPs under test (docs/dc.md), as the conformance runner drives
// them: a DCI (one RC requester/completer lane per stream) and a DCT with
// its own context pool and SRQ, over the recording sinks of
// rc_test_support.h. Split from qp_driver.h by transport.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "datapath/transport/dci_qp.h"
#include "datapath/transport/dct_qp.h"
#include "datapath/transport/srq.h"
#include "tests/datapath/transport/conformance/qp_driver.h"

namespace uroce::transport::conformance {

// "stream1_tx_retransmits" -> 1 and "tx_retransmits"; nullopt when the
// name has no stream prefix.
inline std::optional<std::pair<std::uint32_t, std::string_view>> split_stream_counter(
    std::string_view name) {
  constexpr std::string_view kPrefix = "stream";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  std::uint32_t i = 0;
  const auto r = std::from_chars(name.data(), name.data() + name.size(), i);
  const char* end = name.data() + name.size();
  if (r.ec != std::errc{} || r.ptr == name.data() || r.ptr == end || *r.ptr != '_') {
    return std::nullopt;
  }
  return std::pair{i, name.substr(static_cast<std::size_t>(r.ptr - name.data()) + 1)};
}

class DciDriver final : public Driver {
 public:
  DciDriver(const DciQpConfig& cfg, MrTable& mrs, Sinks& s)
      : qp_(cfg, mrs, clock_), io_(rc_io(s.tx, s.scq, s.rcq, s.timer)) {}

  int post_send(const SendWr& wr) override { return qp_.post_send(wr); }
  int post_recv(const RecvWr& wr) override { return qp_.post_recv(wr); }
  int modify_state(QpState st) override {
    QpAttrValues a;
    a.qp_state = st;
    return qp_.modify(qp_attr::kState, a);
  }
  int modify(std::uint32_t mask, const QpAttrValues& a) override { return qp_.modify(mask, a); }
  void deliver(const wire::ParsedPacket& p, TimeNs now) override { qp_.on_packet(p, now, io_); }
  void pump(TimeNs now, bool) override { qp_.pump_tx(now, io_, 1u << 16); }
  void fire_timer(TimeNs now) override { qp_.on_timer(now, io_); }
  QpState state() const override { return qp_.state(); }
  std::uint32_t next_psn() const override { return qp_.lane(0).next_psn().value(); }
  std::optional<std::uint32_t> expected_psn() const override { return std::nullopt; }
  std::uint32_t streams() const override { return qp_.streams(); }
  QpState stream_state(std::uint32_t i) const override { return qp_.lane(i).state(); }
  std::uint32_t stream_next_psn(std::uint32_t i) const override {
    return qp_.lane(i).next_psn().value();
  }
  void drain_events(EventLog& log) override { qp_.drain_events(log); }

  // RC counters summed over the streams, the DCI's own, and per stream
  // (streamN_ + an RC counter, a DcStreamCounters field or
  // disconnect_resends).
  std::optional<std::uint64_t> counter(std::string_view name) const override {
    if (auto v = listed_counter(qp_.counters(), name)) return v;
    if (auto v = listed_counter(qp_.rc_counters(), name)) return v;
    const auto sc = split_stream_counter(name);
    if (!sc || sc->first >= qp_.streams()) return std::nullopt;
    const DcLane& l = qp_.dc_lane(sc->first);
    if (auto v = listed_counter(l.stream.counters(), sc->second)) return v;
    if (sc->second == "disconnect_resends") return l.disconnect_resends;
    return listed_counter(qp_.lane(sc->first).counters(), sc->second);
  }
  std::string counter_names() const override {
    return listed_counter_names<DciCounters>("") + listed_counter_names<RcCounters>("") +
           " streamN_ + one of: disconnect_resends" + listed_counter_names<DcStreamCounters>("") +
           " or an RC counter";
  }

 private:
  // The device's connection numbers (one DCI per script: its own clock).
  DcConnClock clock_;
  DciQp qp_;
  RcIo<CaptureTx, VecCq, VecCq, FakeTimer> io_;
};

// A DCT on a pool of its own, taking receives from its own SRQ (post_recv
// lines post to the SRQ).
class DctDriver final : public Driver {
 public:
  DctDriver(const RcQpConfig& cfg, std::uint64_t key, const DcTargetLimits& limits, MrTable& mrs,
            Sinks& s)
      : srq_(srq_config(cfg)),
        pool_(limits, mrs, cfg.local),
        qp_(with_srq(cfg, &srq_), key, pool_),
        io_(rc_io(s.tx, s.scq, s.rcq, s.timer)) {}

  int post_send(const SendWr& wr) override { return qp_.post_send(wr); }
  int post_recv(const RecvWr& wr) override { return srq_.post_recv(wr); }
  int modify_state(QpState st) override {
    QpAttrValues a;
    a.qp_state = st;
    return qp_.modify(qp_attr::kState, a);
  }
  int modify(std::uint32_t mask, const QpAttrValues& a) override { return qp_.modify(mask, a); }
  void deliver(const wire::ParsedPacket& p, TimeNs now) override { qp_.on_packet(p, now, io_); }
  void pump(TimeNs now, bool) override { qp_.pump_tx(now, io_, 1u << 16); }
  void fire_timer(TimeNs now) override { qp_.on_timer(now, io_); }
  QpState state() const override { return qp_.state(); }
  std::uint32_t next_psn() const override { return 0; }
  std::optional<std::uint32_t> expected_psn() const override { return std::nullopt; }
  void drain_events(EventLog& log) override { qp_.drain_events(log); }

  // The DCT's counters, `contexts` (open now), the pool's table counters
  // (pool_ prefix) and its contexts' RC responder counters (rc_ prefix:
  // RcCounters and DctCounters both have rx_requests).
  std::optional<std::uint64_t> counter(std::string_view name) const override {
    if (name == "contexts") return qp_.contexts();
    if (auto v = listed_counter(qp_.counters(), name)) return v;
    if (name.starts_with("pool_")) return listed_counter(pool_.table().counters(), name.substr(5));
    if (name.starts_with("rc_")) return listed_counter(qp_.rc_counters(), name.substr(3));
    return std::nullopt;
  }
  std::string counter_names() const override {
    return " contexts" + listed_counter_names<DctCounters>("") +
           listed_counter_names<DcTargetCounters>("pool_") +
           listed_counter_names<RcCounters>("rc_");
  }

 private:
  static SrqConfig srq_config(const RcQpConfig& cfg) {
    SrqConfig c;
    c.srq_num = 1;
    c.pd = cfg.pd;
    c.max_wr = cfg.max_recv_wr;
    return c;
  }
  static RcQpConfig with_srq(RcQpConfig cfg, Srq* srq) {
    cfg.srq = srq;
    return cfg;
  }

  Srq srq_;
  DcTargetPool pool_;
  DctQp qp_;
  RcIo<CaptureTx, VecCq, VecCq, FakeTimer> io_;
};

}  // namespace uroce::transport::conformance
