// mr_fork: fork() and registered memory (issue 28, docs/shm.md "fork"),
// between two uroce devices of one daemon (verbs_mr_fork, through
// uroce-run). DEV_B is the parent's device: it registers a 64 KiB heap
// buffer, writes P, forks; the child writes Q into its copy and exits; the
// parent must still read P, every byte. Checked with the buffer registered
// at the fork and after its deregistration, and then that the parent's
// registration survived the child: a WRITE from DEV_A lands where the
// parent reads it and a READ from DEV_A returns the parent's bytes.
//
// MODE says what libibverbs' fork support should be:
//   plain      nothing asked (IBV_FORK_DISABLED)
//   fork_init  the program calls ibv_fork_init() first
//   env        the caller set RDMAV_FORK_SAFE or IBV_FORK_SAFE
// With fork support on, a registered range is MADV_DONTFORK as under rxe:
// the child has no mapping there (a store faults), and the buffer is
// page-aligned so that no heap chunk of the child's shares those pages.
// Without it, the child's copy is its own (copy-on-write) and the child
// also shows what it may do with verbs: its inherited context answers EIO,
// a device it opens itself registers its copy.
// Prints one line per check; exits 0 only when every check passed.
// `mr_fork time DEV` prints what registration and fork cost (time_costs).
//
//   mr_fork DEV_A DEV_B GID_INDEX MODE
//   mr_fork time DEV
#include <infiniband/verbs.h>

#include <setjmp.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "probe.h"
#include "rc_connect.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

using probe::die;
using probe::failures;
using probe::report;

constexpr std::size_t kLen = 64 * 1024;
constexpr std::uint8_t kP = 'P';
constexpr std::uint8_t kQ = 'Q';
constexpr int kMrWrite = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

std::size_t count_of(const std::uint8_t* p, std::size_t n, std::uint8_t v) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; ++i) c += p[i] == v ? 1 : 0;
  return c;
}

void fill(std::uint8_t* p, std::size_t n, unsigned salt) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>((i * 131u + salt * 7u) >> 1);
}

bool same(const std::uint8_t* p, std::size_t n, unsigned salt) {
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != static_cast<std::uint8_t>((i * 131u + salt * 7u) >> 1)) return false;
  }
  return true;
}

struct Side {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_gid gid{};
};

int g_gid_index = 1;

// The device called NAME in the forked child, which must _exit with its
// own code (probe::open_device would exit through die): nullptr when absent.
ibv_context* open_by_name(const char* name) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) return nullptr;
  ibv_context* ctx = nullptr;
  for (int i = 0; i < n; ++i) {
    if (std::strcmp(ibv_get_device_name(list[i]), name) == 0) ctx = ibv_open_device(list[i]);
  }
  ibv_free_device_list(list);
  return ctx;
}

Side open_side(const char* name) {
  Side s;
  s.ctx = probe::open_device(name);
  s.pd = ibv_alloc_pd(s.ctx);
  s.cq = ibv_create_cq(s.ctx, 64, nullptr, nullptr, 0);
  if (s.pd == nullptr || s.cq == nullptr) die("pd/cq");
  if (ibv_query_gid(s.ctx, 1, g_gid_index, &s.gid) != 0) die("ibv_query_gid");
  ibv_qp_init_attr ia{};
  ia.send_cq = s.cq;
  ia.recv_cq = s.cq;
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = 16;
  ia.cap.max_recv_wr = 16;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  s.qp = ibv_create_qp(s.pd, &ia);
  if (s.qp == nullptr) die("ibv_create_qp");
  return s;
}

void connect_qp(Side* s, const Side& peer) {
  const char* step = nullptr;
  if (uroce_it::rc_connect(s->qp,
                           {peer.qp->qp_num, peer.gid, g_gid_index, IBV_MTU_4096,
                            IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 16},
                           &step) != 0)
    die(step);
}

ibv_wc_status rdma(Side* s, ibv_wr_opcode op, ibv_mr* local, std::uint64_t raddr,
                   std::uint32_t rkey) {
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(local->addr), static_cast<std::uint32_t>(kLen),
              local->lkey};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = op;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(s->qp, &wr, &bad) != 0) die("ibv_post_send");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    ibv_wc wc{};
    const int got = ibv_poll_cq(s->cq, 1, &wc);
    if (got < 0) die("ibv_poll_cq");
    if (got == 1) return wc.status;
    if (std::chrono::steady_clock::now() > until) return IBV_WC_GENERAL_ERR;
  }
}

// The VmFlags line of smaps for the mapping holding `p`.
std::string vm_flags(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in = false;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(' ') > 8) {
      in = lo <= a && a < hi;
    } else if (in && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return {};
}

sigjmp_buf g_fault;
void on_fault(int) { siglongjmp(g_fault, 1); }

// Child exit codes.
enum : int {
  kOk = 0,
  kCopyNotP = 10,     // the child's copy did not hold the parent's bytes
  kQNotKept = 11,     // the child's own stores did not stick
  kInheritedOk = 12,  // a verb on the inherited context did not fail with EIO
  kOwnDevice = 13,    // a device of its own could not register the copy
  kMapped = 14,       // fork support on: the child can store into the range
};

