// The runner's values (numbers, addresses, keys, bytes) and its setup and
// action lines: qp, mr, mem_set, post_send, post_recv, modify.
#include "tests/datapath/transport/conformance/runner_internal.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "tests/datapath/transport/conformance/names.h"

namespace uroce::transport::conformance::detail {

std::optional<std::uint64_t> Runner::num_opt(const Line& l, std::string_view key) const {
  const std::string* v = l.find(key);
  if (v == nullptr) return std::nullopt;
  const auto n = parse_number(*v);
  if (!n) fail(l, "bad number " + std::string(key) + "=" + *v);
  return n;
}
std::uint64_t Runner::num(const Line& l, std::string_view key, std::uint64_t dflt) const {
  return num_opt(l, key).value_or(dflt);
}
std::uint64_t Runner::num_req(const Line& l, std::string_view key) const {
  const auto n = num_opt(l, key);
  if (!n) fail(l, l.cmd + " needs " + std::string(key) + "=");
  return *n;
}

Region& Runner::region(const Line& l, std::string_view name) {
  for (auto& r : regions_) {
    if (r->name == name) return *r;
  }
  fail(l, "no memory region named '" + std::string(name) + "'");
}

// NAME, NAME+OFF, or a number.
std::uint64_t Runner::addr_value(const Line& l, std::string_view key, std::string_view v) const {
  if (auto n = parse_number(v)) return *n;
  const std::size_t plus = v.find('+');
  const std::string_view name = v.substr(0, plus);
  std::uint64_t off = 0;
  if (plus != std::string_view::npos) {
    const auto o = parse_number(v.substr(plus + 1));
    if (!o) fail(l, "bad offset in " + std::string(key) + "=" + std::string(v));
    off = *o;
  }
  for (const auto& r : regions_) {
    if (r->name == name) return r->iova + off;
  }
  fail(l, "bad " + std::string(key) + "=" + std::string(v) + " (a number, NAME or NAME+OFFSET)");
}

std::uint32_t Runner::key_value(const Line& l, std::string_view key, std::string_view v) const {
  if (auto n = parse_number(v)) return static_cast<std::uint32_t>(*n);
  for (const auto& r : regions_) {
    if (r->name == v) return r->key;
  }
  fail(l, "bad " + std::string(key) + "=" + std::string(v) + " (a number or a memory region name)");
}

std::vector<std::uint8_t> Runner::bytes_value(const Line& l, std::string_view v) const {
  if (v.starts_with("0x")) v.remove_prefix(2);
  if (v.size() % 2 != 0) fail(l, "bytes= needs an even number of hex digits");
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < v.size(); i += 2) {
    const auto b = parse_number("0x" + std::string(v.substr(i, 2)));
    if (!b) fail(l, "bad hex in bytes=");
    out.push_back(static_cast<std::uint8_t>(*b));
  }
  return out;
}

std::uint32_t Runner::access_value(const Line& l, std::string_view v) const {
  std::uint32_t a = 0;
  std::size_t pos = 0;
  while (pos <= v.size()) {
    std::size_t comma = v.find(',', pos);
    if (comma == std::string_view::npos) comma = v.size();
    const std::string_view f = v.substr(pos, comma - pos);
    if (f == "lw") a |= access::kLocalWrite;
    else if (f == "rw") a |= access::kRemoteWrite;
    else if (f == "rr") a |= access::kRemoteRead;
    else if (f == "ra") a |= access::kRemoteAtomic;
    else if (f != "none")
      fail(l, "bad access flag '" + std::string(f) + "' (lw, rw, rr, ra, none)");
    pos = comma + 1;
  }
  return a;
}

// The byte pattern of seed S: byte i is (S + i) mod 256.
std::vector<std::uint8_t> pattern(std::uint64_t seed, std::size_t len) {
  std::vector<std::uint8_t> v(len);
  for (std::size_t i = 0; i < len; ++i) v[i] = static_cast<std::uint8_t>(seed + i);
  return v;
}

