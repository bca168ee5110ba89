// uroce_dc_bench: what the first message to a new DCT costs against the
// steady state, and against RC's steady state, in one run (docs/dc.md,
// "First message"). libibverbs and <infiniband/uroce_dv.h> only.
//
// The server makes one SRQ, one CQ, 2K + 1 DCTs on the SRQ and one RC QP
// (also on the SRQ), and keeps receives posted, checking every SEND's bytes.
// The client makes one DCI and one RC QP. For each operation (a SEND of
// -s bytes, then an RDMA WRITE of -w bytes) it runs K rounds of:
//   M messages on the RC QP (RC steady),
//   M messages on the DCI to the DCT it already talks to (DC steady; the
//   first of them is not counted: after the RC messages the stream may
//   have disconnected for idleness),
//   1 message to a DCT it has never sent to (DC first), which the next
//   round talks to.
// Every message is signaled and waited for before the next: its time is
// post to completion, one round trip (request, ACK). Interleaving the
// three kinds keeps them under the same load on a shared machine. The very
// first DC message of the process (to DCT 0, before any warm-up) is
// reported apart as "cold". The server checks the SENDs' bytes and count
// and the WRITE area; the client prints one line and one JSON line per
// operation.
//
//   server: uroce_dc_bench [-d DEV] [-p PORT] [-g GIDX] -k K
//   client: uroce_dc_bench [-d DEV] [-p PORT] [-g GIDX] -k K [-m M]
//                          [-s SEND_SIZE] [-w WRITE_SIZE] [--spin] SERVER
// Exit status 0 iff every message completed and every check passed.
#include <getopt.h>
#include <infiniband/uroce_dv.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <sched.h>

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

using uroce::examples::fail;
using uroce::examples::now_us;

constexpr int kRecvDepth = 256;
constexpr std::uint32_t kMaxSize = 64 * 1024;
// 2K + 1 DCTs and an RC QP must fit a device's 1,024 QPs.
constexpr std::uint32_t kMaxRounds = 500;
constexpr double kTimeoutS = 10;
constexpr std::uint64_t kKey = 0xDCBE7C4A11ull;

struct Opts {
  const char* dev = "uroce0";
  const char* server = nullptr;  // null: this is the server
  int port = 18516;
  int gid_index = -1;
  std::uint32_t rounds = 100;  // K: new DCTs per operation
  std::uint32_t per = 10;      // M: RC and DC steady messages per round
  std::uint32_t send_size = 64;
  std::uint32_t write_size = 4096;
  bool spin = false;  // poll without yielding the CPU
};

struct Side {
  uroce::examples::DcDevice dev;
  ibv_pd* pd = nullptr;
  ibv_mr* mr = nullptr;
  ibv_cq* cq = nullptr;
  ibv_srq* srq = nullptr;
  ibv_qp* rc = nullptr;
  std::vector<std::uint8_t> buf;  // receive slots (server) or sources (client), then the
                                  // WRITE area
  std::uint8_t* slot(int i) { return buf.data() + static_cast<std::size_t>(i) * kMaxSize; }
  std::uint8_t* write_area() { return slot(kRecvDepth); }
};

// The SENDs' bytes: the message's number in the first 4, then a pattern
// of it. The WRITEs all carry seq 0xFFFFFFFF's pattern.
std::uint8_t pattern(std::uint32_t seq, std::uint32_t k) {
  return static_cast<std::uint8_t>(seq * 29u + k * 7u + (k >> 8));
}
void fill(std::uint8_t* p, std::uint32_t seq, std::uint32_t len) {
  for (std::uint32_t k = 0; k < len; ++k) p[k] = pattern(seq, k);
  if (len >= 4) std::memcpy(p, &seq, 4);
}
bool check(const std::uint8_t* p, std::uint32_t len) {
  std::uint32_t seq = 0;
  if (len >= 4) std::memcpy(&seq, p, 4);
  for (std::uint32_t k = 4; k < len; ++k) {
    if (p[k] != pattern(seq, k)) return false;
  }
  return true;
}

