#include "testbed/scenario_toml.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "datapath/base/toml_fields.h"

namespace uroce::testbed {

namespace {

using toml_fields::Fields;

Fields fields(const toml::table& t, std::string path) {
  return Fields(t, std::move(path), toml_fields::Style::kDetailed);
}

// A time in `unit` ns (e.g. key "delay_us", unit 1000), >= 0, whole ns.
void read_time(Fields& f, std::string_view key, TimeNs& out, double unit, double max_units,
               bool positive) {
  double v = 0;
  if (!f.number(key, v, 0.0, max_units, positive)) return;
  const double ns = v * unit;
  if (positive && std::llround(ns) == 0) return f.reject(key, "rounds to 0 ns");
  out = static_cast<TimeNs>(std::llround(ns));
}

void read_rate(Fields& f, std::string_view key, std::uint64_t& bps) {
  double v = 0;
  if (!f.number(key, v, 0.0, 1e6, true)) return;
  const auto r = static_cast<std::uint64_t>(std::llround(v * 1e9));
  if (r == 0) return f.reject(key, "rounds to 0 b/s");
  bps = r;
}

// pfc/alpha.h's grammar, over a string, an integer or a float.
void read_alpha(Fields& f, std::string_view key, std::uint32_t& num, std::uint32_t& den) {
  std::string text;
  if (!f.scalar_text(key, text, "a fraction such as \"1/16\" or a number")) return;
  const std::string e = pfc::parse_alpha(text, num, den);
  if (!e.empty()) f.reject(key, e);
}

// A list of priorities 0..7 as a bit mask.
void read_prio_list(Fields& f, std::string_view key, std::uint8_t& mask) {
  const toml::node* n = f.get(key);
  if (n == nullptr) return;
  if (!n->is_array()) return f.type_error(f.key_path(key), *n, "an array of priorities 0..7");
  std::uint8_t m = 0;
  for (const toml::node& e : *n->as_array()) {
    if (!e.is_integer() || e.as_integer()->get() < 0 || e.as_integer()->get() > 7) {
      return f.value_error(f.key_path(key), e, "priorities are integers 0..7");
    }
    m = static_cast<std::uint8_t>(m | (1u << e.as_integer()->get()));
  }
  mask = m;
}

// Eight pause times, or one integer for all eight.
void read_quanta(Fields& f, std::string_view key, std::array<std::uint16_t, 8>& out) {
  const toml::node* n = f.get(key);
  if (n == nullptr) return;
  auto one = [&](const toml::node& e, std::uint16_t& q) {
    if (!e.is_integer() || e.as_integer()->get() < 0 || e.as_integer()->get() > 0xffff) {
      f.value_error(f.key_path(key), e, "pause times are integers 0..65535");
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
    return f.type_error(f.key_path(key), *n, "an integer or an array of 8 integers");
  }
  for (std::size_t i = 0; i < 8; ++i) {
    if (!one(*n->as_array()->get(i), out[i])) return;
  }
}

void read_mac(Fields& f, std::string_view key, std::optional<wire::MacAddr>& out) {
  std::string s;
  if (!f.str(key, s)) return;
  out = wire::MacAddr::parse(s);
  if (!out) f.reject(key, "'" + s + "' is not a MAC address (aa:bb:cc:dd:ee:ff)");
}

std::string at(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

constexpr double kMaxMs = 1e7;  // about 2.8 hours of virtual time
constexpr double kMaxUs = 1e10;
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 40;

void link_keys(Fields& f, LinkSpec& l) {
  read_rate(f, "rate_gbps", l.rate_bps);
  read_time(f, "delay_us", l.delay_ns, 1e3, 1e6, false);
  f.integer("overhead_bytes", l.overhead_bytes, 0, 64);
  f.number("loss_rate", l.loss_rate, 0.0, 1.0, false);
}

void switch_keys(Fields& f, SwitchSpec& s) {
  f.integer("buffer_bytes", s.buffer.buffer_bytes, 1, kMaxBytes);
  f.integer("headroom_bytes", s.buffer.headroom_bytes, 0, kMaxBytes);
  read_alpha(f, "alpha", s.buffer.alpha_num, s.buffer.alpha_den);
  f.integer("xon_offset_bytes", s.buffer.xon_offset_bytes, 0, kMaxBytes);
  read_prio_list(f, "ecn_priorities", s.ecn.enable);
  f.integer("ecn_kmin_bytes", s.ecn.kmin_bytes, 0, kMaxBytes);
  f.integer("ecn_kmax_bytes", s.ecn.kmax_bytes, 0, kMaxBytes);
  double pmax = -1;
  if (f.number("ecn_pmax", pmax, 0.0, 1.0, false)) {
    s.ecn.pmax_ppm = static_cast<std::uint32_t>(std::llround(pmax * 1e6));
  }
  f.boolean("adaptive_routing", s.adaptive);
}

// The Homa-like scheduler's settings (sched/homa_settings.h), named as its
// first_bad_field() names them; that check has the last word on ranges.
void homa_keys(Fields& f, sched::homa::HomaSettings& m) {
  f.boolean("homa", m.enabled);
  f.integer("homa_priorities", m.priorities, 1, 8);
  f.integer("homa_unsched_priorities", m.unsched_priorities, 1, 8);
  f.integer("homa_unsched_bytes", m.unsched_bytes, 1, std::uint32_t{1} << 30);
  f.integer("homa_rtt_bytes", m.rtt_bytes, 1, std::uint32_t{1} << 30);
  f.integer("homa_grant_increment", m.grant_increment, 1, std::uint32_t{1} << 30);
  f.integer("homa_overcommit", m.overcommit, 1, 64);
  f.integer("homa_max_incoming", m.max_incoming, 1, std::uint64_t{1} << 40);
  f.integer("homa_fifo_permille", m.fifo_permille, 0, 1000);
  read_time(f, "homa_resend_us", m.resend_ns, 1e3, 1e7, true);
  read_time(f, "homa_grant_timeout_us", m.grant_timeout_ns, 1e3, 1e7, true);
  f.integer("homa_max_timeouts", m.max_timeouts, 1, 1000);
  f.integer("homa_max_messages", m.max_messages, 1, 1u << 20);
  f.integer("homa_cutoffs_every", m.cutoffs_every, 1, 1u << 20);
  if (f.ok()) {
    const std::string bad(m.first_bad_field());
    if (!bad.empty()) {
      // A key out of range with the others (homa_grant_timeout_us must
      // exceed homa_resend_us), named even when only the other was set.
      f.fail(f.key_path(bad) + ": out of range with the other homa keys (sched/homa_settings.h)");
    }
  }
}

void host_keys(Fields& f, HostSpec& h) {
  double rx = 0;
  if (f.number("rx_gbps", rx, 0.0, 1e6, false)) {
    h.rx_bps = static_cast<std::uint64_t>(std::llround(rx * 1e9));
  }
  f.integer("rx_buffer_bytes", h.rx_buffer_bytes, 1, kMaxBytes);
  f.integer("rx_headroom_bytes", h.rx_headroom_bytes, 0, kMaxBytes);
  read_alpha(f, "rx_alpha", h.rx_alpha_num, h.rx_alpha_den);
  f.integer("rx_xon_offset_bytes", h.rx_xon_offset_bytes, 0, kMaxBytes);
  f.integer("tx_queue_packets", h.tx_queue_packets, 1, 1u << 20);
  std::string kind;
  f.str("kind", kind);
  if (kind == "engine") {
    h.engine = true;
  } else if (kind == "constant") {
    h.engine = false;
  } else if (!kind.empty()) {
    f.reject("kind", "'" + kind + "' is not \"constant\" or \"engine\"");
  }
  f.integer("eth_mtu", h.eth_mtu, 576, 9216);
  read_prio_list(f, "pfc", h.engine_pfc);
  f.integer("pfc_rx_budget", h.engine_rx_budget, 1, 4096);
  read_time(f, "poll_cost_us", h.engine_poll_ns, 1e3, 1e6, false);
  f.boolean("dcqcn", h.engine_dcqcn);
  read_time(f, "cnp_interval_us", h.engine_cnp_interval_ns, 1e3, 1e6, false);
  // uroced's device keys of the same names (apps/uroced/config_toml.cpp),
  // through the same sched/ definitions.
  std::string iso;
  if (f.str("isolation", iso) && !sched::parse_isolation(iso, &h.engine_sched.isolation)) {
    f.reject("isolation", "'" + iso + "' is not " + std::string(sched::kIsolationModes));
  }
  std::uint8_t strict = 0;
  if (f.int_array("strict_classes", "an array of classes 0..7", sched::kNumClasses, 0,
                  sched::kNumClasses - 1, [&](std::size_t, std::int64_t c) {
                    strict = static_cast<std::uint8_t>(strict | (1u << c));
                  })) {
    h.engine_sched.classes.set_strict(strict);
  }
  f.int_array("class_weights", "an array of at most 8 weights", sched::kNumClasses, 1,
              sched::kMaxClassWeight, [&](std::size_t c, std::int64_t w) {
                h.engine_sched.classes.classes[c].weight = static_cast<std::uint32_t>(w);
              });
  f.int_array("class_rates_mbps", "an array of at most 8 rates in Mb/s", sched::kNumClasses, 0,
              sched::kMaxClassRateMbps, [&](std::size_t c, std::int64_t r) {
                h.engine_sched.classes.classes[c].rate_mbps = static_cast<std::uint32_t>(r);
              });
  f.integer("class_quantum_bytes", h.engine_sched.classes.class_quantum, sched::kMinClassQuantum,
            sched::kMaxClassQuantum);
  f.integer("tx_limit_bytes", h.engine_tx_limit_bytes, 0, sched::kMaxPortLimitBytes);
  // uroced's ranges for the same device keys (apps/uroced/config_dc.h).
  f.integer("dc_contexts", h.engine_dc_contexts, 1, 1u << 20);
  f.integer("dc_records_log2", h.engine_dc_records_log2, 0, 24);
  f.integer("dc_stale_ms", h.engine_dc_stale_ms, 1, 3'600'000);
  f.number("drop_rx_rate", h.engine_drop_rx_rate, 0.0, 1.0, false);
  // uroced's ranges for lossy_qps, spray_paths and lossy_cap
  // (apps/uroced/config_keys_device.cpp).
  f.boolean("lossy", h.engine_lossy);
  f.integer("lossy_qps", h.engine_lossy_qps, 1, 131072);
  f.integer("spray_paths", h.engine_spray_paths, 1, 16);
  f.boolean("spray_ecn", h.engine_spray_ecn);
  f.integer("lossy_cap", h.engine_lossy_cap, 1, 256);
  homa_keys(f, h.engine_homa);
  std::string txq;
  if (f.str("tx_queue", txq)) {
    if (txq == "fifo") {
      h.tx_fifo = true;
    } else if (txq == "priority") {
      h.tx_fifo = false;
    } else {
      f.reject("tx_queue", "'" + txq + "' is not \"priority\" or \"fifo\"");
    }
  }
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
  f.integer("size_bytes", r.size_bytes, 1, 16u << 20);
  f.integer("count", r.count, 1, 1000000);
  f.integer("window", r.window, 1, 1024);
  f.integer("mtu", r.mtu, 256, 4096);
  if (f.ok() && (r.mtu & (r.mtu - 1)) != 0) {
    f.reject("mtu", std::to_string(r.mtu) + " is not 256, 512, 1024, 2048 or 4096");
  }
  f.integer("sl", r.sl, 0, 15);
  f.integer("ttl", r.ttl, 1, 255);
  f.integer("timeout", r.timeout, 1, 31);
  read_time(f, "start_us", r.start_ns, 1e3, kMaxUs, false);
  f.boolean("enabled", r.enabled);
  f.boolean("mct_samples", r.mct_samples);
}

void dc_flow_keys(Fields& f, DcFlowSpec& d) {
  f.str_list("targets", d.targets);
  std::string op;
  f.str("op", op);
  if (op == "write") {
    d.write = true;
  } else if (op == "send") {
    d.write = false;
  } else if (!op.empty()) {
    f.reject("op", "'" + op + "' is not \"send\" or \"write\"");
  }
  f.integer("size_bytes", d.size_bytes, 1, 16u << 20);
  // The message index and the window's slot travel in the immediate
  // (dc_flow.h).
  f.integer("count", d.count, 1, 1u << 20);
  f.integer("window", d.window, 1, 1024);
  f.integer("streams", d.streams, 1, 16);
  if (f.ok() && (d.streams & (d.streams - 1)) != 0) {
    f.reject("streams", std::to_string(d.streams) + " is not 1, 2, 4, 8 or 16");
  }
  f.integer("mtu", d.mtu, 256, 4096);
  if (f.ok() && (d.mtu & (d.mtu - 1)) != 0) {
    f.reject("mtu", std::to_string(d.mtu) + " is not 256, 512, 1024, 2048 or 4096");
  }
  f.integer("sl", d.sl, 0, 15);
  f.integer("ttl", d.ttl, 1, 255);
  f.integer("timeout", d.timeout, 1, 31);
  read_time(f, "start_us", d.start_ns, 1e3, kMaxUs, false);
  f.boolean("enabled", d.enabled);
}

void workload_keys(Fields& f, WorkloadScenario& w) {
  w.enabled = true;
  f.require("distribution");
  f.str("distribution", w.distribution);
  f.integer("max_length_bytes", w.max_length_bytes, 0, std::uint64_t{1} << 31);
  // Above 1 the hosts are offered more than their links carry: allowed, to
  // see a scheme overloaded, but not without bound.
  f.number("load", w.load, 0.0, 4.0, true);
  read_time(f, "warmup_ms", w.warmup_ns, 1e6, kMaxMs, false);
  read_time(f, "measure_ms", w.measure_ns, 1e6, kMaxMs, true);
  f.integer("qps_per_pair", w.qps_per_pair, 1, 64);
  std::string op;
  f.str("op", op);
  if (op == "write_imm") {
    w.write = true;
  } else if (op == "send") {
    w.write = false;
  } else if (!op.empty()) {
    f.reject("op", "'" + op + "' is not \"send\" or \"write_imm\"");
  }
  f.integer("mtu", w.mtu, 256, 4096);
  if (f.ok() && (w.mtu & (w.mtu - 1)) != 0) {
    f.reject("mtu", std::to_string(w.mtu) + " is not 256, 512, 1024, 2048 or 4096");
  }
  f.integer("sl", w.sl, 0, 15);
  f.integer("ttl", w.ttl, 1, 255);
  f.integer("timeout", w.timeout, 1, 31);
  f.integer("buckets", w.buckets, 1, 1000);
  f.boolean("samples", w.samples);
  f.integer("incast_senders", w.incast_senders, 0, 1023);
  f.integer("incast_bytes", w.incast_bytes, 1, std::uint64_t{1} << 31);
  read_time(f, "incast_every_us", w.incast_every_ns, 1e3, kMaxUs, true);
}

void flow_keys(Fields& f, FlowSpec& fl) {
  read_rate(f, "rate_gbps", fl.rate_bps);
  f.integer("size_bytes", fl.size_bytes, 1, 1u << 20);
  f.integer("ttl", fl.ttl, 1, 255);
  f.integer("prio", fl.prio, 0, 7);
  f.boolean("ecn", fl.ecn_capable);
  read_time(f, "start_us", fl.start_ns, 1e3, kMaxUs, false);
  read_time(f, "stop_us", fl.stop_ns, 1e3, kMaxUs, false);
  read_time(f, "start_jitter_us", fl.start_jitter_ns, 1e3, kMaxUs, false);
  double j = 0;
  if (f.number("jitter", j, 0.0, 0.99, false)) fl.jitter = j;
}

// The entries of an array of tables ([[name]]), each read by `fn`.
template <class Fn>
std::string each_table(const toml::node& v, const std::string& name, Fn&& fn) {
  const toml::array* arr = v.as_array();
  if (arr == nullptr || !arr->is_array_of_tables()) {
    return name + ": expected an array of tables ([[" + name + "]])";
  }
  for (std::size_t i = 0; i < arr->size(); ++i) {
    Fields f = fields(*arr->get(i)->as_table(), at(name, i));
    fn(f, i);
    if (std::string e = f.finish(); !e.empty()) return e;
  }
  return {};
}

std::string read_root(const toml::table& root, Scenario& sc) {
  Fields top = fields(root, "scenario file");
  // Defaults first: entries start from them.
  LinkSpec dlink;
  SwitchSpec dswitch;
  HostSpec dhost;
  FlowSpec dflow;
  if (const toml::table* d = top.table("defaults")) {
    Fields fd = fields(*d, "defaults");
    if (const toml::table* t = fd.table("link")) {
      Fields f = fields(*t, "defaults.link");
      link_keys(f, dlink);
      if (auto e = f.finish(); !e.empty()) return e;
    }
    if (const toml::table* t = fd.table("switch")) {
      Fields f = fields(*t, "defaults.switch");
      switch_keys(f, dswitch);
      if (auto e = f.finish(); !e.empty()) return e;
    }
    if (const toml::table* t = fd.table("host")) {
      Fields f = fields(*t, "defaults.host");
      host_keys(f, dhost);
      if (auto e = f.finish(); !e.empty()) return e;
    }
    if (const toml::table* t = fd.table("flow")) {
      Fields f = fields(*t, "defaults.flow");
      flow_keys(f, dflow);
      if (auto e = f.finish(); !e.empty()) return e;
    }
    if (auto e = fd.finish(); !e.empty()) return e;
  }
  if (!top.ok()) return top.finish();

  if (const toml::table* t = top.table("scenario")) {
    Fields f = fields(*t, "scenario");
    f.str("name", sc.name);
    f.str("description", sc.description);
    f.require("duration_ms");
    read_time(f, "duration_ms", sc.duration_ns, 1e6, kMaxMs, true);
    f.integer("seed", sc.seed, 0, ~std::uint64_t{0} >> 1);
    if (auto e = f.finish(); !e.empty()) return e;
  } else if (top.ok()) {
    return "scenario file: missing table [scenario] (with at least duration_ms)";
  }
  if (const toml::table* t = top.table("routing")) {
    Fields f = fields(*t, "routing");
    f.boolean("auto", sc.auto_routes);
    f.boolean("ecmp", sc.ecmp);
    read_time(f, "reconverge_us", sc.reconverge_ns, 1e3, kMaxUs, false);
    if (auto e = f.finish(); !e.empty()) return e;
  }
  if (const toml::table* t = top.table("pfc")) {
    Fields f = fields(*t, "pfc");
    read_prio_list(f, "priorities", sc.pfc.enable);
    f.integer("xoff_quanta", sc.pfc.xoff_quanta, 1, 0xffff);
    f.integer("refresh_percent", sc.pfc.refresh_percent, 1, 99);
    f.integer("max_quanta", sc.pfc.max_quanta, 1, 0xffff);
    if (auto e = f.finish(); !e.empty()) return e;
  }
  if (const toml::table* t = top.table("deadlock")) {
    Fields f = fields(*t, "deadlock");
    f.boolean("enabled", sc.deadlock.enabled);
    read_time(f, "stall_us", sc.deadlock.stall_ns, 1e3, kMaxUs, true);
    read_time(f, "check_us", sc.deadlock.check_ns, 1e3, kMaxUs, true);
    f.boolean("stop", sc.deadlock.stop);
    if (auto e = f.finish(); !e.empty()) return e;
  }
  if (const toml::table* t = top.table("watchdog")) {
    Fields f = fields(*t, "watchdog");
    f.boolean("enabled", sc.watchdog.enabled);
    read_time(f, "detection_ms", sc.watchdog.detection_ns, 1e6, kMaxMs, true);
    read_time(f, "restoration_ms", sc.watchdog.restoration_ns, 1e6, kMaxMs, true);
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
  if (const toml::table* t = top.table("workload")) {
    Fields f = fields(*t, "workload");
    workload_keys(f, sc.workload);
    if (auto e = f.finish(); !e.empty()) return e;
  }
  if (const toml::table* t = top.table("output")) {
    Fields f = fields(*t, "output");
    read_time(f, "sample_us", sc.output.sample_ns, 1e3, kMaxUs, true);
    f.boolean("csv", sc.output.csv);
    f.boolean("pcap", sc.output.pcap);
    f.str_list("pcap_links", sc.output.pcap_links);
    f.integer("pcap_snaplen", sc.output.pcap_snaplen, 60, 65535);
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
           read_time(f, "at_us", r.at_ns, 1e3, kMaxUs, false);
           f.str("switch", r.sw);
           f.str("dst", r.dst);
           f.str("via", r.via);
           s.route_changes.push_back(r);
         });
       }},
      {"link_change",
       [](const toml::node& v, Scenario& s, const LinkSpec&, const SwitchSpec&, const HostSpec&,
          const FlowSpec&) {
         return each_table(v, "link_change", [&](Fields& f, std::size_t) {
           LinkChangeSpec c;
           f.require("at_us");
           f.require("link");
           f.require("up");
           read_time(f, "at_us", c.at_ns, 1e3, kMaxUs, false);
           f.str("link", c.link);
           f.boolean("up", c.up);
           f.boolean("enabled", c.enabled);
           s.link_changes.push_back(c);
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
      {"dc_flow",
       [](const toml::node& v, Scenario& s, const LinkSpec&, const SwitchSpec&, const HostSpec&,
          const FlowSpec&) {
         return each_table(v, "dc_flow", [&](Fields& f, std::size_t i) {
           DcFlowSpec d;
           d.name = "dc" + std::to_string(i);
           f.require("src");
           f.require("targets");
           f.str("name", d.name);
           f.str("src", d.src);
           dc_flow_keys(f, d);
           s.dc_flows.push_back(d);
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
           read_time(f, "at_us", p.at_ns, 1e3, kMaxUs, false);
           f.str("from", p.from);
           f.str("to", p.to);
           f.integer("class_enable", p.class_enable, 0, 255);
           read_quanta(f, "quanta", p.quanta);
           f.integer("opcode", p.opcode, 0, 0xffff);
           f.integer("ethertype", p.ethertype, 0, 0xffff);
           read_mac(f, "dst_mac", p.dst_mac);
           f.integer("length", p.length, 0, 60);
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

// One PATH=VALUE override (scenario_toml.h) applied to `root`.
std::string apply_override(const std::string& o, toml::table& root) {
  const std::size_t eq = o.find('=');
  if (eq == std::string::npos || eq == 0) return "--set " + o + ": expected PATH=VALUE";
  const std::string path = o.substr(0, eq);
  toml::table value;
  if (!toml_fields::parse("v = " + o.substr(eq + 1), "--set " + path, &value).empty()) {
    return "--set " + path + ": '" + o.substr(eq + 1) + "' is not a TOML value";
  }
  toml::table* t = &root;
  std::size_t pos = 0;
  for (std::size_t dot; (dot = path.find('.', pos)) != std::string::npos; pos = dot + 1) {
    const std::string name = path.substr(pos, dot - pos);
    toml::node* n = t->get(name);
    if (n == nullptr && !name.empty()) n = &t->insert(name, toml::table{}).first->second;
    // An entry of an array of tables by its index: "rc_flow.0.window".
    if (n != nullptr && n->is_array()) {
      const std::size_t idx_end = path.find('.', dot + 1);
      const std::string idx = path.substr(dot + 1, idx_end - dot - 1);
      std::size_t i = 0;
      const auto r = std::from_chars(idx.data(), idx.data() + idx.size(), i);
      toml::array& arr = *n->as_array();
      if (idx_end == std::string::npos || idx.empty() || r.ec != std::errc() ||
          r.ptr != idx.data() + idx.size() || i >= arr.size()) {
        return "--set " + path + ": '" + path.substr(0, dot) + "' has no entry '" + idx + "'";
      }
      n = arr.get(i);
      dot = idx_end;
    }
    t = n == nullptr ? nullptr : n->as_table();
    if (t == nullptr) return "--set " + path + ": '" + path.substr(0, dot) + "' is not a table";
  }
  const std::string key = path.substr(pos);
  if (key.empty()) return "--set " + o + ": expected PATH=VALUE";
  t->insert_or_assign(key, *value.get("v"));
  return {};
}

}  // namespace

std::string scenario_from_toml(std::string_view text, std::string_view source, Scenario& out) {
  out = Scenario{};
  toml::table root;
  if (std::string e = toml_fields::parse(text, source, &root); !e.empty()) return e;
  return read_root(root, out);
}

std::string scenario_from_file(const std::string& path, Scenario& out) {
  return scenario_from_file(path, {}, out);
}

std::string scenario_from_file(const std::string& path, const std::vector<std::string>& overrides,
                               Scenario& out) {
  out = Scenario{};
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot open";
  std::ostringstream s;
  s << in.rdbuf();
  toml::table root;
  if (std::string e = toml_fields::parse(s.str(), path, &root); !e.empty()) return e;
  for (const std::string& o : overrides) {
    if (std::string e = apply_override(o, root); !e.empty()) return e;
  }
  std::string e = read_root(root, out);
  // The workload's distribution file sits beside the scenario (or below
  // it): a relative path is relative to the scenario file's directory, so
  // a scenario runs from any working directory.
  const std::filesystem::path dist(out.workload.distribution);
  if (e.empty() && !dist.empty() && dist.is_relative()) {
    out.workload.distribution = (std::filesystem::path(path).parent_path() / dist).string();
  }
  return e;
}

}  // namespace uroce::testbed