// The child: with fork support on, the range must be absent (a store
// faults); otherwise it checks its copy, writes Q, and uses verbs.
[[noreturn]] void child(std::uint8_t* buf, bool dontfork, ibv_context* inherited, const char* dev,
                        bool registered) {
  if (dontfork && registered) {
    struct sigaction sa {};
    sa.sa_handler = on_fault;
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
    if (sigsetjmp(g_fault, 1) == 0) {
      *static_cast<volatile std::uint8_t*>(buf + kLen / 2) = kQ;
      _exit(kMapped);
    }
    _exit(kOk);
  }
  if (count_of(buf, kLen, kP) != kLen) _exit(kCopyNotP);
  std::memset(buf, kQ, kLen);
  if (count_of(buf, kLen, kQ) != kLen) _exit(kQNotKept);
  if (dontfork) _exit(kOk);  // its heap neighbours may be unmapped: no more
  // The parent's context is the parent's: it answers EIO.
  errno = 0;
  ibv_pd* pd = ibv_alloc_pd(inherited);
  if (pd != nullptr || errno != EIO) _exit(kInheritedOk);
  // A context of its own (its own daemon connection) registers its copy.
  ibv_context* own = open_by_name(dev);
  ibv_pd* opd = own != nullptr ? ibv_alloc_pd(own) : nullptr;
  ibv_mr* mr = opd != nullptr ? ibv_reg_mr(opd, buf, kLen, kMrWrite) : nullptr;
  if (mr == nullptr || ibv_dereg_mr(mr) != 0 || count_of(buf, kLen, kQ) != kLen) _exit(kOwnDevice);
  ibv_dealloc_pd(opd);
  ibv_close_device(own);
  _exit(kOk);
}

// Parent: P, fork, the child writes Q; true when the parent reads only P.
void fork_check(const std::string& what, std::uint8_t* buf, bool dontfork, bool registered,
                Side* owner, const char* dev) {
  std::memset(buf, kP, kLen);
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) die("fork");
  if (pid == 0) child(buf, dontfork, owner->ctx, dev, registered);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) die("waitpid");
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  report(code == kOk, what + ": child exit " + std::to_string(code));
  const std::size_t p = count_of(buf, kLen, kP);
  report(p == kLen,
         what + ": parent reads " + std::to_string(p) + " of " + std::to_string(kLen) + " bytes P");
}

double us_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
}

