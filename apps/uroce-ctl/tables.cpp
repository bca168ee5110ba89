#include "apps/uroce-ctl/tables.h"

#include <fmt/format.h>

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

std::string count(const json& j) {
  return j.is_array() ? std::to_string(j.size()) : "-";
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

std::string render_status(const json& j) {
  const json& d = child(j, "daemon");
  std::string out = fmt::format(
      "uroced {} pid {}  run dir {}  poll {}  lcore {}  up {} s  clients {}\n\n",
      cell(d, "version"), cell(d, "pid"), cell(d, "run_dir"), cell(d, "poll"),
      cell(d, "lcore"), cell(d, "uptime_s"), cell(d, "clients"));
  Table t({"DEVICE", "UVERBS", "MAC", "IPV4", "MTU", "ACTIVE_MTU", "QPS", "CQS", "SRQS", "MRS",
           "AHS", "RX_FRAMES", "TX_FRAMES", "PORT"});
  for (const auto& dev : child(j, "devices")) {
    const json& o = child(dev, "objects");
    const json& c = child(dev, "counters");
    t.add({cell(dev, "name"), cell(dev, "uverbs"), cell(dev, "mac"), cell(dev, "ipv4"),
           cell(dev, "mtu"), cell(dev, "active_mtu"), cell(o, "qps"), cell(o, "cqs"),
           cell(o, "srqs"), cell(o, "mrs"), cell(o, "ahs"), cell(c, "rx_frames"),
           cell(c, "tx_frames"), cell(dev, "port")});
  }
  return out + t.render();
}

std::string render_counters(const json& j) {
  std::string out;
  for (const auto& dev : child(j, "devices")) {
    Table t({"COUNTER", "VALUE"});
    flatten(child(dev, "counters"), "", &t);
    flatten(child(dev, "arp"), "arp", &t);
    out += fmt::format("{}{}:\n", out.empty() ? "" : "\n", cell(dev, "name"));
    out += t.render();
  }
  return out;
}

std::string render_qps(const json& j) {
  Table t({"DEVICE", "QPN", "TYPE", "STATE", "CLIENT", "DEST_QPN", "SQ", "RQ", "TX_PKTS",
           "RX_PKTS", "TX_BYTES", "RX_BYTES", "RETRANSMITS", "BAD_WQES"});
  for (const auto& q : child(j, "qps")) {
    const json& e = child(q, "engine");
    const json& tr = child(q, "transport");
    t.add({cell(q, "device"), cell(q, "qpn"), cell(q, "type"), cell(q, "state"),
           cell(q, "client"), cell(q, "dest_qpn"), cell(q, "send_queue"), cell(q, "recv_queue"),
           cell(e, "tx_packets"), cell(e, "rx_packets"), cell(e, "tx_bytes"),
           cell(e, "rx_bytes"), cell(tr, "tx_retransmits"), cell(e, "bad_wqes")});
  }
  std::string out = t.render();
  if (child(j, "qps_truncated").is_boolean() && child(j, "qps_truncated").get<bool>()) {
    out += "(more QPs than one status message holds: list truncated)\n";
  }
  return out;
}

std::string render_clients(const json& j) {
  Table t({"CLIENT", "PID", "UID", "DEVICE", "PDS", "MRS", "CHANNELS", "CQS", "SRQS", "AHS",
           "QPS", "REQUESTS", "BAD"});
  for (const auto& c : child(j, "clients")) {
    const json& o = child(c, "objects");
    const std::string dev = cell(c, "device");
    t.add({cell(c, "id"), cell(c, "pid"), cell(c, "uid"), dev.empty() ? "-" : dev,
           count(child(o, "pds")), count(child(o, "mrs")), count(child(o, "comp_channels")),
           count(child(o, "cqs")), count(child(o, "srqs")), count(child(o, "ahs")),
           count(child(o, "qps")), cell(c, "requests"), cell(c, "bad_requests")});
  }
  return t.render();
}

}  // namespace uroce::ctl_tool