bool open_side(const Opts& o, Side* s) {
  if (!uroce::examples::dc_open_device(o.dev, o.gid_index, &s->dev)) return false;
  s->buf.assign(static_cast<std::size_t>(kRecvDepth + 1) * kMaxSize, 0);
  s->pd = ibv_alloc_pd(s->dev.ctx);
  if (s->pd == nullptr) return fail("ibv_alloc_pd", errno);
  s->mr = ibv_reg_mr(s->pd, s->buf.data(), s->buf.size(),
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  if (s->mr == nullptr) return fail("ibv_reg_mr", errno);
  s->cq = ibv_create_cq(s->dev.ctx, 2 * kRecvDepth, nullptr, nullptr, 0);
  if (s->cq == nullptr) return fail("ibv_create_cq", errno);
  return true;
}

bool make_rc(Side* s) {
  ibv_qp_init_attr a{};
  a.qp_type = IBV_QPT_RC;
  a.send_cq = s->cq;
  a.recv_cq = s->cq;
  a.srq = s->srq;
  a.cap.max_send_wr = 4;
  a.cap.max_send_sge = 1;
  a.cap.max_recv_wr = s->srq != nullptr ? 0 : 1;
  a.cap.max_recv_sge = 1;
  s->rc = ibv_create_qp(s->pd, &a);
  if (s->rc == nullptr) return fail("ibv_create_qp (RC)", errno);
  ibv_qp_attr q{};
  q.qp_state = IBV_QPS_INIT;
  q.port_num = 1;
  q.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (int rc = ibv_modify_qp(s->rc, &q,
                             IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
      rc != 0) {
    return fail("RC to INIT", rc);
  }
  return true;
}

bool connect_rc(Side* s, std::uint32_t peer_qpn, const std::uint8_t* peer_gid) {
  ibv_qp_attr q{};
  q.qp_state = IBV_QPS_RTR;
  q.path_mtu = s->dev.mtu;
  q.dest_qp_num = peer_qpn;
  q.rq_psn = 0;
  q.max_dest_rd_atomic = 1;
  q.min_rnr_timer = 12;
  q.ah_attr.is_global = 1;
  q.ah_attr.port_num = 1;
  std::memcpy(q.ah_attr.grh.dgid.raw, peer_gid, 16);
  q.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(s->dev.gid_index);
  q.ah_attr.grh.hop_limit = 64;
  if (int rc = ibv_modify_qp(s->rc, &q,
                             IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
      rc != 0) {
    return fail("RC to RTR", rc);
  }
  q.qp_state = IBV_QPS_RTS;
  q.sq_psn = 0;
  q.timeout = 14;
  q.retry_cnt = 7;
  q.rnr_retry = 7;
  q.max_rd_atomic = 1;
  if (int rc = ibv_modify_qp(s->rc, &q,
                             IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
      rc != 0) {
    return fail("RC to RTS", rc);
  }
  return true;
}

// ---- the exchange: a text line each way, then the server's DCT numbers --

struct ServerInfo {
  std::uint8_t gid[16];
  std::uint32_t rc_qpn = 0;
  std::uint64_t addr = 0;  // the WRITE area
  std::uint32_t rkey = 0;
  std::uint32_t dcts = 0;
};

bool send_gid_line(int fd, const std::uint8_t* gid, const char* rest) {
  char line[256];
  int n = std::snprintf(line, sizeof line, "%s ", rest);
  for (int i = 0; i < 16; ++i) n += std::snprintf(line + n, sizeof line - n, "%02x", gid[i]);
  line[n++] = '\n';
  return uroce::examples::oob_write_all(fd, line, static_cast<std::size_t>(n));
}

// The last word of `line` as a GID.
bool parse_gid(const char* line, std::uint8_t* gid) {
  const char* g = std::strrchr(line, ' ');
  if (g == nullptr || std::strlen(g + 1) != 32) return false;
  for (int i = 0; i < 16; ++i) {
    unsigned v;
    if (std::sscanf(g + 1 + 2 * i, "%2x", &v) != 1) return false;
    gid[i] = static_cast<std::uint8_t>(v);
  }
  return true;
}

// ---- the server --------------------------------------------------------

bool post_recv(Side* s, int i) {
  ibv_sge sge{reinterpret_cast<std::uint64_t>(s->slot(i)), kMaxSize, s->mr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = static_cast<std::uint64_t>(i);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_srq_recv(s->srq, &wr, &bad); rc != 0) return fail("ibv_post_srq_recv", rc);
  return true;
}

bool run_server(const Opts& o) {
  Side s;
  if (!open_side(o, &s)) return false;
  ibv_srq_init_attr sa{};
  sa.attr.max_wr = kRecvDepth;
  sa.attr.max_sge = 1;
  s.srq = ibv_create_srq(s.pd, &sa);
  if (s.srq == nullptr) return fail("ibv_create_srq", errno);
  std::vector<std::uint32_t> dctn;
  for (std::uint32_t i = 0; i < 2 * o.rounds + 1; ++i) {
    ibv_qp* q = uroce::examples::dc_make_dct(s.dev, s.pd, s.cq, s.srq, kKey);
    if (q == nullptr) return false;
    dctn.push_back(q->qp_num);
  }
  if (!make_rc(&s)) return false;
  for (int i = 0; i < kRecvDepth; ++i) {
    if (!post_recv(&s, i)) return false;
  }
  std::printf("dc_bench: server: %zu DCTs and an RC QP ready\n", dctn.size());
  std::fflush(stdout);
  const int fd = uroce::examples::oob_accept(o.port);
  if (fd < 0) return fail("accepting the client");
  char line[256];
  std::uint8_t peer_gid[16];
  unsigned peer_qpn = 0;
  if (!uroce::examples::oob_read_line(fd, line, sizeof line) ||
      std::sscanf(line, "%x", &peer_qpn) != 1 || !parse_gid(line, peer_gid)) {
    return fail("reading the client's line");
  }
  char rest[128];
  std::snprintf(rest, sizeof rest, "%06x %016" PRIx64 " %08x %zu", s.rc->qp_num,
                reinterpret_cast<std::uint64_t>(s.write_area()), s.mr->rkey, dctn.size());
  if (!send_gid_line(fd, s.dev.gid.raw, rest) ||
      !uroce::examples::oob_write_all(fd, dctn.data(), dctn.size() * sizeof dctn[0]) ||
      !connect_rc(&s, peer_qpn, peer_gid)) {
    return fail("sending the DCT numbers");
  }

  // Receives until the client's "DONE SENDS": every SEND's bytes checked.
  std::uint64_t recvs = 0, bad = 0;
  bool ok = true;
  pollfd pfd{fd, POLLIN, 0};
  for (;;) {
    ibv_wc wc[32];
    const int n = ibv_poll_cq(s.cq, 32, wc);
    if (n < 0) return fail("ibv_poll_cq", EIO);
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_RECV) {
        std::printf("dc_bench: server: completion %s opcode %d FAILED\n",
                    ibv_wc_status_str(wc[i].status), wc[i].opcode);
        ok = false;
        continue;
      }
      ++recvs;
      const int slot = static_cast<int>(wc[i].wr_id);
      if (!check(s.slot(slot), wc[i].byte_len)) ++bad;
      ok = post_recv(&s, slot) && ok;
    }
    if (n > 0) continue;
    if (poll(&pfd, 1, 0) > 0) break;
    if (!o.spin) sched_yield();
  }
  unsigned long long sends = 0;
  unsigned wlen = 0;
  if (!uroce::examples::oob_read_line(fd, line, sizeof line) ||
      std::sscanf(line, "DONE %llu %u", &sends, &wlen) != 2 || wlen > kMaxSize) {
    return fail("reading the client's DONE line");
  }
  // Receives the client waited for have all completed here too: a SEND
  // completes at the client only after this side's ACK, sent after the
  // receive's completion was written.
  while (recvs < sends) {
    ibv_wc wc;
    const int n = ibv_poll_cq(s.cq, 1, &wc);
    if (n <= 0) break;
    ++recvs;
    if (wc.status != IBV_WC_SUCCESS || !check(s.slot(static_cast<int>(wc.wr_id)), wc.byte_len)) {
      ++bad;
    }
  }
  bool write_ok = true;
  for (std::uint32_t k = 0; k < wlen; ++k)
    write_ok = write_ok && s.write_area()[k] == pattern(~0u, k);
  if (recvs != sends || bad != 0 || !write_ok) {
    std::printf("dc_bench: server: %" PRIu64 " of %llu SENDs, %" PRIu64
                " with wrong bytes, WRITE area %s: FAILED\n",
                recvs, sends, bad, write_ok ? "ok" : "wrong");
    ok = false;
  } else {
    std::printf("dc_bench: server: %" PRIu64 " SENDs and the WRITE area, bytes ok\n", recvs);
  }
  const char* verdict = ok ? "OK\n" : "BAD\n";
  uroce::examples::oob_write_all(fd, verdict, std::strlen(verdict));
  close(fd);
  return ok;
}

// ---- the client --------------------------------------------------------

enum class Op { kSend, kWrite };

struct Client {
  Side s;
  ibv_qp* dci = nullptr;
  ibv_qp_ex* x = nullptr;
  uroce_dv_qp_ex* dv = nullptr;
  ibv_ah* ah = nullptr;
  ServerInfo srv;
  std::vector<std::uint32_t> dctn;
  std::uint64_t sends = 0;  // SENDs posted (RC and DC)
  std::uint32_t seq = 0;
};

// Posts one signaled message on the RC QP (dct < 0) or on the DCI to
// DCT `dct`, waits for its completion, and returns the time between the
// two in microseconds (negative after a failure line).
double one(Client& c, const Opts& o, Op op, std::uint32_t len, int dct) {
  std::uint8_t* src = op == Op::kSend ? c.s.slot(0) : c.s.write_area();
  if (op == Op::kSend) fill(src, c.seq++, len);
  const double t0 = now_us();
  if (dct < 0) {
    ibv_sge sge{reinterpret_cast<std::uint64_t>(src), len, c.s.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = 1;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.opcode = op == Op::kSend ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
    wr.wr.rdma.remote_addr = c.srv.addr;
    wr.wr.rdma.rkey = c.srv.rkey;
    ibv_send_wr* bad = nullptr;
    if (int rc = ibv_post_send(c.s.rc, &wr, &bad); rc != 0) return fail("ibv_post_send", rc), -1;
  } else {
    ibv_wr_start(c.x);
    c.x->wr_id = 2;
    c.x->wr_flags = IBV_SEND_SIGNALED;
    if (op == Op::kSend) {
      ibv_wr_send(c.x);
    } else {
      ibv_wr_rdma_write(c.x, c.srv.rkey, c.srv.addr);
    }
    uroce_dv_wr_set_dc_addr(c.dv, c.ah, c.dctn[static_cast<std::size_t>(dct)], kKey);
    ibv_wr_set_sge(c.x, c.s.mr->lkey, reinterpret_cast<std::uint64_t>(src), len);
    if (int rc = ibv_wr_complete(c.x); rc != 0) return fail("ibv_wr_complete", rc), -1;
  }
  if (op == Op::kSend) ++c.sends;
  const double deadline = t0 + kTimeoutS * 1e6;
  for (;;) {
    ibv_wc wc;
    const int n = ibv_poll_cq(c.s.cq, 1, &wc);
    if (n < 0) return fail("ibv_poll_cq", EIO), -1;
    if (n == 1) {
      const double t1 = now_us();
      if (wc.status != IBV_WC_SUCCESS) {
        std::printf("dc_bench: %s completion: %s FAILED\n", dct < 0 ? "RC" : "DC",
                    ibv_wc_status_str(wc.status));
        return -1;
      }
      return t1 - t0;
    }
    if (now_us() > deadline) return fail("waiting for a completion"), -1;
    if (!o.spin) sched_yield();
  }
}

struct Stats {
  double p50 = 0, p99 = 0;
  std::size_t n = 0;
};
Stats stats(std::vector<double> v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.p50 = v[v.size() / 2];
  s.p99 = v[std::min(v.size() - 1, v.size() * 99 / 100)];
  return s;
}

// One operation's K rounds (the file's header comment). DCT `base` is
// the first one talked to; base + 1 .. base + K are new.
bool measure(Client& c, const Opts& o, Op op, std::uint32_t len, std::uint32_t base, double cold) {
  std::vector<double> rc, steady, first;
  const int b = static_cast<int>(base);
  for (int w = 0; w < 20; ++w) {  // warm-up of both QPs (the rings' first touch)
    if (one(c, o, op, len, -1) < 0 || one(c, o, op, len, b) < 0) return false;
  }
  int cur = b;
  for (std::uint32_t r = 0; r < o.rounds; ++r) {
    for (std::uint32_t m = 0; m < o.per; ++m) {
      const double t = one(c, o, op, len, -1);
      if (t < 0) return false;
      rc.push_back(t);
    }
    for (std::uint32_t m = 0; m < o.per + 1; ++m) {
      const double t = one(c, o, op, len, cur);
      if (t < 0) return false;
      if (m > 0) steady.push_back(t);
    }
    cur = b + 1 + static_cast<int>(r);
    const double t = one(c, o, op, len, cur);
    if (t < 0) return false;
    first.push_back(t);
  }
  const Stats r = stats(rc), st = stats(steady), f = stats(first);
  const char* name = op == Op::kSend ? "send" : "write";
  std::printf(
      "dc_bench: %s %u B: RC steady p50 %.1f p99 %.1f us (%zu), DC steady p50 %.1f p99 %.1f us "
      "(%zu), DC first p50 %.1f p99 %.1f us (%zu new DCTs); first/steady p50 %.2f, "
      "first/RC p50 %.2f\n",
      name, len, r.p50, r.p99, r.n, st.p50, st.p99, st.n, f.p50, f.p99, f.n, f.p50 / st.p50,
      f.p50 / r.p50);
  std::printf(
      "dc_bench_json {\"op\":\"%s\",\"size\":%u,\"rc\":{\"p50\":%.2f,\"p99\":%.2f,\"n\":%zu},"
      "\"dc_steady\":{\"p50\":%.2f,\"p99\":%.2f,\"n\":%zu},"
      "\"dc_first\":{\"p50\":%.2f,\"p99\":%.2f,\"n\":%zu},\"cold_us\":%.2f}\n",
      name, len, r.p50, r.p99, r.n, st.p50, st.p99, st.n, f.p50, f.p99, f.n, cold);
  return true;
}

bool run_client(const Opts& o) {
  Client c;
  if (!open_side(o, &c.s) || !make_rc(&c.s)) return false;
  c.dci = uroce::examples::dc_make_dci(c.s.dev, c.s.pd, c.s.cq, 4);
  if (c.dci == nullptr) return false;
  c.x = ibv_qp_to_qp_ex(c.dci);
  c.dv = c.x != nullptr ? uroce_dv_qp_ex_from_ibv_qp_ex(c.x) : nullptr;
  if (c.dv == nullptr) return fail("uroce_dv_qp_ex_from_ibv_qp_ex", errno);
  const int fd = uroce::examples::oob_connect(o.server, o.port);
  if (fd < 0) return fail("connecting to the server");
  char mine[32], line[256];
  std::snprintf(mine, sizeof mine, "%06x", c.s.rc->qp_num);
  unsigned qpn = 0, rkey = 0, n = 0;
  unsigned long long addr = 0;
  if (!send_gid_line(fd, c.s.dev.gid.raw, mine) ||
      !uroce::examples::oob_read_line(fd, line, sizeof line) ||
      std::sscanf(line, "%x %llx %x %u", &qpn, &addr, &rkey, &n) != 4 ||
      !parse_gid(line, c.srv.gid) || n != 2 * o.rounds + 1) {
    return fail("reading the server's line (are -k the same on both sides?)");
  }
  c.srv.rc_qpn = qpn;
  c.srv.addr = addr;
  c.srv.rkey = rkey;
  c.dctn.resize(n);
  if (!uroce::examples::oob_read_all(fd, c.dctn.data(), n * sizeof c.dctn[0])) {
    return fail("reading the DCT numbers");
  }
  if (!connect_rc(&c.s, qpn, c.srv.gid)) return false;
  c.ah = uroce::examples::dc_make_ah(c.s.dev, c.s.pd, c.srv.gid);
  if (c.ah == nullptr) return false;
  for (std::uint32_t k = 0; k < o.write_size; ++k) c.s.write_area()[k] = pattern(~0u, k);

  // The process's first DC message, to DCT 0 (the DCI's, the AH's and the
  // rings' first use are in it), then the two operations.
  const double cold = one(c, o, Op::kSend, o.send_size, 0);
  bool ok = cold >= 0 && measure(c, o, Op::kSend, o.send_size, 0, cold) &&
            measure(c, o, Op::kWrite, o.write_size, o.rounds, cold);
  std::snprintf(line, sizeof line, "DONE %" PRIu64 " %u\n", c.sends, ok ? o.write_size : 0u);
  uroce::examples::oob_write_all(fd, line, std::strlen(line));
  if (!uroce::examples::oob_read_line(fd, line, sizeof line)) return fail("the server's verdict");
  close(fd);
  if (std::strcmp(line, "OK") != 0) return fail("the server's checks");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  uroce::examples::g_prog = "dc_bench";
  Opts o;
  static const option kLong[] = {{"spin", no_argument, nullptr, 'S'}, {nullptr, 0, nullptr, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "d:p:g:k:m:s:w:h", kLong, nullptr)) != -1) {
    switch (c) {
      case 'd': o.dev = optarg; break;
      case 'p': o.port = std::atoi(optarg); break;
      case 'g': o.gid_index = std::atoi(optarg); break;
      case 'k': o.rounds = static_cast<std::uint32_t>(std::strtoul(optarg, nullptr, 0)); break;
      case 'm': o.per = static_cast<std::uint32_t>(std::strtoul(optarg, nullptr, 0)); break;
      case 's': o.send_size = static_cast<std::uint32_t>(std::strtoul(optarg, nullptr, 0)); break;
      case 'w': o.write_size = static_cast<std::uint32_t>(std::strtoul(optarg, nullptr, 0)); break;
      case 'S': o.spin = true; break;
      default:
        std::fprintf(stderr,
                     "usage: %s [-d DEV] [-p PORT] [-g GID_INDEX] [-k NEW_DCTS] [-m PER_ROUND] "
                     "[-s SEND_SIZE] [-w WRITE_SIZE] [--spin] [SERVER]\n",
                     argv[0]);
        return 2;
    }
  }
  if (optind < argc) o.server = argv[optind];
  if (o.rounds == 0 || o.rounds > kMaxRounds || o.per == 0 || o.send_size < 4 ||
      o.send_size > kMaxSize || o.write_size == 0 || o.write_size > kMaxSize) {
    std::fprintf(stderr, "dc_bench: -k 1..%u, -m from 1, -s 4..%u and -w 1..%u\n", kMaxRounds,
                 kMaxSize, kMaxSize);
    return 2;
  }
  const bool ok = o.server != nullptr ? run_client(o) : run_server(o);
  if (!ok) return 1;
  std::printf("dc_bench: all passed\n");
  return 0;
}
