#include "apps/uroce-ctl/tables.h"

#include <fmt/format.h>

#include "apps/uroced/metrics_text.h"
#include "apps/uroced/status_values.h"
#include "datapath/engine/loop_histogram.h"
#include "datapath/transport/dc_stream.h"
#include "datapath/transport/dct_qp.h"
#include "datapath/transport/rc_homa.h"
#include "sched/dcqcn.h"

#include <algorithm>
#include <cctype>

namespace uroce::ctl_tool {
namespace {

using nlohmann::json;

// A field as text: strings as they are, numbers in decimal, "-" if absent.
std::string cell(const json& j, const char* key) {
  if (!j.is_object()) return "-";
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "-";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_float()) return fmt::format("{:.1f}", it->get<double>());
  return it->dump();
}

const json& child(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

bool is_true(const json& j, const char* key) {
  const json& v = child(j, key);
  return v.is_boolean() && v.get<bool>();
}

// How many clients a status reply left out to fit one message (0: none).
std::size_t clients_omitted(const json& j) {
  const json& n = child(j, "clients_omitted");
  return n.is_number_unsigned() ? n.get<std::size_t>() : 0;
}

bool numeric(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.';
  });
}

// name/value rows for every non-zero counter under `j`, nested objects
// flattened as prefix.name.
void flatten(const json& j, const std::string& prefix, Table* t) {
  if (!j.is_object()) return;
  for (const auto& [k, v] : j.items()) {
    const std::string name = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object()) {
      flatten(v, name, t);
    } else if (v.is_number() && v.get<double>() != 0) {
      t->add({name, v.dump()});
    }
  }
}

// `head` and a column per counter of `list`, named by its JSON key in
// capitals.
template <class S, std::size_t N>
std::vector<std::string> with_counter_columns(std::vector<std::string> head,
                                              const counters::FieldList<S, N>& list) {
  for (const counters::Field<S>& f : list) {
    std::string h(f.name);
    for (char& ch : h) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    head.push_back(std::move(h));
  }
  return head;
}

// `row` and the value of each counter of `list` in the object `c`.
template <class S, std::size_t N>
std::vector<std::string> with_counter_cells(std::vector<std::string> row, const json& c,
                                            const counters::FieldList<S, N>& list) {
  for (const counters::Field<S>& f : list) row.push_back(cell(c, std::string(f.name).c_str()));
  return row;
}

}  // namespace

