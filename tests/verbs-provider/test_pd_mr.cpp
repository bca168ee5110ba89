#include "verbs-provider/pd_mr.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/verbs-provider/fake_daemon.h"

namespace uroce::provider {
namespace {

using testing::FakeContext;

const std::size_t kPage = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

struct Anon {
  explicit Anon(std::size_t pages) : len(pages * kPage) {
    p = static_cast<char*>(
        mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    for (std::size_t i = 0; i < len; ++i) p[i] = static_cast<char>(i);
  }
  ~Anon() { munmap(p, len); }
  char* p;
  std::size_t len;
};

TEST(AllocPd_Handles, FromTheDaemonAndDeallocated) {
  FakeContext fc;
  ibv_pd* a = alloc_pd(fc.ctx());
  ibv_pd* b = alloc_pd(fc.ctx());
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->context, fc.ctx());
  EXPECT_NE(a->handle, b->handle);
  EXPECT_EQ(dealloc_pd(a), 0);
  EXPECT_EQ(fc.server().ops().back(), ctl::Op::kDeallocPd);
  fc.st()->ctl.mark_dead();
  EXPECT_EQ(dealloc_pd(b), 0);  // nothing left to free on a dead daemon
  errno = 0;
  EXPECT_EQ(alloc_pd(fc.ctx()), nullptr);
  EXPECT_EQ(errno, EIO);
}

TEST(RegMr_Remap, SendsTheMemfdWithOffsetsAndKeys) {
  FakeContext fc;
  ibv_pd* pd = fc.alloc_pd();
  Anon buf(3);
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  ibv_mr* mr = reg_mr(pd, buf.p + 10, 2 * kPage, 0x7000, access);
  ASSERT_NE(mr, nullptr) << strerror(errno);
  EXPECT_EQ(mr->context, fc.ctx());
  EXPECT_EQ(mr->pd, pd);
  EXPECT_EQ(mr->addr, buf.p + 10);
  EXPECT_EQ(mr->length, 2 * kPage);
  EXPECT_EQ(mr->lkey, 0x100 + mr->handle);
  EXPECT_EQ(mr->rkey, 0x200 + mr->handle);
  auto* vmr = reinterpret_cast<verbs_abi::verbs_mr*>(mr);
  EXPECT_EQ(vmr->mr_type, verbs_abi::verbs_mr_type::kMr);
  EXPECT_EQ(vmr->access, access);
  ctl::RegMrReq req;
  int daemon_fd;
  {
    std::lock_guard<std::mutex> g(fc.daemon.mu);
    req = fc.daemon.mrs.at(mr->handle);
    daemon_fd = fc.daemon.mr_fd;
  }
  EXPECT_EQ(req.pd_handle, pd->handle);
  EXPECT_EQ(req.access, static_cast<std::uint32_t>(access));
  EXPECT_EQ(req.addr, reinterpret_cast<std::uintptr_t>(buf.p + 10));
  EXPECT_EQ(req.length, 2 * kPage);
  EXPECT_EQ(req.iova, 0x7000u);
  EXPECT_EQ(req.map_len, 3 * kPage);
  EXPECT_EQ(req.map_offset, 10u);
  // Zero copy: the daemon's mapping and the application's bytes are one.
  auto* view = static_cast<char*>(
      mmap(nullptr, req.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, daemon_fd, 0));
  ASSERT_NE(view, MAP_FAILED);
  EXPECT_EQ(view[req.map_offset], buf.p[10]);
  view[req.map_offset + 5] = 'Z';  // an RDMA WRITE landing
  EXPECT_EQ(buf.p[15], 'Z');
  munmap(view, req.map_len);
  EXPECT_EQ(dereg_mr(vmr), 0);
  EXPECT_EQ(dealloc_pd(pd), 0);
}

TEST(RegMr_Errors, RefusalReleasesTheMemfdAndBadMemoryAsksNobody) {
  FakeContext fc;
  ibv_pd* pd = fc.alloc_pd();
  Anon buf(1);
  fc.daemon.refuse = {ctl::Op::kRegMr};
  errno = 0;
  EXPECT_EQ(reg_mr(pd, buf.p, 100, 0, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(fc.st()->memfds.entries(), 0u);
  fc.daemon.refuse.clear();

  const auto before = fc.server().ops().size();
  // Read-only pages and write access: EFAULT (as rxe), the daemon not asked.
  Anon ro(1);
  ASSERT_EQ(mprotect(ro.p, ro.len, PROT_READ), 0);
  EXPECT_EQ(reg_mr(pd, ro.p, 100, 0, IBV_ACCESS_LOCAL_WRITE), nullptr);
  EXPECT_EQ(errno, EFAULT);
  EXPECT_EQ(reg_mr(pd, buf.p, 0, 0, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  // The device reports no memory windows (max_mw 0).
  EXPECT_EQ(reg_mr(pd, buf.p, 100, 0, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  EXPECT_EQ(fc.server().ops().size(), before);

  fc.st()->ctl.mark_dead();
  EXPECT_EQ(reg_mr(pd, buf.p, 100, 0, 0), nullptr);
  EXPECT_EQ(errno, EIO);
  EXPECT_EQ(dealloc_pd(pd), 0);
}

TEST(RegMr_SharedObject, SendsTheSourceAndNoFd) {
  FakeContext fc;
  ibv_pd* pd = fc.alloc_pd();
  void* shared = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  ibv_mr* mr =
      reg_mr(pd, shared, 100, reinterpret_cast<std::uintptr_t>(shared), IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr) << strerror(errno);
  ctl::RegMrReq req;
  {
    std::lock_guard<std::mutex> g(fc.daemon.mu);
    req = fc.daemon.mrs.at(mr->handle);
    EXPECT_EQ(fc.daemon.mr_fd, -1);
  }
  EXPECT_EQ(req.source, ctl::MrSource::kProcessMapping);
  EXPECT_EQ(req.map_len, 0u);
  EXPECT_EQ(req.map_offset, 0u);
  EXPECT_EQ(fc.st()->memfds.entries(), 0u);
  EXPECT_EQ(dereg_mr(reinterpret_cast<verbs_abi::verbs_mr*>(mr)), 0);
  EXPECT_EQ(dealloc_pd(pd), 0);
  munmap(shared, kPage);
}

TEST(DeregMr_Backing, TwoMrsShareOneMemfdUntilBothAreGone) {
  FakeContext fc;
  ibv_pd* pd = fc.alloc_pd();
  Anon buf(2);
  ibv_mr* a = reg_mr(pd, buf.p, buf.len, 0, IBV_ACCESS_LOCAL_WRITE);
  ibv_mr* b = reg_mr(pd, buf.p + 100, 50, 0, 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(fc.st()->memfds.entries(), 1u);
  {
    std::lock_guard<std::mutex> g(fc.daemon.mu);
    EXPECT_EQ(fc.daemon.mrs.at(b->handle).map_offset, 100u);
  }
  EXPECT_EQ(dereg_mr(reinterpret_cast<verbs_abi::verbs_mr*>(a)), 0);
  EXPECT_EQ(fc.st()->memfds.entries(), 1u);
  EXPECT_EQ(dereg_mr(reinterpret_cast<verbs_abi::verbs_mr*>(b)), 0);
  EXPECT_EQ(fc.st()->memfds.entries(), 0u);
  EXPECT_EQ(dealloc_pd(pd), 0);
  std::lock_guard<std::mutex> g(fc.daemon.mu);
  EXPECT_TRUE(fc.daemon.mrs.empty());
}

TEST(RegMr_Remap, OneBufferOnTwoDevicesStaysOnOneMemfd) {
  FakeContext dev0, dev1;
  ibv_pd* pd0 = dev0.alloc_pd();
  ibv_pd* pd1 = dev1.alloc_pd();
  Anon buf(2);
  ibv_mr* a = reg_mr(pd0, buf.p, buf.len, 0, IBV_ACCESS_LOCAL_WRITE);
  ibv_mr* b = reg_mr(pd1, buf.p + 100, 200, 0, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(process_memfds().entries(), 1u);
  struct stat s0 {
  }, s1{};
  {
    std::lock_guard<std::mutex> g0(dev0.daemon.mu);
    std::lock_guard<std::mutex> g1(dev1.daemon.mu);
    ASSERT_EQ(fstat(dev0.daemon.mr_fd, &s0), 0);
    ASSERT_EQ(fstat(dev1.daemon.mr_fd, &s1), 0);
    EXPECT_EQ(dev1.daemon.mrs.at(b->handle).map_offset, 100u);
  }
  EXPECT_EQ(s0.st_ino, s1.st_ino);  // both daemons map the same file
  EXPECT_EQ(dereg_mr(reinterpret_cast<verbs_abi::verbs_mr*>(a)), 0);
  EXPECT_EQ(dereg_mr(reinterpret_cast<verbs_abi::verbs_mr*>(b)), 0);
  EXPECT_EQ(process_memfds().entries(), 0u);
  EXPECT_EQ(dealloc_pd(pd0), 0);
  EXPECT_EQ(dealloc_pd(pd1), 0);
}

TEST(ReregMr_Translation, NewBufferNewMemfdNewKeys) {
  FakeContext fc;
  ibv_pd* pd = fc.alloc_pd();
  Anon first(1), second(2);
  ibv_mr* mr = reg_mr(pd, first.p, 64, 0, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr);
  ctl::ReregMrReq seen{};
  int fds_seen = -1;
  fc.daemon.tweak = [&](const testing::Request& r, testing::Reply&) {
    if (r.op == ctl::Op::kReregMr) {
      seen = r.as<ctl::ReregMrReq>();
      fds_seen = static_cast<int>(r.fds.size());
    }
  };
  auto* vmr = reinterpret_cast<verbs_abi::verbs_mr*>(mr);
  ASSERT_EQ(rereg_mr(vmr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, second.p + 8, kPage, 0), 0);
  EXPECT_EQ(fds_seen, 1);
  EXPECT_EQ(seen.addr, reinterpret_cast<std::uintptr_t>(second.p + 8));
  EXPECT_EQ(seen.length, kPage);
  EXPECT_EQ(seen.map_len, 2 * kPage);
  EXPECT_EQ(seen.map_offset, 8u);
  EXPECT_EQ(seen.pd_handle, pd->handle);
  EXPECT_EQ(mr->lkey, 0x300 + mr->handle);
  EXPECT_EQ(fc.st()->memfds.entries(), 1u);  // the first buffer's memfd is released

  ASSERT_EQ(rereg_mr(vmr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE),
            0);
  EXPECT_EQ(fds_seen, 0);
  EXPECT_EQ(vmr->access, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE);
  EXPECT_EQ(seen.access,
            static_cast<std::uint32_t>(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE));

  // A refused translation keeps the old backing and releases the new one.
  fc.daemon.refuse = {ctl::Op::kReregMr};
  Anon third(1);
  EXPECT_EQ(rereg_mr(vmr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, third.p, 64, 0), EINVAL);
  EXPECT_EQ(fc.st()->memfds.entries(), 1u);
  fc.daemon.refuse.clear();
  EXPECT_EQ(dereg_mr(vmr), 0);
  EXPECT_EQ(fc.st()->memfds.entries(), 0u);
  EXPECT_EQ(dealloc_pd(pd), 0);
}

}  // namespace
}  // namespace uroce::provider
