#include <gtest/gtest.h>

#include "verbs-provider/ops.h"

namespace uroce::provider {
namespace {

using verbs_abi::verbs_context_ops;

// Every op of ops.h is in its own slot of the table libibverbs gets; a
// misplaced designated initialiser would not compile, a missing one shows
// here.
TEST(UroceOps_Table, EveryImplementedVerbIsSet) {
  const verbs_context_ops& o = kUroceOps;
  EXPECT_EQ(o.alloc_pd, &alloc_pd);
  EXPECT_EQ(o.dealloc_pd, &dealloc_pd);
  EXPECT_EQ(o.reg_mr, &reg_mr);
  EXPECT_EQ(o.rereg_mr, &rereg_mr);
  EXPECT_EQ(o.dereg_mr, &dereg_mr);
  EXPECT_EQ(o.create_cq, &create_cq);
  EXPECT_EQ(o.create_cq_ex, &create_cq_ex);
  EXPECT_EQ(o.poll_cq, &poll_cq);
  EXPECT_EQ(o.req_notify_cq, &req_notify_cq);
  EXPECT_EQ(o.cq_event, &cq_event);
  EXPECT_EQ(o.resize_cq, &resize_cq);
  EXPECT_EQ(o.destroy_cq, &destroy_cq);
  EXPECT_EQ(o.create_qp, &create_qp);
  EXPECT_EQ(o.create_qp_ex, &create_qp_ex);
  EXPECT_EQ(o.modify_qp, &modify_qp);
  EXPECT_EQ(o.query_qp, &query_qp);
  EXPECT_EQ(o.destroy_qp, &destroy_qp);
  EXPECT_EQ(o.post_send, &post_send);
  EXPECT_EQ(o.post_recv, &post_recv);
  EXPECT_EQ(o.create_srq, &create_srq);
  EXPECT_EQ(o.modify_srq, &modify_srq);
  EXPECT_EQ(o.query_srq, &query_srq);
  EXPECT_EQ(o.destroy_srq, &destroy_srq);
  EXPECT_EQ(o.post_srq_recv, &post_srq_recv);
  EXPECT_EQ(o.get_srq_num, &get_srq_num);
  EXPECT_EQ(o.create_ah, &create_ah);
  EXPECT_EQ(o.destroy_ah, &destroy_ah);
  EXPECT_EQ(o.async_event, &async_event);
  EXPECT_EQ(o.query_device_ex, &query_device_ex);
  EXPECT_EQ(o.query_port, &query_port);
  EXPECT_EQ(o.free_context, &free_context);
  EXPECT_EQ(o.alloc_mw, &alloc_mw);
  EXPECT_EQ(o.bind_mw, &bind_mw);
  EXPECT_EQ(o.dealloc_mw, &dealloc_mw);
  EXPECT_EQ(o.attach_mcast, &attach_mcast);
  EXPECT_EQ(o.detach_mcast, &detach_mcast);
}

TEST(UroceOps_Table, UnsupportedVerbsAreLeftToLibibverbsDefaults) {
  const verbs_context_ops& o = kUroceOps;
  EXPECT_EQ(o.open_xrcd, nullptr);
  EXPECT_EQ(o.create_srq_ex, nullptr);
  EXPECT_EQ(o.create_flow, nullptr);
  EXPECT_EQ(o.alloc_dm, nullptr);
  EXPECT_EQ(o.reg_dmabuf_mr, nullptr);
  EXPECT_EQ(o.query_rt_values, nullptr);
}

}  // namespace
}  // namespace uroce::provider
