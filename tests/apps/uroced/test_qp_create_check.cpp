#include "apps/uroced/qp_create_check.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <cerrno>

#include "apps/uroced/device_attr.h"

namespace uroce::daemon {
namespace {

using transport::QpType;

ctl::CreateQpReq rc() {
  ctl::CreateQpReq r{};
  r.pd_handle = 1;
  r.qp_type = IBV_QPT_RC;
  r.send_cq_handle = 2;
  r.recv_cq_handle = 2;
  r.cap = {16, 16, 2, 2, 64};
  return r;
}

ctl::CreateQpReq dct() {
  ctl::CreateQpReq r{};
  r.pd_handle = 1;
  r.qp_type = IBV_QPT_DRIVER;
  r.dc_type = ctl::kDcDct;
  r.recv_cq_handle = 2;
  r.srq_handle = 3;
  r.cap.max_recv_wr = 99;  // ignored, as for any QP with an SRQ
  r.dct_key = 0xC0FFEE;
  return r;
}

ctl::CreateQpReq dci() {
  ctl::CreateQpReq r{};
  r.pd_handle = 1;
  r.qp_type = IBV_QPT_DRIVER;
  r.dc_type = ctl::kDcDci;
  r.send_cq_handle = 2;
  r.cap = {64, 0, 2, 0, 32};
  r.dci_log_streams = 3;
  r.dci_log_errored = 1;
  return r;
}

int check(const ctl::CreateQpReq& r) {
  QpShape s;
  return check_create_qp(r, &s);
}

TEST(CheckCreateQp_Ibv, RcUcUdKeepTheirType) {
  for (std::uint32_t t : {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD}) {
    ctl::CreateQpReq r = rc();
    r.qp_type = t;
    QpShape s;
    ASSERT_EQ(check_create_qp(r, &s), 0) << t;
    EXPECT_EQ(static_cast<std::uint32_t>(s.type), t);
    EXPECT_TRUE(s.send_cq && s.recv_cq && s.sq && s.rq);
  }
  ctl::CreateQpReq r = rc();
  r.srq_handle = 4;
  r.cap.max_recv_wr = kMaxQpWr + 1;  // ignored with an SRQ
  QpShape s;
  ASSERT_EQ(check_create_qp(r, &s), 0);
  EXPECT_FALSE(s.rq);
}

TEST(CheckCreateQp_Ibv, UnknownTypeOrDcAttributesAreEinval) {
  ctl::CreateQpReq r = rc();
  for (std::uint32_t t : {0u, 1u, 5u, static_cast<std::uint32_t>(IBV_QPT_RAW_PACKET),
                          static_cast<std::uint32_t>(IBV_QPT_XRC_SEND), 0x80u, 0x81u}) {
    r.qp_type = t;
    EXPECT_EQ(check(r), EINVAL) << t;
  }
  r = rc();
  r.dc_type = ctl::kDcDci;
  EXPECT_EQ(check(r), EINVAL);
  r = rc();
  r.dct_key = 1;
  EXPECT_EQ(check(r), EINVAL);
  r = rc();
  r.dci_log_streams = 1;
  EXPECT_EQ(check(r), EINVAL);
  r = rc();
  r.dci_log_errored = 1;
  EXPECT_EQ(check(r), EINVAL);
}

TEST(CheckCreateQp_Ibv, LimitsAndSigAll) {
  ctl::CreateQpReq r = rc();
  r.sq_sig_all = 2;
  EXPECT_EQ(check(r), EINVAL);
  r = rc();
  r.cap.max_send_wr = kMaxQpWr + 1;
  EXPECT_EQ(check(r), EINVAL);
  r = rc();
  r.cap.max_send_sge = kMaxSge + 1;
  EXPECT_EQ(check(r), EINVAL);
  r = rc();
  r.cap.max_inline_data = kMaxInline + 1;
  EXPECT_EQ(check(r), EINVAL);
  r = rc();
  r.cap.max_recv_wr = kMaxQpWr + 1;
  EXPECT_EQ(check(r), EINVAL);
  r = rc();
  r.cap.max_recv_sge = kMaxSge + 1;
  EXPECT_EQ(check(r), EINVAL);
}

TEST(CheckCreateQp_Dct, UsesSrqAndRecvCqOnly) {
  QpShape s;
  ASSERT_EQ(check_create_qp(dct(), &s), 0);
  EXPECT_EQ(s.type, QpType::kDct);
  EXPECT_FALSE(s.send_cq);
  EXPECT_TRUE(s.recv_cq);
  EXPECT_FALSE(s.sq);
  EXPECT_FALSE(s.rq);
  EXPECT_EQ(s.dct_key, 0xC0FFEEu);
  EXPECT_EQ(s.dci_log_streams, 0u);
}

TEST(CheckCreateQp_Dct, EachBadFieldIsEinval) {
  ctl::CreateQpReq r = dct();
  r.srq_handle = 0;
  EXPECT_EQ(check(r), EINVAL);
  r = dct();
  r.send_cq_handle = 2;
  EXPECT_EQ(check(r), EINVAL);
  r = dct();
  r.cap.max_send_wr = 1;
  EXPECT_EQ(check(r), EINVAL);
  r = dct();
  r.cap.max_send_sge = 1;
  EXPECT_EQ(check(r), EINVAL);
  r = dct();
  r.cap.max_inline_data = 1;
  EXPECT_EQ(check(r), EINVAL);
  r = dct();
  r.dci_log_streams = 1;
  EXPECT_EQ(check(r), EINVAL);
  r = dct();
  r.dci_log_errored = 1;
  EXPECT_EQ(check(r), EINVAL);
}

TEST(CheckCreateQp_Dci, UsesSendCqAndSqOnly) {
  QpShape s;
  ASSERT_EQ(check_create_qp(dci(), &s), 0);
  EXPECT_EQ(s.type, QpType::kDci);
  EXPECT_TRUE(s.send_cq);
  EXPECT_FALSE(s.recv_cq);
  EXPECT_TRUE(s.sq);
  EXPECT_FALSE(s.rq);
  EXPECT_EQ(s.dci_log_streams, 3u);
  EXPECT_EQ(s.dci_log_errored, 1u);
  EXPECT_EQ(s.dct_key, 0u);
}

TEST(CheckCreateQp_Dci, EachBadFieldIsEinval) {
  ctl::CreateQpReq r = dci();
  r.srq_handle = 3;
  EXPECT_EQ(check(r), EINVAL);
  r = dci();
  r.recv_cq_handle = 2;
  EXPECT_EQ(check(r), EINVAL);
  r = dci();
  r.cap.max_recv_wr = 1;
  EXPECT_EQ(check(r), EINVAL);
  r = dci();
  r.cap.max_recv_sge = 1;
  EXPECT_EQ(check(r), EINVAL);
  r = dci();
  r.dct_key = 1;
  EXPECT_EQ(check(r), EINVAL);
  r = dci();
  r.dci_log_streams = transport::kMaxDciLogStreams + 1;
  EXPECT_EQ(check(r), EINVAL);
  r = dci();
  r.dci_log_errored = 4;  // over log_streams 3
  EXPECT_EQ(check(r), EINVAL);
  r = dci();
  r.cap.max_send_wr = kMaxQpWr + 1;
  EXPECT_EQ(check(r), EINVAL);
}

TEST(CheckCreateQp_Driver, NeedsAKnownDcType) {
  for (std::uint32_t t : {ctl::kDcNone, 3u, 0xFFFFFFFFu}) {
    ctl::CreateQpReq r = dci();
    r.dc_type = t;
    EXPECT_EQ(check(r), EINVAL) << t;
  }
}

}  // namespace
}  // namespace uroce::daemon
