// A DCI stream's connection to its target (docs/dc.md, "Initiator"): which
// target the stream is bound to, the connection it runs there, when it may
// switch, and what each of the target's answers means for the WRs it has
// outstanding. The RC requester and completer of the stream do the rest
// (PSNs, ACKs, retransmission); this decides only what RC cannot: the
// connection around them.
//
// I/O-free: the caller (the DCI) asks and acts.
#pragma once

#include <cstdint>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "datapath/transport/dc_target.h"
#include "datapath/transport/seq24.h"
#include "datapath/wire/addr.h"

namespace uroce::transport {

// The device's connection numbers (docs/dc.md, "Connections"): each new one
// is newer than every one before it and than the time in microseconds, so
// they keep growing across daemon restarts; a floor learnt from a target
// (UNKNOWN) moves the clock past it.
class DcConnClock {
 public:
  std::uint32_t next(TimeNs now) {
    const auto us = static_cast<std::uint32_t>(now / kNsPerUs);
    last_ = dc_conn_newer(us, last_) ? us : last_ + 1;
    return last_;
  }
  void learn(std::uint32_t floor) {
    if (dc_conn_newer(floor, last_)) last_ = floor;
  }
  std::uint32_t last() const { return last_; }

 private:
  std::uint32_t last_ = 0;
};

// A target as a WR names it: the address its AH resolved to, the DCT
// number and the access key.
struct DcDest {
  bool ipv6 = false;
  wire::Ipv4Addr dip{};
  wire::Ipv6Addr dip6{};
  std::uint32_t dctn = 0;
  std::uint64_t key = 0;
  friend bool operator==(const DcDest&, const DcDest&) = default;
};

// Two targets on one host (by address: its DCTs share the path).
inline bool same_host(const DcDest& a, const DcDest& b) {
  return a.ipv6 == b.ipv6 && (a.ipv6 ? a.dip6 == b.dip6 : a.dip == b.dip);
}

// The target's answers other than plain RC responses (wire/dc_aeth.h).
enum class DcAnswer : std::uint8_t { kGone, kUnknown, kBusy, kKeyViolation, kNoSr };

// What the caller does about an answer.
enum class DcAction : std::uint8_t {
  kIgnore,    // not about the current connection
  kAckedTo,   // WRs wholly below `psn` ran: complete them; the rest go again
              // in a new connection (the caller calls restart())
  kRestart,   // nothing ran: everything unacknowledged goes again in a new
              // connection (the caller calls restart(); after NO_SR, one
              // without selective repeat)
  kAbort,     // what ran is unknown: the unacknowledged WRs complete
              // IBV_WC_REM_ABORT_ERR
  kRnrWait,   // BUSY: as an RNR NAK (rnr_retry counts it)
  kKeyError,  // the WR completes IBV_WC_REM_ACCESS_ERR
};

struct DcActionResult {
  DcAction action = DcAction::kIgnore;
  Psn psn{};
};

struct DcStreamCounters {
  std::uint64_t connects = 0;
  std::uint64_t wait_switch = 0;  // a WR for another target waited for the stream to drain
  std::uint64_t disconnects = 0;
  std::uint64_t gone = 0;
  std::uint64_t unknown_restart = 0;
  std::uint64_t unknown_abort = 0;
  std::uint64_t busy = 0;
  std::uint64_t key_violations = 0;
  std::uint64_t stale_answers = 0;
  std::uint64_t no_sr = 0;
};

inline constexpr counters::FieldList<DcStreamCounters, 10> kDcStreamCounterFields{{
    {"connects", &DcStreamCounters::connects, "connections opened to a target"},
    {"wait_switch", &DcStreamCounters::wait_switch,
     "a WR for another target waited for the stream to drain"},
    {"disconnects", &DcStreamCounters::disconnects,
     "connections ended (DISCONNECT sent or the stream unbound)"},
    {"gone", &DcStreamCounters::gone, "GONE answers of the current connection"},
    {"unknown_restart", &DcStreamCounters::unknown_restart,
     "UNKNOWN answers before any response: the WRs go again in a new connection"},
    {"unknown_abort", &DcStreamCounters::unknown_abort,
     "UNKNOWN answers after a response: the unacknowledged WRs complete in error"},
    {"busy", &DcStreamCounters::busy, "BUSY answers (waited for as an RNR NAK)"},
    {"key_violations", &DcStreamCounters::key_violations, "KEY_VIOLATION answers"},
    {"stale_answers", &DcStreamCounters::stale_answers,
     "answers of another connection, or naming PSNs never sent, ignored"},
    {"no_sr", &DcStreamCounters::no_sr,
     "NO_SR answers: the target does not run selective repeat; the connection starts again "
     "with go-back-N"},
}};
static_assert(counters::covers(kDcStreamCounterFields));
constexpr const auto& counter_fields(const DcStreamCounters&) { return kDcStreamCounterFields; }

class DcStream {
 public:
  bool bound() const { return bound_; }
  const DcDest& dest() const { return dest_; }
  std::uint32_t conn() const { return conn_; }
  Psn start_psn() const { return start_; }
  // Requests carry SYN until a response of the connection arrived.
  bool syn() const { return !responded_; }
  const DcStreamCounters& counters() const { return ctr_; }
  // BUSY and KEY_VIOLATION reach the stream's RC lane as an RNR NAK and a
  // NAK (DciQp::on_packet), which act on them; the stream counts them.
  void count(DcAnswer a) {
    if (a == DcAnswer::kBusy) ++ctr_.busy;
    if (a == DcAnswer::kKeyViolation) ++ctr_.key_violations;
  }

