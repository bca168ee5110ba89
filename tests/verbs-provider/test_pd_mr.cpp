#include "verbs-provider/pd_mr.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "datapath/shm/proc_maps.h"
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

// The inode of the object mapped at `p` (0 when private).
std::uint64_t inode_at(const void* p) {
  char* text = nullptr;
  std::size_t len = 0;
  if (shm::read_maps(0, &text, &len) != 0) return 0;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::uint64_t inode = 0;
  shm::for_each_line({text, len}, a, a + 1, [&](const shm::MapsLine& m) {
    inode = m.shared ? m.inode : 0;
    return true;
  });
  std::free(text);
  return inode;
}

TEST(RegMr_Remap, MovesThePagesAndSendsNoFd) {
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
  {
    std::lock_guard<std::mutex> g(fc.daemon.mu);
    req = fc.daemon.mrs.at(mr->handle);
    EXPECT_EQ(fc.daemon.mr_fd, -1);
  }
  EXPECT_EQ(req.pd_handle, pd->handle);
  EXPECT_EQ(req.access, static_cast<std::uint32_t>(access));
  EXPECT_EQ(req.addr, reinterpret_cast<std::uintptr_t>(buf.p + 10));
  EXPECT_EQ(req.length, 2 * kPage);
  EXPECT_EQ(req.iova, 0x7000u);
  EXPECT_EQ(req.source, ctl::MrSource::kProcessMapping);
  EXPECT_EQ(req.map_len, 0u);
  EXPECT_EQ(req.map_offset, 0u);
  // All three pages on one shared object the daemon can map itself.
  EXPECT_NE(inode_at(buf.p), 0u);
  EXPECT_EQ(inode_at(buf.p), inode_at(buf.p + 2 * kPage));
  EXPECT_EQ(buf.p[10 + kPage], static_cast<char>(10 + kPage));
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
  EXPECT_EQ(fc.st()->memfds.referenced(), 0u);
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
  EXPECT_EQ(fc.st()->memfds.referenced(), 0u);
  EXPECT_EQ(dereg_mr(reinterpret_cast<verbs_abi::verbs_mr*>(mr)), 0);
  EXPECT_EQ(dealloc_pd(pd), 0);
  munmap(shared, kPage);
}

TEST(DeregMr_Backing, TwoMrsOnTheSamePagesShareTheirMemfd) {
  FakeContext fc;
  ibv_pd* pd = fc.alloc_pd();
  Anon buf(2);
  ibv_mr* a = reg_mr(pd, buf.p, buf.len, 0, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(a, nullptr);
  const std::uint64_t inode = inode_at(buf.p);
  ibv_mr* b = reg_mr(pd, buf.p + 100, 50, 0, 0);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(inode_at(buf.p), inode);  // nothing moved under the first
  EXPECT_EQ(dereg_mr(reinterpret_cast<verbs_abi::verbs_mr*>(a)), 0);
  EXPECT_EQ(buf.p[150], static_cast<char>(150));
  EXPECT_EQ(dereg_mr(reinterpret_cast<verbs_abi::verbs_mr*>(b)), 0);
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
  ASSERT_NE(a, nullptr);
  const std::uint64_t inode = inode_at(buf.p);
  ibv_mr* b = reg_mr(pd1, buf.p + 100, 200, 0, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(inode_at(buf.p), inode);  // both daemons map the same file
  EXPECT_EQ(dereg_mr(reinterpret_cast<verbs_abi::verbs_mr*>(a)), 0);
  EXPECT_EQ(dereg_mr(reinterpret_cast<verbs_abi::verbs_mr*>(b)), 0);
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
  EXPECT_EQ(fds_seen, 0);
  EXPECT_EQ(seen.source, ctl::MrSource::kProcessMapping);
  EXPECT_EQ(seen.addr, reinterpret_cast<std::uintptr_t>(second.p + 8));
  EXPECT_EQ(seen.length, kPage);
  EXPECT_EQ(seen.pd_handle, pd->handle);
  EXPECT_EQ(mr->lkey, 0x300 + mr->handle);
  EXPECT_NE(inode_at(second.p), 0u);

  ASSERT_EQ(rereg_mr(vmr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE),
            0);
  EXPECT_EQ(fds_seen, 0);
  EXPECT_EQ(vmr->access, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE);
  EXPECT_EQ(seen.access,
            static_cast<std::uint32_t>(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE));

  // A refused translation keeps the old registration.
  fc.daemon.refuse = {ctl::Op::kReregMr};
  Anon third(1);
  EXPECT_EQ(rereg_mr(vmr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, third.p, 64, 0), EINVAL);
  fc.daemon.refuse.clear();
  EXPECT_EQ(dereg_mr(vmr), 0);
  EXPECT_EQ(dealloc_pd(pd), 0);
}

}  // namespace
}  // namespace uroce::provider
