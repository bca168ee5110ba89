// ClientSession's PD, MR and completion-channel handlers (session_memory.cpp).
#include "tests/apps/uroced/session_test_support.h"

namespace uroce::daemon {
namespace {

TEST_F(ClientSessionTest, ReregMr_AccessAndTranslation) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  const std::uint32_t pd = a_.alloc_pd();
  auto sealed_memfd = [] {
    const int fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    EXPECT_EQ(ftruncate(fd, 8192), 0);
    EXPECT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
    return fd;
  };
  ctl::RegMrReq r{};
  r.pd_handle = pd;
  r.access = IBV_ACCESS_LOCAL_WRITE;
  r.length = 100;
  r.map_len = 8192;
  r.map_offset = 16;
  int fd = sealed_memfd();
  Reply reg = a_.call(Op::kRegMr, r, {fd});
  close(fd);
  ASSERT_EQ(reg.status, 0);
  const auto mr = reg.as<ctl::RegMrRep>();
  ctl::ReregMrReq rr{};
  rr.mr_handle = mr.mr_handle;
  rr.flags = IBV_REREG_MR_CHANGE_ACCESS;
  rr.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
  Reply rep = a_.call(Op::kReregMr, rr);
  ASSERT_EQ(rep.status, 0);
  EXPECT_EQ(rep.as<ctl::ReregMrRep>().lkey, mr.lkey);
  rr.flags = 0;
  EXPECT_EQ(a_.call(Op::kReregMr, rr).status, EINVAL);
  rr.flags = 1u << 5;
  EXPECT_EQ(a_.call(Op::kReregMr, rr).status, EINVAL);
  rr.flags = IBV_REREG_MR_CHANGE_PD;
  rr.pd_handle = 555555;
  EXPECT_EQ(a_.call(Op::kReregMr, rr).status, ENOENT);
  rr.flags = IBV_REREG_MR_CHANGE_TRANSLATION;
  rr.length = 200;
  rr.map_len = 8192;
  rr.map_offset = 0;
  fd = sealed_memfd();
  rep = a_.call(Op::kReregMr, rr, {fd});
  close(fd);
  EXPECT_EQ(rep.status, 0);
  EXPECT_EQ(a_.call(Op::kDeregMr, ctl::DeregMrReq{mr.mr_handle, 0}).status, 0);
}

TEST_F(ClientSessionTest, CompChannel_InUseIsBusy) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  Reply ch = a_.call(Op::kCreateCompChannel, ctl::CreateCompChannelReq{}, {p[1]});
  close(p[1]);
  ASSERT_EQ(ch.status, 0);
  const std::uint32_t h = ch.as<ctl::CreateCompChannelRep>().channel_handle;
  ctl::CreateCqReq r{};
  r.cqe = 8;
  r.channel_handle = h;
  Reply cq = a_.call(Op::kCreateCq, r);
  ASSERT_EQ(cq.status, 0);
  EXPECT_EQ(a_.call(Op::kDestroyCompChannel, ctl::DestroyCompChannelReq{h, 0}).status, EBUSY);
  const std::uint32_t cqh = cq.as<ctl::CreateCqRep>().cq_handle;
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{cqh, 0}).status, 0);
  EXPECT_EQ(a_.call(Op::kDestroyCompChannel, ctl::DestroyCompChannelReq{h, 0}).status, 0);
  // The daemon held the only write end: the channel reads end of file now.
  EXPECT_TRUE(writer_gone(p[0]));
  close(p[0]);
}

