// mr_kinds: ibv_reg_mr on every kind of memory an application can read,
// checked byte for byte between two uroce devices of one daemon (verbs_mr_kinds,
// run through uroce-run with uroce0 and uroce1 in this one process):
//   heap, anonymous private mmap, anonymous MAP_SHARED, a file MAP_PRIVATE,
//   a file MAP_SHARED in /tmp and in /dev/shm, the process's own memfd,
//   SysV shmget/shmat, SysV SHM_HUGETLB, the main thread's stack;
//   for each: a buffer of that kind on both devices, then RDMA WRITE out of
//   one into the other, RDMA READ back the other way, SEND/RECV, each
//   checked byte for byte; for shared kinds also through a second view of
//   the same object (pread of the file, a second shmat, a forked child for
//   anonymous shared memory), so the object stayed shared; then the
//   target's deregistration, after which a WRITE to its rkey must complete
//   with a remote access error.
//   Read-only memory (a PROT_READ private mapping, a file opened O_RDONLY
//   MAP_SHARED, a SysV segment attached SHM_RDONLY): registration with
//   local write gets EFAULT (rxe's answer); with remote read it serves as
//   the source of WRITE and SEND and as a READ target; a remote WRITE into
//   it completes with a remote access error.
// Then the bandwidth of 64 KiB WRITE and READ into buffers of the remap path
// (heap) and of the shared-object path (anonymous shared, /dev/shm file,
// SysV, SysV huge pages), in one run, and of the copy primitive a copy path
// would use (process_vm_writev) against memcpy.
// Prints one line per check and exits 0 only when every check passed.
//
// `mr_kinds quota DEV SIZE COUNT` registers anonymous shared buffers until
// refused (the quota check of mr_kinds.sh).
//
//   mr_kinds DEV_A DEV_B GID_INDEX
#include <fcntl.h>
#include <infiniband/verbs.h>

#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "probe.h"
#include "rc_connect.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using probe::die;
using probe::failures;
using probe::report;

void fill(std::uint8_t* p, std::size_t n, unsigned salt) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>((i * 131u + salt * 7u) >> 1);
}

bool same(const std::uint8_t* p, std::size_t n, unsigned salt) {
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != static_cast<std::uint8_t>((i * 131u + salt * 7u) >> 1)) return false;
  }
  return true;
}

constexpr int kMrWrite = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
constexpr int kMrRead = IBV_ACCESS_REMOTE_READ;

// One device's objects.
struct Side {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_gid gid{};
};

int g_gid_index = 1;

Side open_side(const char* name) {
  Side s;
  s.ctx = probe::open_device(name);
  s.pd = ibv_alloc_pd(s.ctx);
  s.cq = ibv_create_cq(s.ctx, 256, nullptr, nullptr, 0);
  if (s.pd == nullptr || s.cq == nullptr) die("pd/cq");
  if (ibv_query_gid(s.ctx, 1, g_gid_index, &s.gid) != 0) die("ibv_query_gid");
  return s;
}

void make_qp(Side* s) {
  ibv_qp_init_attr ia{};
  ia.send_cq = s->cq;
  ia.recv_cq = s->cq;
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = 64;
  ia.cap.max_recv_wr = 16;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  s->qp = ibv_create_qp(s->pd, &ia);
  if (s->qp == nullptr) die("ibv_create_qp");
}

void connect_qp(Side* s, const Side& peer) {
  const char* step = nullptr;
  if (uroce_it::rc_connect(s->qp,
                           {peer.qp->qp_num, peer.gid, g_gid_index, IBV_MTU_4096,
                            IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 16},
                           &step) != 0)
    die(step);
}

void new_pair(Side* a, Side* b) {
  for (Side* s : {a, b}) {
    if (s->qp != nullptr) ibv_destroy_qp(s->qp);
    make_qp(s);
  }
  connect_qp(a, *b);
  connect_qp(b, *a);
}

