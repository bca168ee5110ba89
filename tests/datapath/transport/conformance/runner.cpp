#include "tests/datapath/transport/conformance/runner.h"

#include <arpa/inet.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <sstream>
#include <vector>

#include "datapath/wire/builder.h"
#include "datapath/wire/parser.h"
#include "tests/datapath/transport/conformance/names.h"
#include "tests/datapath/transport/conformance/qp_driver.h"
#include "tests/datapath/transport/conformance/script.h"

namespace uroce::transport::conformance {

namespace {

// A failed check or a bad value; caught by run_script. Exceptions are fine
// here: this is test code, off any datapath.
struct Failure {
  int line;
  std::string message;
};

[[noreturn]] void fail(const Line& l, std::string msg) { throw Failure{l.no, std::move(msg)}; }

// Addresses of the QP under test and of the scripted peer.
const wire::MacAddr kLocalMac{{2, 0, 0, 0, 0, 0xa}};
const wire::MacAddr kPeerMac{{2, 0, 0, 0, 0, 0xb}};
const wire::Ipv4Addr kLocalIp{0x0a000001};
const wire::Ipv4Addr kPeerIp{0x0a000002};
constexpr PdHandle kPd = 7;
constexpr PdHandle kOtherPd = 8;

struct Region {
  std::string name;
  std::uint32_t key = 0;
  std::uint64_t iova = 0;
  std::vector<std::uint8_t> mem;
};

class Runner {
 public:
  void run(const std::vector<Line>& lines);

 private:
  // Values.
  std::uint64_t num(const Line& l, std::string_view key, std::uint64_t dflt) const;
  std::uint64_t num_req(const Line& l, std::string_view key) const;
  std::optional<std::uint64_t> num_opt(const Line& l, std::string_view key) const;
  std::uint64_t addr_value(const Line& l, std::string_view key, std::string_view v) const;
  std::uint32_t key_value(const Line& l, std::string_view key, std::string_view v) const;
  std::vector<std::uint8_t> bytes_value(const Line& l, std::string_view v) const;
  std::uint32_t access_value(const Line& l, std::string_view v) const;
  Region& region(const Line& l, std::string_view name);
  // Payload bytes a line names (bytes=, or len= with seed=).
  std::optional<std::vector<std::uint8_t>> payload(const Line& l) const;

  // Time.
  void advance_to(const Line& l, TimeNs t);
  void stamp();
  void after_event(TimeNs now);

  // Commands.
  void cmd_qp(const Line& l);
  void cmd_mr(const Line& l);
  void cmd_mem_set(const Line& l);
  void cmd_post_send(const Line& l);
  void cmd_post_recv(const Line& l);
  void cmd_modify(const Line& l);
  void cmd_recv(const Line& l);
  void cmd_send(const Line& l);
  void cmd_quiet(const Line& l);
  void cmd_wc(const Line& l);
  void cmd_state(const Line& l);
  void cmd_counter(const Line& l);
  void cmd_expect_mem(const Line& l);
  void cmd_expect_grh(const Line& l);
  void check_errno(const Line& l, int rc, std::string_view what);
  void check_time(const Line& l, TimeNs happened, std::string_view what) const;
  void leftovers(const Line* l) const;

