// hostile_victim: the verbs side of the hostile-peer suite (hostile.sh,
// hostile_peer.py). It owns the memory a hostile RoCEv2 peer attacks and
// reports, on request, every completion and every byte of that memory.
//
// Driven by one command per line on stdin; answers one JSON line on stdout
// per command (`{"ok":false,"error":...}` when a verb fails).
//
//   setup main|tenant   open uroce0 (or $HOSTILE_DEVICE; GID index 1 or
//                       $HOSTILE_GID_INDEX); main: PDs pd1 and pd2 and the
//                       regions below; tenant: regions "t" and "recv" in
//                       a PD of its own (another process's memory, for
//                       the wrong-PD case)
//   info                the port GID and each region's target address,
//                       length and key
//   qp PD ACCESS PEER_QPN PEER_PSN PEER_GID NRECV RECV_LEN [rc|uc|ud]
//                       a CQ and a QP (RC unless named) in PD with QP access
//                       flags ACCESS, NRECV receives of RECV_LEN bytes posted
//                       from region "recv" (wr_id 1000 + i, at offset
//                       i * RECV_LEN), brought to RTS against the peer (path
//                       MTU 1024; RC: timeout 10, retry_cnt 1, rnr_retry 0;
//                       UD: Q_Key kQkey, the peer's numbers unused); answers
//                       its QPN and send PSN and an id for the commands below
//   send ID WR_ID REGION OFF LEN         a signaled SEND out of REGION
//   read ID WR_ID REGION OFF LEN RADDR RKEY   a signaled READ into REGION
//   poll ID N MS        waits up to MS ms for N completions and returns them
//   finish ID           moves the QP to ERR, collects every outstanding
//                       completion (receives and sends flush), destroys it
//   dump REGION         the hex of the whole buffer: guard, target, guard
//   dereg REGION        deregisters the region (its key becomes stale)
//   quit
//
// Every region is one page-aligned buffer of guard (4 KiB) | target (4 KiB)
// | guard (4 KiB) filled with a pattern of its own; only the target is
// registered. The peer compares dumps against its model of what may change.
#include <infiniband/verbs.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kGuard = 4096;
constexpr std::size_t kTarget = 4096;
constexpr std::size_t kBuf = kGuard + kTarget + kGuard;
// The Q_Key of every UD QP (not a controlled one: bit 31 clear).
constexpr std::uint32_t kQkey = 0x2A2A2A2A;

struct Region {
  std::uint8_t* buf = nullptr;
  ibv_mr* mr = nullptr;
  std::uint32_t key = 0;  // kept after dereg: the stale key
};

struct Qp {
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  std::uint32_t outstanding = 0;  // posted WRs not completed yet
};

ibv_context* ctx = nullptr;
std::map<std::string, ibv_pd*> pds;
std::map<std::string, Region> regions;
std::map<int, Qp> qps;
int next_qp_id = 1;
ibv_gid gid{};

void reply_error(const std::string& what) {
  std::printf("{\"ok\":false,\"error\":\"%s: %s\"}\n", what.c_str(), std::strerror(errno));
  std::fflush(stdout);
}

void reply(const std::string& body) {
  std::printf("{\"ok\":true%s%s}\n", body.empty() ? "" : ",", body.c_str());
  std::fflush(stdout);
}

// The device and the GID index of its IPv4-mapped RoCE v2 GID: uroce0 and 1,
// or HOSTILE_DEVICE and HOSTILE_GID_INDEX (the same victim against rxe0).
const char* device_name() {
  const char* d = std::getenv("HOSTILE_DEVICE");
  return d != nullptr ? d : "uroce0";
}

int gid_index() {
  const char* g = std::getenv("HOSTILE_GID_INDEX");
  return g != nullptr ? std::atoi(g) : 1;
}