std::string Table::render() const {
  std::vector<std::size_t> w(headers_.size(), 0);
  for (std::size_t c = 0; c < headers_.size(); ++c) w[c] = headers_[c].size();
  for (const auto& r : rows_) {
    for (std::size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& r, bool header) {
    std::string out;
    for (std::size_t c = 0; c < w.size(); ++c) {
      const std::string& s = c < r.size() ? r[c] : std::string("-");
      const bool right = !header && numeric(s);
      if (c != 0) out += "  ";
      out += right ? fmt::format("{:>{}}", s, w[c]) : fmt::format("{:<{}}", s, w[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers_, true);
  for (const auto& r : rows_) out += line(r, false);
  return out;
}

namespace {

engine::LoopBuckets buckets_of(const json& a) {
  engine::LoopBuckets b{};
  if (!a.is_array()) return b;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) b[i] = a[i].get<std::uint64_t>();
  return b;
}

// A histogram's bound as "<2.0us": the values were below it (a bucket's
// ceiling plus one); "0" for an empty one or the zero bucket.
std::string bound(std::uint64_t ceiling_ns) {
  if (ceiling_ns == 0) return "0";
  const double ns = static_cast<double>(ceiling_ns) + 1;
  if (ns < 1e3) return fmt::format("<{:.0f}ns", ns);
  if (ns < 1e6) return fmt::format("<{:.1f}us", ns / 1e3);
  return fmt::format("<{:.1f}ms", ns / 1e6);
}

std::string highest(const engine::LoopBuckets& h) {
  for (std::size_t b = engine::kLoopBuckets; b-- > 0;) {
    if (h[b] != 0) return bound(engine::loop_bucket_ceiling_ns(b));
  }
  return "0";
}

}  // namespace

std::string render_loops(const json& loops) {
  Table t({"LCORE", "WORK_P50", "WORK_P99", "WORK_P99.9", "WORK_MAX", "IDLE_P99.9", "IDLE_MAX",
           "AWAY>=8us", "AWAY>=65us", "OVERSLEEP_P99", "OVERSLEEP_MAX"});
  for (const auto& l : loops) {
    const engine::LoopBuckets w = buckets_of(child(l, "work_ns"));
    const engine::LoopBuckets i = buckets_of(child(l, "idle_ns"));
    const engine::LoopBuckets o = buckets_of(child(l, "oversleep_ns"));
    constexpr TimeNs k8us = TimeNs{1} << 13, k65us = TimeNs{1} << 16;
    t.add({cell(l, "lcore"), bound(engine::loop_quantile_ns(w, 0.5)),
           bound(engine::loop_quantile_ns(w, 0.99)), bound(engine::loop_quantile_ns(w, 0.999)),
           highest(w), bound(engine::loop_quantile_ns(i, 0.999)), highest(i),
           std::to_string(engine::loop_at_least(w, k8us) + engine::loop_at_least(i, k8us)),
           std::to_string(engine::loop_at_least(w, k65us) + engine::loop_at_least(i, k65us)),
           bound(engine::loop_quantile_ns(o, 0.99)), highest(o)});
  }
  return "\nengine loops (iteration start to the next; after work, after an idle spin, a "
         "sleep's lateness):\n" +
         t.render();
}

std::string render_stages(const json& j) {
  // A time as "1.23us" (the slowest messages' means and maxima are exact).
  auto ns_text = [](const json& v) {
    if (!v.is_number()) return std::string("-");
    const auto ns = static_cast<double>(v.get<std::uint64_t>());
    if (ns < 1e3) return fmt::format("{:.0f}ns", ns);
    if (ns < 1e6) return fmt::format("{:.2f}us", ns / 1e3);
    return fmt::format("{:.2f}ms", ns / 1e6);
  };
  std::string out;
  for (const auto& d : child(j, "devices")) {
    const json& stages = child(d, "stages");
    if (!stages.is_array()) continue;
    for (const auto& s : stages) {
      const json& slow = child(s, "slowest");
      const json& f = child(slow, "fraction");
      out += fmt::format(
          "{}{} shard {}: {} tracked messages kept, {} given up; the slowest {} %: {} of them\n",
          out.empty() ? "" : "\n", cell(d, "name"), cell(s, "shard"), cell(s, "recent"),
          cell(s, "untracked"), f.is_number() ? fmt::format("{:g}", 100 * f.get<double>()) : "-",
          cell(slow, "count"));
      Table t({"STAGE", "COUNT", "P50", "P99", "P99.9", "MAX", "SLOWEST_MEAN", "SLOWEST_MAX"});
      for (const daemon::StageKey& k : daemon::kStageKeys) {
        const std::string name(k.key.name);
        const engine::LoopBuckets h = buckets_of(child(s, name.c_str()));
        t.add({name, std::to_string(engine::total(h)), bound(engine::loop_quantile_ns(h, 0.5)),
               bound(engine::loop_quantile_ns(h, 0.99)), bound(engine::loop_quantile_ns(h, 0.999)),
               highest(h), ns_text(child(child(slow, "mean"), name.c_str())),
               ns_text(child(child(slow, "max"), name.c_str()))});
      }
      out += t.render();
    }
  }
  if (out.empty()) {
    return "no device keeps stage stamps (the device key stage_stamps, docs/tails.md)\n";
  }
  return out;
}

std::string render_status(const json& j) {
  const json& d = child(j, "daemon");
  // Several engine lcores: all of them ("lcores 1,2"); one: "lcore 1".
  std::string lcores = "lcore " + cell(d, "lcore");
  if (const json& l = child(d, "lcores"); l.is_array() && l.size() > 1) {
    lcores = "lcores ";
    for (std::size_t i = 0; i < l.size(); ++i) lcores += (i == 0 ? "" : ",") + l[i].dump();
  }
  std::string out =
      fmt::format("uroced {} pid {}  run dir {}  poll {}  {}  up {} s  clients {}\n\n",
                  cell(d, "version"), cell(d, "pid"), cell(d, "run_dir"), cell(d, "poll"), lcores,
                  cell(d, "uptime_s"), cell(d, "clients"));
  if (d.contains("workers")) {
    const json& w = child(d, "workers");
    out.insert(out.size() - 2, fmt::format("  workers {} ({} idle, {} started)", cell(w, "workers"),
                                           cell(w, "idle"), cell(w, "started")));
  }
  if (d.contains("engine")) {
    const json& e = child(d, "engine");
    out.insert(out.size() - 1,
               fmt::format("engine: {} iterations ({} idle), {} sleeps, {} yields ({} to another "
                           "thread), {} calls\n",
                           cell(e, "iterations"), cell(e, "idle_iterations"), cell(e, "sleeps"),
                           cell(e, "yields"), cell(e, "yields_switched"), cell(e, "calls")));
  }
  Table t({"DEVICE", "UVERBS", "MAC", "IPV4", "MTU", "ACTIVE_MTU", "QPS", "CQS", "SRQS", "MRS",
           "AHS", "RX_FRAMES", "TX_FRAMES", "PORT"});
  for (const auto& dev : child(j, "devices")) {
    const json& o = child(dev, "objects");
    const json& c = child(dev, "counters");
    t.add({cell(dev, "name"), cell(dev, "uverbs"), cell(dev, "mac"), cell(dev, "ipv4"),
           cell(dev, "mtu"), cell(dev, "active_mtu"), cell(o, "qps"), cell(o, "cqs"),
           cell(o, "srqs"), cell(o, "mrs"), cell(o, "ahs"), cell(c, "rx_frames"),
           cell(c, "tx_frames"),
           dev.contains("port_mode") ? cell(dev, "port") + " (" + cell(dev, "port_mode") + ")"
                                     : cell(dev, "port")});
  }
  out += t.render();
  Table p({"DEVICE", "DRIVER", "QUEUES", "RSS", "RX_DESC", "TX_DESC", "DESC_MAX", "MAX_MTU",
           "RX_BUF", "SCATTER", "OFFLOADS_ON"});
  bool any_port = false;
  for (const auto& dev : child(j, "devices")) {
    if (!dev.contains("port_info")) continue;
    any_port = true;
    const json& i = dev["port_info"];
    std::string on;
    for (const char* k : {"rx_offloads", "tx_offloads"}) {
      for (const auto& n : child(i, k)) on += (on.empty() ? "" : ",") + n.get<std::string>();
    }
    p.add({cell(dev, "name"), cell(i, "driver"), cell(i, "queues"), cell(i, "rss"),
           cell(i, "rx_desc"), cell(i, "tx_desc"),
           cell(i, "rx_desc_max") + "/" + cell(i, "tx_desc_max"), cell(i, "max_mtu"),
           cell(i, "rx_buf"), cell(i, "rx_scatter"), on.empty() ? "none" : on});
  }
  if (any_port) out += "\nports (as the PMD reported at open):\n" + p.render();
  Table sh({"DEVICE", "SHARD", "LCORE", "CLIENTS", "QPS", "QUEUE_RX", "RX_FRAMES", "TX_FRAMES",
            "HANDED_OFF", "HANDED_IN"});
  bool any_shard = false;
  const json& lcore_ids = child(d, "lcores");
  for (const auto& dev : child(j, "devices")) {
    if (!dev.contains("shards")) continue;
    for (const auto& s : dev["shards"]) {
      any_shard = true;
      const std::size_t i = s.value("shard", std::size_t{0});
      sh.add({cell(dev, "name"), cell(s, "shard"),
              lcore_ids.is_array() && i < lcore_ids.size() ? lcore_ids[i].dump() : "-",
              cell(s, "clients"), cell(s, "qps"), cell(s, "queue_frames"), cell(s, "rx_frames"),
              cell(s, "tx_frames"), cell(s, "rx_handoff"), cell(s, "handed_in")});
    }
  }
  if (any_shard)
    out += "\nshards (one per engine lcore; each client lives on one):\n" + sh.render();
  if (d.contains("engine_loops")) out += render_loops(child(d, "engine_loops"));
  const json& users = child(d, "users");
  if (!users.empty()) {
    const json& l = child(d, "limits");
    Table u({"UID", "CONNECTIONS", "QPS", "CQS", "MRS", "REG_BYTES", "MAP_BYTES"});
    for (const auto& e : users) {
      u.add({cell(e, "uid"), cell(e, "connections"), cell(e, "qps"), cell(e, "cqs"), cell(e, "mrs"),
             cell(e, "reg_bytes"), cell(e, "map_bytes")});
    }
    u.add({"limit", cell(l, "user_connections"), cell(l, "user_qps"), cell(l, "user_cqs"),
           cell(l, "user_mrs"), cell(l, "user_reg_bytes"), cell(l, "user_map_bytes")});
    out += "\nper user (root is never refused):\n" + u.render();
  }
  return out;
}

std::string render_counters(const json& j) {
  std::string out;
  for (const auto& dev : child(j, "devices")) {
    Table t({"COUNTER", "VALUE"});
    flatten(child(dev, "counters"), "", &t);
    flatten(child(dev, "arp"), "arp", &t);
    flatten(child(dev, "mw"), "mw", &t);
    // Below the engine: the PMD's and the pools' counts, an af_xdp port's
    // sockets' (docs/nic.md "What the port reports").
    flatten(child(dev, "port_stats"), "port", &t);
    flatten(child(dev, "port_xdp"), "xdp", &t);
    out += fmt::format("{}{}:\n", out.empty() ? "" : "\n", cell(dev, "name"));
    out += t.render();
  }
  return out;
}

namespace {

// The RC recovery a QP runs: "sr" (selective repeat with its peer),
// "sr 16/3" (spraying over 16 paths, 3 avoided now), "gbn" (go-back-N),
// "-" for other types.
std::string recovery(const json& q) {
  const json& peer = child(q, "sr_peer");
  if (!peer.is_boolean()) return "-";
  if (!peer.get<bool>()) return "gbn";
  const json& paths = child(q, "sr_paths");
  if (!paths.is_number_unsigned() || paths.get<std::uint64_t>() < 2) return "sr";
  return fmt::format("sr {}/{}", paths.get<std::uint64_t>(), cell(q, "sr_avoided"));
}

}  // namespace

std::string render_qps(const json& j) {
  Table t({"DEVICE", "QPN", "TYPE", "STATE", "CLIENT", "DEST_QPN", "SQ", "RQ", "TX_PKTS", "RX_PKTS",
           "TX_BYTES", "RX_BYTES", "RETRANSMITS", "BAD_WQES", "RECOVERY"});
  for (const auto& q : child(j, "qps")) {
    const json& e = child(q, "engine");
    const json& tr = child(q, "transport");
    t.add({cell(q, "device"), cell(q, "qpn"), cell(q, "type"), cell(q, "state"), cell(q, "client"),
           cell(q, "dest_qpn"), cell(q, "send_queue"), cell(q, "recv_queue"), cell(e, "tx_packets"),
           cell(e, "rx_packets"), cell(e, "tx_bytes"), cell(e, "rx_bytes"),
           cell(tr, "tx_retransmits"), cell(e, "bad_wqes"), recovery(q)});
  }
  std::string out = t.render();
  out += render_dc(j);
  if (child(j, "qps_truncated").is_boolean() && child(j, "qps_truncated").get<bool>()) {
    out += "(more QPs than one status message holds: list truncated)\n";
  }
  return out;
}

// Nanoseconds as milliseconds with three decimals.
std::string ms(const json& j, const char* key) {
  const json& v = child(j, key);
  if (!v.is_number_unsigned()) return "-";
  return fmt::format("{:.3f}", static_cast<double>(v.get<std::uint64_t>()) / 1e6);
}

std::string yes_no(const json& j, const char* key) {
  const json& v = child(j, key);
  return v.is_boolean() ? (v.get<bool>() ? "yes" : "no") : "-";
}

namespace {

// "a=1 b=2" for the non-zero numbers of an object; "-" when all are zero.
std::string nonzero(const json& j) {
  std::string out;
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (v.is_number() && v.get<double>() != 0)
        out += (out.empty() ? "" : " ") + k + "=" + v.dump();
    }
  }
  return out.empty() ? "-" : out;
}

}  // namespace

// DC (docs/dc.md): each device's context pool once it has one, every DCI
// stream (its target and connection) and every DCT.
std::string render_dc(const json& j) {
  std::string out;
  for (const auto& dev : child(j, "devices")) {
    const json& p = child(child(dev, "dc"), "pool");
    if (!p.is_object()) continue;
    out += fmt::format("{}: DC pool {} of {} contexts open, {} bytes; {}\n", cell(dev, "name"),
                       cell(p, "open"), cell(p, "contexts"), cell(p, "bytes"),
                       nonzero(child(p, "counters")));
  }
  // Two counters of each in columns, then all that are not zero.
  constexpr auto kStreamColumns =
      counters::pick(transport::kDcStreamCounterFields, {"connects", "wait_switch"});
  constexpr auto kDctColumns =
      counters::pick(transport::kDctCounterFields, {"rx_requests", "key_violations"});
  std::vector<std::string> sh = with_counter_columns({"DEVICE", "DCI", "STREAM", "STATE", "BOUND",
                                                      "DCTN", "CONN", "SYN", "SQ"},
                                                     kStreamColumns);
  sh.push_back("COUNTERS");
  std::vector<std::string> dh =
      with_counter_columns({"DEVICE", "DCT", "STATE", "CONTEXTS"}, kDctColumns);
  dh.push_back("COUNTERS");
  Table s(std::move(sh));
  Table d(std::move(dh));
  bool any_dci = false, any_dct = false;
  for (const auto& q : child(j, "qps")) {
    for (const auto& st : child(child(q, "dci"), "streams")) {
      any_dci = true;
      const json& c = child(st, "counters");
      std::vector<std::string> row =
          with_counter_cells({cell(q, "device"), cell(q, "qpn"), cell(st, "stream"),
                              cell(q, "state"), yes_no(st, "bound"), cell(st, "dctn"),
                              cell(st, "conn"), yes_no(st, "syn"), cell(st, "send_queue")},
                             c, kStreamColumns);
      row.push_back(nonzero(c));
      s.add(std::move(row));
    }
    const json& t = child(q, "dct");
    if (t.is_object()) {
      any_dct = true;
      const json& c = child(t, "counters");
      std::vector<std::string> row = with_counter_cells({cell(q, "device"), cell(q, "qpn"),
                                                         cell(q, "state"), cell(t, "contexts")},
                                                        c, kDctColumns);
      row.push_back(nonzero(c));
      d.add(std::move(row));
    }
  }
  if (any_dci) out += (out.empty() ? "" : "\n") + s.render();
  if (any_dct) out += (out.empty() ? "" : "\n") + d.render();
  return out.empty() ? out : "\n" + out;
}

std::string render_pfc(const json& j) {
  std::string out;
  for (const auto& dev : child(j, "devices")) {
    const json& p = child(dev, "pfc");
    std::string en;
    for (const auto& e : child(p, "enabled_priorities")) en += (en.empty() ? "" : ",") + e.dump();
    out += fmt::format("{}{}: PFC on priorities {}  link {} Mb/s  tx_ttl {}\n",
                       out.empty() ? "" : "\n", cell(dev, "name"), en.empty() ? "none" : en,
                       cell(p, "link_mbps"), cell(p, "tx_ttl"));
    Table t({"PRIO", "LOSSLESS", "XOFF_TX", "REFRESH_TX", "XON_TX", "PAUSING_MS", "PAUSE_RX",
             "RESUME_RX", "PAUSED", "PAUSED_MS", "HELD", "RX_WHILE_PAUSED", "DROPS", "STORM",
             "STORMS", "STORM_MS"});
    for (const auto& q : child(p, "priorities")) {
      std::uint64_t drops = 0;
      for (const char* k : {"drop_stage_full", "drop_lossy_full", "drop_headroom_full",
                            "drop_hold_full", "storm_drops"}) {
        if (child(q, k).is_number_unsigned()) drops += child(q, k).get<std::uint64_t>();
      }
      t.add({cell(q, "priority"), yes_no(q, "lossless"), cell(q, "xoff_sent"),
             cell(q, "refresh_sent"), cell(q, "xon_sent"), ms(q, "asserted_ns"),
             cell(q, "pause_rx"), cell(q, "resume_rx"), yes_no(q, "paused"), ms(q, "paused_ns"),
             cell(q, "tx_held"), cell(q, "rx_while_paused"), std::to_string(drops),
             yes_no(q, "stormed"), cell(q, "storms_detected"), ms(q, "stormed_ns")});
    }
    out += t.render();
    std::string bad;
    for (const auto& [k, v] : child(p, "rx_bad").items()) bad += " " + k + "=" + v.dump();
    out += fmt::format("PFC frames sent {}  MAC Control received {} (parsed {}); bad:{}\n",
                       cell(p, "frames_sent"), cell(p, "mac_control_rx"), cell(p, "frames_parsed"),
                       bad.empty() ? " -" : bad);
    const json& t2 = child(p, "ttl");
    out += fmt::format(
        "TTL loop signals: checked {}  own_packets {}  replay_lower_ttl {}  outliers_low {}  "
        "outliers_high {}  (replay_same_ttl {}, events logged {}, suppressed {})\n",
        cell(t2, "rx_checked"), cell(t2, "own_packets"), cell(t2, "replay_lower_ttl"),
        cell(t2, "outliers_low"), cell(t2, "outliers_high"), cell(t2, "replay_same_ttl"),
        cell(t2, "events_logged"), cell(t2, "events_suppressed"));
  }
  return out;
}

// Bits per second as Mb/s with three decimals; "-" for unpaced (0).
std::string mbps(const json& j, const char* key) {
  const json& v = child(j, key);
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0) return "-";
  return fmt::format("{:.3f}", static_cast<double>(v.get<std::uint64_t>()) / 1e6);
}