// Waits for `n` completions on `cq`; returns the status of the last bad one
// (IBV_WC_SUCCESS when all succeeded).
ibv_wc_status wait_cq(ibv_cq* cq, int n) {
  ibv_wc_status st = IBV_WC_SUCCESS;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (n > 0) {
    ibv_wc wc[16];
    const int got = ibv_poll_cq(cq, 16, wc);
    if (got < 0) die("ibv_poll_cq");
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) st = wc[i].status;
    }
    n -= got;
    if (got == 0 && std::chrono::steady_clock::now() > until) {
      std::fprintf(stderr, "mr_kinds: timed out waiting for %d completions\n", n);
      return IBV_WC_GENERAL_ERR;
    }
  }
  return st;
}

void post_rdma(Side* s, ibv_wr_opcode op, ibv_mr* local, void* laddr, std::size_t len,
               std::uint64_t raddr, std::uint32_t rkey) {
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(laddr), static_cast<std::uint32_t>(len),
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
}

ibv_wc_status rdma(Side* s, ibv_wr_opcode op, ibv_mr* local, void* laddr, std::size_t len,
                   std::uint64_t raddr, std::uint32_t rkey) {
  post_rdma(s, op, local, laddr, len, raddr, rkey);
  return wait_cq(s->cq, 1);
}

bool send_recv(Side* from, Side* to, ibv_mr* smr, void* sbuf, ibv_mr* rmr, void* rbuf,
               std::size_t len) {
  ibv_sge rs{reinterpret_cast<std::uintptr_t>(rbuf), static_cast<std::uint32_t>(len), rmr->lkey};
  ibv_recv_wr rw{};
  rw.sg_list = &rs;
  rw.num_sge = 1;
  ibv_recv_wr* rbad = nullptr;
  if (ibv_post_recv(to->qp, &rw, &rbad) != 0) die("ibv_post_recv");
  ibv_sge ss{reinterpret_cast<std::uintptr_t>(sbuf), static_cast<std::uint32_t>(len), smr->lkey};
  ibv_send_wr sw{};
  sw.sg_list = &ss;
  sw.num_sge = 1;
  sw.opcode = IBV_WR_SEND;
  sw.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* sbad = nullptr;
  if (ibv_post_send(from->qp, &sw, &sbad) != 0) die("ibv_post_send");
  return wait_cq(from->cq, 1) == IBV_WC_SUCCESS && wait_cq(to->cq, 1) == IBV_WC_SUCCESS;
}

// A buffer of one kind: where it is, how to see it a second way, how to let
// it go.
struct Buf {
  std::uint8_t* p = nullptr;
  std::size_t len = 0;
  // Reads the object's bytes through another view (empty when there is none).
  std::function<bool(std::vector<std::uint8_t>*)> second_view;
  std::function<void()> free;
};

constexpr std::size_t kLen = 256 * 1024;

std::string tmp_path(const char* dir, const char* tag) {
  return std::string(dir) + "/uroce-mr-kinds-" + std::to_string(getpid()) + "-" + tag;
}

Buf file_buf(const char* dir, const char* tag, int flags, bool rdonly, unsigned salt) {
  const std::string path = tmp_path(dir, tag);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || ::ftruncate(fd, kLen) != 0) die(path.c_str());
  std::vector<std::uint8_t> init(kLen);
  fill(init.data(), kLen, salt);
  if (::pwrite(fd, init.data(), kLen, 0) != static_cast<ssize_t>(kLen)) die("pwrite");
  if (rdonly) {
    ::close(fd);
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) die(path.c_str());
  }
  void* p = ::mmap(nullptr, kLen, PROT_READ | (rdonly ? 0 : PROT_WRITE), flags, fd, 0);
  if (p == MAP_FAILED) die("mmap file");
  Buf b;
  b.p = static_cast<std::uint8_t*>(p);
  b.len = kLen;
  if ((flags & MAP_SHARED) != 0) {
    b.second_view = [fd](std::vector<std::uint8_t>* out) {
      out->resize(kLen);
      return ::pread(fd, out->data(), kLen, 0) == static_cast<ssize_t>(kLen);
    };
  }
  b.free = [p, fd, path] {
    ::munmap(p, kLen);
    ::close(fd);
    ::unlink(path.c_str());
  };
  return b;
}