bool add_region(const std::string& name, const std::string& pd, int access, std::uint8_t seed) {
  Region r;
  r.buf = static_cast<std::uint8_t*>(std::aligned_alloc(4096, kBuf));
  if (r.buf == nullptr) return false;
  for (std::size_t i = 0; i < kBuf; ++i) r.buf[i] = static_cast<std::uint8_t>(i * 31 + seed);
  r.mr = ibv_reg_mr(pds.at(pd), r.buf + kGuard, kTarget, access);
  if (r.mr == nullptr) return false;
  r.key = r.mr->rkey;
  regions[name] = r;
  return true;
}

bool setup(const std::string& mode) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) return false;
  for (int i = 0; i < n && ctx == nullptr; ++i) {
    if (std::strcmp(ibv_get_device_name(list[i]), device_name()) == 0) {
      ctx = ibv_open_device(list[i]);
    }
  }
  ibv_free_device_list(list);
  if (ctx == nullptr || ibv_query_gid(ctx, 1, gid_index(), &gid) != 0) return false;
  constexpr int kLw = IBV_ACCESS_LOCAL_WRITE;
  constexpr int kAll =
      kLw | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  if (mode == "tenant") {
    pds["pd1"] = ibv_alloc_pd(ctx);
    return pds["pd1"] != nullptr && add_region("t", "pd1", kAll, 0x71) &&
           add_region("recv", "pd1", kLw, 0x72);
  }
  pds["pd1"] = ibv_alloc_pd(ctx);
  pds["pd2"] = ibv_alloc_pd(ctx);
  if (pds["pd1"] == nullptr || pds["pd2"] == nullptr) return false;
  // Registration order fixes the slots: the secrets follow "rw" directly,
  // where a sequential key allocator puts the keys a peer would guess.
  return add_region("rw", "pd1", kAll, 0x11) && add_region("secret0", "pd1", kAll, 0x21) &&
         add_region("secret1", "pd1", kAll, 0x22) && add_region("secret2", "pd1", kAll, 0x23) &&
         add_region("secret3", "pd1", kAll, 0x24) &&
         add_region("ro", "pd1", IBV_ACCESS_REMOTE_READ, 0x31) &&
         add_region("noatomic", "pd1", kLw | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
                    0x41) &&
         add_region("otherpd", "pd2", kAll, 0x51) && add_region("stale", "pd1", kAll, 0x61) &&
         add_region("recv", "pd1", kLw, 0x81) && add_region("local", "pd1", kLw, 0x91);
}

std::string info() {
  std::ostringstream o;
  o << "\"gid\":\"";
  for (std::uint8_t b : gid.raw) {
    char h[3];
    std::snprintf(h, sizeof h, "%02x", b);
    o << h;
  }
  o << "\",\"regions\":{";
  bool first = true;
  for (const auto& [name, r] : regions) {
    if (!first) o << ",";
    first = false;
    o << "\"" << name << "\":{\"addr\":" << reinterpret_cast<std::uintptr_t>(r.buf + kGuard)
      << ",\"len\":" << kTarget << ",\"key\":" << r.key << ",\"guard\":" << kGuard << "}";
  }
  o << "}";
  return o.str();
}

bool to_init(ibv_qp* qp, ibv_qp_type type, int access) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.pkey_index = 0;
  a.qp_access_flags = access;
  a.qkey = kQkey;
  const int last = type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
  return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | last) == 0;
}

bool to_rts(ibv_qp* qp, ibv_qp_type type, std::uint32_t peer_qpn, std::uint32_t peer_psn,
            const ibv_gid& peer_gid, std::uint32_t my_psn) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  int mask = IBV_QP_STATE;
  if (type != IBV_QPT_UD) {
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = peer_qpn;
    a.rq_psn = peer_psn;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = peer_gid;
    a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(gid_index());
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.port_num = 1;
    mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
  }
  if (type == IBV_QPT_RC) {
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = 1;
    mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  }
  if (ibv_modify_qp(qp, &a, mask) != 0) return false;
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = my_psn;
  mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
  if (type == IBV_QPT_RC) {
    a.timeout = 10;
    a.retry_cnt = 1;
    a.rnr_retry = 0;
    a.max_rd_atomic = 4;
    mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
  }
  return ibv_modify_qp(qp, &a, mask) == 0;
}