std::string render_sched(const json& j) {
  std::string out;
  const json& qps = child(j, "qps");
  for (const auto& dev : child(j, "devices")) {
    const std::string name = cell(dev, "name");
    const json& s = child(dev, "sched");
    out += fmt::format("{}{}: isolation {}  pace granularity {} ns\n", out.empty() ? "" : "\n",
                       name, cell(s, "isolation"), cell(s, "pace_granularity_ns"));
    if (is_true(child(child(dev, "homa"), "settings"), "enabled")) {
      out += fmt::format("{}: Homa-like scheduler on (uroce-ctl homa)\n", name);
    }
    const json& dc = child(s, "dcqcn");
    if (child(dc, "enabled").is_boolean() && child(dc, "enabled").get<bool>()) {
      out += fmt::format("{}: DCQCN on  line rate {} Mb/s  CNP DSCP {}  CNP interval {} us\n", name,
                         mbps(dc, "line_rate_bps"), cell(dc, "cnp_dscp"),
                         child(dc, "cnp_interval_ns").get<std::uint64_t>() / 1000);
    }
    Table c({"CLASS", "MODE", "WEIGHT", "RATE_MBPS", "QPS"});
    for (const auto& k : child(s, "classes")) {
      std::string members;
      for (const auto& q : qps) {
        if (cell(q, "device") != name || child(child(q, "sched"), "class") != child(k, "class")) {
          continue;
        }
        members += (members.empty() ? "" : ",") + cell(q, "qpn");
      }
      const json& rate = child(k, "rate_mbps");
      const std::string limit =
          rate.is_number_unsigned() && rate.get<std::uint64_t>() != 0 ? cell(k, "rate_mbps") : "-";
      c.add({cell(k, "class"), cell(k, "mode"), cell(k, "weight"), limit,
             members.empty() ? "-" : members});
    }
    out += c.render();
  }
  Table t({"DEVICE", "QPN", "TYPE", "STATE", "CLASS", "FROM", "RATE_MBPS", "BURST", "PARKS",
           "PACED_MS", "SENT_BYTES", "SQ"});
  for (const auto& q : qps) {
    const json& s = child(q, "sched");
    const json& pinned = child(s, "pinned");
    // Unpinned, the class follows the DSCP, or with isolation auto the
    // classifier's kind of the QP.
    std::string from = pinned.is_boolean() ? (pinned.get<bool>() ? "pinned" : "dscp") : "-";
    if (from == "dscp" && s.contains("kind")) from = "auto:" + cell(s, "kind");
    t.add({cell(q, "device"), cell(q, "qpn"), cell(q, "type"), cell(q, "state"), cell(s, "class"),
           from, mbps(s, "rate_bps"), cell(s, "burst_bytes"), cell(s, "parks"), ms(s, "paced_ns"),
           cell(s, "sent_bytes"), cell(q, "send_queue")});
  }
  if (!qps.empty()) out += "\n" + t.render();
  // DCQCN, for the QPs of devices that run it: the current rate (Rc; "-" at
  // line rate), target rate, alpha, CE-marked packets and CNPs both ways.
  Table d({"DEVICE", "QPN", "DCQCN_MBPS", "TARGET_MBPS", "ALPHA", "CE_RX", "CNP_TX", "CNP_RX",
           "DECREASES"});
  bool any = false;
  for (const auto& q : qps) {
    const json& c = child(child(q, "sched"), "dcqcn");
    if (!c.is_object()) continue;
    any = true;
    const bool limited = child(c, "limited").is_boolean() && child(c, "limited").get<bool>();
    d.add({cell(q, "device"), cell(q, "qpn"), limited ? mbps(c, "rate_bps") : "-",
           limited ? mbps(c, "target_bps") : "-",
           fmt::format("{:.3f}", child(c, "alpha").get<double>() / sched::kAlphaOne),
           cell(c, "ce_packets"), cell(c, "cnps_sent"), cell(child(c, "rp"), "cnps"),
           cell(child(c, "rp"), "decreases")});
  }
  if (any) out += "\n" + d.render();
  if (child(j, "qps_truncated").is_boolean() && child(j, "qps_truncated").get<bool>()) {
    out += "(more QPs than one status message holds: list truncated)\n";
  }
  return out;
}

