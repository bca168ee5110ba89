#include "apps/uroced/message_check.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace uroce::daemon {
namespace {

// A well-formed request of `op` (its exact size), as bytes.
std::vector<std::byte> request(ctl::Op op, std::uint32_t seq = 5) {
  std::vector<std::byte> m(ctl::request_bytes(op));
  const ctl::MsgHeader h{ctl::kMagic, ctl::kVersion, static_cast<std::uint16_t>(op),
                         static_cast<std::uint32_t>(m.size()), seq};
  std::memcpy(m.data(), &h, sizeof(h));
  return m;
}

void set_header(std::vector<std::byte>& m, const ctl::MsgHeader& h) {
  std::memcpy(m.data(), &h, sizeof(h));
}

ctl::MsgHeader header_of(const std::vector<std::byte>& m) {
  ctl::MsgHeader h;
  std::memcpy(&h, m.data(), sizeof(h));
  return h;
}

TEST(CheckRequest_Valid, EveryOpWithItsFds) {
  for (std::uint16_t op = 1; op <= ctl::kMaxOp; ++op) {
    const auto o = static_cast<ctl::Op>(op);
    const auto m = request(o);
    ctl::MsgHeader h;
    const MsgCheck c = check_request(m, ctl::request_fd_count(o), &h);
    EXPECT_TRUE(c.ok()) << ctl::op_name(o) << ": " << to_string(c.fault);
    EXPECT_EQ(h.seq, 5u);
  }
}

TEST(CheckRequest_Short, Ebadmsg) {
  std::vector<std::byte> m(sizeof(ctl::MsgHeader) - 1);
  ctl::MsgHeader h;
  const MsgCheck c = check_request(m, 0, &h);
  EXPECT_EQ(c.fault, MsgFault::kShort);
  EXPECT_EQ(c.status, EBADMSG);
  EXPECT_FALSE(c.close);
  EXPECT_EQ(h.op, 0);
  EXPECT_EQ(h.seq, 0u);
}

TEST(CheckRequest_MagicVersion, EprotonosupportAndClose) {
  auto m = request(ctl::Op::kAllocPd);
  auto h = header_of(m);
  h.magic ^= 1;
  set_header(m, h);
  ctl::MsgHeader out;
  MsgCheck c = check_request(m, 0, &out);
  EXPECT_EQ(c.fault, MsgFault::kBadMagic);
  EXPECT_EQ(c.status, EPROTONOSUPPORT);
  EXPECT_TRUE(c.close);
  EXPECT_EQ(out.seq, 5u);  // still echoed
  h.magic = ctl::kMagic;
  h.version = ctl::kVersion + 1;
  set_header(m, h);
  c = check_request(m, 0, &out);
  EXPECT_EQ(c.fault, MsgFault::kBadVersion);
  EXPECT_EQ(c.status, EPROTONOSUPPORT);
  EXPECT_TRUE(c.close);
}

TEST(CheckRequest_Length, MustEqualBytesReceived) {
  auto m = request(ctl::Op::kAllocPd);
  auto h = header_of(m);
  h.length += 1;
  set_header(m, h);
  ctl::MsgHeader out;
  const MsgCheck c = check_request(m, 0, &out);
  EXPECT_EQ(c.fault, MsgFault::kLengthMismatch);
  EXPECT_EQ(c.status, EBADMSG);
}

TEST(CheckRequest_UnknownOp, Eopnotsupp) {
  for (std::uint16_t op :
       {std::uint16_t{0}, std::uint16_t{ctl::kMaxOp + 1}, std::uint16_t{0xffff}}) {
    std::vector<std::byte> m(sizeof(ctl::MsgHeader));
    set_header(m, {ctl::kMagic, ctl::kVersion, op, sizeof(ctl::MsgHeader), 1});
    ctl::MsgHeader out;
    const MsgCheck c = check_request(m, 0, &out);
    EXPECT_EQ(c.fault, MsgFault::kUnknownOp) << op;
    EXPECT_EQ(c.status, EOPNOTSUPP);
  }
}

TEST(CheckRequest_Size, ExactForTheOp) {
  auto m = request(ctl::Op::kCreateQp);
  m.push_back(std::byte{0});
  auto h = header_of(m);
  h.length = static_cast<std::uint32_t>(m.size());
  set_header(m, h);
  ctl::MsgHeader out;
  EXPECT_EQ(check_request(m, 0, &out).fault, MsgFault::kBadSize);
  m.resize(m.size() - 2);
  h.length = static_cast<std::uint32_t>(m.size());
  set_header(m, h);
  EXPECT_EQ(check_request(m, 0, &out).status, EBADMSG);
}

TEST(CheckRequest_Fds, ExactCountPerOp) {
  ctl::MsgHeader out;
  EXPECT_EQ(check_request(request(ctl::Op::kHello), 0, &out).fault, MsgFault::kBadFdCount);
  EXPECT_EQ(check_request(request(ctl::Op::kHello), 2, &out).fault, MsgFault::kBadFdCount);
  EXPECT_EQ(check_request(request(ctl::Op::kAllocPd), 1, &out).status, EBADMSG);
  EXPECT_EQ(check_request(request(ctl::Op::kCreateCompChannel), 0, &out).status, EBADMSG);
}

TEST(ExpectedFds, ReregMrOnlyWithTranslation) {
  auto m = request(ctl::Op::kReregMr);
  ctl::ReregMrReq r{};
  r.flags = IBV_REREG_MR_CHANGE_ACCESS;
  std::memcpy(m.data() + sizeof(ctl::MsgHeader), &r, sizeof(r));
  const auto body = std::span<const std::byte>(m).subspan(sizeof(ctl::MsgHeader));
  EXPECT_EQ(expected_fds(ctl::Op::kReregMr, body), 0);
  ctl::MsgHeader out;
  EXPECT_TRUE(check_request(m, 0, &out).ok());
  EXPECT_EQ(check_request(m, 1, &out).fault, MsgFault::kBadFdCount);
  r.flags = IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS;
  std::memcpy(m.data() + sizeof(ctl::MsgHeader), &r, sizeof(r));
  EXPECT_EQ(expected_fds(ctl::Op::kReregMr, body), 1);
  EXPECT_TRUE(check_request(m, 1, &out).ok());
  EXPECT_EQ(check_request(m, 0, &out).fault, MsgFault::kBadFdCount);
}

}  // namespace
}  // namespace uroce::daemon