  // Before the first packet of a WR for `d`, with `next` the stream's next
  // PSN and `drained` true when every earlier WR of the stream completed.
  // True: go (the stream is bound to d, connecting now if it was not).
  // False: the WR waits for the stream to drain. `disconnect` is set when
  // the caller must send DC_DISCONNECT for the connection it had (to
  // `old_dest`, `old_conn`, at `next`).
  struct Switch {
    bool disconnect = false;
    DcDest old_dest{};
    std::uint32_t old_conn = 0;
  };
  bool connect(const DcDest& d, Psn next, bool drained, DcConnClock& clock, TimeNs now,
               Switch* sw) {
    if (bound_ && dest_ == d) return true;
    if (bound_ && !drained) {
      ++ctr_.wait_switch;
      return false;
    }
    if (bound_) {
      sw->disconnect = true;
      sw->old_dest = dest_;
      sw->old_conn = conn_;
      ++ctr_.disconnects;
    }
    begin(d, next, clock.next(now));
    return true;
  }

  // The stream drained and stays idle: the caller sends DC_DISCONNECT for
  // conn() and forgets the binding.
  void disconnect() {
    if (!bound_) return;
    bound_ = false;
    ++ctr_.disconnects;
  }

  // A plain RC response of connection `conn` arrived.
  void on_response(std::uint32_t conn) {
    if (bound_ && conn == conn_) responded_ = true;
  }

  // A GONE/UNKNOWN/BUSY/KEY_VIOLATION answer for connection `conn` (value:
  // GONE's expected PSN, UNKNOWN's floor). `unacked` is the stream's oldest
  // unacknowledged PSN and `next` its next new PSN. After kAckedTo and
  // kRestart the caller completes what ran and calls restart() with the
  // first PSN of the first WR that did not wholly run (a SEND or WRITE
  // half run goes again whole: its bytes land in the same places, and a
  // SEND's receive WR was not completed).
  DcActionResult on_answer(DcAnswer a, std::uint32_t conn, std::uint32_t value, Psn unacked,
                           Psn next, DcConnClock& clock) {
    DcActionResult r;
    if (!bound_ || conn != conn_) {
      ++ctr_.stale_answers;
      return r;
    }
    r.psn = unacked;
    switch (a) {
      case DcAnswer::kGone: {
        const Psn ran(value);
        // The target cannot have run what was never sent.
        if (next.before(ran)) {
          ++ctr_.stale_answers;
          return r;
        }
        ++ctr_.gone;
        r.action = DcAction::kAckedTo;
        if (unacked.before(ran)) r.psn = ran;
        return r;
      }
      case DcAnswer::kUnknown:
        clock.learn(value);
        if (!responded_) {
          // The target never opened a context for this connection
          // (docs/dc.md, "Why nothing runs twice"): nothing ran.
          ++ctr_.unknown_restart;
          r.action = DcAction::kRestart;
          return r;
        }
        ++ctr_.unknown_abort;
        r.action = DcAction::kAbort;
        bound_ = false;
        return r;
      case DcAnswer::kBusy:
        ++ctr_.busy;
        r.action = DcAction::kRnrWait;
        return r;
      case DcAnswer::kKeyViolation:
        ++ctr_.key_violations;
        r.action = DcAction::kKeyError;
        bound_ = false;
        return r;
      case DcAnswer::kNoSr:
        // Answered only to a connection's opening request, before any
        // response: a NO_SR after one is not about this connection.
        if (responded_) {
          ++ctr_.stale_answers;
          return r;
        }
        ++ctr_.no_sr;
        r.action = DcAction::kRestart;
        return r;
    }
    return r;
  }

  // A new connection to the same target from `first` (after kAckedTo or
  // kRestart).
  void restart(Psn first, DcConnClock& clock, TimeNs now) { begin(dest_, first, clock.next(now)); }

  // The stream's WRs were flushed or the DCI reset: no binding.
  void reset() {
    bound_ = false;
    responded_ = false;
  }

 private:
  void begin(const DcDest& d, Psn first, std::uint32_t conn) {
    bound_ = true;
    dest_ = d;
    conn_ = conn;
    start_ = first;
    responded_ = false;
    ++ctr_.connects;
  }

  bool bound_ = false;
  bool responded_ = false;
  DcDest dest_{};
  std::uint32_t conn_ = 0;
  Psn start_{};
  DcStreamCounters ctr_{};
};

}  // namespace uroce::transport