bool parse_gid(const std::string& hex, ibv_gid* g) {
  if (hex.size() != 32) return false;
  for (int i = 0; i < 16; ++i)
    g->raw[i] = static_cast<std::uint8_t>(std::stoul(hex.substr(i * 2, 2), nullptr, 16));
  return true;
}

std::string wc_json(const ibv_wc& wc) {
  std::ostringstream o;
  o << "{\"wr_id\":" << wc.wr_id << ",\"status\":" << wc.status << ",\"status_str\":\""
    << ibv_wc_status_str(wc.status) << "\"";
  if (wc.status == IBV_WC_SUCCESS) {
    o << ",\"opcode\":" << wc.opcode << ",\"byte_len\":" << wc.byte_len
      << ",\"wc_flags\":" << wc.wc_flags;
    if ((wc.wc_flags & IBV_WC_WITH_INV) != 0) o << ",\"invalidated\":" << wc.invalidated_rkey;
  }
  o << "}";
  return o.str();
}

// Polls QP `q` until `n` completions or `ms` milliseconds.
std::string poll(Qp& q, std::uint32_t n, int ms) {
  std::ostringstream o;
  o << "\"wc\":[";
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  std::uint32_t got = 0;
  while (got < n && std::chrono::steady_clock::now() < end) {
    ibv_wc wc{};
    const int r = ibv_poll_cq(q.cq, 1, &wc);
    if (r < 0) break;
    if (r == 0) continue;
    if (got != 0) o << ",";
    o << wc_json(wc);
    ++got;
    --q.outstanding;
  }
  o << "]";
  return o.str();
}

Region* region(const std::string& name) {
  auto it = regions.find(name);
  return it == regions.end() ? nullptr : &it->second;
}