TEST_F(ClientSessionTest, RegMr_BadMappings_Einval) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  const std::uint32_t pd = a_.alloc_pd();
  ctl::RegMrReq r{};
  r.pd_handle = pd;
  r.access = IBV_ACCESS_LOCAL_WRITE;
  r.length = 4096;
  r.map_len = 4096;
  r.map_offset = 1;  // offset + length past the mapping
  const int sealed = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_EQ(ftruncate(sealed, 8192), 0);
  ASSERT_EQ(fcntl(sealed, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
  EXPECT_EQ(a_.call(Op::kRegMr, r, {sealed}).status, EINVAL);
  r.map_offset = 0;
  r.access = IBV_ACCESS_REMOTE_WRITE;  // without LOCAL_WRITE
  EXPECT_EQ(a_.call(Op::kRegMr, r, {sealed}).status, EINVAL);
  r.access = IBV_ACCESS_LOCAL_WRITE;
  r.map_len = 4000;  // not whole pages
  EXPECT_EQ(a_.call(Op::kRegMr, r, {sealed}).status, EINVAL);
  r.map_len = 4096;
  // A memfd that can still shrink: refused (SIGBUS protection).
  const int unsealed = memfd_create("u", MFD_CLOEXEC);
  ASSERT_EQ(ftruncate(unsealed, 4096), 0);
  EXPECT_EQ(a_.call(Op::kRegMr, r, {unsealed}).status, EINVAL);
  // Not a memory file at all.
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  EXPECT_EQ(a_.call(Op::kRegMr, r, {p[0]}).status, EINVAL);
  // Another client's PD.
  r.pd_handle = b_.alloc_pd();
  EXPECT_EQ(a_.call(Op::kRegMr, r, {sealed}).status, ENOENT);
  r.pd_handle = pd;
  const Reply ok = a_.call(Op::kRegMr, r, {sealed});
  ASSERT_EQ(ok.status, 0);
  const auto mr = ok.as<ctl::RegMrRep>();
  EXPECT_NE(mr.lkey, 0u);
  EXPECT_EQ(mr.lkey, mr.rkey);
  EXPECT_EQ(a_.call(Op::kDeallocPd, ctl::DeallocPdReq{pd, 0}).status, EBUSY);
  EXPECT_EQ(a_.call(Op::kDeregMr, ctl::DeregMrReq{mr.mr_handle, 0}).status, 0);
  EXPECT_EQ(a_.call(Op::kDeallocPd, ctl::DeallocPdReq{pd, 0}).status, 0);
  close(sealed);
  close(unsealed);
  close(p[0]);
  close(p[1]);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, RegMr_ProcessMapping_SharedObjectAndErrors) {
  if (geteuid() != 0) GTEST_SKIP() << "the daemon opens /proc/PID/map_files (root)";
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  const std::uint32_t pd = a_.alloc_pd();
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  auto* shared = static_cast<std::uint8_t*>(
      mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(shared, MAP_FAILED);
  ctl::RegMrReq r{};
  r.pd_handle = pd;
  r.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  r.addr = reinterpret_cast<std::uintptr_t>(shared) + 8;
  r.iova = r.addr;
  r.length = page;
  r.source = ctl::MrSource::kProcessMapping;
  // No fd goes with it.
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  EXPECT_EQ(a_.call(Op::kRegMr, r, {p[0]}).status, EBADMSG);
  r.map_len = page;  // only a memfd names a mapping length
  EXPECT_EQ(a_.call(Op::kRegMr, r).status, EINVAL);
  r.map_len = 0;
  const Reply ok = a_.call(Op::kRegMr, r);
  ASSERT_EQ(ok.status, 0);
  // Private memory is no shared object; read-only pages refuse writes.
  auto* priv = static_cast<std::uint8_t*>(
      mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(priv, MAP_FAILED);
  ctl::RegMrReq bad = r;
  bad.addr = reinterpret_cast<std::uintptr_t>(priv);
  EXPECT_EQ(a_.call(Op::kRegMr, bad).status, EINVAL);
  auto* ro =
      static_cast<std::uint8_t*>(mmap(nullptr, page, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(ro, MAP_FAILED);
  bad.addr = reinterpret_cast<std::uintptr_t>(ro);
  EXPECT_EQ(a_.call(Op::kRegMr, bad).status, EFAULT);
  bad.access = IBV_ACCESS_REMOTE_READ;
  const Reply ro_ok = a_.call(Op::kRegMr, bad);
  ASSERT_EQ(ro_ok.status, 0);
  // Read-only stays read-only: no write access by rereg either.
  ctl::ReregMrReq rr{};
  rr.mr_handle = ro_ok.as<ctl::RegMrRep>().mr_handle;
  rr.flags = IBV_REREG_MR_CHANGE_ACCESS;
  rr.access = IBV_ACCESS_LOCAL_WRITE;
  EXPECT_EQ(a_.call(Op::kReregMr, rr).status, EFAULT);
  EXPECT_EQ(a_.call(Op::kDeregMr, ctl::DeregMrReq{rr.mr_handle, 0}).status, 0);
  EXPECT_EQ(a_.call(Op::kDeregMr, ctl::DeregMrReq{ok.as<ctl::RegMrRep>().mr_handle, 0}).status, 0);
  close(p[0]);
  close(p[1]);
  munmap(shared, 2 * page);
  munmap(priv, page);
  munmap(ro, page);
}

}  // namespace
}  // namespace uroce::daemon