std::optional<std::vector<std::uint8_t>> Runner::payload(const Line& l) const {
  if (const std::string* b = l.find("bytes")) {
    if (l.find("len") != nullptr || l.find("seed") != nullptr) {
      fail(l, "give either bytes= or len=/seed=");
    }
    return bytes_value(l, *b);
  }
  const auto len = num_opt(l, "len");
  if (!len) {
    if (l.find("seed") != nullptr) fail(l, "seed= needs len=");
    return std::nullopt;
  }
  return pattern(num(l, "seed", 0), *len);
}

// The attributes ibv_modify_qp needs to take a QP of type `t` from the
// state before `to` into `to` (INIT, RTR, RTS), as verbs programs give them.
std::uint32_t connect_mask(QpType t, QpState to) {
  using namespace qp_attr;
  // docs/dc.md, "The interface": a DCI has no destination and no receive
  // side; a DCT stops at RTR, where its AV gives the reply path's class.
  if (t == QpType::kDci) {
    if (to == QpState::kInit) return kState | kPkeyIndex | kPort;
    if (to == QpState::kRtr) return kState | kPathMtu;
    if (to == QpState::kRts) {
      return kState | kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic;
    }
    return kState;
  }
  if (t == QpType::kDct) {
    if (to == QpState::kInit) return kState | kPkeyIndex | kPort | kAccessFlags;
    if (to == QpState::kRtr) return kState | kMinRnrTimer | kAv | kPathMtu;
    return kState;
  }
  switch (to) {
    case QpState::kInit:
      return kState | kPkeyIndex | kPort | (t == QpType::kUd ? kQkey : kAccessFlags);
    case QpState::kRtr:
      if (t == QpType::kRc) {
        return kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer;
      }
      return t == QpType::kUc ? kState | kAv | kPathMtu | kDestQpn | kRqPsn : kState;
    case QpState::kRts:
      if (t == QpType::kRc)
        return kState | kSqPsn | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic;
      return kState | kSqPsn;
    default: return kState;
  }
}

