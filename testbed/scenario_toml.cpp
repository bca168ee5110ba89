#include "testbed/scenario_toml.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include <toml++/toml.h>

namespace uroce::testbed {

namespace {

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string num_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Reads the keys of one table. Each getter registers its key as known,
// leaves the output untouched when the key is absent, and does nothing
// once an error has been recorded. finish() reports the first error, or
// else the first key no getter asked for.
class Fields {
 public:
  Fields(const toml::table& t, std::string path) : t_(t), path_(std::move(path)) {}

  const std::string& path() const { return path_; }

  bool has(std::string_view key) {
    known_.emplace_back(key);
    return t_.contains(key);
  }

  void require(std::string_view key) {
    if (!err_.empty()) return;
    if (!t_.contains(key)) err_ = path_ + ": missing key '" + std::string(key) + "'";
  }

  void str(std::string_view key, std::string& out) {
    const toml::node* n = get(key);
    if (n == nullptr) return;
    if (!n->is_string()) return type_error(key, *n, "a string");
    out = n->as_string()->get();
  }

  void boolean(std::string_view key, bool& out) {
    const toml::node* n = get(key);
    if (n == nullptr) return;
    if (!n->is_boolean()) return type_error(key, *n, "true or false");
    out = n->as_boolean()->get();
  }

  template <class T>
  void uint(std::string_view key, T& out, std::uint64_t lo, std::uint64_t hi) {
    const toml::node* n = get(key);
    if (n == nullptr) return;
    if (!n->is_integer()) return type_error(key, *n, "an integer");
    const std::int64_t v = n->as_integer()->get();
    if (v < 0 || static_cast<std::uint64_t>(v) < lo || static_cast<std::uint64_t>(v) > hi) {
      return value_error(key, *n,
                         std::to_string(v) + " is out of range " + std::to_string(lo) + ".." +
                             std::to_string(hi));
    }
    out = static_cast<T>(v);
  }

  // A number (integer or float) in [lo, hi], lo excluded if `lo_open`.
  bool real(std::string_view key, double& out, double lo, double hi, bool lo_open) {
    const toml::node* n = get(key);
    if (n == nullptr) return false;
    double v = 0;
    if (n->is_integer()) {
      v = static_cast<double>(n->as_integer()->get());
    } else if (n->is_floating_point()) {
      v = n->as_floating_point()->get();
    } else {
      type_error(key, *n, "a number");
      return false;
    }
    if (!std::isfinite(v) || v > hi || v < lo || (lo_open && v == lo)) {
      value_error(key, *n,
                  num_text(v) + " is out of range " + (lo_open ? "(" : "[") + num_text(lo) + ", " +
                      num_text(hi) + "]");
      return false;
    }
    out = v;
    return true;
  }

  // A time in `unit` ns (e.g. key "delay_us", unit 1000), >= 0, whole ns.
  void time(std::string_view key, TimeNs& out, double unit, double max_units, bool positive) {
    double v = 0;
    if (!real(key, v, 0.0, max_units, positive)) return;
    const double ns = v * unit;
    if (positive && std::llround(ns) == 0) {
      return value_error(key, *get(key), "rounds to 0 ns");
    }
    out = static_cast<TimeNs>(std::llround(ns));
  }

  void rate(std::string_view key, std::uint64_t& bps) {
    double v = 0;
    if (!real(key, v, 0.0, 1e6, true)) return;
    const auto r = static_cast<std::uint64_t>(std::llround(v * 1e9));
    if (r == 0) return value_error(key, *get(key), "rounds to 0 b/s");
    bps = r;
  }

  void alpha(std::string_view key, std::uint32_t& num, std::uint32_t& den) {
    const toml::node* n = get(key);
    if (n == nullptr) return;
    std::string text;
    if (n->is_string()) {
      text = n->as_string()->get();
    } else if (n->is_integer()) {
      text = std::to_string(n->as_integer()->get());
    } else if (n->is_floating_point()) {
      std::ostringstream s;
      s.precision(17);
      s << n->as_floating_point()->get();
      text = s.str();
    } else {
      return type_error(key, *n, "a fraction such as \"1/16\" or a number");
    }
    const std::string e = parse_alpha(text, num, den);
    if (!e.empty()) value_error(key, *n, e);
  }

