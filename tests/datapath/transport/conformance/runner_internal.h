// The conformance runner's internals (runner.h), shared by its source
// files, split by concern:
//   runner.cpp          the line loop, the virtual clock, unclaimed output
//   runner_setup.cpp    values, the qp and mr lines, posts and modify
//   runner_packets.cpp  recv and send lines (building and checking packets)
//   runner_checks.cpp   wc, state, counter and memory expectations
//   runner_homa.cpp     the Homa-like scheduler's sender state, and what the
//                       engine does around it
//   runner_dc.cpp       the DC QPs (a DCI, a DCT with its pool), their WRs
//                       and their headers (DCETH, DCAETH)
//   runner_sr.cpp       selective repeat (docs/lossy.md): the qp line's
//                       `sr`, and the SRETH and SACKETH of recv and send
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "datapath/wire/opcodes.h"
#include "tests/datapath/transport/conformance/qp_driver.h"
#include "tests/datapath/transport/conformance/qp_driver_dc.h"
#include "tests/datapath/transport/conformance/script.h"

namespace uroce::transport::conformance::detail {

// A failed check or a bad value; caught by run_script. Exceptions are fine
// here: this is test code, off any datapath.
struct Failure {
  int line;
  std::string message;
};

[[noreturn]] inline void fail(const Line& l, std::string msg) {
  throw Failure{l.no, std::move(msg)};
}

// Addresses of the QP under test and of the scripted peer.
inline const wire::MacAddr kLocalMac{{2, 0, 0, 0, 0, 0xa}};
inline const wire::MacAddr kPeerMac{{2, 0, 0, 0, 0, 0xb}};
inline const wire::Ipv4Addr kLocalIp{0x0a000001};
inline const wire::Ipv4Addr kPeerIp{0x0a000002};
inline constexpr PdHandle kPd = 7;
inline constexpr PdHandle kOtherPd = 8;

struct Region {
  std::string name;
  std::uint32_t key = 0;   // what rkey= and inv= name: the MR's, or its window's
  std::uint32_t lkey = 0;  // what SGEs name: always the MR's
  std::uint64_t iova = 0;
  std::vector<std::uint8_t> mem;
};

class Runner {
 public:
  void run(const std::vector<Line>& lines);

 private:
  // Values.
  std::uint64_t num(const Line& l, std::string_view key, std::uint64_t dflt) const;
  std::uint64_t num_req(const Line& l, std::string_view key) const;
  std::optional<std::uint64_t> num_opt(const Line& l, std::string_view key) const;
  std::uint64_t addr_value(const Line& l, std::string_view key, std::string_view v) const;
  std::uint32_t key_value(const Line& l, std::string_view key, std::string_view v) const;
  std::vector<std::uint8_t> bytes_value(const Line& l, std::string_view v) const;
  std::uint32_t access_value(const Line& l, std::string_view v) const;
  Region& region(const Line& l, std::string_view name);
  // Payload bytes a line names (bytes=, or len= with seed=).
  std::optional<std::vector<std::uint8_t>> payload(const Line& l) const;

  // Time.
  void advance_to(const Line& l, TimeNs t);
  void stamp();
  // Stamps what the QP emitted, pumps it (`force`: Driver::pump), stamps.
  void after_event(TimeNs now, bool force = false);

  // Commands.
  void cmd_qp(const Line& l);
  void cmd_mr(const Line& l);
  void cmd_mem_set(const Line& l);
  void cmd_post_send(const Line& l);
  void cmd_post_recv(const Line& l);
  void cmd_modify(const Line& l);
  void cmd_recv(const Line& l);
  void cmd_send(const Line& l);
  void cmd_quiet(const Line& l);
  void cmd_wc(const Line& l);
  void cmd_state(const Line& l);
  void cmd_counter(const Line& l);
  void cmd_expect_mem(const Line& l);
  void cmd_expect_grh(const Line& l);
  void cmd_event(const Line& l);
  void check_errno(const Line& l, int rc, std::string_view what);
  // The Homa-like scheduler (runner_homa.cpp).
  void homa_setup(const Line& l);
  std::vector<std::uint8_t> homa_header(const Line& l, std::uint8_t opcode) const;
  bool homa_deliver(const Line& l, const wire::ParsedPacket& p);
  void homa_announce();
  void check_homa_fields(
      const Line& l, const wire::ParsedPacket& p,
      const std::function<void(const std::string&, const std::string&)>& mismatch) const;
  // The DC QPs (runner_dc.cpp): the qp line of a dci or dct, a DCI WR's
  // target and stream, the DC header of a recv line, and the DC header
  // fields a send line names.
  void dc_setup(const Line& l);
  void dc_wr(const Line& l, SendWr& w) const;
  void dc_recv_headers(const Line& l, wire::PacketSpec& s) const;
  void check_dc_fields(
      const Line& l, const wire::ParsedPacket& p,
      const std::function<void(const std::string&, const std::string&)>& mismatch) const;
  // Selective repeat (runner_sr.cpp): attaches RcSr when the qp line says
  // `sr`, builds a recv line's SRETH and SACKETH, checks a send line's.
  void sr_setup(const Line& l);
  void sr_recv_headers(const Line& l, wire::PacketSpec& s) const;
  void check_sr_fields(
      const Line& l, const wire::ParsedPacket& p,
      const std::function<void(const std::string&, const std::string&)>& mismatch) const;
  void check_time(const Line& l, TimeNs happened, std::string_view what) const;
  void leftovers(const Line* l) const;

  MrTable mrs_{64};
  std::vector<std::unique_ptr<Region>> regions_;
  Sinks s_;
  // The Homa-like scheduler's sender state when the qp line says `homa`
  // (rc_homa.h); the runner does what the engine does around it
  // (datapath/policy/homa.h). Declared before qp_: the QP
  // points at it.
  std::unique_ptr<RcHomaTx> homa_;
  // Selective repeat's state when the qp line says `sr` (rc_sr.h; the
  // engine's pool owns it in uroced), before qp_ for the same reason.
  std::unique_ptr<RcSr> sr_;
  std::unique_ptr<Driver> qp_;
  RcDriver* rc_ = nullptr;  // qp_ when it is an RC QP
  // The qp line's attributes, given again when a script reconnects the QP.
  QpAttrValues attr_;
  QpType type_ = QpType::kRc;
  std::uint32_t qpn_ = 0;
  std::uint32_t dest_ = 0;
  std::uint32_t qkey_ = 0;
  // DC: the DCT's access key, or the key a DCI's WRs name by default.
  std::uint64_t dc_key_ = 0;
  TimeNs now_ = 0;
  // Emission times of s_.tx.frames / completions, and how many were claimed.
  std::vector<TimeNs> frame_t_, scq_t_, rcq_t_;
  std::size_t frames_seen_ = 0, scq_seen_ = 0, rcq_seen_ = 0;
  // Async events the QP raised, when, and how many were claimed.
  EventLog events_;
  std::vector<TimeNs> event_t_;
  std::size_t events_seen_ = 0;
  std::vector<std::uint8_t> last_injected_;
};

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> split_commas(const std::string& v);
// The byte pattern of seed S: byte i is (S + i) mod 256.
std::vector<std::uint8_t> pattern(std::uint64_t seed, std::size_t len);
QpState state_value(const Line& l, std::string_view v);
std::uint8_t opcode_of(const Line& l);
// The attributes ibv_modify_qp needs to take a QP of type `t` into `to`.
std::uint32_t connect_mask(QpType t, QpState to);

}  // namespace uroce::transport::conformance::detail