void Runner::cmd_qp(const Line& l) {
  if (qp_) fail(l, "only one qp per script");
  const std::string& t = l.words[0];
  qpn_ = static_cast<std::uint32_t>(num(l, "qpn", 0x11));
  dest_ = static_cast<std::uint32_t>(num(l, "dest", 0x22));
  qkey_ = static_cast<std::uint32_t>(num(l, "qkey", 0x11111111));
  const auto mtu = wire::path_mtu_from_bytes(static_cast<std::uint32_t>(num(l, "mtu", 1024)));
  if (!mtu) fail(l, "mtu= takes 256, 512, 1024, 2048 or 4096");
  QpAttrValues& a = attr_;
  a.qp_access_flags =
      access_value(l, l.find("access") != nullptr ? *l.find("access") : std::string("rw,rr,ra"));
  a.qkey = qkey_;
  a.av = {kPeerMac, kPeerIp, 0, 64};
  a.path_mtu = *mtu;
  a.dest_qp_num = dest_;
  a.rq_psn = static_cast<std::uint32_t>(num(l, "rq_psn", 0));
  a.sq_psn = static_cast<std::uint32_t>(num(l, "sq_psn", 0));
  a.timeout = static_cast<std::uint8_t>(num(l, "timeout", 14));
  a.retry_cnt = static_cast<std::uint8_t>(num(l, "retry_cnt", 7));
  a.rnr_retry = static_cast<std::uint8_t>(num(l, "rnr_retry", 7));
  a.min_rnr_timer = static_cast<std::uint8_t>(num(l, "min_rnr_timer", 12));
  a.max_rd_atomic = static_cast<std::uint8_t>(num(l, "max_rd_atomic", 4));
  a.max_dest_rd_atomic = static_cast<std::uint8_t>(num(l, "max_dest_rd_atomic", 4));
  const auto max_send = static_cast<std::uint32_t>(num(l, "max_send_wr", 64));
  const auto max_recv = static_cast<std::uint32_t>(num(l, "max_recv_wr", 64));
  const bool sig_all = l.has_word("sq_sig_all");
  auto only = [&l](std::initializer_list<std::string_view> allowed) {
    for (const auto& [k, v] : l.kv) {
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
        fail(l, "key '" + k + "' does not apply to a " + l.words[0] + " QP");
      }
    }
    if (l.has_word("homa")) fail(l, "homa applies to an rc QP only");
    if (l.has_word("sr")) fail(l, "sr applies to an rc QP only");
  };
  if (t == "dci" || t == "dct") {
    dc_setup(l);
  } else if (t == "rc") {
    for (const char* k : {"qkey", "key", "log_streams", "log_errored", "idle_disconnect",
                          "contexts", "records_log2", "stale"}) {
      if (l.find(k) != nullptr) fail(l, "key '" + std::string(k) + "' does not apply to a rc QP");
    }
    RcQpConfig c;
    c.qpn = qpn_;
    c.pd = kPd;
    c.local = {kLocalMac, kLocalIp};
    c.max_send_wr = max_send;
    c.max_recv_wr = max_recv;
    c.sq_sig_all = sig_all;
    c.tuning.ack_every = static_cast<std::uint32_t>(num(l, "ack_every", c.tuning.ack_every));
    c.tuning.ack_req_every =
        static_cast<std::uint32_t>(num(l, "ack_req_every", c.tuning.ack_req_every));
    c.tuning.window_psns = static_cast<std::uint32_t>(num(l, "window", c.tuning.window_psns));
    auto d = std::make_unique<RcDriver>(c, mrs_, s_);
    rc_ = d.get();
    qp_ = std::move(d);
    type_ = QpType::kRc;
    homa_setup(l);
  } else if (t == "uc") {
    only({"qpn", "dest", "mtu", "sq_psn", "rq_psn", "access", "max_send_wr", "max_recv_wr"});
    UcQpConfig c;
    c.qpn = qpn_;
    c.pd = kPd;
    c.local = {kLocalMac, kLocalIp};
    c.max_send_wr = max_send;
    c.max_recv_wr = max_recv;
    c.sq_sig_all = sig_all;
    qp_ = std::make_unique<UcDriver>(c, mrs_, s_);
    type_ = QpType::kUc;
  } else if (t == "ud") {
    only({"qpn", "dest", "mtu", "sq_psn", "qkey", "max_send_wr", "max_recv_wr"});
    UdQpConfig c;
    c.qpn = qpn_;
    c.pd = kPd;
    c.local = {kLocalMac, kLocalIp};
    c.port_mtu = *mtu;
    c.max_send_wr = max_send;
    c.max_recv_wr = max_recv;
    c.sq_sig_all = sig_all;
    qp_ = std::make_unique<UdDriver>(c, mrs_, s_);
    type_ = QpType::kUd;
  } else {
    fail(l, "unknown QP type '" + t + "' (rc, uc, ud, dci, dct)");
  }
  for (const QpState st : {QpState::kInit, QpState::kRtr, QpState::kRts}) {
    if (type_ == QpType::kDct && st == QpState::kRts) break;
    a.qp_state = st;
    const int rc = qp_->modify(connect_mask(type_, st), a);
    if (rc != 0) fail(l, "modify to " + state_name(st) + " failed: " + std::to_string(rc));
  }
  // After RTR: the responder's window starts at the expected PSN.
  sr_setup(l);
}

void Runner::cmd_mr(const Line& l) {
  const std::string& name = l.words[0];
  if (std::isdigit(static_cast<unsigned char>(name[0])) || name.find('+') != std::string::npos) {
    fail(l, "a region name starts with a letter and has no '+'");
  }
  for (const auto& r : regions_) {
    if (r->name == name) fail(l, "region '" + name + "' defined twice");
  }
  auto r = std::make_unique<Region>();
  r->name = name;
  const std::uint64_t len = num_req(l, "len");
  if (len == 0 || len > (64u << 20)) fail(l, "len= must be 1 .. 64 MiB");
  r->mem =
      l.find("seed") != nullptr ? pattern(num(l, "seed", 0), len) : std::vector<std::uint8_t>(len);
  r->iova = num(l, "va", 0x10000000ull * (regions_.size() + 1));
  const std::uint32_t acc =
      access_value(l, l.find("access") != nullptr ? *l.find("access") : std::string("lw"));
  PdHandle pd = kPd;
  if (const std::string* p = l.find("pd")) {
    if (*p == "other") pd = kOtherPd;
    else if (*p != "qp") fail(l, "pd= takes qp or other");
  }
  // window=2: the region also gets a type-2 memory window over all of it,
  // bound on the QP, and rkey=/inv= name the window (docs/memory-windows.md).
  const bool window = l.find("window") != nullptr;
  if (window && num(l, "window", 0) != 2) fail(l, "window= takes 2 (a type-2 window)");
  int err = 0;
  r->key =
      mrs_.reg({pd, r->iova, r->mem.size(), window ? acc | access::kMwBind : acc, r->mem.data()},
               &err);
  if (r->key == 0) fail(l, "registering '" + name + "' failed: errno " + std::to_string(err));
  r->lkey = r->key;
  if (window) {
    const std::uint32_t mw = mrs_.alloc_mw(pd, MwType::kType2, &err);
    if (mrs_.bind_mw(MwBind{mw, r->lkey, mw, r->iova, r->mem.size(), acc & access::kRemoteAny}, pd,
                     qpn_, &r->key) != MrError::kOk) {
      fail(l, "binding a window on '" + name + "' failed (a qp line must come first)");
    }
  }
  regions_.push_back(std::move(r));
}

