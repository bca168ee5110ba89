// uroce_dc_pingpong: SEND ping-pongs, an RDMA WRITE and an RDMA READ over
// uroce's DC QPs (docs/dc.md), using nothing but libibverbs and
// <infiniband/uroce_dv.h>, as a DC application would.
//
// Each side has an SRQ, one CQ, a DCT that receives (its number and key
// printed and sent to the peer over TCP) and a DCI that sends to the
// peer's DCT through an AH of the peer's GID. The client sends N pings,
// the server answers each with a pong of the same bytes from its own DCI;
// then the client WRITEs a pattern into the server's buffer, READs it back
// and compares, and the server compares what landed. Both report the first
// round trip (the first message to a DCT that has never heard of the
// sender: its context is opened by that message) and the median of the
// others.
//
//   server: uroce_dc_pingpong [-d DEV] [-p PORT] [-g GIDX] [-k KEY]
//   client: uroce_dc_pingpong [-d DEV] [-p PORT] [-g GIDX] [-n ITERS]
//                             [-s SIZE] [-w WRITE_SIZE] SERVER
// Prints "dc_pingpong: ... FAILED ..." on any error and "dc_pingpong: all
// passed" at the end; exit status 0 iff every check passed.
#include <getopt.h>
#include <infiniband/uroce_dv.h>
#include <infiniband/verbs.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dc_common.h"
#include "oob.h"

