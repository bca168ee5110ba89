// The QP extensions (qp_extension.h) every Vnic runs, in the order their
// hooks run. Registering a policy is one line here (and its #include).
#pragma once

#include <tuple>

#include "datapath/policy/dcqcn.h"
#include "datapath/policy/homa.h"
#include "datapath/policy/isolation_auto.h"

namespace uroce::policy {

// The extensions of a Vnic over PortIo: every port kind gets this list; a
// test may give a port type of its own another (test_noop_policy.cpp).
template <class PortIo>
struct PoliciesOf {
  using type = std::tuple<Homa, Dcqcn, IsolationAuto>;
};

}  // namespace uroce::policy