void Runner::cmd_mem_set(const Line& l) {
  Region& r = region(l, l.words[0]);
  const std::uint64_t off = num(l, "off", 0);
  std::vector<std::uint8_t> b;
  if (const auto u = num_opt(l, "u64")) {
    b.resize(8);
    std::memcpy(b.data(), &*u, 8);
  } else if (auto p = payload(l)) {
    b = std::move(*p);
  } else {
    fail(l, "mem_set needs u64=, bytes= or len=/seed=");
  }
  if (off > r.mem.size() || b.size() > r.mem.size() - off) fail(l, "outside the region");
  std::memcpy(r.mem.data() + off, b.data(), b.size());
}

void Runner::cmd_post_send(const Line& l) {
  SendWr w;
  w.wr_id = num_req(l, "wr");
  const std::string* op = l.find("op");
  if (op == nullptr) fail(l, "post_send needs op=");
  struct NamedWr {
    std::string_view name;
    WrOpcode op;
  };
  constexpr NamedWr kOps[] = {
      {"send", WrOpcode::kSend},
      {"send_imm", WrOpcode::kSendImm},
      {"send_inv", WrOpcode::kSendInv},
      {"write", WrOpcode::kRdmaWrite},
      {"write_imm", WrOpcode::kRdmaWriteImm},
      {"read", WrOpcode::kRdmaRead},
      {"cmp_swap", WrOpcode::kCmpSwap},
      {"fetch_add", WrOpcode::kFetchAdd},
      {"local_inv", WrOpcode::kLocalInv},
  };
  bool found = false;
  for (const NamedWr& n : kOps) {
    if (n.name == *op) {
      w.opcode = n.op;
      found = true;
    }
  }
  if (!found) fail(l, "bad op=" + *op);
  if (l.has_word("signaled")) w.flags |= send_flag::kSignaled;
  if (l.has_word("fence")) w.flags |= send_flag::kFence;
  if (l.has_word("solicited")) w.flags |= send_flag::kSolicited;
  if (l.has_word("inline")) {
    w.flags |= send_flag::kInline;
    const std::uint64_t len = num_req(l, "len");
    if (len > w.inline_data.size()) fail(l, "inline data too long for the WR");
    const auto p = pattern(num(l, "seed", 0), len);
    std::memcpy(w.inline_data.data(), p.data(), len);
    w.inline_len = static_cast<std::uint32_t>(len);
  } else if (const std::string* m = l.find("mr")) {
    Region& r = region(l, *m);
    const std::uint64_t off = num(l, "off", 0);
    const auto len = num_opt(l, "len");
    w.num_sge = 1;
    w.sge[0] = {r.iova + off, static_cast<std::uint32_t>(len.value_or(r.mem.size() - off)), r.lkey};
    if (l.find("seed") != nullptr) fail(l, "seed= is for inline data; fill the region instead");
  } else if (num(l, "len", 0) != 0) {
    fail(l, "len= needs mr= (or inline)");
  }
  if (const std::string* rem = l.find("remote")) {
    w.remote_addr = addr_value(l, "remote", *rem);
    const std::size_t plus = rem->find('+');
    const std::string name = rem->substr(0, plus);
    if (!parse_number(*rem)) w.rkey = key_value(l, "remote", name);
  }
  if (const std::string* k = l.find("rkey")) w.rkey = key_value(l, "rkey", *k);
  if (const auto imm = num_opt(l, "imm")) {
    w.imm_or_inv = htonl(static_cast<std::uint32_t>(*imm));
  }
  if (const std::string* inv = l.find("inv")) w.imm_or_inv = key_value(l, "inv", *inv);
  if (w.opcode == WrOpcode::kFetchAdd) w.compare_add = num(l, "add", 0);
  if (w.opcode == WrOpcode::kCmpSwap) {
    w.compare_add = num(l, "compare", 0);
    w.swap = num(l, "swap", 0);
  }
  if (type_ == QpType::kDci) {
    dc_wr(l, w);
  } else if (l.find("dctn") != nullptr || l.find("dc_key") != nullptr ||
             l.find("stream") != nullptr) {
    fail(l, "dctn=, dc_key= and stream= are for DCI QPs");
  }
  if (type_ == QpType::kUd) {
    w.ud.dmac = kPeerMac;
    w.ud.dip = kPeerIp;
    w.ud.remote_qpn = static_cast<std::uint32_t>(num(l, "dest_qpn", dest_));
    w.ud.remote_qkey = static_cast<std::uint32_t>(num(l, "qkey", qkey_));
  } else if (l.find("dest_qpn") != nullptr || l.find("qkey") != nullptr) {
    fail(l, "dest_qpn= and qkey= are for UD QPs");
  }
  check_errno(l, qp_->post_send(w), "post_send");
  // The engine's doorbell serves the QP whatever it reports.
  after_event(now_, true);
}