Buf mmap_buf(int flags) {
  void* p = ::mmap(nullptr, kLen, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED) die("mmap");
  Buf b;
  b.p = static_cast<std::uint8_t*>(p);
  b.len = kLen;
  if ((flags & MAP_SHARED) != 0) {
    // A child forked now shares the object; it sends back what it sees
    // when asked.
    int ask[2], ans[2];
    if (::pipe(ask) != 0 || ::pipe(ans) != 0) die("pipe");
    const pid_t child = ::fork();
    if (child < 0) die("fork");
    if (child == 0) {
      char c;
      while (::read(ask[0], &c, 1) == 1) {
        std::size_t done = 0;
        while (done < kLen) {
          const ssize_t w = ::write(ans[1], static_cast<std::uint8_t*>(p) + done, kLen - done);
          if (w <= 0) _exit(1);
          done += static_cast<std::size_t>(w);
        }
      }
      _exit(0);
    }
    ::close(ask[0]);
    ::close(ans[1]);
    b.second_view = [w = ask[1], r = ans[0]](std::vector<std::uint8_t>* out) {
      out->assign(kLen, 0);
      if (::write(w, "?", 1) != 1) return false;
      std::size_t done = 0;
      while (done < kLen) {
        const ssize_t n = ::read(r, out->data() + done, kLen - done);
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
      }
      return true;
    };
    // Killed, not told: a later child holds this one's pipe ends too.
    b.free = [p, child, w = ask[1], r = ans[0]] {
      ::close(w);
      ::close(r);
      ::kill(child, SIGKILL);
      ::waitpid(child, nullptr, 0);
      ::munmap(p, kLen);
    };
  } else {
    b.free = [p] { ::munmap(p, kLen); };
  }
  return b;
}

// SysV: shmget + shmat; `huge` asks SHM_HUGETLB (2 MiB pages). Returns a
// buffer with p == nullptr when the segment cannot be had (errno kept).
Buf sysv_buf(bool huge, bool rdonly, unsigned salt) {
  const std::size_t len = huge ? std::size_t{2} << 20 : kLen;
  const int id = ::shmget(IPC_PRIVATE, len, IPC_CREAT | 0600 | (huge ? SHM_HUGETLB : 0));
  Buf b;
  if (id < 0) return b;
  void* p = ::shmat(id, nullptr, rdonly ? SHM_RDONLY : 0);
  void* view = ::shmat(id, nullptr, 0);
  ::shmctl(id, IPC_RMID, nullptr);  // gone once the last attach goes
  if (p == reinterpret_cast<void*>(-1) || view == reinterpret_cast<void*>(-1)) die("shmat");
  fill(static_cast<std::uint8_t*>(view), len, salt);
  b.p = static_cast<std::uint8_t*>(p);
  b.len = len;
  b.second_view = [view, len](std::vector<std::uint8_t>* out) {
    out->assign(static_cast<std::uint8_t*>(view), static_cast<std::uint8_t*>(view) + len);
    return true;
  };
  b.free = [p, view] {
    ::shmdt(p);
    ::shmdt(view);
  };
  return b;
}

Buf memfd_buf() {
  const int fd = ::memfd_create("mr-kinds-app", MFD_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, kLen) != 0) die("memfd");
  void* p = ::mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) die("mmap memfd");
  Buf b;
  b.p = static_cast<std::uint8_t*>(p);
  b.len = kLen;
  b.second_view = [fd](std::vector<std::uint8_t>* out) {
    out->resize(kLen);
    return ::pread(fd, out->data(), kLen, 0) == static_cast<ssize_t>(kLen);
  };
  b.free = [p, fd] {
    ::munmap(p, kLen);
    ::close(fd);
  };
  return b;
}

Buf heap_buf() {
  auto* p = static_cast<std::uint8_t*>(std::malloc(kLen));
  if (p == nullptr) die("malloc");
  Buf b;
  b.p = p;
  b.len = kLen;
  b.free = [p] { std::free(p); };
  return b;
}

bool view_matches(const Buf& b, unsigned salt, std::size_t n) {
  if (!b.second_view) return true;
  std::vector<std::uint8_t> v;
  return b.second_view(&v) && v.size() >= n && same(v.data(), n, salt);
}

