#include "datapath/port/eal_config.h"

#include <toml++/toml.h>

#include <set>

namespace uroce::port {

std::vector<std::string> eal_argv(const EalConfig& cfg,
                                  const std::string& program) {
  std::vector<std::string> a{program, "-l", cfg.lcores, "-m",
                             std::to_string(cfg.memory_mb)};
  if (cfg.file_prefix.empty()) {
    a.emplace_back("--no-shconf");
  } else {
    a.emplace_back("--file-prefix");
    a.push_back(cfg.file_prefix);
  }
  if (!cfg.hugepages) a.emplace_back("--no-huge");
  if (cfg.hugepages && cfg.in_memory) a.emplace_back("--in-memory");
  if (!cfg.pci) a.emplace_back("--no-pci");
  if (!cfg.telemetry) a.emplace_back("--no-telemetry");
  a.push_back("--log-level=" + cfg.log_level);
  for (const auto& v : cfg.vdevs) a.push_back("--vdev=" + v);
  for (const auto& p : cfg.allow) {
    a.emplace_back("-a");
    a.push_back(p);
  }
  for (const auto& e : cfg.extra_args) a.push_back(e);
  return a;
}

namespace {

std::string read_strings(const toml::node& n, const std::string& key,
                         std::vector<std::string>& out) {
  const auto* arr = n.as_array();
  if (arr == nullptr) return "eal." + key + ": expected an array of strings";
  out.clear();
  for (const auto& e : *arr) {
    const auto s = e.value<std::string>();
    if (!s) return "eal." + key + ": expected an array of strings";
    out.push_back(*s);
  }
  return {};
}

}  // namespace

std::string eal_config_from_toml(const toml::table& t, EalConfig& out) {
  static const std::set<std::string> kKnown = {
      "lcores",    "memory_mb", "file_prefix", "hugepages",
      "in_memory", "pci",       "telemetry",   "log_level",
      "vdevs",     "allow",     "extra_args"};
  for (const auto& [k, v] : t) {
    const std::string key{k.str()};
    if (!kKnown.contains(key)) return "eal: unknown key '" + key + "'";
  }
  auto get_string = [&](const char* key, std::string& dst) -> std::string {
    const auto* n = t.get(key);
    if (n == nullptr) return {};
    const auto s = n->value<std::string>();
    if (!s || !n->is_string()) return std::string("eal.") + key + ": expected a string";
    dst = *s;
    return {};
  };
  auto get_bool = [&](const char* key, bool& dst) -> std::string {
    const auto* n = t.get(key);
    if (n == nullptr) return {};
    if (!n->is_boolean()) return std::string("eal.") + key + ": expected true or false";
    dst = *n->value<bool>();
    return {};
  };
  std::string err;
  if (!(err = get_string("lcores", out.lcores)).empty()) return err;
  if (!(err = get_string("file_prefix", out.file_prefix)).empty()) return err;
  if (!(err = get_string("log_level", out.log_level)).empty()) return err;
  if (!(err = get_bool("hugepages", out.hugepages)).empty()) return err;
  if (!(err = get_bool("in_memory", out.in_memory)).empty()) return err;
  if (!(err = get_bool("pci", out.pci)).empty()) return err;
  if (!(err = get_bool("telemetry", out.telemetry)).empty()) return err;
  if (const auto* n = t.get("memory_mb")) {
    const auto v = n->value<std::int64_t>();
    if (!n->is_integer() || !v || *v < 16 || *v > (1 << 20))
      return "eal.memory_mb: expected an integer from 16 to 1048576";
    out.memory_mb = static_cast<std::uint32_t>(*v);
  }
  if (const auto* n = t.get("vdevs")) {
    if (!(err = read_strings(*n, "vdevs", out.vdevs)).empty()) return err;
  }
  if (const auto* n = t.get("allow")) {
    if (!(err = read_strings(*n, "allow", out.allow)).empty()) return err;
  }
  if (const auto* n = t.get("extra_args")) {
    if (!(err = read_strings(*n, "extra_args", out.extra_args)).empty()) return err;
  }
  if (out.lcores.empty()) return "eal.lcores: must not be empty";
  return {};
}

}  // namespace uroce::port