void Runner::cmd_post_recv(const Line& l) {
  RecvWr r;
  r.wr_id = num_req(l, "wr");
  if (const std::string* m = l.find("mr")) {
    Region& reg = region(l, *m);
    const std::uint64_t off = num(l, "off", 0);
    r.num_sge = 1;
    r.sge[0] = {reg.iova + off, static_cast<std::uint32_t>(num(l, "len", reg.mem.size() - off)),
                reg.lkey};
  } else if (num(l, "len", 0) != 0) {
    fail(l, "len= needs mr=");
  }
  check_errno(l, qp_->post_recv(r), "post_recv");
  after_event(now_);
}

QpState state_value(const Line& l, std::string_view v) {
  for (const NamedState& n : kStates) {
    if (n.name == v) return n.st;
  }
  fail(l, "bad state '" + std::string(v) + "' (reset init rtr rts sqd sqe err)");
}

// State only, except on the way up again after RESET: RESET->INIT,
// INIT->RTR and RTR->RTS take the qp line's attributes (sq_psn= and rq_psn=
// may change), as a program reconnecting a QP gives them again.
void Runner::cmd_modify(const Line& l) {
  const std::string* st = l.find("state");
  if (st == nullptr) fail(l, "modify needs state=");
  const QpState to = state_value(l, *st);
  const QpState from = qp_->state();
  const bool up = (from == QpState::kReset && to == QpState::kInit) ||
                  (from == QpState::kInit && to == QpState::kRtr) ||
                  (from == QpState::kRtr && to == QpState::kRts);
  if (!up && (l.find("sq_psn") != nullptr || l.find("rq_psn") != nullptr)) {
    fail(l, "sq_psn= and rq_psn= go with a modify from reset, init or rtr up to rts");
  }
  int rc = 0;
  if (up) {
    attr_.sq_psn = static_cast<std::uint32_t>(num(l, "sq_psn", attr_.sq_psn));
    attr_.rq_psn = static_cast<std::uint32_t>(num(l, "rq_psn", attr_.rq_psn));
    attr_.qp_state = to;
    rc = qp_->modify(connect_mask(type_, to), attr_);
  } else {
    rc = qp_->modify_state(to);
  }
  check_errno(l, rc, "modify");
  // The engine serves a modified QP (a flush, or WRs freed by RTS).
  after_event(now_, true);
}

}  // namespace uroce::transport::conformance::detail
