// The runner's part for the DC transport (docs/dc.md): the qp line of a
// DCI or a DCT (with its own context pool and SRQ), the target and stream
// of a DCI's WRs, the DCETH / DCAETH a recv line builds, and the DC header
// fields a send line checks.
#include <algorithm>

#include "datapath/transport/qp_attr.h"
#include "tests/datapath/transport/conformance/names.h"
#include "tests/datapath/transport/conformance/runner_internal.h"

namespace uroce::transport::conformance::detail {

namespace {

// The DC access key of a qp line without key=.
constexpr std::uint64_t kDefaultDcKey = 0x1122334455667788ull;

constexpr std::string_view kDciKeys[] = {"qpn",
                                         "dest",
                                         "mtu",
                                         "sq_psn",
                                         "timeout",
                                         "retry_cnt",
                                         "rnr_retry",
                                         "max_rd_atomic",
                                         "max_send_wr",
                                         "key",
                                         "log_streams",
                                         "log_errored",
                                         "idle_disconnect",
                                         "ack_every",
                                         "ack_req_every",
                                         "window"};
constexpr std::string_view kDctKeys[] = {"qpn",
                                         "dest",
                                         "mtu",
                                         "access",
                                         "key",
                                         "min_rnr_timer",
                                         "max_dest_rd_atomic",
                                         "max_recv_wr",
                                         "contexts",
                                         "records_log2",
                                         "stale"};

TimeNs time_value(const Line& l, std::string_view key, TimeNs dflt) {
  const std::string* v = l.find(key);
  if (v == nullptr) return dflt;
  const auto t = parse_time(*v);
  if (!t || *t == 0) fail(l, "bad " + std::string(key) + "=" + *v + " (a time above 0)");
  return *t;
}

// A DCAETH status: its name, or a number (a reserved value).
std::uint8_t dc_status_value(const Line& l) {
  const std::string* v = l.find("status");
  if (v == nullptr) return 0;
  for (const NamedDcStatus& n : kDcStatuses) {
    if (n.name == *v) return static_cast<std::uint8_t>(n.st);
  }
  const auto n = parse_number(*v);
  if (!n || *n > 0xff) fail(l, "bad status=" + *v + " (ok, gone, unknown, busy, key_violation)");
  return static_cast<std::uint8_t>(*n);
}

}  // namespace

void Runner::dc_setup(const Line& l) {
  const bool dci = l.words[0] == "dci";
  const std::span<const std::string_view> allowed =
      dci ? std::span<const std::string_view>(kDciKeys)
          : std::span<const std::string_view>(kDctKeys);
  for (const auto& [k, v] : l.kv) {
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      fail(l, "key '" + k + "' does not apply to a " + l.words[0] + " QP");
    }
  }
  if (l.has_word("homa")) fail(l, "homa applies to an rc QP only");
  if (!dci && l.has_word("sq_sig_all")) fail(l, "a DCT has no send queue");
  dc_key_ = num(l, "key", kDefaultDcKey);
  if (dci) {
    DciQpConfig c;
    c.rc.qpn = qpn_;
    c.rc.pd = kPd;
    c.rc.local = {kLocalMac, kLocalIp};
    c.rc.max_send_wr = static_cast<std::uint32_t>(num(l, "max_send_wr", 64));
    c.rc.sq_sig_all = l.has_word("sq_sig_all");
    c.rc.tuning.ack_every = static_cast<std::uint32_t>(num(l, "ack_every", c.rc.tuning.ack_every));
    c.rc.tuning.ack_req_every =
        static_cast<std::uint32_t>(num(l, "ack_req_every", c.rc.tuning.ack_req_every));
    c.rc.tuning.window_psns = static_cast<std::uint32_t>(num(l, "window", c.rc.tuning.window_psns));
    const std::uint64_t ls = num(l, "log_streams", 0);
    const std::uint64_t le = num(l, "log_errored", 0);
    if (ls > kMaxDciLogStreams || le > ls) {
      fail(l, "log_streams= takes 0.." + std::to_string(kMaxDciLogStreams) +
                  " and log_errored= at most log_streams=");
    }
    c.log_streams = static_cast<std::uint8_t>(ls);
    c.log_errored = static_cast<std::uint8_t>(le);
    c.idle_disconnect_ns = time_value(l, "idle_disconnect", c.idle_disconnect_ns);
    qp_ = std::make_unique<DciDriver>(c, mrs_, s_);
    type_ = QpType::kDci;
    return;
  }
  RcQpConfig c;
  c.qpn = qpn_;
  c.pd = kPd;
  c.local = {kLocalMac, kLocalIp};
  c.max_recv_wr = static_cast<std::uint32_t>(num(l, "max_recv_wr", 64));
  c.max_dest_rd_atomic = attr_.max_dest_rd_atomic;
  DcTargetLimits lim;
  const std::uint64_t contexts = num(l, "contexts", 4);
  const std::uint64_t records = num(l, "records_log2", 4);
  if (contexts == 0 || contexts > 1024) fail(l, "contexts= takes 1..1024");
  if (records > 16) fail(l, "records_log2= takes 0..16");
  lim.contexts = static_cast<std::uint32_t>(contexts);
  lim.records_log2 = static_cast<std::uint32_t>(records);
  lim.stale_ns = time_value(l, "stale", lim.stale_ns);
  qp_ = std::make_unique<DctDriver>(c, dc_key_, lim, mrs_, s_);
  type_ = QpType::kDct;
}

