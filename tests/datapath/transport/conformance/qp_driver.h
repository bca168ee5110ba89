// The QP under test, as the conformance runner drives it: one interface
// over RcQp, UcQp and UdQp with the recording sinks of rc_test_support.h
// (virtual calls are fine here: this is test code, not the datapath).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "datapath/transport/rc_qp.h"
#include "datapath/transport/uc_qp.h"
#include "datapath/transport/ud_qp.h"
#include "tests/datapath/transport/conformance/names.h"
#include "tests/datapath/transport/rc_test_support.h"

namespace uroce::transport::conformance {

using rctest::CaptureTx;
using rctest::FakeTimer;
using rctest::VecCq;

// The async events a QP raised, oldest first (drained after each event).
struct EventLog {
  std::vector<AsyncEvent> events;
  void event(const AsyncEvent& e) { events.push_back(e); }
};

// What the runner needs from a QP of any transport.
class Driver {
 public:
  virtual ~Driver() = default;
  virtual int post_send(const SendWr& wr) = 0;
  virtual int post_recv(const RecvWr& wr) = 0;
  virtual int modify_state(QpState s) = 0;
  // ibv_modify_qp with the attributes `mask` names (a reconnection after
  // RESET takes the qp line's attributes again).
  virtual int modify(std::uint32_t mask, const QpAttrValues& a) = 0;
  virtual void deliver(const wire::ParsedPacket& p, TimeNs now) = 0;
  // `force`: the engine serves the QP whether or not it reports output (a
  // doorbell, an accepted GRANT); otherwise a QP that follows the engine's
  // rule is served only when it reports output.
  virtual void pump(TimeNs now, bool force) = 0;
  virtual void fire_timer(TimeNs now) = 0;
  virtual QpState state() const = 0;
  virtual std::uint32_t next_psn() const = 0;
  virtual std::optional<std::uint32_t> expected_psn() const = 0;
  virtual std::optional<std::uint64_t> counter(std::string_view name) const = 0;
  virtual std::string counter_names() const = 0;
  // Moves the async events the QP raised into `log`.
  virtual void drain_events(EventLog& log) = 0;
  // A DCI's streams (docs/dc.md): how many, and each one's lane state and
  // next PSN. 0 for every other QP.
  virtual std::uint32_t streams() const { return 0; }
  virtual QpState stream_state(std::uint32_t) const { return QpState::kReset; }
  virtual std::uint32_t stream_next_psn(std::uint32_t) const { return 0; }
};

struct Sinks {
  CaptureTx tx;
  VecCq scq;
  VecCq rcq;
  FakeTimer timer;
};

// A counter of a set with a field list (RcCounters: rc_core.h) by its
// listed name, as scripts name it; the Homa-like scheduler's sender counters
// (rc_homa.h) take a homa_ prefix in scripts, RcCounters having a
// `timeouts` of its own.
template <class S>
std::optional<std::uint64_t> listed_counter(const S& c, std::string_view name) {
  for (const auto& f : counter_fields(c)) {
    if (f.name == name) return c.*f.member;
  }
  return std::nullopt;
}

// " name name ...", each with `prefix`: the names a script may use.
template <class S>
std::string listed_counter_names(std::string_view prefix) {
  std::string r;
  for (const auto& f : counter_fields(S{})) r += " " + std::string(prefix) + std::string(f.name);
  return r;
}

class RcDriver final : public Driver {
 public:
  RcDriver(const RcQpConfig& cfg, MrTable& mrs, Sinks& s)
      : qp_(cfg, mrs), io_(rc_io(s.tx, s.scq, s.rcq, s.timer)) {}
  RcQp& qp() { return qp_; }
  // Serve the QP as the engine does (vnic/rx.h, timers.h, tx.h): after a
  // packet or a timer only when has_output(). The runner turns this on
  // with the Homa-like scheduler, whose counters (wait_grant) and grant
  // timeouts depend on when the QP is pumped; plain RC scripts keep being
  // pumped after every event.
  void serve_like_engine() { engine_like_ = true; }

  int post_send(const SendWr& wr) override { return qp_.post_send(wr); }
  int post_recv(const RecvWr& wr) override { return qp_.post_recv(wr); }
  int modify_state(QpState st) override {
    QpAttrValues a;
    a.qp_state = st;
    return qp_.modify(qp_attr::kState, a);
  }
  int modify(std::uint32_t mask, const QpAttrValues& a) override { return qp_.modify(mask, a); }
  void deliver(const wire::ParsedPacket& p, TimeNs now) override { qp_.on_packet(p, now, io_); }
  void pump(TimeNs now, bool force) override {
    if (engine_like_ && !force && !qp_.has_output()) return;
    qp_.pump_tx(now, io_, 1u << 16);
  }
  void fire_timer(TimeNs now) override { qp_.on_timer(now, io_); }
  QpState state() const override { return qp_.state(); }
  std::uint32_t next_psn() const override { return qp_.next_psn().value(); }
  std::optional<std::uint32_t> expected_psn() const override { return qp_.expected_psn().value(); }
  void drain_events(EventLog& log) override { qp_.drain_events(log); }
  std::optional<std::uint64_t> counter(std::string_view name) const override {
    if (const auto v = listed_counter(qp_.counters(), name)) return v;
    // Selective repeat's counters (rc_counters.h) by their own names.
    if (const RcSr* sr = qp_.sr()) {
      if (const auto v = listed_counter(sr->ctr, name)) return v;
    }
    const RcHomaTx* h = qp_.homa();
    if (h == nullptr || !name.starts_with("homa_")) return std::nullopt;
    return listed_counter(h->ctr, name.substr(5));
  }
  std::string counter_names() const override {
    return listed_counter_names<RcCounters>("") +
           (qp_.sr() != nullptr ? listed_counter_names<RcSrCounters>("") : "") +
           (qp_.homa() != nullptr ? listed_counter_names<RcHomaCounters>("homa_") : "");
  }