  // A list of priorities 0..7 as a bit mask.
  void prio_list(std::string_view key, std::uint8_t& mask) {
    const toml::node* n = get(key);
    if (n == nullptr) return;
    if (!n->is_array()) return type_error(key, *n, "an array of priorities 0..7");
    std::uint8_t m = 0;
    for (const toml::node& e : *n->as_array()) {
      if (!e.is_integer() || e.as_integer()->get() < 0 || e.as_integer()->get() > 7) {
        return value_error(key, e, "priorities are integers 0..7");
      }
      m = static_cast<std::uint8_t>(m | (1u << e.as_integer()->get()));
    }
    mask = m;
  }

  void str_list(std::string_view key, std::vector<std::string>& out) {
    const toml::node* n = get(key);
    if (n == nullptr) return;
    if (!n->is_array()) return type_error(key, *n, "an array of strings");
    out.clear();
    for (const toml::node& e : *n->as_array()) {
      if (!e.is_string()) return value_error(key, e, "every element must be a string");
      out.push_back(e.as_string()->get());
    }
  }

  // Eight pause times, or one integer for all eight.
  void quanta(std::string_view key, std::array<std::uint16_t, 8>& out) {
    const toml::node* n = get(key);
    if (n == nullptr) return;
    auto one = [&](const toml::node& e, std::uint16_t& q) {
      if (!e.is_integer() || e.as_integer()->get() < 0 || e.as_integer()->get() > 0xffff) {
        value_error(key, e, "pause times are integers 0..65535");
        return false;
      }
      q = static_cast<std::uint16_t>(e.as_integer()->get());
      return true;
    };
    if (n->is_integer()) {
      std::uint16_t q = 0;
      if (one(*n, q)) out.fill(q);
      return;
    }
    if (!n->is_array() || n->as_array()->size() != 8) {
      return type_error(key, *n, "an integer or an array of 8 integers");
    }
    for (std::size_t i = 0; i < 8; ++i) {
      if (!one(*n->as_array()->get(i), out[i])) return;
    }
  }

  void mac(std::string_view key, std::optional<wire::MacAddr>& out) {
    std::string s;
    const toml::node* n = get(key);
    if (n == nullptr) return;
    str(key, s);
    if (!err_.empty()) return;
    out = wire::MacAddr::parse(s);
    if (!out) value_error(key, *n, "'" + s + "' is not a MAC address (aa:bb:cc:dd:ee:ff)");
  }

  // A sub-table, or nullptr (and an error if the key holds something else).
  const toml::table* table(std::string_view key) {
    const toml::node* n = get(key);
    if (n == nullptr) return nullptr;
    if (!n->is_table()) {
      type_error(key, *n, "a table");
      return nullptr;
    }
    return n->as_table();
  }

  // A value its getter accepted that the caller refuses (not one of a set).
  void reject(std::string_view key, const std::string& what) {
    if (const toml::node* n = t_.get(key)) value_error(key, *n, what);
  }

  void fail(std::string msg) {
    if (err_.empty()) err_ = std::move(msg);
  }
  bool ok() const { return err_.empty(); }

  std::string finish() const {
    if (!err_.empty()) return err_;
    for (const auto& [k, v] : t_) {
      const std::string_view key = k.str();
      bool known = false;
      for (const std::string& kk : known_) known = known || kk == key;
      if (known) continue;
      std::string msg = path_ + ": unknown key '" + std::string(key) + "'";
      // Suggest a key the unknown one starts (rate -> rate_gbps), else the
      // nearest by edit distance if it is close for its length.
      std::string best;
      for (const std::string& kk : known_) {
        if (best.empty() && kk.size() > key.size() && kk.compare(0, key.size(), key) == 0) {
          best = kk;
        }
      }
      std::size_t best_d = std::max<std::size_t>(1, key.size() / 3) + 1;
      for (const std::string& kk : known_) {
        if (!best.empty()) break;
        const std::size_t d = edit_distance(key, kk);
        if (d < best_d) best_d = d;
      }
      for (const std::string& kk : known_) {
        if (best.empty() && edit_distance(key, kk) == best_d) best = kk;
      }
      if (!best.empty()) msg += " (did you mean '" + best + "'?)";
      const auto line = v.source().begin.line;
      if (line != 0) msg += " at line " + std::to_string(line);
      return msg;
    }
    return {};
  }

