#include "apps/uroced/metrics_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <unordered_map>
#include <utility>

#include "apps/pfc_status_json.h"
#include "apps/uroced/cm_service.h"
#include "apps/uroced/status_values.h"
#include "datapath/cm/types.h"
#include "datapath/engine/engine.h"
#include "datapath/engine/eth_rx_counters.h"
#include "datapath/engine/loop_histogram.h"
#include "datapath/engine/mbuf_tx_counters.h"
#include "datapath/engine/vnic_types.h"
#include "datapath/policy/policies.h"
#include "datapath/port/arp_agent.h"
#include "datapath/port/capture_counters.h"
#include "datapath/port/port_stats.h"
#include "datapath/transport/dc_counters.h"
#include "datapath/transport/dc_stream.h"
#include "datapath/transport/dc_target.h"
#include "datapath/transport/mr_table.h"
#include "datapath/transport/rc_counters.h"
#include "datapath/transport/uc_counters.h"
#include "datapath/transport/ud_counters.h"
#include "pfc/ttl_monitor.h"
#include "sched/dcqcn.h"
#include "sched/grant_scheduler.h"

namespace uroce::daemon {

std::string metric_name(std::string_view set, std::string_view key, counters::Kind kind) {
  std::string k(key);
  if (k.ends_with("_ns")) {
    k.replace(k.size() - 3, 3, "_seconds");
  } else if (k.ends_with("_s")) {
    k.replace(k.size() - 2, 2, "_seconds");
  }
  std::string out = "uroce_" + std::string(set) + "_" + k;
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!ok) c = '_';
  }
  if (kind == counters::Kind::kCount) out += "_total";
  return out;
}

bool key_in_ns(std::string_view key) { return key.ends_with("_ns"); }

