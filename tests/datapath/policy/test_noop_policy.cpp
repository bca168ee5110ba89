// A QP extension that does nothing but count its hook calls
// (datapath/policy/qp_extension.h): what adding a policy to the engine
// takes. Besides this file it is one line of registration: here the
// specialization of PoliciesOf for this test's own port type (a production
// policy is one line in datapath/policy/policies.h), and the explicit
// instantiation of the Vnic over that port type that the engine library
// makes for its own port kinds. Nothing in datapath/engine changes.
#include <gtest/gtest.h>

#include "datapath/engine/vnic/all.h"
#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::policy::test {

struct Counts {
  std::uint64_t start = 0;
  std::uint64_t created = 0;
  std::uint64_t destroyed = 0;
  std::uint64_t modify = 0;
  std::uint64_t modified = 0;
  std::uint64_t rx = 0;
  std::uint64_t delivered = 0;
  std::uint64_t post = 0;
  std::uint64_t timer = 0;
  std::uint64_t poll = 0;
  std::uint64_t served = 0;
  std::uint64_t status = 0;
  std::uint64_t deadline = 0;
};

class Noop : public NoHooks {
 public:
  static constexpr std::uint32_t kHooks =
      hook::kRx | hook::kDelivered | hook::kPost | hook::kTimer | hook::kPoll | hook::kServed |
      hook::kModify | hook::kModified | hook::kSlots | hook::kStatus | hook::kDeadline;
  // Whether the next Vnic made runs it (a device's configuration would say).
  static inline bool enable_next = true;

  Noop(const engine::VnicConfig&, std::uint32_t) : on_(enable_next) {}
  bool enabled() const { return on_; }
  const Counts& counts() const { return c_; }

  template <class H>
  void on_start(H&) {
    ++c_.start;
  }
  template <class H, class Q>
  void on_created(H&, Q&) {
    ++c_.created;
  }
  template <class H, class Q>
  void on_destroyed(H&, Q&) {
    ++c_.destroyed;
  }
  template <class H, class Q>
  void on_modify(H&, Q&, engine::QpModify*) {
    ++c_.modify;
  }
  template <class H, class Q>
  void on_modified(H&, Q&, transport::QpState) {
    ++c_.modified;
  }
  template <class H, class Q>
  bool on_rx(H&, Q&, TimeNs) {
    ++c_.rx;
    return false;
  }
  template <class H, class Q>
  void on_delivered(H&, Q&, TimeNs) {
    ++c_.delivered;
  }
  template <class H, class Q>
  void on_post(H&, Q&) {
    ++c_.post;
  }
  template <class H, class Q>
  void on_timer(H&, Q&, TimeNs) {
    ++c_.timer;
  }
  template <class H>
  std::uint32_t on_poll(H&, TimeNs) {
    ++c_.poll;
    return 0;
  }
  template <class H, class Q>
  void on_served(H&, Q&) {
    ++c_.served;
  }
  template <class H, class Q>
  void status(const H&, const Q&, engine::QpStatus*) const {
    ++c_.status;
  }
  template <class H>
  TimeNs next_deadline(const H&) const {
    ++c_.deadline;
    return ~TimeNs{0};
  }

 private:
  bool on_;
  // Mutable: the const hooks (status, next_deadline) count too.
  mutable Counts c_;
};

static_assert(QpExtension<Noop>);

}  // namespace uroce::policy::test

namespace uroce::engine::test {
// The port type this test's Vnics run over: the simulated link's.
struct CountingPort : SimPortIo {
  using SimPortIo::SimPortIo;
};
}  // namespace uroce::engine::test

// The registration.
template <>
struct uroce::policy::PoliciesOf<uroce::engine::test::CountingPort> {
  using type = std::tuple<Homa, Dcqcn, test::Noop>;
};