void run(const std::string& line) {
  std::istringstream in(line);
  std::string cmd;
  in >> cmd;
  if (cmd == "setup") {
    std::string mode;
    in >> mode;
    if (!setup(mode)) return reply_error("setup " + mode);
    return reply("");
  }
  if (cmd == "info") return reply(info());
  if (cmd == "qp") {
    std::string pd, gid_hex;
    int access = 0;
    std::uint32_t peer_qpn = 0, peer_psn = 0, nrecv = 0, recv_len = 0;
    std::string kind = "rc";
    in >> pd >> access >> peer_qpn >> peer_psn >> gid_hex >> nrecv >> recv_len;
    const bool complete = static_cast<bool>(in);
    in >> kind;
    const ibv_qp_type type = kind == "uc" ? IBV_QPT_UC : kind == "ud" ? IBV_QPT_UD : IBV_QPT_RC;
    ibv_gid peer_gid{};
    if (!complete || !parse_gid(gid_hex, &peer_gid) || pds.count(pd) == 0 ||
        regions.count("recv") == 0 || nrecv * recv_len > kTarget ||
        (kind != "rc" && kind != "uc" && kind != "ud")) {
      errno = EINVAL;
      return reply_error("qp arguments");
    }
    Qp q;
    q.cq = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
    if (q.cq == nullptr) return reply_error("create_cq");
    ibv_qp_init_attr ia{};
    ia.send_cq = ia.recv_cq = q.cq;
    ia.qp_type = type;
    ia.cap.max_send_wr = 16;
    ia.cap.max_recv_wr = 16;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    q.qp = ibv_create_qp(pds[pd], &ia);
    if (q.qp == nullptr) return reply_error("create_qp");
    if (!to_init(q.qp, type, access)) return reply_error("modify to INIT");
    Region& rv = regions["recv"];
    for (std::uint32_t i = 0; i < nrecv; ++i) {
      ibv_sge sge{reinterpret_cast<std::uintptr_t>(rv.buf + kGuard + i * recv_len), recv_len,
                  rv.mr->lkey};
      ibv_recv_wr wr{};
      ibv_recv_wr* bad = nullptr;
      wr.wr_id = 1000 + i;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      if ((errno = ibv_post_recv(q.qp, &wr, &bad)) != 0) return reply_error("post_recv");
      ++q.outstanding;
    }
    const std::uint32_t my_psn = (q.qp->qp_num * 2654435761u) & 0xffffff;
    if (!to_rts(q.qp, type, peer_qpn, peer_psn, peer_gid, my_psn)) {
      return reply_error("modify to RTS");
    }
    const int id = next_qp_id++;
    qps[id] = q;
    return reply("\"id\":" + std::to_string(id) + ",\"qpn\":" + std::to_string(q.qp->qp_num) +
                 ",\"psn\":" + std::to_string(my_psn));
  }
  if (cmd == "send" || cmd == "read") {
    int id = 0;
    std::uint64_t wr_id = 0, raddr = 0;
    std::string name;
    std::uint32_t off = 0, len = 0, rkey = 0;
    in >> id >> wr_id >> name >> off >> len;
    if (cmd == "read") in >> raddr >> rkey;
    Region* r = region(name);
    if (!in || qps.count(id) == 0 || r == nullptr || r->mr == nullptr || off + len > kTarget) {
      errno = EINVAL;
      return reply_error(cmd + " arguments");
    }
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(r->buf + kGuard + off), len, r->mr->lkey};
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.opcode = cmd == "send" ? IBV_WR_SEND : IBV_WR_RDMA_READ;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    if ((errno = ibv_post_send(qps[id].qp, &wr, &bad)) != 0) return reply_error("post_send");
    ++qps[id].outstanding;
    return reply("");
  }
  if (cmd == "poll") {
    int id = 0, ms = 0;
    std::uint32_t n = 0;
    in >> id >> n >> ms;
    if (qps.count(id) == 0) {
      errno = EINVAL;
      return reply_error("poll arguments");
    }
    return reply(poll(qps[id], n, ms));
  }
  if (cmd == "finish") {
    int id = 0;
    in >> id;
    if (qps.count(id) == 0) {
      errno = EINVAL;
      return reply_error("finish arguments");
    }
    Qp& q = qps[id];
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_ERR;
    if (ibv_modify_qp(q.qp, &a, IBV_QP_STATE) != 0) return reply_error("modify to ERR");
    const std::string wcs = poll(q, q.outstanding, 10000);
    const std::uint32_t left = q.outstanding;
    if (ibv_destroy_qp(q.qp) != 0 || ibv_destroy_cq(q.cq) != 0) return reply_error("destroy");
    qps.erase(id);
    return reply(wcs + ",\"not_completed\":" + std::to_string(left));
  }
  if (cmd == "dump") {
    std::string name;
    in >> name;
    Region* r = region(name);
    if (r == nullptr) {
      errno = EINVAL;
      return reply_error("dump arguments");
    }
    std::string hex(kBuf * 2, '0');
    static const char* digits = "0123456789abcdef";
    for (std::size_t i = 0; i < kBuf; ++i) {
      hex[2 * i] = digits[r->buf[i] >> 4];
      hex[2 * i + 1] = digits[r->buf[i] & 15];
    }
    return reply("\"hex\":\"" + hex + "\"");
  }
  if (cmd == "dereg") {
    std::string name;
    in >> name;
    Region* r = region(name);
    if (r == nullptr || r->mr == nullptr) {
      errno = EINVAL;
      return reply_error("dereg arguments");
    }
    if (ibv_dereg_mr(r->mr) != 0) return reply_error("dereg_mr");
    r->mr = nullptr;
    return reply("");
  }
  errno = EINVAL;
  reply_error("unknown command " + cmd);
}

}  // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "quit") break;
    run(line);
  }
  return 0;
}