 private:
  const toml::node* get(std::string_view key) {
    known_.emplace_back(key);
    if (!err_.empty()) return nullptr;
    return t_.get(key);
  }
  void type_error(std::string_view key, const toml::node& n, const std::string& want) {
    value_error(key, n, "expected " + want + ", got " + type_name(n));
  }
  void value_error(std::string_view key, const toml::node& n, const std::string& what) {
    if (!err_.empty()) return;
    err_ = path_ + "." + std::string(key) + ": " + what;
    const auto line = n.source().begin.line;
    if (line != 0) err_ += " (line " + std::to_string(line) + ")";
  }

  const toml::table& t_;
  std::string path_;
  std::vector<std::string> known_;
  std::string err_;
};

std::string at(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

constexpr double kMaxMs = 1e7;  // about 2.8 hours of virtual time
constexpr double kMaxUs = 1e10;
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 40;

void link_keys(Fields& f, LinkSpec& l) {
  f.rate("rate_gbps", l.rate_bps);
  f.time("delay_us", l.delay_ns, 1e3, 1e6, false);
  f.uint("overhead_bytes", l.overhead_bytes, 0, 64);
}

void switch_keys(Fields& f, SwitchSpec& s) {
  f.uint("buffer_bytes", s.buffer.buffer_bytes, 1, kMaxBytes);
  f.uint("headroom_bytes", s.buffer.headroom_bytes, 0, kMaxBytes);
  f.alpha("alpha", s.buffer.alpha_num, s.buffer.alpha_den);
  f.uint("xon_offset_bytes", s.buffer.xon_offset_bytes, 0, kMaxBytes);
  f.prio_list("ecn_priorities", s.ecn.enable);
  f.uint("ecn_kmin_bytes", s.ecn.kmin_bytes, 0, kMaxBytes);
  f.uint("ecn_kmax_bytes", s.ecn.kmax_bytes, 0, kMaxBytes);
  double pmax = -1;
  if (f.real("ecn_pmax", pmax, 0.0, 1.0, false)) {
    s.ecn.pmax_ppm = static_cast<std::uint32_t>(std::llround(pmax * 1e6));
  }
}

void host_keys(Fields& f, HostSpec& h) {
  double rx = 0;
  if (f.real("rx_gbps", rx, 0.0, 1e6, false)) {
    h.rx_bps = static_cast<std::uint64_t>(std::llround(rx * 1e9));
  }
  f.uint("rx_buffer_bytes", h.rx_buffer_bytes, 1, kMaxBytes);
  f.uint("rx_headroom_bytes", h.rx_headroom_bytes, 0, kMaxBytes);
  f.alpha("rx_alpha", h.rx_alpha_num, h.rx_alpha_den);
  f.uint("rx_xon_offset_bytes", h.rx_xon_offset_bytes, 0, kMaxBytes);
  f.uint("tx_queue_packets", h.tx_queue_packets, 1, 1u << 20);
  std::string kind;
  f.str("kind", kind);
  if (kind == "engine") {
    h.engine = true;
  } else if (kind == "constant") {
    h.engine = false;
  } else if (!kind.empty()) {
    f.reject("kind", "'" + kind + "' is not \"constant\" or \"engine\"");
  }
  f.uint("eth_mtu", h.eth_mtu, 576, 9216);
  f.prio_list("pfc", h.engine_pfc);
  f.uint("pfc_rx_budget", h.engine_rx_budget, 1, 4096);
  f.time("poll_cost_us", h.engine_poll_ns, 1e3, 1e6, false);
}

void rc_flow_keys(Fields& f, RcFlowSpec& r) {
  std::string op;
  f.str("op", op);
  if (op == "write") {
    r.write = true;
  } else if (op == "send") {
    r.write = false;
  } else if (!op.empty()) {
    f.reject("op", "'" + op + "' is not \"send\" or \"write\"");
  }
  f.uint("size_bytes", r.size_bytes, 1, 16u << 20);
  f.uint("count", r.count, 1, 1000000);
  f.uint("window", r.window, 1, 1024);
  f.uint("mtu", r.mtu, 256, 4096);
  if (f.ok() && (r.mtu & (r.mtu - 1)) != 0) {
    f.reject("mtu", std::to_string(r.mtu) + " is not 256, 512, 1024, 2048 or 4096");
  }
  f.uint("sl", r.sl, 0, 15);
  f.uint("ttl", r.ttl, 1, 255);
  f.uint("timeout", r.timeout, 1, 31);
  f.time("start_us", r.start_ns, 1e3, kMaxUs, false);
}

void flow_keys(Fields& f, FlowSpec& fl) {
  f.rate("rate_gbps", fl.rate_bps);
  f.uint("size_bytes", fl.size_bytes, 1, 1u << 20);
  f.uint("ttl", fl.ttl, 1, 255);
  f.uint("prio", fl.prio, 0, 7);
  f.boolean("ecn", fl.ecn_capable);
  f.time("start_us", fl.start_ns, 1e3, kMaxUs, false);
  f.time("stop_us", fl.stop_ns, 1e3, kMaxUs, false);
  f.time("start_jitter_us", fl.start_jitter_ns, 1e3, kMaxUs, false);
  double j = 0;
  if (f.real("jitter", j, 0.0, 0.99, false)) fl.jitter = j;
}

// The entries of an array of tables ([[name]]), each read by `fn`.
template <class Fn>
std::string each_table(const toml::node& v, const std::string& name, Fn&& fn) {
  const toml::array* arr = v.as_array();
  if (arr == nullptr || !arr->is_array_of_tables()) {
    return name + ": expected an array of tables ([[" + name + "]])";
  }
  for (std::size_t i = 0; i < arr->size(); ++i) {
    Fields f(*arr->get(i)->as_table(), at(name, i));
    fn(f, i);
    if (std::string e = f.finish(); !e.empty()) return e;
  }
  return {};
}

std::string read_root(const toml::table& root, Scenario& sc) {
  Fields top(root, "scenario file");
  // Defaults first: entries start from them.
  LinkSpec dlink;
  SwitchSpec dswitch;
  HostSpec dhost;
  FlowSpec dflow;
  if (const toml::table* d = top.table("defaults")) {
    Fields fd(*d, "defaults");
    if (const toml::table* t = fd.table("link")) {
      Fields f(*t, "defaults.link");
      link_keys(f, dlink);
      if (auto e = f.finish(); !e.empty()) return e;
    }
    if (const toml::table* t = fd.table("switch")) {
      Fields f(*t, "defaults.switch");
      switch_keys(f, dswitch);
      if (auto e = f.finish(); !e.empty()) return e;
    }
    if (const toml::table* t = fd.table("host")) {
      Fields f(*t, "defaults.host");
      host_keys(f, dhost);
      if (auto e = f.finish(); !e.empty()) return e;
    }
    if (const toml::table* t = fd.table("flow")) {
      Fields f(*t, "defaults.flow");
      flow_keys(f, dflow);
      if (auto e = f.finish(); !e.empty()) return e;
    }
    if (auto e = fd.finish(); !e.empty()) return e;
  }
  if (!top.ok()) return top.finish();

  if (const toml::table* t = top.table("scenario")) {
    Fields f(*t, "scenario");
    f.str("name", sc.name);
    f.str("description", sc.description);
    f.require("duration_ms");
    f.time("duration_ms", sc.duration_ns, 1e6, kMaxMs, true);
    f.uint("seed", sc.seed, 0, ~std::uint64_t{0} >> 1);
    if (auto e = f.finish(); !e.empty()) return e;
  } else if (top.ok()) {
    return "scenario file: missing table [scenario] (with at least duration_ms)";
  }
  if (const toml::table* t = top.table("routing")) {
    Fields f(*t, "routing");
    f.boolean("auto", sc.auto_routes);
    if (auto e = f.finish(); !e.empty()) return e;
  }
  if (const toml::table* t = top.table("pfc")) {
    Fields f(*t, "pfc");
    f.prio_list("priorities", sc.pfc.enable);
    f.uint("xoff_quanta", sc.pfc.xoff_quanta, 1, 0xffff);
    f.uint("refresh_percent", sc.pfc.refresh_percent, 1, 99);
    f.uint("max_quanta", sc.pfc.max_quanta, 1, 0xffff);
    if (auto e = f.finish(); !e.empty()) return e;
  }
  if (const toml::table* t = top.table("deadlock")) {
    Fields f(*t, "deadlock");
    f.boolean("enabled", sc.deadlock.enabled);
    f.time("stall_us", sc.deadlock.stall_ns, 1e3, kMaxUs, true);
    f.time("check_us", sc.deadlock.check_ns, 1e3, kMaxUs, true);
    f.boolean("stop", sc.deadlock.stop);
    if (auto e = f.finish(); !e.empty()) return e;
  }
  if (const toml::table* t = top.table("watchdog")) {
    Fields f(*t, "watchdog");
    f.boolean("enabled", sc.watchdog.enabled);
    f.time("detection_ms", sc.watchdog.detection_ns, 1e6, kMaxMs, true);
    f.time("restoration_ms", sc.watchdog.restoration_ns, 1e6, kMaxMs, true);
    std::string action;
    f.str("action", action);
    if (action == "drop") {
      sc.watchdog.action = pfc::StormAction::kDrop;
    } else if (action == "ignore") {
      sc.watchdog.action = pfc::StormAction::kIgnore;
    } else if (!action.empty()) {
      f.fail("watchdog.action: '" + action + "' is not \"drop\" or \"ignore\"");
    }
    if (auto e = f.finish(); !e.empty()) return e;
  }
  if (const toml::table* t = top.table("output")) {
    Fields f(*t, "output");
    f.time("sample_us", sc.output.sample_ns, 1e3, kMaxUs, true);
    f.boolean("csv", sc.output.csv);
    f.boolean("pcap", sc.output.pcap);
    f.str_list("pcap_links", sc.output.pcap_links);
    f.uint("pcap_snaplen", sc.output.pcap_snaplen, 60, 65535);
    if (auto e = f.finish(); !e.empty()) return e;
  }
  if (!top.ok()) return top.finish();

  struct ArrayKey {
    const char* name;
    std::string (*read)(const toml::node&, Scenario&, const LinkSpec&, const SwitchSpec&,
                        const HostSpec&, const FlowSpec&);
  };
  static const ArrayKey kArrays[] = {
      {"host",
       [](const toml::node& v, Scenario& s, const LinkSpec&, const SwitchSpec&, const HostSpec& dh,
          const FlowSpec&) {
         return each_table(v, "host", [&](Fields& f, std::size_t) {
           HostSpec h = dh;
           f.require("name");
           f.str("name", h.name);
           host_keys(f, h);
           s.hosts.push_back(h);
         });
       }},
      {"switch",
       [](const toml::node& v, Scenario& s, const LinkSpec&, const SwitchSpec& ds, const HostSpec&,
          const FlowSpec&) {
         return each_table(v, "switch", [&](Fields& f, std::size_t) {
           SwitchSpec w = ds;
           f.require("name");
           f.str("name", w.name);
           switch_keys(f, w);
           s.switches.push_back(w);
         });
       }},
      {"link",
       [](const toml::node& v, Scenario& s, const LinkSpec& dl, const SwitchSpec&, const HostSpec&,
          const FlowSpec&) {
         return each_table(v, "link", [&](Fields& f, std::size_t) {
           LinkSpec l = dl;
           f.require("a");
           f.require("b");
           f.str("a", l.a);
           f.str("b", l.b);
           link_keys(f, l);
           s.links.push_back(l);
         });
       }},
      {"route",
       [](const toml::node& v, Scenario& s, const LinkSpec&, const SwitchSpec&, const HostSpec&,
          const FlowSpec&) {
         return each_table(v, "route", [&](Fields& f, std::size_t) {
           RouteSpec r;
           f.require("switch");
           f.require("dst");
           f.require("via");
           f.str("switch", r.sw);
           f.str("dst", r.dst);
           f.str("via", r.via);
           s.routes.push_back(r);
         });
       }},
      {"route_change",
       [](const toml::node& v, Scenario& s, const LinkSpec&, const SwitchSpec&, const HostSpec&,
          const FlowSpec&) {
         return each_table(v, "route_change", [&](Fields& f, std::size_t) {
           RouteChangeSpec r;
           f.require("at_us");
           f.require("switch");
           f.require("dst");
           f.time("at_us", r.at_ns, 1e3, kMaxUs, false);
           f.str("switch", r.sw);
           f.str("dst", r.dst);
           f.str("via", r.via);
           s.route_changes.push_back(r);
         });
       }},
      {"flow",
       [](const toml::node& v, Scenario& s, const LinkSpec&, const SwitchSpec&, const HostSpec&,
          const FlowSpec& df) {
         return each_table(v, "flow", [&](Fields& f, std::size_t i) {
           FlowSpec fl = df;
           fl.name = "f" + std::to_string(i);
           f.require("src");
           f.require("dst");
           f.str("name", fl.name);
           f.str("src", fl.src);
           f.str("dst", fl.dst);
           flow_keys(f, fl);
           s.flows.push_back(fl);
         });
       }},
      {"rc_flow",
       [](const toml::node& v, Scenario& s, const LinkSpec&, const SwitchSpec&, const HostSpec&,
          const FlowSpec&) {
         return each_table(v, "rc_flow", [&](Fields& f, std::size_t i) {
           RcFlowSpec r;
           r.name = "rc" + std::to_string(i);
           f.require("src");
           f.require("dst");
           f.str("name", r.name);
           f.str("src", r.src);
           f.str("dst", r.dst);
           rc_flow_keys(f, r);
           s.rc_flows.push_back(r);
         });
       }},
      {"pfc_inject",
       [](const toml::node& v, Scenario& s, const LinkSpec&, const SwitchSpec&, const HostSpec&,
          const FlowSpec&) {
         return each_table(v, "pfc_inject", [&](Fields& f, std::size_t) {
           PfcInjectSpec p;
           f.require("at_us");
           f.require("from");
           f.require("to");
           f.time("at_us", p.at_ns, 1e3, kMaxUs, false);
           f.str("from", p.from);
           f.str("to", p.to);
           f.uint("class_enable", p.class_enable, 0, 255);
           f.quanta("quanta", p.quanta);
           f.uint("opcode", p.opcode, 0, 0xffff);
           f.uint("ethertype", p.ethertype, 0, 0xffff);
           f.mac("dst_mac", p.dst_mac);
           f.uint("length", p.length, 0, 60);
           s.pfc_injections.push_back(p);
         });
       }},
  };
  for (const ArrayKey& k : kArrays) {
    if (!top.has(k.name)) continue;
    if (auto e = k.read(*root.get(k.name), sc, dlink, dswitch, dhost, dflow); !e.empty()) {
      return e;
    }
  }
  return top.finish();
}

}  // namespace

std::string scenario_from_toml(std::string_view text, std::string_view source, Scenario& out) {
  out = Scenario{};
  toml::table root;
  // toml++ reports syntax errors by exception; turned into the message here.
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return std::string(source) + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
           ": " + std::string(e.description());
  }
  return read_root(root, out);
}

std::string scenario_from_file(const std::string& path, Scenario& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot open";
  std::ostringstream s;
  s << in.rdbuf();
  return scenario_from_toml(s.str(), path, out);
}

}  // namespace uroce::testbed
