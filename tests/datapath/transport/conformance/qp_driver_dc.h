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

// clang-format off
#define UROCE_DC_STREAM_COUNTERS(X)                                                                \
  X(connects) X(wait_switch) X(disconnects) X(gone) X(unknown_restart) X(unknown_abort) X(busy)    \
  X(key_violations) X(stale_answers)
#define UROCE_DCT_COUNTERS(X)                                                                      \
  X(rx_requests) X(key_violations) X(drop_state) X(drop_not_dc) X(drop_other_dct) X(drop_stale) X(drop_busy_later)    \
  X(tx_gone) X(tx_unknown) X(tx_busy) X(tx_key_violation) X(tx_no_buffer)
#define UROCE_DC_POOL_COUNTERS(X)                                                                  \
  X(opened) X(restarted) X(retired_pressure) X(retired_disconnect) X(retired_stale) X(stale_conn)  \
  X(gone) X(unknown) X(busy) X(record_overwrites)
// clang-format on

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

inline std::optional<std::uint64_t> rc_counter(const RcCounters& c, std::string_view name) {
#define X(f) \
  if (name == #f) return c.f;
  UROCE_RC_COUNTERS(X)
#undef X
  return std::nullopt;
}

inline std::string rc_counter_names(std::string_view prefix) {
  std::string r;
#define X(f) r += " " + std::string(prefix) + #f;
  UROCE_RC_COUNTERS(X)
#undef X
  return r;
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
    if (name == "bad_lane") return qp_.counters().bad_lane;
    if (name == "bad_status") return qp_.counters().bad_status;
    if (name == "stream_recoveries") return qp_.counters().stream_recoveries;
    if (name == "other_conn") return qp_.counters().other_conn;
    if (auto v = rc_counter(qp_.rc_counters(), name)) return v;
    const auto sc = split_stream_counter(name);
    if (!sc || sc->first >= qp_.streams()) return std::nullopt;
    const DcLane& l = qp_.dc_lane(sc->first);
    const DcStreamCounters& c = l.stream.counters();
#define X(f) \
  if (sc->second == #f) return c.f;
    UROCE_DC_STREAM_COUNTERS(X)
#undef X
    if (sc->second == "disconnect_resends") return l.disconnect_resends;
    return rc_counter(qp_.lane(sc->first).counters(), sc->second);
  }
  std::string counter_names() const override {
    std::string r = " bad_lane bad_status stream_recoveries other_conn" + rc_counter_names("");
    r += " streamN_ + one of: disconnect_resends";
#define X(f) r += " " #f;
    UROCE_DC_STREAM_COUNTERS(X)
#undef X
    return r + " or an RC counter";
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
    const DctCounters& c = qp_.counters();
#define X(f) \
  if (name == #f) return c.f;
    UROCE_DCT_COUNTERS(X)
#undef X
    const DcTargetCounters& t = pool_.table().counters();
#define X(f) \
  if (name == "pool_" #f) return t.f;
    UROCE_DC_POOL_COUNTERS(X)
#undef X
    if (name.starts_with("rc_")) return rc_counter(qp_.rc_counters(), name.substr(3));
    return std::nullopt;
  }
  std::string counter_names() const override {
    std::string r = " contexts";
#define X(f) r += " " #f;
    UROCE_DCT_COUNTERS(X)
#undef X
#define X(f) r += " pool_" #f;
    UROCE_DC_POOL_COUNTERS(X)
#undef X
    return r + rc_counter_names("rc_");
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