// The WRITE/READ/SEND checks and the revoke, for one writable kind whose
// buffers are `a` (on device A) and `b` (on device B).
void check_writable(const char* kind, Side* A, Side* B, Buf a, Buf b) {
  const std::string k = kind;
  const std::size_t n = a.len < b.len ? a.len : b.len;
  ibv_mr* ma = ibv_reg_mr(A->pd, a.p, a.len, kMrWrite);
  ibv_mr* mb = ibv_reg_mr(B->pd, b.p, b.len, kMrWrite);
  report(ma != nullptr && mb != nullptr,
         k + ": ibv_reg_mr on both devices (" + (ma && mb ? "0" : std::strerror(errno)) + ")");
  if (ma == nullptr || mb == nullptr) {
    if (ma) ibv_dereg_mr(ma);
    if (mb) ibv_dereg_mr(mb);
    a.free();
    b.free();
    return;
  }
  new_pair(A, B);
  fill(a.p, n, 1);
  bool ok = rdma(A, IBV_WR_RDMA_WRITE, ma, a.p, n, reinterpret_cast<std::uintptr_t>(b.p),
                 mb->rkey) == IBV_WC_SUCCESS;
  report(ok && same(b.p, n, 1) && view_matches(b, 1, n),
         k + ": RDMA WRITE " + std::to_string(n) + " B out of A's buffer into B's, every byte");
  fill(b.p, n, 2);
  ok = rdma(A, IBV_WR_RDMA_READ, ma, a.p, n, reinterpret_cast<std::uintptr_t>(b.p), mb->rkey) ==
       IBV_WC_SUCCESS;
  report(ok && same(a.p, n, 2) && view_matches(a, 2, n),
         k + ": RDMA READ " + std::to_string(n) + " B out of B's buffer into A's, every byte");
  fill(b.p, n, 3);
  ok = send_recv(B, A, mb, b.p, ma, a.p, n);
  report(ok && same(a.p, n, 3) && view_matches(a, 3, n),
         k + ": SEND " + std::to_string(n) + " B out of B's buffer into A's, every byte");
  // Revoke: B's registration gone, a WRITE to its rkey is refused.
  const std::uint32_t rkey = mb->rkey;
  const int dr = ibv_dereg_mr(mb);
  fill(b.p, n, 4);
  const ibv_wc_status st =
      rdma(A, IBV_WR_RDMA_WRITE, ma, a.p, 4096, reinterpret_cast<std::uintptr_t>(b.p), rkey);
  report(dr == 0 && st == IBV_WC_REM_ACCESS_ERR && same(b.p, n, 4),
         k + ": WRITE after ibv_dereg_mr completes with " + ibv_wc_status_str(st) +
             " and leaves the bytes alone");
  ibv_dereg_mr(ma);
  a.free();
  b.free();
}