// `mr_fork time DEV`: what registration costs (docs/shm.md, "fork"):
// median microseconds of ibv_reg_mr and ibv_dereg_mr of 9 fresh heap
// buffers (each freed after its deregistration), then of one buffer 9
// times, at 64 KiB and 64 MiB, and of fork()
// (to the child's exit) with 64 MiB registered. Figures only, no verdict.
int time_costs(const char* dev) {
  ibv_context* ctx = probe::open_device(dev);
  ibv_pd* pd = ibv_alloc_pd(ctx);
  if (pd == nullptr) die("ibv_alloc_pd");
  auto median = [](double* v, int n) {
    std::sort(v, v + n);
    return v[n / 2];
  };
  for (const std::size_t len : {std::size_t{64} << 10, std::size_t{64} << 20}) {
    constexpr int kRounds = 9;
    double reg_fresh[kRounds], dereg_fresh[kRounds], reg_again[kRounds], dereg_again[kRounds];
    auto* again = static_cast<std::uint8_t*>(std::malloc(len));
    std::memset(again, 1, len);
    for (int i = 0; i < kRounds; ++i) {
      auto* fresh = static_cast<std::uint8_t*>(std::malloc(len));
      std::memset(fresh, 2, len);
      auto t = std::chrono::steady_clock::now();
      ibv_mr* mr = ibv_reg_mr(pd, fresh, len, kMrWrite);
      reg_fresh[i] = us_since(t);
      if (mr == nullptr) die("ibv_reg_mr");
      t = std::chrono::steady_clock::now();
      if (ibv_dereg_mr(mr) != 0) die("ibv_dereg_mr");
      dereg_fresh[i] = us_since(t);
      std::free(fresh);
    }
    for (int i = 0; i < kRounds; ++i) {
      auto t = std::chrono::steady_clock::now();
      ibv_mr* mr = ibv_reg_mr(pd, again, len, kMrWrite);
      reg_again[i] = us_since(t);
      if (mr == nullptr) die("ibv_reg_mr");
      t = std::chrono::steady_clock::now();
      if (ibv_dereg_mr(mr) != 0) die("ibv_dereg_mr");
      dereg_again[i] = us_since(t);
    }
    std::printf(
        "%zu KiB: reg %.0f us, dereg %.0f us (fresh buffer); reg %.0f us, dereg %.0f us "
        "(one buffer 9 times); median of %d\n",
        len >> 10, median(reg_fresh, kRounds), median(dereg_fresh, kRounds),
        median(reg_again, kRounds), median(dereg_again, kRounds), kRounds);
    std::free(again);
  }
  const std::size_t big = std::size_t{64} << 20;
  auto* buf = static_cast<std::uint8_t*>(std::malloc(big));
  std::memset(buf, 3, big);
  double with[9], without[9];
  for (int pass = 0; pass < 2; ++pass) {
    ibv_mr* mr = pass == 1 ? ibv_reg_mr(pd, buf, big, kMrWrite) : nullptr;
    for (double& v : pass == 1 ? with : without) {
      const auto t = std::chrono::steady_clock::now();
      const pid_t pid = fork();
      if (pid == 0) _exit(0);
      waitpid(pid, nullptr, 0);
      v = us_since(t);
    }
    if (mr != nullptr) ibv_dereg_mr(mr);
  }
  std::printf(
      "fork to the child's exit: %.0f us with 64 MiB registered, %.0f us without; "
      "median of 9\n",
      median(with, 9), median(without, 9));
  std::free(buf);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "time") == 0) return time_costs(argv[2]);
  if (argc != 5) {
    std::fprintf(stderr,
                 "usage: mr_fork DEV_A DEV_B GID_INDEX plain|fork_init|env | mr_fork time DEV\n");
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  g_gid_index = std::atoi(argv[3]);
  const std::string mode = argv[4];
  if (mode == "fork_init") report(ibv_fork_init() == 0, "ibv_fork_init() returns 0");
  Side peer = open_side(argv[1]);
  // Asked after the first device list: libibverbs reads RDMAV_FORK_SAFE
  // and IBV_FORK_SAFE then, not when it is loaded.
  const ibv_fork_status fs = ibv_is_fork_initialized();
  const bool dontfork = fs == IBV_FORK_ENABLED;
  report(mode == "plain" ? fs == IBV_FORK_DISABLED : dontfork,
         "ibv_is_fork_initialized() = " + std::to_string(fs) + " in mode " + mode);

  Side owner = open_side(argv[2]);
  connect_qp(&peer, owner);
  connect_qp(&owner, peer);
  auto* pbuf = static_cast<std::uint8_t*>(std::malloc(kLen));
  ibv_mr* pmr = ibv_reg_mr(peer.pd, pbuf, kLen, kMrWrite);
  if (pmr == nullptr) die("ibv_reg_mr peer");

  // The parent's 64 KiB heap buffer; whole pages of its own under fork
  // support (MADV_DONTFORK takes whole pages from the child).
  auto* buf =
      static_cast<std::uint8_t*>(dontfork ? std::aligned_alloc(4096, kLen) : std::malloc(kLen));
  ibv_mr* mr = ibv_reg_mr(owner.pd, buf, kLen, kMrWrite);
  if (mr == nullptr) die("ibv_reg_mr");
  const std::string flags = vm_flags(buf + kLen / 2);
  report((flags.find(" dc") != std::string::npos) == dontfork,
         std::string("registered range ") + (dontfork ? "is" : "is not") + " MADV_DONTFORK (" +
             flags + ")");

  fork_check(mode + ", registered", buf, dontfork, true, &owner, argv[2]);
  // The parent's registration is intact: the peer WRITEs into it...
  fill(pbuf, kLen, 3);
  const ibv_wc_status w =
      rdma(&peer, IBV_WR_RDMA_WRITE, pmr, reinterpret_cast<std::uintptr_t>(buf), mr->rkey);
  report(w == IBV_WC_SUCCESS && same(buf, kLen, 3),
         mode + ", after the fork: a WRITE from the peer lands in the parent's buffer (status " +
             std::to_string(w) + ")");
  // ... and READs the parent's own stores out of it.
  fill(buf, kLen, 5);
  std::memset(pbuf, 0, kLen);
  const ibv_wc_status r =
      rdma(&peer, IBV_WR_RDMA_READ, pmr, reinterpret_cast<std::uintptr_t>(buf), mr->rkey);
  report(r == IBV_WC_SUCCESS && same(pbuf, kLen, 5),
         mode + ", after the fork: a READ from the peer returns the parent's bytes (status " +
             std::to_string(r) + ")");
  // A second fork with the registration still live: the same.
  fork_check(mode + ", registered, second fork", buf, dontfork, true, &owner, argv[2]);

  if (ibv_dereg_mr(mr) != 0) die("ibv_dereg_mr");
  fork_check(mode + ", deregistered before the fork", buf, dontfork, false, &owner, argv[2]);

  // A buffer registered and deregistered before it was ever written.
  auto* other =
      static_cast<std::uint8_t*>(dontfork ? std::aligned_alloc(4096, kLen) : std::malloc(kLen));
  ibv_mr* omr = ibv_reg_mr(owner.pd, other, kLen, kMrWrite);
  if (omr == nullptr || ibv_dereg_mr(omr) != 0) die("ibv_reg_mr/ibv_dereg_mr");
  fork_check(mode + ", second buffer deregistered before the fork", other, dontfork, false, &owner,
             argv[2]);

  std::printf("mr_fork: %s\n", failures == 0 ? "all passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}
