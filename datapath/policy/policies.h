// The QP extensions (qp_extension.h) every Vnic runs, in the order their
// hooks run. Registering a policy is one line here (and its #include).
#pragma once

#include <tuple>

#include "datapath/policy/dcqcn.h"
#include "datapath/policy/homa.h"
#include "datapath/policy/isolation_auto.h"
#include "datapath/policy/lossy.h"

namespace uroce::policy {

// Lossy first: its on_rx takes HELLOs only, Homa's every uroce control
// packet.
using Registered = std::tuple<Lossy, Homa, Dcqcn, IsolationAuto>;

// The extensions of a Vnic over PortIo: every port kind gets the registered
// list; a test may give a port type of its own another
// (test_noop_policy.cpp).
template <class PortIo>
struct PoliciesOf {
  using type = Registered;
};

// The registered extensions' counters (the daemon's status), and f(set)
// for each set in turn (each has a field list: counter_fields(set)).
using RegisteredCounters = CountersOf<Registered>;
template <class F>
void each_counter_set(const RegisteredCounters& c, F&& f) {
  std::apply([&](const auto&... s) { (f(s), ...); }, c);
}

}  // namespace uroce::policy
