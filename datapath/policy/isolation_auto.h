// Isolation "auto" (docs/sched.md): the TX classes, with each QP's class
// chosen by what it posts, as a QP extension (qp_extension.h). The
// classifier is the TX policy's (sched/tx_policy.h observe(),
// sched/flow_classifier.h: latency, throughput, bandwidth); this file is
// where the engine meets it:
//   - on_post (doorbells): every send WR a QP posts, with its length and
//     the QP's send-queue depth after it, goes to the classifier, which
//     moves the QP between classes; a QP pinned through set_qp_sched keeps
//     the class it was given.
//   - owns_class: a new address vector no longer decides the class (the
//     classifier does).
//   - status: the QP's kind (QpStatus::auto_kind; -1 on a device without).
// Enabled when the device's TX policy runs in auto mode after every
// extension adjusted it (an extension that takes the classes, the Homa-like
// scheduler, turns it off: make_policies passes the adjusted configuration).
// A scheduler without a classifier (a benchmark's) is left alone. No state
// of its own: the per-flow history is the classifier's. Engine thread only.
#pragma once

#include <cstdint>

#include "datapath/policy/qp_extension.h"
#include "sched/tx_policy.h"

namespace uroce::policy {

class IsolationAuto : public NoHooks {
 public:
  static constexpr std::uint32_t kHooks = hook::kPost | hook::kClass | hook::kStatus;

  IsolationAuto(const engine::VnicConfig& c, std::uint32_t /*slots*/)
      : on_(c.sched.isolation == sched::Isolation::kAuto) {}
  bool enabled() const { return on_; }

  template <class H, class Q>
  void on_post(H& h, Q& e) {
    if constexpr (requires { h.scheduler().observe(e.slot, std::uint64_t{0}, 0u); }) {
      if (e.class_pinned) return;
      h.scheduler().observe(e.slot, h.posted().length(), H::send_queue_depth(e));
    }
  }

  template <class H, class Q>
  bool owns_class(const H&, const Q&) const {
    return true;
  }

  template <class H, class Q>
  void status(const H& h, const Q& e, engine::QpStatus* s) const {
    if constexpr (requires { h.scheduler().kind(e.slot); }) {
      s->auto_kind = static_cast<std::int8_t>(h.scheduler().kind(e.slot));
    }
  }

 private:
  bool on_;
};

}  // namespace uroce::policy
