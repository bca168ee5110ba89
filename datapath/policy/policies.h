// The QP extensions (qp_extension.h) every Vnic runs, in the order their
// hooks run. Registering a policy is one line here (and its #include).
#pragma once

#include <tuple>

#include "datapath/policy/dcqcn.h"
#include "datapath/policy/homa.h"
#include "datapath/policy/isolation_auto.h"

namespace uroce::policy {

using Registered = std::tuple<Homa, Dcqcn, IsolationAuto>;

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
