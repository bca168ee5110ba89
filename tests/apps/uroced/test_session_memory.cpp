// ClientSession's PD, MR and completion-channel handlers (session_memory.cpp).
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <optional>

#include "tests/apps/uroced/fake_device.h"
#include "tests/apps/uroced/session_test_support.h"

namespace uroce::daemon {
namespace {

// max_pd is the device's: every client's PDs count against it (as rxe's
// pool), and a PD goes back to it when freed or when its client leaves.
TEST_F(ClientSessionTest, AllocPd_CountedForTheDeviceAcrossClients) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  std::optional<RawClient> c(std::in_place, d_.socket_path());
  ASSERT_EQ(c->hello("uroce0").status, 0);
  const std::uint32_t pd1 = a_.alloc_pd();
  ASSERT_NE(pd1, 0u);
  ASSERT_NE(a_.alloc_pd(), 0u);
  ASSERT_NE(c->alloc_pd(), 0u);
  ASSERT_NE(b_.alloc_pd(), 0u);  // uroce1's own pool
  EXPECT_EQ(d_.device(0).pds(), 3u);
  EXPECT_EQ(d_.device(1).pds(), 1u);
  ctl::DeallocPdReq dr{};
  dr.pd_handle = pd1;
  ASSERT_EQ(a_.call(Op::kDeallocPd, dr).status, 0);
  EXPECT_EQ(d_.device(0).pds(), 2u);
  EXPECT_EQ(a_.call(Op::kDeallocPd, dr).status, ENOENT);
  EXPECT_EQ(d_.device(0).pds(), 2u);
  c.reset();  // the client leaves: its session gives its PD back
  for (int i = 0; i < 2000 && d_.device(0).pds() != 1u; ++i) usleep(1000);
  EXPECT_EQ(d_.device(0).pds(), 1u);
}

TEST(DevicePds, TakePd_RefusesPastTheMaximum) {
  testing::FakeDevice d("uroce0", 9000);
  EXPECT_TRUE(d.take_pd(2));
  EXPECT_TRUE(d.take_pd(2));
  EXPECT_FALSE(d.take_pd(2));
  EXPECT_EQ(d.pds(), 2u);
  d.give_pd();
  EXPECT_TRUE(d.take_pd(2));
  EXPECT_EQ(d.pds(), 2u);
}

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

// What a forked child's request on the connection it inherited gets, as the
// exit status of the child (the reply's status, 255 when none came).
template <class Setup>
int status_from_child(RawClient& c, const ctl::RegMrReq& r, Setup setup) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (!setup()) _exit(254);
    const Reply rep = c.call(Op::kRegMr, r);
    _exit(rep.received && !rep.closed ? rep.status : 255);
  }
  int st = 0;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

TEST_F(ClientSessionTest, RegMr_ProcessMapping_MapsTheSendersMemory) {
  if (geteuid() != 0) GTEST_SKIP() << "the daemon opens /proc/PID/map_files (root)";
  // The connection is the parent's (SO_PEERCRED names it); a child that
  // inherited it registers its own memory, never the parent's at the same
  // address (which is what an exec'd parent image would map there).
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  auto* at = static_cast<std::uint8_t*>(
      mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(at, MAP_FAILED);
  ctl::RegMrReq r{};
  r.pd_handle = a_.alloc_pd();
  r.access = IBV_ACCESS_LOCAL_WRITE;
  r.addr = reinterpret_cast<std::uintptr_t>(at);
  r.iova = r.addr;
  r.length = page;
  r.source = ctl::MrSource::kProcessMapping;
  // Here, the parent's page is private: no shared object to register.
  EXPECT_EQ(a_.call(Op::kRegMr, r).status, EINVAL);
  // The child maps a shared page there: its request succeeds.
  EXPECT_EQ(status_from_child(a_, r,
                              [&] {
                                return mmap(at, page, PROT_READ | PROT_WRITE,
                                            MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == at;
                              }),
            0);
  // The other way round: the parent's page shared, the child's private.
  ASSERT_EQ(mmap(at, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
            at);
  EXPECT_EQ(a_.call(Op::kRegMr, r).status, 0);
  EXPECT_EQ(status_from_child(a_, r,
                              [&] {
                                return mmap(at, page, PROT_READ | PROT_WRITE,
                                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == at;
                              }),
            EINVAL);
  munmap(at, page);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, RegMr_ProcessMapping_OnlyTheUsersDumpableProcesses) {
  if (geteuid() != 0) GTEST_SKIP() << "changes user ids (root)";
  // A connection of user nobody (its daemon directory opened to it), held
  // by a process that can become root again (saved uid 0), as a process
  // in the middle of a set-user-ID exec would be.
  ASSERT_EQ(chmod(d_.dir().c_str(), 0711), 0);
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  auto* shared = static_cast<std::uint8_t*>(
      mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(shared, MAP_FAILED);
  int result[2];
  ASSERT_EQ(pipe(result), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    constexpr uid_t kNobody = 65534;
    int out[3] = {-1, -1, -1};
    if (setresgid(kNobody, kNobody, 0) != 0 || setresuid(kNobody, kNobody, 0) != 0 ||
        prctl(PR_SET_DUMPABLE, 1) != 0) {
      _exit(2);
    }
    RawClient c(d_.socket_path());
    if (!c.connected() || c.hello("uroce0").status != 0) _exit(3);
    ctl::RegMrReq r{};
    r.pd_handle = c.alloc_pd();
    r.access = IBV_ACCESS_LOCAL_WRITE;
    r.addr = reinterpret_cast<std::uintptr_t>(shared);
    r.iova = r.addr;
    r.length = page;
    r.source = ctl::MrSource::kProcessMapping;
    out[0] = c.call(Op::kRegMr, r).status;  // nobody's own, dumpable
    (void)prctl(PR_SET_DUMPABLE, 0);
    out[1] = c.call(Op::kRegMr, r).status;  // not dumpable
    if (setresuid(0, 0, 0) != 0) _exit(4);
    out[2] = c.call(Op::kRegMr, r).status;  // root's now
    _exit(write(result[1], out, sizeof(out)) == sizeof(out) ? 0 : 5);
  }
  close(result[1]);
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st));
  ASSERT_EQ(WEXITSTATUS(st), 0);
  int got[3] = {-1, -1, -1};
  ASSERT_EQ(read(result[0], got, sizeof(got)), static_cast<ssize_t>(sizeof(got)));
  close(result[0]);
  EXPECT_EQ(got[0], 0);
  EXPECT_EQ(got[1], EPERM);
  EXPECT_EQ(got[2], EPERM);
  munmap(shared, page);
  expect_still_served(b_);
}

}  // namespace
}  // namespace uroce::daemon