  MrTable mrs_{64};
  std::vector<std::unique_ptr<Region>> regions_;
  Sinks s_;
  std::unique_ptr<Driver> qp_;
  QpType type_ = QpType::kRc;
  std::uint32_t qpn_ = 0;
  std::uint32_t dest_ = 0;
  std::uint32_t qkey_ = 0;
  TimeNs now_ = 0;
  // Emission times of s_.tx.frames / completions, and how many were claimed.
  std::vector<TimeNs> frame_t_, scq_t_, rcq_t_;
  std::size_t frames_seen_ = 0, scq_seen_ = 0, rcq_seen_ = 0;
  std::vector<std::uint8_t> last_injected_;
};

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

void Runner::stamp() {
  frame_t_.resize(s_.tx.frames.size(), now_);
  scq_t_.resize(s_.scq.wc.size(), now_);
  rcq_t_.resize(s_.rcq.wc.size(), now_);
}

void Runner::after_event(TimeNs now) {
  stamp();
  qp_->pump(now);
  stamp();
}

// Fires every timer due at or before t, each at its own deadline, then
// moves the clock to t.
void Runner::advance_to(const Line& l, TimeNs t) {
  if (t < now_) {
    fail(l, "time goes backwards: " + format_time(t) + " after " + format_time(now_));
  }
  if (!qp_) {
    now_ = t;
    return;
  }
  for (int guard = 0; guard < 1000000; ++guard) {
    auto it = s_.timer.at.find(qpn_);
    if (it == s_.timer.at.end() || it->second > t) break;
    now_ = std::max(now_, it->second);
    s_.timer.at.erase(it);
    qp_->fire_timer(now_);
    after_event(now_);
  }
  now_ = t;
  after_event(now_);
}

void Runner::check_errno(const Line& l, int rc, std::string_view what) {
  std::string want = "ok";
  if (const std::string* e = l.find("expect")) want = *e;
  int want_rc = 0;
  if (want == "einval") want_rc = EINVAL;
  else if (want == "enomem") want_rc = ENOMEM;
  else if (want != "ok") fail(l, "expect= takes ok, einval or enomem");
  if (rc != want_rc) {
    auto name = [](int r) -> std::string {
      return r == 0 ? "ok" : r == EINVAL ? "einval" : r == ENOMEM ? "enomem" : std::to_string(r);
    };
    fail(l, std::string(what) + " returned " + name(rc) + ", expected " + want);
  }
}

void Runner::check_time(const Line& l, TimeNs happened, std::string_view what) const {
  if (l.mode == TimeMode::kBy) {
    if (happened > l.time) {
      fail(l, std::string(what) + " at " + format_time(happened) + ", expected by " +
                  format_time(l.time));
    }
    return;
  }
  if (happened != now_) {
    fail(l,
         std::string(what) + " at " + format_time(happened) + ", expected at " + format_time(now_));
  }
}

void Runner::leftovers(const Line* l) const {
  const int no = l != nullptr ? l->no : 0;
  if (frames_seen_ < s_.tx.frames.size()) {
    throw Failure{no, "unexpected packet " + packet_text(s_.tx.frames[frames_seen_]->p) +
                          " (sent at " + format_time(frame_t_[frames_seen_]) + ")"};
  }
  if (scq_seen_ < s_.scq.wc.size()) {
    throw Failure{no, "unexpected completion wc sq " + wc_text(s_.scq.wc[scq_seen_]) + " (at " +
                          format_time(scq_t_[scq_seen_]) + ")"};
  }
  if (rcq_seen_ < s_.rcq.wc.size()) {
    throw Failure{no, "unexpected completion wc rq " + wc_text(s_.rcq.wc[rcq_seen_]) + " (at " +
                          format_time(rcq_t_[rcq_seen_]) + ")"};
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
  QpAttrValues a;
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
  };
  using namespace qp_attr;
  auto step = [&l](int rc, std::string_view st) {
    if (rc != 0) fail(l, "modify to " + std::string(st) + " failed: " + std::to_string(rc));
  };
  if (t == "rc") {
    if (l.find("qkey") != nullptr) fail(l, "key 'qkey' does not apply to a rc QP");
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
    RcQp& q = d->qp();
    a.qp_state = QpState::kInit;
    step(q.modify(kState | kPkeyIndex | kPort | kAccessFlags, a), "init");
    a.qp_state = QpState::kRtr;
    step(q.modify(kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer, a),
         "rtr");
    a.qp_state = QpState::kRts;
    step(q.modify(kState | kSqPsn | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic, a), "rts");
    qp_ = std::move(d);
    type_ = QpType::kRc;
  } else if (t == "uc") {
    only({"qpn", "dest", "mtu", "sq_psn", "rq_psn", "access", "max_send_wr", "max_recv_wr"});
    UcQpConfig c;
    c.qpn = qpn_;
    c.pd = kPd;
    c.local = {kLocalMac, kLocalIp};
    c.max_send_wr = max_send;
    c.max_recv_wr = max_recv;
    c.sq_sig_all = sig_all;
    auto d = std::make_unique<UcDriver>(c, mrs_, s_);
    UcQp& q = d->qp();
    a.qp_state = QpState::kInit;
    step(q.modify(kState | kPkeyIndex | kPort | kAccessFlags, a), "init");
    a.qp_state = QpState::kRtr;
    step(q.modify(kState | kAv | kPathMtu | kDestQpn | kRqPsn, a), "rtr");
    a.qp_state = QpState::kRts;
    step(q.modify(kState | kSqPsn, a), "rts");
    qp_ = std::move(d);
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
    auto d = std::make_unique<UdDriver>(c, mrs_, s_);
    UdQp& q = d->qp();
    a.qp_state = QpState::kInit;
    step(q.modify(kState | kPkeyIndex | kPort | kQkey, a), "init");
    a.qp_state = QpState::kRtr;
    step(q.modify(kState, a), "rtr");
    a.qp_state = QpState::kRts;
    step(q.modify(kState | kSqPsn, a), "rts");
    qp_ = std::move(d);
    type_ = QpType::kUd;
  } else {
    fail(l, "unknown QP type '" + t + "' (rc, uc, ud)");
  }
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
  int err = 0;
  r->key = mrs_.reg({pd, r->iova, r->mem.size(), acc, r->mem.data()}, &err);
  if (r->key == 0) fail(l, "registering '" + name + "' failed: errno " + std::to_string(err));
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
    w.sge[0] = {r.iova + off, static_cast<std::uint32_t>(len.value_or(r.mem.size() - off)), r.key};
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
  if (type_ == QpType::kUd) {
    w.ud.dmac = kPeerMac;
    w.ud.dip = kPeerIp;
    w.ud.remote_qpn = static_cast<std::uint32_t>(num(l, "dest_qpn", dest_));
    w.ud.remote_qkey = static_cast<std::uint32_t>(num(l, "qkey", qkey_));
  } else if (l.find("dest_qpn") != nullptr || l.find("qkey") != nullptr) {
    fail(l, "dest_qpn= and qkey= are for UD QPs");
  }
  check_errno(l, qp_->post_send(w), "post_send");
  after_event(now_);
}

void Runner::cmd_post_recv(const Line& l) {
  RecvWr r;
  r.wr_id = num_req(l, "wr");
  if (const std::string* m = l.find("mr")) {
    Region& reg = region(l, *m);
    const std::uint64_t off = num(l, "off", 0);
    r.num_sge = 1;
    r.sge[0] = {reg.iova + off, static_cast<std::uint32_t>(num(l, "len", reg.mem.size() - off)),
                reg.key};
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

void Runner::cmd_modify(const Line& l) {
  const std::string* st = l.find("state");
  if (st == nullptr) fail(l, "modify needs state=");
  check_errno(l, qp_->modify_state(state_value(l, *st)), "modify");
  after_event(now_);
}

// Which extension header a packet key belongs to.
std::optional<wire::ExtHdr> header_of(std::string_view key, const wire::OpcodeInfo& info) {
  if (key == "va" || key == "rkey") {
    return info.has(wire::ExtHdr::kAtomicEth) ? wire::ExtHdr::kAtomicEth : wire::ExtHdr::kReth;
  }
  if (key == "dmalen") return wire::ExtHdr::kReth;
  if (key == "swap" || key == "add" || key == "compare") return wire::ExtHdr::kAtomicEth;
  if (key == "orig") return wire::ExtHdr::kAtomicAckEth;
  if (key == "imm") return wire::ExtHdr::kImmDt;
  if (key == "inv") return wire::ExtHdr::kIeth;
  if (key == "qkey" || key == "src_qp") return wire::ExtHdr::kDeth;
  if (key == "nak" || key == "timer" || key == "msn" || key == "credits" || key == "syndrome") {
    return wire::ExtHdr::kAeth;
  }
  return std::nullopt;
}

void check_keys_fit(const Line& l, const wire::OpcodeInfo& info) {
  for (const auto& [k, v] : l.kv) {
    if (const auto h = header_of(k, info); h && !info.has(*h)) {
      fail(l, std::string(k) + "= needs " + std::string(wire::ext_hdr_name(*h)) + ", which " +
                  lower(info.name) + " does not carry");
    }
    if ((k == "len" || k == "seed" || k == "bytes") && !info.payload) {
      fail(l, lower(info.name) + " carries no payload");
    }
  }
  if (l.has_word("ack") && !info.has(wire::ExtHdr::kAeth)) {
    fail(l, "'ack' needs an AETH, which " + lower(info.name) + " does not carry");
  }
}

// The AETH syndrome a line names: ack [credits=N], nak=CODE [timer=N] or
// syndrome=N. Empty when the line names none.
std::optional<std::uint8_t> syndrome_of(const Line& l) {
  const std::string* nak = l.find("nak");
  const std::string* syn = l.find("syndrome");
  const int given =
      (l.has_word("ack") ? 1 : 0) + (nak != nullptr ? 1 : 0) + (syn != nullptr ? 1 : 0);
  if (given > 1) fail(l, "give one of ack, nak= and syndrome=");
  if (l.find("timer") != nullptr && (nak == nullptr || *nak != "rnr")) {
    fail(l, "timer= goes with nak=rnr");
  }
  if (l.find("credits") != nullptr && !l.has_word("ack")) fail(l, "credits= goes with ack");
  if (syn != nullptr) {
    const auto v = parse_number(*syn);
    if (!v || *v > 0xff) fail(l, "bad syndrome=");
    return static_cast<std::uint8_t>(*v);
  }
  if (nak != nullptr) {
    if (*nak == "rnr") {
      const std::string* t = l.find("timer");
      if (t == nullptr) fail(l, "nak=rnr needs timer=");
      const auto v = parse_number(*t);
      if (!v || *v > 31) fail(l, "timer= takes 0..31");
      return wire::aeth_rnr_nak_syndrome(static_cast<std::uint8_t>(*v));
    }
    for (const NamedNak& n : kNaks) {
      if (n.name == *nak) return wire::aeth_nak_syndrome(n.code);
    }
    fail(l, "bad nak=" + *nak + " (seq, inv, access, op, inv_rd, rnr)");
  }
  if (l.has_word("ack")) {
    std::uint8_t credits = wire::kAethCreditInvalid;
    if (const std::string* c = l.find("credits")) {
      const auto v = parse_number(*c);
      if (!v || *v > 31) fail(l, "credits= takes 0..31");
      credits = static_cast<std::uint8_t>(*v);
    }
    return wire::aeth_ack_syndrome(credits);
  }
  return std::nullopt;
}

// An IPv4 address field (dotted quad), or `dflt` when the line has none.
wire::Ipv4Addr ip_value(const Line& l, std::string_view key, wire::Ipv4Addr dflt) {
  const std::string* v = l.find(key);
  if (v == nullptr) return dflt;
  const auto a = wire::Ipv4Addr::parse(*v);
  if (!a) fail(l, "bad " + std::string(key) + "= (a dotted quad)");
  return *a;
}

std::uint8_t opcode_of(const Line& l) {
  const auto op = opcode_by_name(l.words[0]);
  if (!op) fail(l, "unknown opcode '" + l.words[0] + "'");
  return *op;
}

void Runner::cmd_recv(const Line& l) {
  const std::uint8_t op = opcode_of(l);
  const wire::OpcodeInfo& info = wire::opcode_info(op);
  check_keys_fit(l, info);
  wire::PacketSpec s;
  s.eth_src = kPeerMac;
  s.eth_dst = kLocalMac;
  s.ip_src = ip_value(l, "src_ip", kPeerIp);
  s.ip_dst = ip_value(l, "dst_ip", kLocalIp);
  s.opcode = op;
  s.dest_qp = static_cast<std::uint32_t>(num(l, "dest_qp", qpn_));
  s.psn = static_cast<std::uint32_t>(num_req(l, "psn"));
  s.ack_req = l.has_word("ackreq");
  s.se = l.has_word("se");
  s.pkey = static_cast<std::uint16_t>(num(l, "pkey", wire::kDefaultPKey));
  // The builder's limit is 4096 so scripts can send oversized packets and
  // watch the QP refuse them.
  s.pmtu = wire::PathMtu::k4096;
  const std::vector<std::uint8_t> data = payload(l).value_or(std::vector<std::uint8_t>{});
  s.payload = data;
  if (info.has(wire::ExtHdr::kDeth)) {
    s.deth = wire::DethHdr::make(static_cast<std::uint32_t>(num(l, "qkey", qkey_)),
                                 static_cast<std::uint32_t>(num(l, "src_qp", dest_)));
  }
  auto va = [&]() -> std::uint64_t {
    const std::string* v = l.find("va");
    return v != nullptr ? addr_value(l, "va", *v) : 0;
  };
  auto rkey = [&]() -> std::uint32_t {
    const std::string* v = l.find("rkey");
    return v != nullptr ? key_value(l, "rkey", *v) : 0;
  };
  if (info.has(wire::ExtHdr::kReth)) {
    s.reth = wire::RethHdr::make(va(), rkey(),
                                 static_cast<std::uint32_t>(num(l, "dmalen", data.size())));
  }
  if (info.has(wire::ExtHdr::kAtomicEth)) {
    if (l.find("add") != nullptr && l.find("swap") != nullptr) {
      fail(l, "give add= (fetch_add) or swap= (cmp_swap), not both");
    }
    s.atomic_eth = wire::AtomicEthHdr::make(va(), rkey(), num(l, "add", num(l, "swap", 0)),
                                            num(l, "compare", 0));
  }
  if (info.has(wire::ExtHdr::kAeth)) {
    s.aeth = wire::AethHdr::make(syndrome_of(l).value_or(wire::aeth_ack_syndrome()),
                                 static_cast<std::uint32_t>(num(l, "msn", 0)));
  }
  if (info.has(wire::ExtHdr::kAtomicAckEth)) {
    s.atomic_ack_eth = wire::AtomicAckEthHdr::make(num(l, "orig", 0));
  }
  if (info.has(wire::ExtHdr::kImmDt)) {
    s.immdt = wire::ImmDtHdr::make(static_cast<std::uint32_t>(num(l, "imm", 0)));
  }
  if (info.has(wire::ExtHdr::kIeth)) {
    const std::string* v = l.find("inv");
    s.ieth = wire::IethHdr::make(v != nullptr ? key_value(l, "inv", *v) : 0);
  }
  std::vector<std::uint8_t> frame(wire::roce_frame_size(s));
  const int n = wire::build_roce(s, frame);
  if (n < 0) {
    fail(l, "cannot build this packet: " +
                std::string(wire::build_error_name(static_cast<wire::BuildError>(n))));
  }
  frame.resize(static_cast<std::size_t>(n));
  auto pkt = rctest::parse_frame(frame);
  if (pkt->err != wire::ParseError::kOk) {
    fail(l, "built packet does not parse: " + std::string(wire::parse_error_name(pkt->err)));
  }
  last_injected_ = frame;
  qp_->deliver(pkt->p, now_);
  after_event(now_);
}

void Runner::cmd_send(const Line& l) {
  const std::uint8_t op = opcode_of(l);
  const wire::OpcodeInfo& info = wire::opcode_info(op);
  check_keys_fit(l, info);
  if (l.find("psn") == nullptr) fail(l, "send needs psn=");
  const auto want_syndrome = syndrome_of(l);
  if (frames_seen_ >= s_.tx.frames.size()) {
    fail(l, "expected " + lower(info.name) + " psn=" + *l.find("psn") +
                ", but the QP sent nothing (now " + format_time(now_) + ")");
  }
  const std::size_t idx = frames_seen_++;
  const wire::ParsedPacket& p = s_.tx.frames[idx]->p;
  const std::string got = "got " + packet_text(p) + " (sent at " + format_time(frame_t_[idx]) + ")";
  if (s_.tx.frames[idx]->err != wire::ParseError::kOk) {
    fail(l, "the QP sent a frame that does not parse: " +
                std::string(wire::parse_error_name(s_.tx.frames[idx]->err)));
  }
  auto mismatch = [&](const std::string& field, const std::string& want) {
    fail(l, "packet field " + field + ": expected " + want + ", " + got);
  };
  if (p.bth.opcode() != op) mismatch("opcode", lower(info.name));
  const auto want_psn = num_req(l, "psn");
  if (p.bth.psn() != want_psn) mismatch("psn", hex(want_psn));
  // Packets of a connected QP go to its destination QP; UD names it per WR.
  if (const auto d = num_opt(l, "dest_qp")) {
    if (p.bth.dest_qp() != *d) mismatch("dest_qp", hex(*d));
  } else if (type_ != QpType::kUd && p.bth.dest_qp() != dest_) {
    mismatch("dest_qp", hex(dest_));
  }
  if (l.has_word("ackreq") && !p.bth.ack_req()) mismatch("ackreq", "set");
  if (l.has_word("noackreq") && p.bth.ack_req()) mismatch("ackreq", "clear");
  if (l.has_word("se") && !p.bth.se()) mismatch("se", "set");
  if (l.has_word("nose") && p.bth.se()) mismatch("se", "clear");
  if (const auto v = num_opt(l, "pkey"); v && p.bth.pkey() != *v) mismatch("pkey", hex(*v));
  if (l.find("src_ip") != nullptr && p.ip.src() != ip_value(l, "src_ip", {})) {
    mismatch("src_ip", *l.find("src_ip"));
  }
  if (l.find("dst_ip") != nullptr && p.ip.dst() != ip_value(l, "dst_ip", {})) {
    mismatch("dst_ip", *l.find("dst_ip"));
  }
  auto check = [&](std::string_view key, std::uint64_t actual, bool is_addr) {
    const std::string* v = l.find(key);
    if (v == nullptr) return;
    const std::uint64_t want = is_addr                           ? addr_value(l, key, *v)
                               : (key == "rkey" || key == "inv") ? key_value(l, key, *v)
                                                                 : num_req(l, key);
    if (actual != want) mismatch(std::string(key), hex(want));
  };
  if (info.has(wire::ExtHdr::kReth)) {
    check("va", p.reth.va(), true);
    check("rkey", p.reth.rkey(), false);
    check("dmalen", p.reth.dma_len(), false);
  }
  if (info.has(wire::ExtHdr::kAtomicEth)) {
    check("va", p.atomic_eth.va(), true);
    check("rkey", p.atomic_eth.rkey(), false);
    check("add", p.atomic_eth.swap_add(), false);
    check("swap", p.atomic_eth.swap_add(), false);
    check("compare", p.atomic_eth.compare(), false);
  }
  if (info.has(wire::ExtHdr::kDeth)) {
    check("qkey", p.deth.qkey(), false);
    check("src_qp", p.deth.src_qp(), false);
  }
  if (info.has(wire::ExtHdr::kAeth)) {
    if (want_syndrome) {
      const wire::AethHdr w = wire::AethHdr::make(*want_syndrome, 0);
      const bool credits_given = l.find("credits") != nullptr;
      // "ack" alone means any ACK; the credit field is checked only when named.
      const bool same = w.is_ack() && !credits_given && l.find("syndrome") == nullptr
                            ? p.aeth.is_ack()
                            : p.aeth.syndrome() == *want_syndrome;
      if (!same) mismatch("aeth", aeth_text(w).substr(0, aeth_text(w).find(" msn=")));
    }
    check("msn", p.aeth.msn(), false);
  }
  if (info.has(wire::ExtHdr::kAtomicAckEth))
    check("orig", p.atomic_ack_eth.orig_remote_data(), false);
  if (info.has(wire::ExtHdr::kImmDt)) check("imm", p.immdt.imm(), false);
  if (info.has(wire::ExtHdr::kIeth)) check("inv", p.ieth.rkey(), false);
  if (const auto len = num_opt(l, "len"); len && p.payload.size() != *len) {
    mismatch("len", std::to_string(*len));
  }
  if (l.find("seed") != nullptr || l.find("bytes") != nullptr) {
    const auto want = *payload(l);
    if (want.size() != p.payload.size()) mismatch("len", std::to_string(want.size()));
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (want[i] != p.payload[i]) {
        mismatch("payload byte " + std::to_string(i),
                 hex(want[i]) + " (got " + hex(p.payload[i]) + ")");
      }
    }
  }
  check_time(l, frame_t_[idx], "packet " + lower(info.name) + " psn=" + hex(p.bth.psn()) + " sent");
}

void Runner::cmd_quiet(const Line& l) { leftovers(&l); }

void Runner::cmd_wc(const Line& l) {
  const std::string& q = l.words[0];
  if (q != "sq" && q != "rq") fail(l, "wc takes sq or rq");
  VecCq& cq = q == "sq" ? s_.scq : s_.rcq;
  std::size_t& seen = q == "sq" ? scq_seen_ : rcq_seen_;
  const std::vector<TimeNs>& times = q == "sq" ? scq_t_ : rcq_t_;
  if (seen >= cq.wc.size()) {
    fail(l, "expected a completion on the " + q + " CQ, there is none (now " + format_time(now_) +
                ")");
  }
  const std::size_t idx = seen++;
  const Cqe& c = cq.wc[idx];
  const std::string got =
      "got wc " + q + " " + wc_text(c) + " (at " + format_time(times[idx]) + ")";
  auto mismatch = [&](std::string_view field, const std::string& want) {
    fail(l, "completion field " + std::string(field) + ": expected " + want + ", " + got);
  };
  if (const auto wr = num_opt(l, "wr"); wr && c.wr_id != *wr) {
    mismatch("wr", std::to_string(*wr));
  }
  if (const std::string* st = l.find("status")) {
    bool known = false;
    for (const NamedStatus& n : kStatuses) {
      if (n.name == *st) {
        known = true;
        if (c.status != static_cast<std::uint32_t>(n.st)) mismatch("status", *st);
      }
    }
    if (!known) fail(l, "unknown status '" + *st + "'");
  }
  if (const std::string* op = l.find("opcode")) {
    bool known = false;
    for (const NamedWcOp& n : kWcOps) {
      if (n.name == *op) {
        known = true;
        if (c.opcode != static_cast<std::uint32_t>(n.op)) mismatch("opcode", *op);
      }
    }
    if (!known) fail(l, "unknown wc opcode '" + *op + "'");
  }
  if (const auto v = num_opt(l, "byte_len"); v && c.byte_len != *v) {
    mismatch("byte_len", std::to_string(*v));
  }
  if (const auto v = num_opt(l, "imm"); v && ntohl(c.ex.imm_data) != *v) {
    mismatch("imm", hex(*v));
  }
  if (const std::string* v = l.find("inv")) {
    const std::uint32_t k = key_value(l, "inv", *v);
    if (c.ex.invalidate_rkey != k) mismatch("inv", hex(k));
  }
  if (const std::string* f = l.find("flags")) {
    std::uint32_t want = 0;
    std::size_t pos = 0;
    while (pos <= f->size()) {
      std::size_t comma = f->find(',', pos);
      if (comma == std::string::npos) comma = f->size();
      const std::string t = f->substr(pos, comma - pos);
      if (t == "grh") want |= wc_flag::kGrh;
      else if (t == "with_imm") want |= wc_flag::kWithImm;
      else if (t == "with_inv") want |= wc_flag::kWithInv;
      else if (t != "none") fail(l, "bad flag '" + t + "' (grh, with_imm, with_inv, none)");
      pos = comma + 1;
    }
    if (c.wc_flags != want) mismatch("flags", *f);
  }
  if (const auto v = num_opt(l, "src_qp"); v && c.src_qp != *v) mismatch("src_qp", hex(*v));
  const std::uint64_t qpn = num(l, "qp_num", qpn_);
  if (c.qp_num != qpn) mismatch("qp_num", hex(qpn));
  check_time(l, times[idx], "completion");
}

void Runner::cmd_state(const Line& l) {
  const QpState want = state_value(l, l.words[0]);
  if (qp_->state() != want) {
    fail(l, "QP state: expected " + l.words[0] + ", got " + state_name(qp_->state()));
  }
  if (const auto v = num_opt(l, "next_psn"); v && qp_->next_psn() != *v) {
    fail(l, "next_psn: expected " + hex(*v) + ", got " + hex(qp_->next_psn()));
  }
  if (const auto v = num_opt(l, "epsn")) {
    const auto e = qp_->expected_psn();
    if (!e) fail(l, "a UD QP has no expected PSN");
    if (*e != *v) fail(l, "epsn: expected " + hex(*v) + ", got " + hex(*e));
  }
}

void Runner::cmd_counter(const Line& l) {
  if (l.kv.empty()) fail(l, "counter needs NAME=VALUE");
  for (const auto& [k, v] : l.kv) {
    const auto actual = qp_->counter(k);
    if (!actual) fail(l, "unknown counter '" + k + "'; known:" + qp_->counter_names());
    const auto want = parse_number(v);
    if (!want) fail(l, "bad number " + k + "=" + v);
    if (*actual != *want) {
      fail(l, "counter " + k + ": expected " + std::to_string(*want) + ", got " +
                  std::to_string(*actual));
    }
  }
}

void Runner::cmd_expect_mem(const Line& l) {
  Region& r = region(l, l.words[0]);
  const std::uint64_t off = num(l, "off", 0);
  std::vector<std::uint8_t> want;
  if (l.has_word("zero")) {
    want.assign(num_req(l, "len"), 0);
  } else if (const auto u = num_opt(l, "u64")) {
    want.resize(8);
    std::memcpy(want.data(), &*u, 8);
  } else if (auto p = payload(l)) {
    want = std::move(*p);
  } else {
    fail(l, "expect_mem needs zero len=, u64=, bytes= or len=/seed=");
  }
  if (off > r.mem.size() || want.size() > r.mem.size() - off) fail(l, "outside the region");
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (r.mem[off + i] != want[i]) {
      std::string msg = "memory " + r.name + "+" + std::to_string(off + i) + ": expected " +
                        hex(want[i]) + ", got " + hex(r.mem[off + i]);
      if (want.size() == 8 && l.find("u64") != nullptr) {
        std::uint64_t got = 0;
        std::memcpy(&got, r.mem.data() + off, 8);
        msg += " (u64 " + hex(got) + ")";
      }
      fail(l, msg);
    }
  }
}

void Runner::cmd_expect_grh(const Line& l) {
  Region& r = region(l, l.words[0]);
  const std::uint64_t off = num(l, "off", 0);
  if (last_injected_.empty()) fail(l, "no packet was injected yet");
  if (off > r.mem.size() || r.mem.size() - off < kUdGrhSize) fail(l, "outside the region");
  std::uint8_t want[kUdGrhSize] = {};
  std::memcpy(want + kUdGrhSize - wire::Ipv4Hdr::kSize, last_injected_.data() + wire::EthHdr::kSize,
              wire::Ipv4Hdr::kSize);
  for (std::size_t i = 0; i < kUdGrhSize; ++i) {
    if (r.mem[off + i] != want[i]) {
      fail(l, "GRH byte " + std::to_string(i) + ": expected " + hex(want[i]) + ", got " +
                  hex(r.mem[off + i]) +
                  " (20 zero bytes, then the IPv4 header of the last packet received)");
    }
  }
}

void Runner::run(const std::vector<Line>& lines) {
  for (const Line& l : lines) {
    if (l.cmd == "qp") {
      if (l.mode != TimeMode::kNone) fail(l, "qp takes no time");
      cmd_qp(l);
      continue;
    }
    if (l.cmd == "mr") {
      cmd_mr(l);
      continue;
    }
    if (!qp_) fail(l, "the script must declare its qp first");
    if (l.mode != TimeMode::kNone) advance_to(l, l.time);
    if (l.cmd == "mem_set") cmd_mem_set(l);
    else if (l.cmd == "post_send") cmd_post_send(l);
    else if (l.cmd == "post_recv") cmd_post_recv(l);
    else if (l.cmd == "modify") cmd_modify(l);
    else if (l.cmd == "recv") cmd_recv(l);
    else if (l.cmd == "send") cmd_send(l);
    else if (l.cmd == "quiet") cmd_quiet(l);
    else if (l.cmd == "wc") cmd_wc(l);
    else if (l.cmd == "state") cmd_state(l);
    else if (l.cmd == "counter") cmd_counter(l);
    else if (l.cmd == "expect_mem") cmd_expect_mem(l);
    else if (l.cmd == "expect_grh") cmd_expect_grh(l);
    else fail(l, "unknown command '" + l.cmd + "'");
  }
  if (!qp_) throw Failure{0, "the script declares no qp"};
  leftovers(nullptr);
}

}  // namespace

std::string RunResult::describe() const {
  if (ok) return "ok";
  return (line == 0 ? std::string("end of script") : "line " + std::to_string(line)) + ": " +
         message;
}

RunResult run_script(std::string_view text) {
  RunResult res;
  const ParseResult parsed = parse_script(text);
  if (!parsed.ok()) {
    res.ok = false;
    res.line = parsed.error_line;
    res.message = parsed.error;
    return res;
  }
  try {
    Runner r;
    r.run(parsed.lines);
  } catch (const Failure& f) {
    res.ok = false;
    res.line = f.line;
    res.message = f.message;
  }
  return res;
}

}  // namespace uroce::transport::conformance