// Read-only memory on device B: EFAULT for write access; source of WRITE
// and SEND; READ target; a remote WRITE into it refused.
void check_read_only(const char* kind, Side* A, Side* B, Buf ro, unsigned salt) {
  const std::string k = kind;
  const std::size_t n = ro.len;
  errno = 0;
  ibv_mr* bad = ibv_reg_mr(B->pd, ro.p, n, IBV_ACCESS_LOCAL_WRITE);
  const int bad_errno = errno;
  report(bad == nullptr && bad_errno == EFAULT,
         k + ": ibv_reg_mr with IBV_ACCESS_LOCAL_WRITE fails with EFAULT (got " +
             (bad ? "success" : std::strerror(bad_errno)) + ")");
  if (bad != nullptr) ibv_dereg_mr(bad);
  ibv_mr* mr = ibv_reg_mr(B->pd, ro.p, n, kMrRead);
  report(mr != nullptr, k + ": ibv_reg_mr with IBV_ACCESS_REMOTE_READ only");
  Buf a = heap_buf();
  if (a.len < n) die("read-only kind larger than the heap buffer");
  ibv_mr* ma = ibv_reg_mr(A->pd, a.p, a.len, kMrWrite);
  if (mr == nullptr || ma == nullptr) {
    if (mr) ibv_dereg_mr(mr);
    if (ma) ibv_dereg_mr(ma);
    ro.free();
    a.free();
    return;
  }
  new_pair(A, B);
  std::memset(a.p, 0, n);
  bool ok = rdma(A, IBV_WR_RDMA_READ, ma, a.p, n, reinterpret_cast<std::uintptr_t>(ro.p),
                 mr->rkey) == IBV_WC_SUCCESS;
  report(ok && same(a.p, n, salt), k + ": RDMA READ out of it, every byte");
  std::memset(a.p, 0, n);
  ok = rdma(B, IBV_WR_RDMA_WRITE, mr, ro.p, n, reinterpret_cast<std::uintptr_t>(a.p), ma->rkey) ==
       IBV_WC_SUCCESS;
  report(ok && same(a.p, n, salt), k + ": RDMA WRITE out of it (local read), every byte");
  std::memset(a.p, 0, n);
  ok = send_recv(B, A, mr, ro.p, ma, a.p, n);
  report(ok && same(a.p, n, salt), k + ": SEND out of it, every byte");
  fill(a.p, 4096, salt + 9);
  const ibv_wc_status st =
      rdma(A, IBV_WR_RDMA_WRITE, ma, a.p, 4096, reinterpret_cast<std::uintptr_t>(ro.p), mr->rkey);
  report(st == IBV_WC_REM_ACCESS_ERR && same(ro.p, n, salt),
         k + std::string(": RDMA WRITE into it completes with ") + ibv_wc_status_str(st));
  ibv_dereg_mr(mr);
  ibv_dereg_mr(ma);
  ro.free();
  a.free();
}

// A client truncating a file it registered: the daemon's mapping loses
// its pages. A WRITE into them must neither kill the daemon nor fail
// anyone else: it completes, and a WRITE into a heap buffer afterwards
// still lands.
void check_truncated(Side* A, Side* B) {
  Buf f = file_buf("/tmp", "tr", MAP_SHARED, false, 0);
  Buf a = heap_buf();
  ibv_mr* mf = ibv_reg_mr(B->pd, f.p, f.len, kMrWrite);
  ibv_mr* ma = ibv_reg_mr(A->pd, a.p, a.len, kMrWrite);
  Buf h = heap_buf();
  ibv_mr* mh = ibv_reg_mr(B->pd, h.p, h.len, kMrWrite);
  if (mf == nullptr || ma == nullptr || mh == nullptr) die("truncation reg_mr");
  new_pair(A, B);
  const std::string path = tmp_path("/tmp", "tr");
  if (::truncate(path.c_str(), 0) != 0) die("truncate");
  fill(a.p, a.len, 31);
  const ibv_wc_status st =
      rdma(A, IBV_WR_RDMA_WRITE, ma, a.p, a.len, reinterpret_cast<std::uintptr_t>(f.p), mf->rkey);
  const bool after = rdma(A, IBV_WR_RDMA_WRITE, ma, a.p, a.len,
                          reinterpret_cast<std::uintptr_t>(h.p), mh->rkey) == IBV_WC_SUCCESS;
  report(st == IBV_WC_SUCCESS && after && same(h.p, h.len, 31),
         std::string("file truncated while registered: WRITE into it completes with ") +
             ibv_wc_status_str(st) + ", the daemon lives on");
  ibv_dereg_mr(mf);
  ibv_dereg_mr(ma);
  ibv_dereg_mr(mh);
  f.free();
  a.free();
  h.free();
}

// The stack case: both buffers in this frame of the main thread.
[[gnu::noinline]] void check_stack(Side* A, Side* B) {
  alignas(64) std::uint8_t a[96 * 1024];
  alignas(64) std::uint8_t b[96 * 1024];
  Buf ba, bb;
  ba.p = a;
  ba.len = sizeof(a);
  ba.free = [] {};
  bb.p = b;
  bb.len = sizeof(b);
  bb.free = [] {};
  check_writable("stack (main thread)", A, B, ba, bb);
  // The frames below survived the remap: this function returns normally.
}