namespace {

constexpr int kRecvDepth = 16;
constexpr std::uint32_t kMaxPing = 64 * 1024;
constexpr std::uint32_t kMaxWrite = 1024 * 1024;
constexpr double kTimeoutS = 10;

struct Opts {
  const char* dev = "uroce0";
  const char* server = nullptr;  // null: this is the server
  int port = 18515;
  int gid_index = -1;  // -1: the first IPv4-mapped GID
  std::uint32_t iters = 1000;
  std::uint32_t size = 64;
  std::uint32_t write_size = 65536;
  std::uint64_t key = 0xD0C0FFEE12345678ull;
};

// What each side tells the other (one text line over TCP).
struct PeerInfo {
  std::uint8_t gid[16];
  std::uint32_t dctn = 0;
  std::uint64_t key = 0;
  std::uint64_t addr = 0;  // the WRITE/READ target (the server's)
  std::uint32_t rkey = 0;
  std::uint32_t size = 0;  // ping size and count (the client's)
  std::uint32_t iters = 0;
  std::uint32_t write_size = 0;
};

struct Side {
  uroce::examples::DcDevice dev;
  ibv_pd* pd = nullptr;
  ibv_mr* mr = nullptr;
  ibv_cq* cq = nullptr;
  ibv_srq* srq = nullptr;
  ibv_qp* dct = nullptr;
  ibv_qp* dci = nullptr;
  ibv_qp_ex* dcix = nullptr;
  uroce_dv_qp_ex* dv = nullptr;
  ibv_ah* ah = nullptr;
  std::uint8_t* buf = nullptr;
  std::size_t bytes = 0;
  // Layout of buf: kRecvDepth receive slots, one send slot, the WRITE
  // source / target, the READ destination.
  std::uint32_t slot = 0;
  std::uint8_t* recv(int i) { return buf + static_cast<std::size_t>(i) * slot; }
  std::uint8_t* send() { return buf + static_cast<std::size_t>(kRecvDepth) * slot; }
  std::uint8_t* wr_area() { return send() + slot; }
  std::uint8_t* rd_area(std::uint32_t w) { return wr_area() + w; }
};

using uroce::examples::fail;
using uroce::examples::now_us;

std::uint8_t pattern(std::uint32_t seed, std::size_t i) {
  return static_cast<std::uint8_t>(seed * 131u + i * 7u + (i >> 8));
}

// ---- TCP exchange ----------------------------------------------------------

using uroce::examples::oob_read_line;
using uroce::examples::oob_write_all;

bool send_info(int fd, const PeerInfo& p) {
  char line[256];
  int n = std::snprintf(line, sizeof line, "%06x %016" PRIx64 " %016" PRIx64 " %08x %u %u %u ",
                        p.dctn, p.key, p.addr, p.rkey, p.size, p.iters, p.write_size);
  for (int i = 0; i < 16; ++i) n += std::snprintf(line + n, sizeof line - n, "%02x", p.gid[i]);
  line[n++] = '\n';
  return oob_write_all(fd, line, static_cast<std::size_t>(n));
}

bool recv_info(int fd, PeerInfo* p) {
  char line[256], gid[40];
  if (!oob_read_line(fd, line, sizeof line)) return false;
  if (std::sscanf(line, "%x %" SCNx64 " %" SCNx64 " %x %u %u %u %32s", &p->dctn, &p->key, &p->addr,
                  &p->rkey, &p->size, &p->iters, &p->write_size, gid) != 8 ||
      std::strlen(gid) != 32) {
    return false;
  }
  for (int i = 0; i < 16; ++i) {
    unsigned v;
    std::sscanf(gid + 2 * i, "%2x", &v);
    p->gid[i] = static_cast<std::uint8_t>(v);
  }
  return true;
}

// ---- verbs -----------------------------------------------------------------

bool open_side(const Opts& o, std::uint32_t size, std::uint32_t wsize, Side* s) {
  if (!uroce::examples::dc_open_device(o.dev, o.gid_index, &s->dev)) return false;
  s->slot = std::max<std::uint32_t>(size, 64);
  s->bytes =
      static_cast<std::size_t>(kRecvDepth + 1) * s->slot + 2 * static_cast<std::size_t>(wsize);
  s->buf = static_cast<std::uint8_t*>(aligned_alloc(4096, (s->bytes + 4095) / 4096 * 4096));
  if (s->buf == nullptr) return fail("allocating the buffer", ENOMEM);
  std::memset(s->buf, 0, s->bytes);
  s->pd = ibv_alloc_pd(s->dev.ctx);
  if (s->pd == nullptr) return fail("ibv_alloc_pd", errno);
  s->mr = ibv_reg_mr(s->pd, s->buf, s->bytes,
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  if (s->mr == nullptr) return fail("ibv_reg_mr", errno);
  s->cq = ibv_create_cq(s->dev.ctx, 4 * kRecvDepth, nullptr, nullptr, 0);
  if (s->cq == nullptr) return fail("ibv_create_cq", errno);
  ibv_srq_init_attr sa{};
  sa.attr.max_wr = kRecvDepth;
  sa.attr.max_sge = 1;
  s->srq = ibv_create_srq(s->pd, &sa);
  if (s->srq == nullptr) return fail("ibv_create_srq", errno);
  return true;
}

bool post_recv(Side* s, int i) {
  ibv_sge sge{reinterpret_cast<std::uint64_t>(s->recv(i)), s->slot, s->mr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = static_cast<std::uint64_t>(i);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_srq_recv(s->srq, &wr, &bad); rc != 0) return fail("ibv_post_srq_recv", rc);
  return true;
}

bool make_dc(std::uint64_t key, Side* s) {
  s->dct = uroce::examples::dc_make_dct(s->dev, s->pd, s->cq, s->srq, key);
  s->dci = s->dct != nullptr ? uroce::examples::dc_make_dci(s->dev, s->pd, s->cq, 16) : nullptr;
  if (s->dci == nullptr) return false;
  s->dcix = ibv_qp_to_qp_ex(s->dci);
  s->dv = s->dcix != nullptr ? uroce_dv_qp_ex_from_ibv_qp_ex(s->dcix) : nullptr;
  if (s->dv == nullptr) return fail("uroce_dv_qp_ex_from_ibv_qp_ex", errno);
  for (int k = 0; k < kRecvDepth; ++k) {
    if (!post_recv(s, k)) return false;
  }
  return true;
}

bool make_ah(const PeerInfo& peer, Side* s) {
  s->ah = uroce::examples::dc_make_ah(s->dev, s->pd, peer.gid);
  return s->ah != nullptr;
}

enum class Op { kSend, kWrite, kRead };

// One signaled WR on the DCI to the peer's DCT.
bool post(Side* s, const PeerInfo& peer, Op op, std::uint64_t id, void* local, std::uint32_t len,
          std::uint64_t remote = 0) {
  ibv_qp_ex* q = s->dcix;
  ibv_wr_start(q);
  q->wr_id = id;
  q->wr_flags = IBV_SEND_SIGNALED;
  switch (op) {
    case Op::kSend: ibv_wr_send(q); break;
    case Op::kWrite: ibv_wr_rdma_write(q, peer.rkey, remote); break;
    case Op::kRead: ibv_wr_rdma_read(q, peer.rkey, remote); break;
  }
  uroce_dv_wr_set_dc_addr(s->dv, s->ah, peer.dctn, peer.key);
  ibv_wr_set_sge(q, s->mr->lkey, reinterpret_cast<std::uint64_t>(local), len);
  if (int rc = ibv_wr_complete(q); rc != 0) return fail("ibv_wr_complete", rc);
  return true;
}

// Polls until `sends` send-side completions and `recvs` (0 or 1) receives
// have arrived, in whatever order (an ACK may come after the peer's next
// message). The receive's slot goes in *slot, its length in *len.
bool wait_for(Side* s, int sends, int recvs, int* slot = nullptr, std::uint32_t* len = nullptr) {
  const double deadline = now_us() + kTimeoutS * 1e6;
  while (sends > 0 || recvs > 0) {
    ibv_wc wc;
    const int n = ibv_poll_cq(s->cq, 1, &wc);
    if (n < 0) return fail("ibv_poll_cq", EIO);
    if (n == 0) {
      if (now_us() > deadline)
        return fail(recvs > 0 ? "waiting for a receive" : "waiting for a send");
      sched_yield();  // the daemons share the cores
      continue;
    }
    if (wc.status != IBV_WC_SUCCESS) {
      std::printf("dc_pingpong: completion wr_id %" PRIu64 " opcode %d: %s FAILED\n", wc.wr_id,
                  wc.opcode, ibv_wc_status_str(wc.status));
      return false;
    }
    if (wc.opcode == IBV_WC_RECV) {
      if (recvs == 0) return fail("a receive nobody expected");
      --recvs;
      *slot = static_cast<int>(wc.wr_id);
      *len = wc.byte_len;
    } else {
      if (sends == 0) return fail("a send completion nobody expected");
      --sends;
    }
  }
  return true;
}

void report(const char* who, std::vector<double> rtt, std::uint32_t size) {
  if (rtt.empty()) return;
  const double first = rtt[0];
  std::vector<double> rest(rtt.begin() + 1, rtt.end());
  std::sort(rest.begin(), rest.end());
  const double med = rest.empty() ? first : rest[rest.size() / 2];
  const double p90 = rest.empty() ? first : rest[rest.size() * 9 / 10];
  std::printf(
      "dc_pingpong: %s: first RTT %.1f us, steady median %.1f us (p90 %.1f us) over %zu "
      "round trips of %u B\n",
      who, first, med, p90, rest.size(), size);
}

bool run_client(const Opts& o) {
  Side s;
  if (!open_side(o, o.size, o.write_size, &s) || !make_dc(o.key, &s)) return false;
  const int fd = uroce::examples::oob_connect(o.server, o.port);
  if (fd < 0) return fail("connecting to the server");
  PeerInfo me, peer;
  std::memcpy(me.gid, s.dev.gid.raw, 16);
  me.dctn = s.dct->qp_num;
  me.key = o.key;
  me.size = o.size;
  me.iters = o.iters;
  me.write_size = o.write_size;
  if (!send_info(fd, me) || !recv_info(fd, &peer)) return fail("exchanging DCT numbers");
  std::printf("dc_pingpong: client: DCT 0x%06x key 0x%016" PRIx64 "; server DCT 0x%06x\n", me.dctn,
              me.key, peer.dctn);
  if (!make_ah(peer, &s)) return false;

  std::vector<double> rtt;
  rtt.reserve(o.iters);
  bool ok = true;
  for (std::uint32_t i = 0; i < o.iters && ok; ++i) {
    for (std::uint32_t k = 0; k < o.size; ++k) s.send()[k] = pattern(i, k);
    const double t0 = now_us();
    int slot = 0;
    std::uint32_t len = 0;
    ok = post(&s, peer, Op::kSend, i, s.send(), o.size) && wait_for(&s, 1, 1, &slot, &len);
    const double t1 = now_us();
    if (!ok) break;
    rtt.push_back(t1 - t0);
    if (len != o.size || std::memcmp(s.recv(slot), s.send(), o.size) != 0) {
      std::printf("dc_pingpong: pong %u: bytes FAILED\n", i);
      ok = false;
    }
    ok = ok && post_recv(&s, slot);
  }
  if (ok) {
    report("client", rtt, o.size);
    std::printf("dc_pingpong: client: %u pongs, bytes ok\n", o.iters);
  }
  // WRITE a pattern into the server's buffer, READ it back, compare.
  if (ok) {
    std::uint8_t* w = s.wr_area();
    std::uint8_t* r = s.rd_area(o.write_size);
    for (std::uint32_t k = 0; k < o.write_size; ++k) w[k] = pattern(0xAB, k);
    const double t0 = now_us();
    ok = post(&s, peer, Op::kWrite, 1001, w, o.write_size, peer.addr) && wait_for(&s, 1, 0) &&
         post(&s, peer, Op::kRead, 1002, r, o.write_size, peer.addr) && wait_for(&s, 1, 0);
    const double t1 = now_us();
    if (ok && std::memcmp(w, r, o.write_size) != 0) {
      std::printf("dc_pingpong: READ back of the WRITE: bytes FAILED\n");
      ok = false;
    } else if (ok) {
      std::printf("dc_pingpong: client: WRITE and READ of %u B in %.1f us, bytes ok\n",
                  o.write_size, t1 - t0);
    }
  }
  char line[64];
  std::snprintf(line, sizeof line, "%s\n", ok ? "DONE" : "ABORT");
  oob_write_all(fd, line, std::strlen(line));
  if (!oob_read_line(fd, line, sizeof line)) return fail("reading the server's verdict");
  close(fd);
  if (std::strcmp(line, "OK") != 0) {
    std::printf("dc_pingpong: server reports %s: FAILED\n", line);
    return false;
  }
  return ok;
}

bool run_server(const Opts& o) {
  // The client's sizes are not known yet: the buffer takes the largest
  // allowed, checked when they arrive.
  Side s;
  if (!open_side(o, kMaxPing, kMaxWrite, &s) || !make_dc(o.key, &s)) return false;
  std::printf("dc_pingpong: server: DCT 0x%06x key 0x%016" PRIx64 "\n", s.dct->qp_num, o.key);
  std::fflush(stdout);
  const int fd = uroce::examples::oob_accept(o.port);
  if (fd < 0) return fail("accepting the client");
  PeerInfo me, peer;
  if (!recv_info(fd, &peer)) return fail("exchanging DCT numbers");
  if (peer.size == 0 || peer.size > kMaxPing || peer.write_size > kMaxWrite) {
    return fail("the client's sizes");
  }
  std::memcpy(me.gid, s.dev.gid.raw, 16);
  me.dctn = s.dct->qp_num;
  me.key = o.key;
  me.addr = reinterpret_cast<std::uint64_t>(s.wr_area());
  me.rkey = s.mr->rkey;
  if (!send_info(fd, me)) return fail("exchanging DCT numbers");
  if (!make_ah(peer, &s)) return false;

  // Server RTT: from posting pong i to receiving ping i + 1 (pong i's own
  // completion, which may come after that ping, is waited for with it).
  std::vector<double> rtt;
  bool ok = true;
  double sent_at = 0;
  for (std::uint32_t i = 0; i < peer.iters && ok; ++i) {
    int slot = 0;
    std::uint32_t len = 0;
    if (!wait_for(&s, i > 0 ? 1 : 0, 1, &slot, &len)) {
      ok = false;
      break;
    }
    if (i > 0) rtt.push_back(now_us() - sent_at);
    bool bytes = len == peer.size;
    for (std::uint32_t k = 0; k < peer.size && bytes; ++k) bytes = s.recv(slot)[k] == pattern(i, k);
    if (!bytes) {
      std::printf("dc_pingpong: ping %u: bytes FAILED\n", i);
      ok = false;
      break;
    }
    std::memcpy(s.send(), s.recv(slot), peer.size);
    sent_at = now_us();
    ok = post_recv(&s, slot) && post(&s, peer, Op::kSend, i, s.send(), peer.size);
  }
  // The last pong's completion.
  ok = ok && wait_for(&s, 1, 0);
  if (ok) {
    report("server", rtt, peer.size);
    std::printf("dc_pingpong: server: %u pings, bytes ok\n", peer.iters);
  }
  char line[64];
  if (!oob_read_line(fd, line, sizeof line)) return fail("reading the client's end");
  if (ok && std::strcmp(line, "DONE") == 0) {
    for (std::uint32_t k = 0; k < peer.write_size && ok; ++k) {
      if (s.wr_area()[k] != pattern(0xAB, k)) {
        std::printf("dc_pingpong: byte %u of the client's WRITE FAILED\n", k);
        ok = false;
      }
    }
    if (ok)
      std::printf("dc_pingpong: server: the client's WRITE of %u B, bytes ok\n", peer.write_size);
  } else {
    ok = false;
  }
  std::snprintf(line, sizeof line, "%s\n", ok ? "OK" : "BAD");
  oob_write_all(fd, line, std::strlen(line));
  close(fd);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  uroce::examples::g_prog = "dc_pingpong";
  Opts o;
  int c;
  while ((c = getopt(argc, argv, "d:p:g:n:s:w:k:h")) != -1) {
    switch (c) {
      case 'd': o.dev = optarg; break;
      case 'p': o.port = std::atoi(optarg); break;
      case 'g': o.gid_index = std::atoi(optarg); break;
      case 'n': o.iters = static_cast<std::uint32_t>(std::strtoul(optarg, nullptr, 0)); break;
      case 's': o.size = static_cast<std::uint32_t>(std::strtoul(optarg, nullptr, 0)); break;
      case 'w': o.write_size = static_cast<std::uint32_t>(std::strtoul(optarg, nullptr, 0)); break;
      case 'k': o.key = std::strtoull(optarg, nullptr, 0); break;
      default:
        std::fprintf(stderr,
                     "usage: %s [-d DEV] [-p PORT] [-g GID_INDEX] [-k KEY] [-n ITERS] [-s SIZE] "
                     "[-w WRITE_SIZE] [SERVER]\n",
                     argv[0]);
        return 2;
    }
  }
  if (optind < argc) o.server = argv[optind];
  if (o.iters == 0 || o.size == 0 || o.size > kMaxPing || o.write_size == 0 ||
      o.write_size > kMaxWrite) {
    std::fprintf(stderr, "dc_pingpong: -n, -s (up to 64 KiB) and -w (up to 1 MiB) from 1\n");
    return 2;
  }
  const bool ok = o.server != nullptr ? run_client(o) : run_server(o);
  if (!ok) return 1;
  std::printf("dc_pingpong: all passed\n");
  return 0;
}
