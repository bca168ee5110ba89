#include "tests/datapath/transport/conformance/runner.h"

#include <cerrno>

#include "tests/datapath/transport/conformance/names.h"
#include "tests/datapath/transport/conformance/runner_internal.h"

namespace uroce::transport::conformance {

namespace detail {

void Runner::stamp() {
  if (qp_) qp_->drain_events(events_);
  event_t_.resize(events_.events.size(), now_);
  frame_t_.resize(s_.tx.frames.size(), now_);
  scq_t_.resize(s_.scq.wc.size(), now_);
  rcq_t_.resize(s_.rcq.wc.size(), now_);
}

void Runner::after_event(TimeNs now, bool force) {
  stamp();
  qp_->pump(now, force);
  stamp();
}

// Fires every timer due at or before t, each at its own deadline, then
// moves the clock to t.
void Runner::advance_to(const Line& l, TimeNs t) {
  if (t < now_) {
    fail(l, "time goes backwards: " + format_time(t) + " after " + format_time(now_));
  }
  if (!qp_) {
    now_ = t;
    return;
  }
  for (int guard = 0; guard < 1000000; ++guard) {
    auto it = s_.timer.at.find(qpn_);
    if (it == s_.timer.at.end() || it->second > t) break;
    now_ = std::max(now_, it->second);
    s_.timer.at.erase(it);
    qp_->fire_timer(now_);
    homa_announce();
    after_event(now_);
  }
  now_ = t;
  after_event(now_);
}

void Runner::check_errno(const Line& l, int rc, std::string_view what) {
  std::string want = "ok";
  if (const std::string* e = l.find("expect")) want = *e;
  int want_rc = 0;
  if (want == "einval") want_rc = EINVAL;
  else if (want == "enomem") want_rc = ENOMEM;
  else if (want != "ok") fail(l, "expect= takes ok, einval or enomem");
  if (rc != want_rc) {
    auto name = [](int r) -> std::string {
      return r == 0 ? "ok" : r == EINVAL ? "einval" : r == ENOMEM ? "enomem" : std::to_string(r);
    };
    fail(l, std::string(what) + " returned " + name(rc) + ", expected " + want);
  }
}

void Runner::check_time(const Line& l, TimeNs happened, std::string_view what) const {
  if (l.mode == TimeMode::kBy) {
    if (happened > l.time) {
      fail(l, std::string(what) + " at " + format_time(happened) + ", expected by " +
                  format_time(l.time));
    }
    return;
  }
  if (happened != now_) {
    fail(l,
         std::string(what) + " at " + format_time(happened) + ", expected at " + format_time(now_));
  }
}

void Runner::leftovers(const Line* l) const {
  const int no = l != nullptr ? l->no : 0;
  if (frames_seen_ < s_.tx.frames.size()) {
    throw Failure{no, "unexpected packet " + packet_text(s_.tx.frames[frames_seen_]->p) +
                          " (sent at " + format_time(frame_t_[frames_seen_]) + ")"};
  }
  if (scq_seen_ < s_.scq.wc.size()) {
    throw Failure{no, "unexpected completion wc sq " + wc_text(s_.scq.wc[scq_seen_]) + " (at " +
                          format_time(scq_t_[scq_seen_]) + ")"};
  }
  if (rcq_seen_ < s_.rcq.wc.size()) {
    throw Failure{no, "unexpected completion wc rq " + wc_text(s_.rcq.wc[rcq_seen_]) + " (at " +
                          format_time(rcq_t_[rcq_seen_]) + ")"};
  }
  if (events_seen_ < events_.events.size()) {
    throw Failure{no, "unexpected event " + event_name(events_.events[events_seen_].type) +
                          " (at " + format_time(event_t_[events_seen_]) + ")"};
  }
}

void Runner::cmd_quiet(const Line& l) { leftovers(&l); }

void Runner::run(const std::vector<Line>& lines) {
  for (const Line& l : lines) {
    if (l.cmd == "qp") {
      if (l.mode != TimeMode::kNone) fail(l, "qp takes no time");
      cmd_qp(l);
      continue;
    }
    if (l.cmd == "mr") {
      cmd_mr(l);
      continue;
    }
    if (!qp_) fail(l, "the script must declare its qp first");
    if (l.mode != TimeMode::kNone) advance_to(l, l.time);
    if (l.cmd == "mem_set") cmd_mem_set(l);
    else if (l.cmd == "post_send") cmd_post_send(l);
    else if (l.cmd == "post_recv") cmd_post_recv(l);
    else if (l.cmd == "modify") cmd_modify(l);
    else if (l.cmd == "recv") cmd_recv(l);
    else if (l.cmd == "send") cmd_send(l);
    else if (l.cmd == "quiet") cmd_quiet(l);
    else if (l.cmd == "wc") cmd_wc(l);
    else if (l.cmd == "state") cmd_state(l);
    else if (l.cmd == "counter") cmd_counter(l);
    else if (l.cmd == "expect_mem") cmd_expect_mem(l);
    else if (l.cmd == "expect_grh") cmd_expect_grh(l);
    else if (l.cmd == "event") cmd_event(l);
    else fail(l, "unknown command '" + l.cmd + "'");
  }
  if (!qp_) throw Failure{0, "the script declares no qp"};
  leftovers(nullptr);
}

}  // namespace detail

std::string RunResult::describe() const {
  if (ok) return "ok";
  return (line == 0 ? std::string("end of script") : "line " + std::to_string(line)) + ": " +
         message;
}

RunResult run_script(std::string_view text) {
  RunResult res;
  const ParseResult parsed = parse_script(text);
  if (!parsed.ok()) {
    res.ok = false;
    res.line = parsed.error_line;
    res.message = parsed.error;
    return res;
  }
  try {
    detail::Runner r;
    r.run(parsed.lines);
  } catch (const detail::Failure& f) {
    res.ok = false;
    res.line = f.line;
    res.message = f.message;
  }
  return res;
}

}  // namespace uroce::transport::conformance