// The target (the peer's address, DCT dctn=, key dc_key=) and the stream
// of a DCI's WR, as the engine fills them from the WR's AH and DC address.
void Runner::dc_wr(const Line& l, SendWr& w) const {
  w.ud.dmac = kPeerMac;
  w.ud.dip = kPeerIp;
  w.ud.ttl = 64;
  w.ud.ah_num = 1;
  const std::uint64_t dctn = num(l, "dctn", dest_);
  if (dctn > 0xFFFFFF) fail(l, "dctn= takes 24 bits");
  w.ud.remote_qpn = static_cast<std::uint32_t>(dctn);
  w.ud.dc_key = num(l, "dc_key", dc_key_);
  const std::uint64_t stream = num(l, "stream", 0);
  if (stream > 0xFFFF) fail(l, "stream= takes 0..65535");
  w.ud.dc_stream = static_cast<std::uint16_t>(stream);
}

// The DC header of a packet the peer sends. A DC QP under test must be
// told the connection (conn=, and a request's first_psn=): nothing is
// guessed for it. Other QPs get the defaults (zeros), which they drop.
void Runner::dc_recv_headers(const Line& l, wire::PacketSpec& s) const {
  const wire::OpcodeInfo& info = wire::opcode_info(s.opcode);
  const bool dc_qp = is_dc(type_);
  auto bounded = [&](std::string_view key, std::uint64_t dflt, std::uint64_t max) {
    const std::uint64_t v = num(l, key, dflt);
    if (v > max) fail(l, std::string(key) + "= is out of range (at most " + hex(max) + ")");
    return v;
  };
  if (dc_qp && (info.has(wire::ExtHdr::kDcEth) || info.has(wire::ExtHdr::kDcAeth)) &&
      l.find("conn") == nullptr) {
    fail(l, "a DC packet to a DC QP needs conn=");
  }
  const auto lane = static_cast<std::uint16_t>(bounded("lane", 0, 0xFFFF));
  const auto conn = static_cast<std::uint32_t>(bounded("conn", 0, 0xFFFFFFFF));
  if (info.has(wire::ExtHdr::kDcEth)) {
    if (dc_qp && l.find("first_psn") == nullptr) fail(l, "a DC request needs first_psn=");
    const auto first = static_cast<std::uint32_t>(bounded("first_psn", 0, 0xFFFFFF));
    s.dc_eth =
        wire::DcEthHdr::make(num(l, "key", dc_key_), l.has_word("syn"),
                             static_cast<std::uint32_t>(bounded("dci_qpn", dest_, 0xFFFFFF)), lane,
                             conn, first,
                             static_cast<std::uint32_t>(bounded("acked_psn", first, 0xFFFFFF)));
  }
  if (info.has(wire::ExtHdr::kDcAeth)) {
    wire::DcAethHdr h =
        wire::DcAethHdr::make(lane, wire::DcStatus::kOk, conn,
                              static_cast<std::uint32_t>(bounded("value", 0, 0xFFFFFFFF)));
    h.raw[2] = dc_status_value(l);
    s.dc_aeth = h;
  }
}

void Runner::check_dc_fields(
    const Line& l, const wire::ParsedPacket& p,
    const std::function<void(const std::string&, const std::string&)>& mismatch) const {
  auto check = [&](std::string_view key, std::uint64_t actual) {
    if (const auto v = num_opt(l, key); v && actual != *v) mismatch(std::string(key), hex(*v));
  };
  if (p.has(wire::ExtHdr::kDcEth)) {
    const wire::DcEthHdr& d = p.dc_eth;
    check("key", d.key());
    check("dci_qpn", d.dci_qpn());
    check("lane", d.lane());
    check("conn", d.conn());
    check("first_psn", d.first_psn());
    check("acked_psn", d.acked_psn());
    if (l.has_word("syn") && !d.syn()) mismatch("syn", "set");
    if (l.has_word("nosyn") && d.syn()) mismatch("syn", "clear");
  }
  if (p.has(wire::ExtHdr::kDcAeth)) {
    const wire::DcAethHdr& d = p.dc_aeth;
    check("lane", d.lane());
    check("conn", d.conn());
    check("value", d.value());
    if (l.find("status") != nullptr && d.raw[2] != dc_status_value(l)) {
      mismatch("status", *l.find("status"));
    }
  }
}

}  // namespace uroce::transport::conformance::detail
