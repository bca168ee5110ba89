#include "tests/datapath/transport/conformance/script.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <initializer_list>

namespace uroce::transport::conformance {

namespace {

// What one command accepts: `free` leading words of any spelling (a name,
// an opcode, a QP type), then only the listed flag words, and the listed
// keys (`any_key`: the runner checks them, e.g. counter names).
struct CommandSpec {
  std::string_view name;
  int min_free;
  int max_free;
  std::initializer_list<std::string_view> flags;
  std::initializer_list<std::string_view> keys;
  bool by_allowed = false;
  bool any_key = false;
};

constexpr std::string_view kPacketKeys[] =
    {"psn",   "len",     "seed",    "bytes",    "va",        "rkey",      "dmalen", "swap",
     "add",   "compare", "orig",    "imm",      "inv",       "qkey",      "src_qp", "nak",
     "timer", "msn",     "credits", "syndrome", "pkey",      "dest_qp",   "src_ip", "dst_ip",
     "dscp",  "offset",  "prio",    "length",   "unsched",   "cutoffs",   "top",    "generation",
     "key",   "dci_qpn", "lane",    "conn",     "first_psn", "acked_psn", "status", "value",
     "rsn",   "off",     "trigger", "sack",     "ce"};

const CommandSpec kCommands[] = {
    {"qp",
     1,
     1,
     {"sq_sig_all", "homa", "sr"},
     {"qpn",
      "dest",
      "mtu",
      "sq_psn",
      "rq_psn",
      "timeout",
      "retry_cnt",
      "rnr_retry",
      "min_rnr_timer",
      "max_rd_atomic",
      "max_dest_rd_atomic",
      "access",
      "qkey",
      "ack_every",
      "ack_req_every",
      "window",
      "max_send_wr",
      "max_recv_wr",
      "unsched",
      "grant_timeout",
      "max_timeouts",
      "prios",
      "dscp_map",
      "key",
      "log_streams",
      "log_errored",
      "idle_disconnect",
      "contexts",
      "records_log2",
      "stale"}},
    {"mr", 1, 1, {}, {"len", "access", "seed", "va", "pd", "window"}},
    {"mem_set", 1, 1, {}, {"off", "u64", "bytes", "seed", "len"}},
    {"post_send",
     0,
     0,
     {"signaled", "fence", "solicited", "inline"},
     {"wr", "op", "mr", "off", "len", "remote", "rkey", "imm", "inv", "add", "compare", "swap",
      "dest_qpn", "qkey", "expect", "seed", "dctn", "dc_key", "stream"}},
    {"post_recv", 0, 0, {}, {"wr", "mr", "off", "len", "expect"}},
    {"modify", 0, 0, {}, {"state", "expect", "sq_psn", "rq_psn"}},
    {"recv", 1, 1, {"ackreq", "se", "ack", "syn", "dup"}, {}},
    {"send",
     1,
     1,
     {"ackreq", "noackreq", "se", "nose", "ack", "syn", "nosyn", "dup", "nodup", "noce"},
     {},
     true},
    {"quiet", 0, 0, {}, {}},
    {"wc",
     1,
     1,
     {},
     {"wr", "status", "opcode", "byte_len", "imm", "inv", "flags", "src_qp", "qp_num"},
     true},
    {"state", 1, 1, {}, {"next_psn", "epsn", "stream"}},
    {"counter", 0, 0, {}, {}, false, true},
    {"expect_mem", 1, 1, {"zero"}, {"off", "len", "seed", "bytes", "u64"}},
    {"expect_grh", 1, 1, {}, {"off"}},
    {"event", 1, 1, {}, {}},
};

const CommandSpec* find_command(std::string_view name) {
  for (const CommandSpec& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

bool key_allowed(const CommandSpec& c, std::string_view key) {
  if (c.any_key) return true;
  if (c.name == "recv" || c.name == "send") {
    return std::find(std::begin(kPacketKeys), std::end(kPacketKeys), key) != std::end(kPacketKeys);
  }
  return std::find(c.keys.begin(), c.keys.end(), key) != c.keys.end();
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    const std::size_t b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

}  // namespace

const std::string* Line::find(std::string_view key) const {
  for (const auto& [k, v] : kv) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool Line::has_word(std::string_view w) const {
  return std::find(words.begin(), words.end(), w) != words.end();
}

std::optional<std::uint64_t> parse_number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  std::uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<TimeNs> parse_time(std::string_view s) {
  if (s == "0") return 0;
  struct Unit {
    std::string_view suffix;
    TimeNs ns;
    int frac_digits;  // digits after the point that still name whole ns
  };
  constexpr Unit kUnits[] = {{"ns", 1, 0},
                             {"us", kNsPerUs, 3},
                             {"ms", kNsPerMs, 6},
                             {"s", kNsPerSec, 9}};
  for (const Unit& u : kUnits) {
    if (s.size() <= u.suffix.size() || !s.ends_with(u.suffix)) continue;
    const std::string_view num = s.substr(0, s.size() - u.suffix.size());
    // "ms" also ends with "s": the number must be all digits and one point.
    const std::size_t dot = num.find('.');
    const std::string_view whole = num.substr(0, dot);
    const std::string_view frac =
        dot == std::string_view::npos ? std::string_view{} : num.substr(dot + 1);
    auto digits = [](std::string_view d) {
      return std::all_of(d.begin(), d.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    };
    if (whole.empty() || !digits(whole) || !digits(frac)) continue;
    if (dot != std::string_view::npos && frac.empty()) continue;
    if (static_cast<int>(frac.size()) > u.frac_digits) return std::nullopt;
    const auto w = parse_number(whole);
    if (!w) return std::nullopt;
    TimeNs f = 0;
    if (!frac.empty()) {
      f = *parse_number(frac);
      for (int i = static_cast<int>(frac.size()); i < u.frac_digits; ++i) f *= 10;
    }
    return *w * u.ns + f;
  }
  return std::nullopt;
}

std::string format_time(TimeNs t) {
  if (t == 0) return "0";
  if (t % kNsPerMs == 0) return std::to_string(t / kNsPerMs) + "ms";
  if (t % kNsPerUs == 0) return std::to_string(t / kNsPerUs) + "us";
  return std::to_string(t) + "ns";
}

ParseResult parse_script(std::string_view text) {
  ParseResult res;
  auto fail = [&res](int no, std::string msg) {
    res.error_line = no;
    res.error = std::move(msg);
    return res;
  };
  int no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view raw = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++no;
    if (const std::size_t hash = raw.find('#'); hash != std::string_view::npos) {
      raw = raw.substr(0, hash);
    }
    std::vector<std::string_view> tok = split_ws(raw);
    if (tok.empty()) continue;
    Line line;
    line.no = no;
    std::size_t i = 0;
    if (tok[0] == "at" || tok[0] == "by") {
      line.mode = tok[0] == "at" ? TimeMode::kAt : TimeMode::kBy;
      if (tok.size() < 3) {
        return fail(no, "'" + std::string(tok[0]) + "' needs a time and a command");
      }
      const auto t = parse_time(tok[1]);
      if (!t) {
        return fail(no, "bad time '" + std::string(tok[1]) + "' (use e.g. 0, 250ns, 3us, 0.65ms)");
      }
      line.time = *t;
      i = 2;
    }
    line.cmd = tok[i++];
    const CommandSpec* spec = find_command(line.cmd);
    if (spec == nullptr) return fail(no, "unknown command '" + line.cmd + "'");
    if (line.mode == TimeMode::kBy && !spec->by_allowed) {
      return fail(no, "'by' is only for send and wc expectations");
    }
    int free_words = 0;
    for (; i < tok.size(); ++i) {
      const std::string_view t = tok[i];
      const std::size_t eq = t.find('=');
      if (eq == std::string_view::npos) {
        if (free_words < spec->max_free && line.kv.empty()) {
          ++free_words;
          line.words.emplace_back(t);
          continue;
        }
        if (std::find(spec->flags.begin(), spec->flags.end(), t) == spec->flags.end()) {
          return fail(no, "unknown word '" + std::string(t) + "' for " + line.cmd);
        }
        if (line.has_word(t)) {
          return fail(no, "'" + std::string(t) + "' given twice");
        }
        line.words.emplace_back(t);
        continue;
      }
      const std::string key(t.substr(0, eq));
      const std::string value(t.substr(eq + 1));
      if (key.empty() || value.empty()) {
        return fail(no, "malformed '" + std::string(t) + "' (want key=value)");
      }
      if (!key_allowed(*spec, key)) {
        return fail(no, "unknown key '" + key + "' for " + line.cmd);
      }
      if (line.find(key) != nullptr) return fail(no, "key '" + key + "' given twice");
      line.kv.emplace_back(key, value);
    }
    if (free_words < spec->min_free) {
      return fail(no, line.cmd + " is missing its " +
                          (line.cmd == "qp" ? "type (rc, uc, ud, dci, dct)"
                           : line.cmd == "recv" || line.cmd == "send" ? "opcode"
                           : line.cmd == "wc"                         ? "queue (sq, rq)"
                           : line.cmd == "state"                      ? "state"
                           : line.cmd == "event"                      ? "event type"
                                                                      : "name"));
    }
    res.lines.push_back(std::move(line));
    if (eol == text.size()) break;
  }
  return res;
}

}  // namespace uroce::transport::conformance