namespace uroce::engine {
// Made by the engine library (vnic_sim.cpp), not here.
extern template class Vnic<SimPortIo>;
template class Vnic<test::CountingPort>;
}  // namespace uroce::engine

namespace uroce::engine::test {
namespace {

using policy::test::Counts;
using policy::test::Noop;

// A (with the extension) and B (the production list) on one link, one RC
// QP pair; A WRITEs to B.
struct NoopPolicy : ::testing::Test, RcQpPair {
  port::SimLinkConfig link_cfg = [] {
    port::SimDirectionConfig d;
    d.propagation_ns = 1000;
    return port::SimLinkConfig::symmetric(d, 5);
  }();
  port::SimLink link{link_cfg};
  std::unique_ptr<BasicHost<CountingPort>> a;
  std::unique_ptr<Host> b;
  VirtualClock clock;

  void start(bool enabled) {
    Noop::enable_next = enabled;
    a = std::make_unique<BasicHost<CountingPort>>(link, 0, kMacA, kIpA);
    b = std::make_unique<Host>(link, 1, kMacB, kIpB);
    open(*a, *b);
  }
  void run(int n) {
    for (int i = 0; i < n; ++i) {
      a->vnic.poll(clock.now());
      b->vnic.poll(clock.now());
      clock.advance_by(500);
    }
  }
  const Counts& counts() const { return a->vnic.policy<Noop>().counts(); }
};

TEST_F(NoopPolicy, Enabled_EveryHookPointReachesIt) {
  start(true);
  const Counts c0 = counts();
  EXPECT_EQ(c0.start, 1u);
  EXPECT_EQ(c0.created, 1u);
  EXPECT_EQ(c0.modify, 3u);  // INIT, RTR, RTS
  EXPECT_EQ(c0.modified, 3u);
  aqp->post_send(write_wqe(1, b->va(0), b->key), {a->sge(0, 3000)});
  run(40);
  const auto wc = ascq->poll();
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(st(wc[0]), WcStatus::kSuccess);
  const Counts& c = counts();
  EXPECT_EQ(c.post, 1u);
  EXPECT_GE(c.served, 1u);
  EXPECT_EQ(c.poll, 40u);
  // Every RoCEv2 packet for the QP (B's ACKs) before and after its
  // transport.
  const std::uint64_t acks = status_of(a->vnic, 10).engine.rx_packets;
  EXPECT_GT(acks, 0u);
  EXPECT_EQ(c.rx, acks);
  EXPECT_EQ(c.delivered, acks);
  EXPECT_EQ(c.timer, 0u);  // nothing was lost: no RC timer fired
  (void)status_of(a->vnic, 10);
  EXPECT_EQ(c.status, 2u);
  (void)a->vnic.next_deadline();
  EXPECT_EQ(c.deadline, 1u);
  EXPECT_EQ(a->vnic.destroy_qp(10), 0);
  EXPECT_EQ(c.destroyed, 1u);
  // The production extensions are off by default: the engine counted none
  // of their packets.
  EXPECT_EQ(a->vnic.policy<policy::Dcqcn>().counters().tx_cnp, 0u);
  EXPECT_EQ(a->vnic.policy<policy::Homa>().counters().homa_tx_cutoffs, 0u);
}

TEST_F(NoopPolicy, Disabled_NeverCalled) {
  start(false);
  aqp->post_send(write_wqe(1, b->va(0), b->key), {a->sge(0, 3000)});
  run(40);
  ASSERT_EQ(ascq->poll().size(), 1u);
  (void)status_of(a->vnic, 10);
  (void)a->vnic.next_deadline();
  EXPECT_EQ(a->vnic.destroy_qp(10), 0);
  const Counts& c = counts();
  EXPECT_EQ(c.start + c.created + c.destroyed + c.modify + c.modified + c.rx + c.delivered +
                c.post + c.timer + c.poll + c.served + c.status + c.deadline,
            0u);
}

}  // namespace
}  // namespace uroce::engine::test