 private:
  RcQp qp_;
  RcIo<CaptureTx, VecCq, VecCq, FakeTimer> io_;
  bool engine_like_ = false;
};

// UC and UD share their driving: no timers, process_send + flush.
template <class Qp, class Rx, std::size_t kNumRx, const char* (*RxName)(Rx)>
class UnreliableDriver : public Driver {
 public:
  template <class Cfg>
  UnreliableDriver(const Cfg& cfg, MrTable& mrs, Sinks& s) : qp_(cfg, mrs), s_(s) {}
  Qp& qp() { return qp_; }

  int post_send(const SendWr& wr) override { return qp_.post_send(wr); }
  int post_recv(const RecvWr& wr) override { return qp_.post_recv(wr); }
  int modify_state(QpState st) override {
    QpAttrValues a;
    a.qp_state = st;
    return qp_.modify(qp_attr::kState, a);
  }
  void deliver(const wire::ParsedPacket& p, TimeNs) override {
    qp_.on_packet(p, s_.rcq);
    qp_.flush(s_.scq, s_.rcq);
  }
  int modify(std::uint32_t mask, const QpAttrValues& a) override { return qp_.modify(mask, a); }
  void pump(TimeNs, bool) override {
    qp_.process_send(s_.tx, s_.scq, 1u << 16);
    qp_.flush(s_.scq, s_.rcq);
  }
  void fire_timer(TimeNs) override {}
  void drain_events(EventLog& log) override { qp_.drain_events(log); }
  QpState state() const override { return qp_.state(); }
  std::uint32_t next_psn() const override { return qp_.next_psn().value(); }
  std::optional<std::uint64_t> counter(std::string_view name) const override {
    const auto& c = qp_.counters();
    if (name == "tx_packets") return c.tx_packets;
    if (name == "tx_payload_bytes") return c.tx_payload_bytes;
    if (name == "tx_no_buffer") return c.tx_no_buffer;
    if (name == "tx_local_err") return c.tx_local_err;
    if (name == "cq_overflow") return c.cq_overflow;
    if (auto v = extra_counter(name)) return v;
    for (std::size_t i = 0; i < kNumRx; ++i) {
      if (name == "rx_" + snake(RxName(static_cast<Rx>(i)))) return c.rx[i];
    }
    return std::nullopt;
  }
  std::string counter_names() const override {
    std::string r =
        " tx_packets tx_payload_bytes tx_no_buffer tx_local_err cq_overflow" + extra_names();
    for (std::size_t i = 0; i < kNumRx; ++i) {
      r += " rx_" + snake(RxName(static_cast<Rx>(i)));
    }
    return r;
  }

 protected:
  virtual std::optional<std::uint64_t> extra_counter(std::string_view) const {
    return std::nullopt;
  }
  virtual std::string extra_names() const { return {}; }
  Qp qp_;
  Sinks& s_;
};

class UcDriver final : public UnreliableDriver<UcQp, UcRx, kNumUcRx, uc_rx_name> {
 public:
  using UnreliableDriver::UnreliableDriver;
  std::optional<std::uint32_t> expected_psn() const override { return qp_.expected_psn().value(); }

 private:
  std::optional<std::uint64_t> extra_counter(std::string_view name) const override {
    if (name == "tx_messages") return qp_.counters().tx_messages;
    if (name == "rx_abandoned") return qp_.counters().rx_abandoned;
    return std::nullopt;
  }
  std::string extra_names() const override { return " tx_messages rx_abandoned"; }
};

class UdDriver final : public UnreliableDriver<UdQp, UdRx, kNumUdRx, ud_rx_name> {
 public:
  using UnreliableDriver::UnreliableDriver;
  std::optional<std::uint32_t> expected_psn() const override { return std::nullopt; }

 private:
  std::optional<std::uint64_t> extra_counter(std::string_view name) const override {
    if (name == "tx_too_long") return qp_.counters().tx_too_long;
    return std::nullopt;
  }
  std::string extra_names() const override { return " tx_too_long"; }
};

}  // namespace uroce::transport::conformance