std::string escape_label(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (const char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_help(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (const char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string seconds_text(std::uint64_t ns) {
  constexpr std::uint64_t kNsPerS = 1'000'000'000;
  std::string frac = fmt::format("{:09}", ns % kNsPerS);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  const std::string whole = std::to_string(ns / kNsPerS);
  return frac.empty() ? whole : whole + "." + frac;
}

namespace {

using counters::Kind;
using nlohmann::json;

// A value's name, meaning and kind, from whichever list defines it.
struct Desc {
  std::string_view name;
  std::string_view help;
  Kind kind = Kind::kCount;
};

class Descs {
 public:
  template <class S, std::size_t N>
  Descs& add(const counters::FieldList<S, N>& list) {
    for (const counters::Field<S>& f : list) d_.push_back({f.name, f.help, f.kind});
    return *this;
  }
  template <class T, std::size_t N>
  Descs& add(const counters::ValueList<T, N>& list) {
    for (const counters::Value<T>& v : list) d_.push_back({v.name, v.help, v.kind});
    return *this;
  }
  Descs& add(const StatusKey& k) {
    d_.push_back({k.name, k.help, k.kind});
    return *this;
  }
  const Desc* find(std::string_view name) const {
    for (const Desc& d : d_) {
      if (d.name == name) return &d;
    }
    return nullptr;
  }

 private:
  std::vector<Desc> d_;
};

using Labels = std::vector<std::pair<std::string, std::string>>;

Labels with(Labels l, std::string name, std::string value) {
  l.emplace_back(std::move(name), std::move(value));
  return l;
}

std::string labels_text(const Labels& l) {
  if (l.empty()) return {};
  std::string out = "{";
  for (std::size_t i = 0; i < l.size(); ++i) {
    out += fmt::format("{}{}=\"{}\"", i == 0 ? "" : ",", l[i].first, escape_label(l[i].second));
  }
  return out + "}";
}

// A label's value from the status: strings as they are, numbers in decimal.
std::string label_of(const json& j, const char* key) {
  if (!j.is_object()) return {};
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  return it->is_string() ? it->get<std::string>() : it->dump();
}

const json& child(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string double_text(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", d);
}

// A number or a yes/no of the status as a sample value; empty for anything
// else. `ns`: the value is nanoseconds, written as seconds.
std::string value_text(const json& v, bool ns) {
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    return ns ? seconds_text(u) : std::to_string(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (!ns) return std::to_string(i);
    return i >= 0 ? seconds_text(static_cast<std::uint64_t>(i))
                  : "-" + seconds_text(static_cast<std::uint64_t>(-(i + 1)) + 1);
  }
  if (v.is_number_float()) return double_text(v.get<double>() / (ns ? 1e9 : 1.0));
  return {};
}

// The families in the order they first appear, each with its samples.
class Exposition {
 public:
  // A sample of `family`; its HELP and TYPE are those of its first sample,
  // and a later one that differs is a conflict (its sample dropped).
  void sample(const std::string& family, std::string_view help, std::string_view type,
              std::string_view suffix, const Labels& labels, const std::string& value,
              std::vector<std::string>* conflicts) {
    auto [it, fresh] = index_.try_emplace(family, families_.size());
    if (fresh) {
      families_.push_back({family, std::string(help), std::string(type), {}});
    } else if (families_[it->second].help != help || families_[it->second].type != type) {
      conflicts->push_back(family);
      return;
    }
    Family& f = families_[it->second];
    f.samples += family;
    f.samples += suffix;
    f.samples += labels_text(labels);
    f.samples += ' ';
    f.samples += value;
    f.samples += '\n';
  }

  std::string text() const {
    std::string out;
    for (const Family& f : families_) {
      out +=
          fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, escape_help(f.help), f.name, f.type);
      out += f.samples;
    }
    return out;
  }

 private:
  struct Family {
    std::string name, help, type;
    std::string samples;
  };
  std::vector<Family> families_;
  std::unordered_map<std::string, std::size_t> index_;
};

class Renderer {
 public:
  MetricsText run(const json& status) {
    for (const auto& [k, v] : status.items()) {
      if (k == "daemon") {
        daemon(v);
      } else if (k == "devices") {
        for (std::size_t i = 0; i < v.size(); ++i) {
          device(v[i], fmt::format("devices[{}]", i));
        }
      } else if (k == "cm") {
        object(v, "cm", {},
               Descs().add(kCmValues).add(kCmServiceCounterFields).add(cm::kCounterFields), {},
               "cm");
      } else if (k == "qp_classes") {
        for (std::size_t i = 0; i < v.size(); ++i) {
          qp_class(v[i], fmt::format("qp_classes[{}]", i));
        }
      } else if (k == "captures") {
        for (std::size_t i = 0; i < v.size(); ++i) capture(v[i], fmt::format("captures[{}]", i));
      } else if (k == "clients") {
        for (std::size_t i = 0; i < v.size(); ++i) client(v[i], fmt::format("clients[{}]", i));
      } else if (k != "qps" && k != "qps_truncated" && k != "client_objects_truncated" &&
                 k != "clients_omitted") {
        // The QP lines are not metrics (their number has no bound), nor
        // what was cut to fit one control message (the metrics listener's
        // body is never cut; uroce-ctl metrics says what it lost).
        undescribed_.push_back(k);
      }
    }
    return {out_.text(), std::move(undescribed_), std::move(conflicts_)};
  }

 private:
  // One sample of the value `v` under `set` as `d` describes it.
  void emit(std::string_view set, const Desc& d, const Labels& labels, const json& v) {
    const std::string value = value_text(v, key_in_ns(d.name));
    if (value.empty()) return;
    out_.sample(metric_name(set, d.name, d.kind), d.help,
                d.kind == Kind::kCount ? "counter" : "gauge", "", labels, value, &conflicts_);
  }

  // Every number and yes/no of `obj` under `set`, described by `descs`;
  // the keys in `skip` are the caller's (a nested set, or what is no
  // metric). Anything else is undescribed: a number is still a gauge.
  void object(const json& obj, std::string_view set, const Labels& labels, const Descs& descs,
              std::initializer_list<std::string_view> skip, const std::string& path) {
    if (!obj.is_object()) return;
    for (const auto& [k, v] : obj.items()) {
      if (std::find(skip.begin(), skip.end(), k) != skip.end()) continue;
      const Desc* d = descs.find(k);
      if (d != nullptr && (v.is_number() || v.is_boolean())) {
        emit(set, *d, labels, v);
        continue;
      }
      undescribed_.push_back(path + "." + k);
      if (v.is_number() || v.is_boolean()) {
        // Without the indexes: one family (and help) for every device's.
        std::string where = path + "." + k;
        for (std::size_t o = where.find('['); o != std::string::npos; o = where.find('[', o + 1)) {
          const std::size_t c = where.find(']', o);
          if (c != std::string::npos) where.erase(o + 1, c - o - 1);
        }
        const std::string what = "status value " + where + " (no list describes it)";
        emit(set, Desc{k, what, Kind::kLevel}, labels, v);
      }
    }
  }

  // {reason: count} as `uroce_<set>_<key>_total{..., reason}`.
  void reasons(const json& obj, std::string_view set, const StatusKey& key, const Labels& labels) {
    if (!obj.is_object()) return;
    const Desc d{key.name, key.help, key.kind};
    for (const auto& [reason, v] : obj.items()) emit(set, d, with(labels, "reason", reason), v);
  }

  // An info metric: 1 with its labels.
  void info(const std::string& family, std::string_view help, const Labels& labels) {
    out_.sample(family, help, "gauge", "", labels, "1", &conflicts_);
  }

  // A log2 histogram of the status (engine/loop_histogram.h's buckets: an
  // engine lcore's loops, status_values.h kLoopKeys, or a device's stage
  // stamps, kStageKeys): bucket b holds [2^(b-1), 2^b) ns, so "le" is
  // 2^b - 1 ns; the last is open.
  void log2_histogram(std::string_view set, const json& buckets, const StatusKey& key,
                      const Labels& labels) {
    if (!buckets.is_array() || buckets.empty()) return;
    const std::string family = metric_name(set, key.name, Kind::kLevel);
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      if (!buckets[b].is_number_unsigned()) return;
      seen += buckets[b].get<std::uint64_t>();
      if (b + 1 >= engine::kLoopBuckets || b + 1 == buckets.size()) break;
      out_.sample(family, key.help, "histogram", "_bucket",
                  with(labels, "le", seconds_text(engine::loop_bucket_ceiling_ns(b))),
                  std::to_string(seen), &conflicts_);
    }
    std::uint64_t total = 0;
    for (const json& c : buckets) total += c.get<std::uint64_t>();
    out_.sample(family, key.help, "histogram", "_bucket", with(labels, "le", "+Inf"),
                std::to_string(total), &conflicts_);
    out_.sample(family, key.help, "histogram", "_count", labels, std::to_string(total),
                &conflicts_);
  }

  void daemon(const json& d) {
    info("uroce_daemon_info", "the daemon's version and poll mode as labels (always 1)",
         {{"version", label_of(d, "version")}, {"poll", label_of(d, "poll")}});
    // Identity and configuration: no metrics.
    object(d, "daemon", {}, Descs().add(kUptimeKey).add(kClientsKey).add(kQpClassesOmittedKey),
           {"version", "pid", "run_dir", "socket", "poll", "lcore", "lcores", "engine_cpu",
            "limits", "workers", "engine", "engine_loops", "users"},
           "daemon");
    object(child(d, "workers"), "workers", {}, Descs().add(kWorkerValues), {}, "daemon.workers");
    object(child(d, "engine"), "engine", {}, Descs().add(engine::kEngineRunCounterFields), {},
           "daemon.engine");
    for (const json& l : child(d, "engine_loops")) {
      const Labels lcore{{"lcore", label_of(l, "lcore")}};
      for (const LoopKey& k : kLoopKeys) {
        log2_histogram("engine_loop", child(l, std::string(k.key.name).c_str()), k.key, lcore);
      }
    }
    for (const json& u : child(d, "users")) {
      object(u, "user", {{"uid", label_of(u, "uid")}}, Descs().add(kUsageValues), {"uid"},
             "daemon.users[]");
    }
  }

  void device(const json& dev, const std::string& path) {
    const Labels dl{{"device", label_of(dev, "name")}};
    Labels il = dl;
    for (const char* k : {"port", "port_mode", "mac", "ipv4"}) {
      if (dev.contains(k)) il.emplace_back(k, label_of(dev, k));
    }
    info("uroce_device_info", "the device's port and addresses as labels (always 1)", il);
    // Identity and configuration (port_info, sched, settings): no metrics.
    object(dev, "device", dl, Descs(),
           {"name",
            "index",
            "uverbs",
            "port",
            "port_mode",
            "port_info",
            "port_stats",
            "port_xdp",
            "mac",
            "ipv4",
            "ipv6_link_local",
            "ipv6",
            "mtu",
            "active_mtu",
            "objects",
            "shards",
            "counters",
            "arp",
            "mw",
            "pfc",
            "sched",
            "homa",
            "dc",
            "stages"},
           path);
    object(child(dev, "objects"), "objects", dl, Descs().add(kObjectValues), {}, path + ".objects");
    for (const json& s : child(dev, "shards")) {
      object(s, "shard", with(dl, "shard", label_of(s, "shard")), Descs().add(kShardValues),
             {"shard"}, path + ".shards[]");
    }
    const json& c = child(dev, "counters");
    Descs vnic;
    vnic.add(engine::kVnicCounterFields).add(kVnicRenamedValues);
    policy::each_counter_set(policy::RegisteredCounters{},
                             [&](const auto& set) { vnic.add(counter_fields(set)); });
    object(c, "device", dl, vnic, {"parse_errors", "wqe_errors", "port_tx", "port_rx"},
           path + ".counters");
    reasons(child(c, "parse_errors"), "device", kParseErrorsKey, dl);
    reasons(child(c, "wqe_errors"), "device", kWqeErrorsKey, dl);
    object(child(c, "port_tx"), "port_tx", dl, Descs().add(engine::kMbufTxCounterFields), {},
           path + ".counters.port_tx");
    object(child(c, "port_rx"), "port_rx", dl, Descs().add(engine::kEthRxCounterFields), {},
           path + ".counters.port_rx");
    object(child(dev, "port_stats"), "port_stats", dl, Descs().add(port::kPortStatsFields), {},
           path + ".port_stats");
    object(child(dev, "port_xdp"), "port_xdp", dl, Descs().add(port::kXdpStatsFields), {},
           path + ".port_xdp");
    const json& arp = child(dev, "arp");
    object(arp, "arp", dl, Descs().add(port::kArpCounterFields), {"drops"}, path + ".arp");
    reasons(child(arp, "drops"), "arp", kArpDropsKey, dl);
    const json& mw = child(dev, "mw");
    object(mw, "mw", dl, Descs().add(transport::kMwCounterFields), {"bind_refused", "inv_refused"},
           path + ".mw");
    reasons(child(mw, "bind_refused"), "mw", kMwBindRefusedKey, dl);
    reasons(child(mw, "inv_refused"), "mw", kMwInvRefusedKey, dl);
    pfc(child(dev, "pfc"), dl, path + ".pfc");
    // The stage stamps (docs/tails.md), per shard: the histograms and the
    // recorder's own counts; the slowest messages' means are a report.
    for (const json& s : child(dev, "stages")) {
      const Labels sl = with(dl, "shard", label_of(s, "shard"));
      for (const StageKey& k : kStageKeys) {
        log2_histogram("stage", child(s, std::string(k.key.name).c_str()), k.key, sl);
      }
      for (const StatusKey& k : {kStageRecentKey, kStageUntrackedKey}) {
        const json& v = child(s, std::string(k.name).c_str());
        if (v.is_number()) emit("stage", Desc{k.name, k.help, k.kind}, sl, v);
      }
    }
    // Homa and DC: their settings are configuration; the receiver and the
    // context pool exist once the device runs them.
    const json& r = child(child(dev, "homa"), "receiver");
    object(r, "homa_receiver", dl, Descs().add(kHomaReceiverValues), {"counters", "cutoffs"},
           path + ".homa.receiver");
    object(child(r, "counters"), "homa_receiver", dl, Descs().add(sched::homa::kGrantCounterFields),
           {}, path + ".homa.receiver.counters");
    const json& pool = child(child(dev, "dc"), "pool");
    object(pool, "dc_pool", dl, Descs().add(kDcPoolValues), {"counters"}, path + ".dc.pool");
    object(child(pool, "counters"), "dc_pool", dl, Descs().add(transport::kDcTargetCounterFields),
           {}, path + ".dc.pool.counters");
    // DC's selective repeat (docs/lossy-dc.md): the device's DCI streams and
    // target contexts summed, the device-wide view of the rc_sr class sums.
    object(child(child(dev, "dc"), "sr"), "dc_sr", dl, Descs().add(transport::kRcSrCounterFields),
           {}, path + ".dc.sr");
  }

  void pfc(const json& p, const Labels& dl, const std::string& path) {
    // The enabled priorities, the link rate and the TTL are configuration;
    // the totals are sums of the priorities' series.
    object(p, "pfc", dl, Descs().add(engine::kPfcDeviceValues),
           {"enabled_priorities", "link_mbps", "tx_ttl", "priorities", "totals", "rx_bad", "ttl"},
           path);
    for (const json& q : child(p, "priorities")) {
      object(q, "pfc", with(dl, "priority", label_of(q, "priority")),
             Descs().add(engine::kPfcPriorityValues), {"priority"}, path + ".priorities[]");
    }
    reasons(child(p, "rx_bad"), "pfc", kPfcRxBadKey, dl);
    object(child(p, "ttl"), "ttl", dl, Descs().add(pfc::kTtlCounterFields), {}, path + ".ttl");
  }

  void qp_class(const json& k, const std::string& path) {
    const std::string type = label_of(k, "type");
    const Labels l{{"device", label_of(k, "device")},
                   {"type", type},
                   {"class", label_of(k, "class")}};
    object(k, "qp_class", l, Descs().add(kQpClassQpsKey),
           {"device", "type", "class", "engine", "pace", "transport", "homa", "sr", "dci",
            "dci_streams", "dct", "dcqcn"},
           path);
    object(child(k, "engine"), "qp", l, Descs().add(engine::kQpEngineCounterFields), {},
           path + ".engine");
    object(child(k, "pace"), "pace", l, Descs().add(kPaceValues), {}, path + ".pace");
    const json& t = child(k, "transport");
    if (type == "UC") {
      object(t, "uc", l, Descs().add(transport::kUcCounterFields), {"rx"}, path + ".transport");
      reasons(child(t, "rx"), "uc", kUcRxKey, l);
    } else if (type == "UD") {
      object(t, "ud", l, Descs().add(transport::kUdCounterFields), {"rx"}, path + ".transport");
      reasons(child(t, "rx"), "ud", kUdRxKey, l);
    } else {
      object(t, "rc", l, Descs().add(transport::kRcCounterFields), {}, path + ".transport");
    }
    object(child(k, "homa"), "rc_homa", l, Descs().add(transport::kRcHomaCounterFields), {},
           path + ".homa");
    object(child(k, "sr"), "rc_sr", l, Descs().add(transport::kRcSrCounterFields), {},
           path + ".sr");
    object(child(k, "dci"), "dci", l, Descs().add(transport::kDciCounterFields), {}, path + ".dci");
    object(child(k, "dci_streams"), "dci_stream", l, Descs().add(transport::kDcStreamCounterFields),
           {}, path + ".dci_streams");
    object(child(k, "dct"), "dct", l,
           Descs().add(transport::kDctCounterFields).add(kDctContextsKey), {}, path + ".dct");
    object(child(k, "dcqcn"), "qp_dcqcn", l, Descs().add(kDcqcnValues), {"rp"}, path + ".dcqcn");
    object(child(child(k, "dcqcn"), "rp"), "qp_dcqcn", l, Descs().add(sched::kDcqcnCounterFields),
           {}, path + ".dcqcn.rp");
  }

  void client(const json& c, const std::string& path) {
    const Labels l{{"client", label_of(c, "id")},
                   {"pid", label_of(c, "pid")},
                   {"uid", label_of(c, "uid")},
                   {"device", label_of(c, "device")}};
    // The object handles are no metrics (their counts are in "used").
    object(c, "client", l, Descs().add(kClientValues),
           {"id", "pid", "uid", "gid", "device", "used", "objects", "qp_engine"}, path);
    object(child(c, "used"), "client_used", l, Descs().add(kUsageValues), {}, path + ".used");
    object(child(c, std::string(kClientQpKey.name).c_str()), "client_qp", l,
           Descs().add(engine::kQpEngineCounterFields), {}, path + ".qp_engine");
  }

  void capture(const json& c, const std::string& path) {
    const Labels l{{"device", label_of(c, "device")}};
    object(c, "capture", l, Descs().add(kCaptureValues), {"device", "counters"}, path);
    object(child(c, "counters"), "capture", l, Descs().add(port::kCaptureCounterFields), {},
           path + ".counters");
  }

  Exposition out_;
  std::vector<std::string> undescribed_;
  std::vector<std::string> conflicts_;
};

}  // namespace

MetricsText metrics_text(const nlohmann::json& status) {
  if (!status.is_object()) return {};
  return Renderer().run(status);
}

}  // namespace uroce::daemon