// Bandwidth of 64 KiB WRITEs or READs from A's heap buffer to B's `dst`
// (16 in flight), in MB/s.
double bandwidth(Side* A, Side* B, ibv_wr_opcode op, std::uint8_t* dst, std::size_t len) {
  constexpr std::size_t kMsg = 64 * 1024;
  constexpr int kWindow = 16;
  const std::size_t total = std::size_t{256} << 20;
  Buf a = heap_buf();
  // The destination first: two heap buffers may share a page, and a range
  // may grow an earlier registration's memfd upwards, never downwards.
  ibv_mr* mb = ibv_reg_mr(B->pd, dst, len, kMrWrite);
  if (mb == nullptr) die("bandwidth reg_mr (destination)");
  ibv_mr* ma = ibv_reg_mr(A->pd, a.p, a.len, kMrWrite);
  if (ma == nullptr) die("bandwidth reg_mr (source)");
  new_pair(A, B);
  const std::size_t msgs = total / kMsg;
  const std::size_t slots = len / kMsg;
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t posted = 0, done = 0;
  bool ok = true;
  while (done < msgs) {
    while (posted < msgs && posted - done < kWindow) {
      const std::size_t off = (posted % slots) * kMsg;
      post_rdma(A, op, ma, a.p + (posted % (a.len / kMsg)) * kMsg, kMsg,
                reinterpret_cast<std::uintptr_t>(dst + off), mb->rkey);
      ++posted;
    }
    ibv_wc wc[16];
    const int got = ibv_poll_cq(A->cq, 16, wc);
    for (int i = 0; i < got; ++i) ok = ok && wc[i].status == IBV_WC_SUCCESS;
    done += static_cast<std::size_t>(got < 0 ? 0 : got);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ibv_dereg_mr(mb);
  ibv_dereg_mr(ma);
  a.free();
  if (!ok) report(false, "bandwidth run completions");
  return static_cast<double>(total) / s / 1e6;
}

void measure(Side* A, Side* B, const char* kind, const char* path, Buf b) {
  if (b.p == nullptr) return;
  const double w = bandwidth(A, B, IBV_WR_RDMA_WRITE, b.p, b.len);
  const double r = bandwidth(A, B, IBV_WR_RDMA_READ, b.p, b.len);
  std::printf("bandwidth %-28s %-14s WRITE %7.0f MB/s  READ %7.0f MB/s\n", kind, path, w, r);
  b.free();
}

// What a copy path's primitive costs: process_vm_writev of 64 KiB chunks
// (into this very process, as a daemon would into its client) against
// memcpy, 256 MiB each.
void measure_copy_primitive() {
  constexpr std::size_t kMsg = 64 * 1024;
  std::vector<std::uint8_t> src(kMsg, 1), dst(kMsg);
  const int n = 4096;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    iovec l{src.data(), kMsg}, r{dst.data(), kMsg};
    if (::process_vm_writev(::getpid(), &l, 1, &r, 1, 0) != static_cast<ssize_t>(kMsg))
      die("process_vm_writev");
  }
  const double pv = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    src[static_cast<std::size_t>(i) % kMsg] = static_cast<std::uint8_t>(i);
    std::memcpy(dst.data(), src.data(), kMsg);
    asm volatile("" ::"r"(dst.data()) : "memory");
  }
  const double mc = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "copy primitive 64 KiB: process_vm_writev %7.0f MB/s (%.2f us per call), "
      "memcpy %7.0f MB/s\n",
      kMsg * n / pv / 1e6, pv / n * 1e6, kMsg * n / mc / 1e6);
}