namespace {

// Nanoseconds as whole microseconds; "-" if absent.
std::string us(const json& j, const char* key) {
  const json& v = child(j, key);
  if (!v.is_number_unsigned()) return "-";
  return std::to_string(v.get<std::uint64_t>() / 1000);
}

// "level 0 prio 7 <= 1024 B, ..., level 3 prio 4 any"
std::string cutoffs_text(const json& levels) {
  std::string out;
  for (const auto& l : levels) {
    const json& m = child(l, "max_length");
    out += fmt::format("{}level {} prio {} {}", out.empty() ? "" : ", ", cell(l, "level"),
                       cell(l, "priority"), m.is_null() ? "any" : "<= " + m.dump() + " B");
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::string render_homa(const json& j) {
  std::string out;
  for (const auto& dev : child(j, "devices")) {
    const std::string name = cell(dev, "name");
    const json& h = child(dev, "homa");
    const json& st = child(h, "settings");
    if (!out.empty()) out += "\n";
    if (!is_true(st, "enabled")) {
      out += fmt::format("{}: Homa-like scheduler off\n", name);
      continue;
    }
    out += fmt::format(
        "{}: Homa-like scheduler on  priorities {} ({} unscheduled)  unscheduled {} B  "
        "RTT {} B  overcommit {}  max incoming {} B  FIFO {} permille  resend {} us  "
        "grant timeout {} us\n",
        name, cell(st, "priorities"), cell(h, "unsched_levels"), cell(st, "unsched_bytes"),
        cell(st, "rtt_bytes"), cell(st, "overcommit"), cell(st, "max_incoming"),
        cell(st, "fifo_permille"), us(st, "resend_ns"), us(st, "grant_timeout_ns"));
    const json& r = child(h, "receiver");
    const json& g = child(r, "counters");
    out += fmt::format(
        "  receiver: messages {} ({} now, {} B granted ahead)  completed {}  grants {} "
        "({} resends, {} FIFO)  granted {} B  capped by max incoming {}  table full {}  "
        "bad length {}\n",
        cell(g, "messages"), cell(r, "tracked"), cell(r, "outstanding"), cell(g, "completed"),
        cell(g, "grants"), cell(g, "resends"), cell(g, "fifo_grants"), cell(g, "granted_bytes"),
        cell(g, "incoming_capped"), cell(g, "table_full"), cell(g, "bad_length"));
    out += fmt::format("  cutoffs (generation {}): {}\n", cell(r, "generation"),
                       cutoffs_text(child(r, "cutoffs")));
    const json& c = child(dev, "counters");
    out += fmt::format(
        "  packets: GRANT sent {} received {}  CUTOFFS sent {} received {}  MLEN received {}  "
        "bad {}  no buffer {}  grants for gone QPs {}  scheduled connections {}  cutoffs "
        "updates {}\n",
        cell(c, "homa_tx_grants"), cell(c, "homa_rx_grants"), cell(c, "homa_tx_cutoffs"),
        cell(c, "homa_rx_cutoffs"), cell(c, "homa_rx_mlen"), cell(c, "homa_rx_bad"),
        cell(c, "homa_tx_no_buffer"), cell(c, "homa_grant_no_qp"), cell(c, "homa_peers"),
        cell(c, "homa_cutoffs_updates"));
  }
  // The sender's side, per RC QP: whether its connection is scheduled and
  // what its messages met.
  Table t(
      with_counter_columns({"DEVICE", "QPN", "STATE", "PEER"}, transport::kRcHomaCounterFields));
  bool any = false;
  for (const auto& q : child(j, "qps")) {
    if (!q.contains("homa_peer")) continue;
    any = true;
    t.add(with_counter_cells({cell(q, "device"), cell(q, "qpn"), cell(q, "state"),
                              yes_no(q, "homa_peer")},
                             child(q, "homa"), transport::kRcHomaCounterFields));
  }
  if (any) out += "\n" + t.render();
  if (is_true(j, "qps_truncated")) {
    out += "(more QPs than one status message holds: list truncated)\n";
  }
  return out;
}

std::string render_clients(const json& j) {
  Table t({"CLIENT", "PID", "UID", "DEVICE", "PDS", "MRS", "CHANNELS", "CQS", "SRQS", "AHS", "QPS",
           "REQUESTS", "BAD"});
  for (const auto& c : child(j, "clients")) {
    const json& o = child(c, "objects");
    // A list cut to fit the reply counts what it left out beside it.
    const auto objects = [&](const std::string& kind) {
      const json& list = child(o, kind.c_str());
      if (!list.is_array()) return std::string("-");
      const json& omitted = child(o, (kind + "_omitted").c_str());
      return std::to_string(list.size() +
                            (omitted.is_number_unsigned() ? omitted.get<std::size_t>() : 0));
    };
    const std::string dev = cell(c, "device");
    t.add({cell(c, "id"), cell(c, "pid"), cell(c, "uid"), dev.empty() ? "-" : dev, objects("pds"),
           objects("mrs"), objects("comp_channels"), objects("cqs"), objects("srqs"),
           objects("ahs"), objects("qps"), cell(c, "requests"), cell(c, "bad_requests")});
  }
  std::string out = t.render();
  if (is_true(j, "client_objects_truncated")) {
    out += "(more handles than one status message holds: the clients' lists truncated)\n";
  }
  if (const std::size_t n = clients_omitted(j); n != 0) {
    out += "(" + std::to_string(n) + " more clients than one status message holds: not listed)\n";
  }
  return out;
}

std::string render_metrics(const json& j) {
  std::string out = daemon::metrics_text(j).text;
  if (const std::size_t n = clients_omitted(j); n != 0) {
    out += "# uroce-ctl: the series of " + std::to_string(n) +
           " clients are left out (more than one status message holds; the metrics listener "
           "serves them all)\n";
  }
  return out;
}

}  // namespace uroce::ctl_tool