// The quota probe: registers COUNT anonymous MAP_SHARED buffers of SIZE
// bytes on DEV until one is refused; prints how many and the errno.
int quota_probe(const char* dev, std::size_t size, int count) {
  Side s = open_side(dev);
  int n = 0, err = 0;
  for (; n < count; ++n) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) die("mmap");
    if (ibv_reg_mr(s.pd, p, size, kMrWrite) == nullptr) {
      err = errno;
      break;
    }
  }
  std::printf("registered %d errno %d\n", n, err);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "quota") == 0) {
    return quota_probe(argv[2], std::strtoull(argv[3], nullptr, 0), std::atoi(argv[4]));
  }
  if (argc != 4) {
    std::fprintf(stderr, "usage: mr_kinds DEV_A DEV_B GID_INDEX | mr_kinds quota DEV SIZE COUNT\n");
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  g_gid_index = std::atoi(argv[3]);
  Side A = open_side(argv[1]);
  Side B = open_side(argv[2]);

  check_writable("heap (malloc)", &A, &B, heap_buf(), heap_buf());
  check_writable("anonymous private mmap", &A, &B, mmap_buf(MAP_PRIVATE | MAP_ANONYMOUS),
                 mmap_buf(MAP_PRIVATE | MAP_ANONYMOUS));
  check_writable("anonymous MAP_SHARED", &A, &B, mmap_buf(MAP_SHARED | MAP_ANONYMOUS),
                 mmap_buf(MAP_SHARED | MAP_ANONYMOUS));
  check_writable("file MAP_PRIVATE (/tmp)", &A, &B, file_buf("/tmp", "pa", MAP_PRIVATE, false, 0),
                 file_buf("/tmp", "pb", MAP_PRIVATE, false, 0));
  check_writable("file MAP_SHARED (/tmp)", &A, &B, file_buf("/tmp", "sa", MAP_SHARED, false, 0),
                 file_buf("/tmp", "sb", MAP_SHARED, false, 0));
  check_writable("file MAP_SHARED (/dev/shm)", &A, &B,
                 file_buf("/dev/shm", "sa", MAP_SHARED, false, 0),
                 file_buf("/dev/shm", "sb", MAP_SHARED, false, 0));
  check_writable("memfd MAP_SHARED (the application's)", &A, &B, memfd_buf(), memfd_buf());
  check_writable("SysV shmget/shmat", &A, &B, sysv_buf(false, false, 0), sysv_buf(false, false, 0));
  Buf ha = sysv_buf(true, false, 0);
  Buf hb = ha.p != nullptr ? sysv_buf(true, false, 0) : Buf{};
  if (ha.p != nullptr && hb.p != nullptr) {
    check_writable("SysV SHM_HUGETLB", &A, &B, ha, hb);
  } else {
    std::printf("SysV SHM_HUGETLB: not tested: shmget: %s (no huge pages?)\n",
                std::strerror(errno));
    if (ha.p != nullptr) ha.free();
  }
  check_stack(&A, &B);
  check_truncated(&A, &B);

  Buf ro = mmap_buf(MAP_PRIVATE | MAP_ANONYMOUS);
  fill(ro.p, ro.len, 21);
  if (::mprotect(ro.p, ro.len, PROT_READ) != 0) die("mprotect");
  check_read_only("read-only private mapping (PROT_READ)", &A, &B, ro, 21);
  check_read_only("read-only file MAP_SHARED (O_RDONLY, /tmp)", &A, &B,
                  file_buf("/tmp", "ro", MAP_SHARED, true, 22), 22);
  check_read_only("read-only SysV (SHM_RDONLY)", &A, &B, sysv_buf(false, true, 23), 23);

  measure(&A, &B, "heap (malloc)", "remap", heap_buf());
  measure(&A, &B, "anonymous MAP_SHARED", "shared object", mmap_buf(MAP_SHARED | MAP_ANONYMOUS));
  measure(&A, &B, "file MAP_SHARED (/dev/shm)", "shared object",
          file_buf("/dev/shm", "bw", MAP_SHARED, false, 0));
  measure(&A, &B, "SysV shmget/shmat", "shared object", sysv_buf(false, false, 0));
  measure(&A, &B, "SysV SHM_HUGETLB", "shared object", sysv_buf(true, false, 0));
  measure_copy_primitive();

  for (Side* s : {&A, &B}) {
    if (s->qp) ibv_destroy_qp(s->qp);
    ibv_destroy_cq(s->cq);
    ibv_dealloc_pd(s->pd);
    ibv_close_device(s->ctx);
  }
  std::printf(failures == 0 ? "mr_kinds: all passed\n" : "mr_kinds: %d FAILED\n", failures);
  return failures == 0 ? 0 : 1;
}
