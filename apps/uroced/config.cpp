#include "apps/uroced/config.h"
#include "apps/uroced/config_keys.h"
#include "apps/uroced/config_values.h"

#include <toml++/toml.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace uroce::daemon {

using namespace config_detail;

const char* to_string(PollMode m) {
  switch (m) {
    case PollMode::kBusy: return "busy";
    case PollMode::kBackoff: return "backoff";
    case PollMode::kYield: return "yield";
  }
  return "?";
}

namespace {

// An option's help: its key's, and which key it overrides.
std::string option_help(const KeySet<DaemonConfig>& set, std::string_view name,
                        std::string_view table, std::string_view how = "overrides") {
  const KeyDesc<DaemonConfig>* k = find_daemon_key(set, name);
  return std::string(k->help) + "; " + std::string(how) + " " + std::string(table) + "." +
         std::string(name);
}

}  // namespace

namespace {

// The options' values while CLI11 parses; copied into a CommandLine after.
struct OptionValues {
  std::string config_file, run_dir, poll, log_level, lcores;
  std::uint32_t lcore = 0;
  CLI::Option *o_config = nullptr, *o_run = nullptr, *o_lcore = nullptr, *o_lcores = nullptr,
              *o_poll = nullptr, *o_log = nullptr;
};

// uroced's options: the parser's and (command_line_help) the man page's.
void add_options(CLI::App& app, OptionValues& v, CommandLine* out) {
  v.o_config =
      app.add_option("--config", v.config_file, "TOML configuration file")->type_name("FILE");
  v.o_run =
      app.add_option("--run-dir", v.run_dir, option_help(daemon_key_set(), "run_dir", "daemon"))
          ->type_name("DIR");
  v.o_lcore = app.add_option("--lcore", v.lcore, option_help(eal_key_set(), "lcore", "eal"))
                  ->type_name("N");
  v.o_lcores = app.add_option("--lcores", v.lcores, option_help(eal_key_set(), "lcores", "eal"))
                   ->type_name("N,N...");
  v.o_poll = app.add_option("--poll", v.poll, option_help(daemon_key_set(), "poll", "daemon"))
                 ->type_name("MODE");
  app.add_option("--eal-arg", out->eal_args,
                 option_help(eal_key_set(), "args", "eal", "appends one (repeatable) to"))
      ->type_name("ARG")
      ->allow_extra_args(false);
  app.add_option("--device", out->devices,
                 "a device: \"name=uroce0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;"
                 "mtu=9000;port=ring:p0\" (repeatable; replaces the file's devices)")
      ->type_name("SPEC")
      ->allow_extra_args(false);
  app.add_option("--limit", out->limits,
                 "a [limits] key: KEY=VALUE (repeatable; overrides the file's value)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  v.o_log = app.add_option("--log-level", v.log_level,
                           option_help(daemon_key_set(), "log_level", "daemon"))
                ->type_name("LEVEL");
}

constexpr const char* kAppHelp = "uroced: the uroce daemon (RoCEv2 virtual NICs over DPDK ports)";

}  // namespace

std::vector<OptionHelp> command_line_help() {
  CLI::App app{kAppHelp};
  OptionValues v;
  CommandLine cl;
  add_options(app, v, &cl);
  std::vector<OptionHelp> out;
  for (const CLI::Option* o : app.get_options()) {
    out.push_back({o->get_name(false, true), o->get_type_name(), o->get_description(),
                   o->get_items_expected_max() > 1});
  }
  return out;
}

int parse_command_line(int argc, char** argv, CommandLine* out) {
  CLI::App app{kAppHelp};
  OptionValues v;
  add_options(app, v, out);
  // "--eal-arg -x" would make CLI11 read "-x" as an option of ours: glue
  // every --eal-arg to its value first ("--eal-arg=-x").
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) args.emplace_back(argv[i]);  // CLI11 wants them reversed
  for (std::size_t i = args.size(); i-- > 1;) {
    if (args[i] == "--eal-arg") {
      args[i] += "=" + args[i - 1];
      args.erase(args.begin() + static_cast<long>(i) - 1);
    }
  }
  // CLI11 reports parse errors by exception; they end here, as exit codes.
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }
  if (*v.o_config) out->config_file = v.config_file;
  if (*v.o_run) out->run_dir = v.run_dir;
  if (*v.o_lcore) out->lcore = v.lcore;
  if (*v.o_lcores) out->lcores = v.lcores;
  if (*v.o_poll) out->poll = v.poll;
  if (*v.o_log) out->log_level = v.log_level;
  return -1;
}

std::string parse_device_spec(std::string_view spec, std::size_t index, DeviceConfig* out) {
  std::set<std::string, std::less<>> seen;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    const std::size_t end = std::min(spec.find(';', pos), spec.size());
    const std::string_view item = spec.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return "device[" + std::to_string(index) + "]: " + in_quotes(item) +
             " is not key=value (--device takes key=value pairs separated by ';')";
    }
    const std::string name(item.substr(0, eq));
    const std::string_view val = item.substr(eq + 1);
    const std::string key = dev_key(index, name.c_str());
    if (seen.contains(name)) return key + ": given twice";
    const KeyDesc<DeviceConfig>* k = find_device_key(name);
    if (k == nullptr || (k->sources & kInArg) == 0) {
      return key + ": unknown key (expected " + device_key_names(kInArg) + ")";
    }
    std::string err = set_key_text(*k, val, key, out);
    if (!err.empty()) return err;
    seen.insert(name);
  }
  return check_required(seen, index);
}

std::string apply_command_line(const CommandLine& cl, DaemonConfig* cfg) {
  // Through the keys' own descriptors: the file's checks and messages.
  auto set = [&](const KeySet<DaemonConfig>& s, std::string_view name, const std::string& text) {
    const KeyDesc<DaemonConfig>* k = find_daemon_key(s, name);
    return set_key_text(*k, text, std::string(k->flag), cfg);
  };
  if (cl.run_dir) {
    if (std::string err = set(daemon_key_set(), "run_dir", *cl.run_dir); !err.empty()) return err;
  }
  if (cl.lcore) {
    if (std::string err = set(eal_key_set(), "lcore", std::to_string(*cl.lcore)); !err.empty()) {
      return err;
    }
  }
  if (cl.lcores) {
    if (std::string err = set(eal_key_set(), "lcores", *cl.lcores); !err.empty()) return err;
  }
  if (cl.poll) {
    if (std::string err = set(daemon_key_set(), "poll", *cl.poll); !err.empty()) return err;
  }
  if (cl.log_level) {
    if (std::string err = set(daemon_key_set(), "log_level", *cl.log_level); !err.empty()) {
      return err;
    }
  }
  for (const auto& a : cl.eal_args) cfg->eal_args.push_back(a);
  for (const auto& l : cl.limits) {
    if (std::string err = parse_limit_arg(l, &cfg->limits); !err.empty()) return err;
  }
  if (!cl.devices.empty()) {
    std::vector<DeviceConfig> devs;
    for (std::size_t i = 0; i < cl.devices.size(); ++i) {
      DeviceConfig d;
      if (std::string err = parse_device_spec(cl.devices[i], i, &d); !err.empty()) {
        return err;
      }
      devs.push_back(std::move(d));
    }
    cfg->devices = std::move(devs);
  }
  return {};
}

std::string validate(const DaemonConfig& cfg) {
  if (cfg.run_dir.empty() || cfg.run_dir[0] != '/') {
    return "daemon.run_dir: " + in_quotes(cfg.run_dir) + " must be an absolute path";
  }
  if (cfg.socket_path().size() > kMaxSocketPath) {
    return "daemon.run_dir: " + in_quotes(cfg.run_dir) + " is too long (the socket path " +
           cfg.socket_path() + " must have at most " + std::to_string(kMaxSocketPath) +
           " characters)";
  }
  if (!kLogLevels.contains(cfg.log_level)) {
    return "daemon.log_level: " + in_quotes(cfg.log_level) + " is not a log level";
  }
  if (cfg.backoff_max_us > kMaxBackoffUs) {
    return "daemon.backoff_max_us: " + std::to_string(cfg.backoff_max_us) + " is outside 0.." +
           std::to_string(kMaxBackoffUs);
  }
  if (cfg.lcore > kMaxLcore) {
    return "eal.lcore: " + std::to_string(cfg.lcore) + " is outside 0.." +
           std::to_string(kMaxLcore);
  }
  for (std::size_t i = 0; i < cfg.lcores.size(); ++i) {
    for (std::size_t k = 0; k < i; ++k) {
      if (cfg.lcores[k] == cfg.lcores[i]) {
        return "eal.lcores: lcore " + std::to_string(cfg.lcores[i]) + " is given twice";
      }
    }
  }
  if (cfg.devices.empty()) {
    return "device: no devices (add a [[device]] table or --device)";
  }
  for (std::size_t i = 0; i < cfg.devices.size(); ++i) {
    if (std::string err = check_device_values(cfg.devices[i], i); !err.empty()) {
      return err;
    }
    // PAUSE and PFC frames carry no IP header: RSS puts them on queue 0, so
    // only shard 0 would honour them (docs/engine.md "Several lcores").
    if (cfg.lcores.size() > 1 && cfg.devices[i].pfc.enable != 0) {
      return dev_key(i, "pfc") +
             ": PFC on an engine of several lcores (eal.lcores) is not "
             "supported (its frames reach the first lcore alone)";
    }
  }
  if (std::string err = check_unique(cfg); !err.empty()) return err;
  return check_rings(cfg);
}

std::string load_config(const CommandLine& cl, DaemonConfig* out) {
  if (cl.config_file) {
    std::ifstream in(*cl.config_file);
    if (!in) {
      return *cl.config_file + ": cannot open the configuration file";
    }
    std::stringstream ss;
    ss << in.rdbuf();
    if (std::string err = load_toml(ss.str(), *cl.config_file, out); !err.empty()) {
      return err;
    }
  }
  if (std::string err = apply_command_line(cl, out); !err.empty()) return err;
  return validate(*out);
}

std::vector<std::uint32_t> engine_lcores(const DaemonConfig& cfg) {
  if (cfg.lcores.empty()) return {cfg.lcore};
  return cfg.lcores;
}

std::string dumpcap_blocker(const DaemonConfig& cfg) {
  const auto has = [&](const char* a) {
    return std::find(cfg.eal_args.begin(), cfg.eal_args.end(), a) != cfg.eal_args.end();
  };
  if (has("--in-memory") || has("--no-shconf")) {
    return "its EAL runs without shared files (--in-memory or --no-shconf in eal.args)";
  }
  if (has("--no-huge")) {
    return "its EAL runs with --no-huge (a secondary process cannot map that memory)";
  }
  return "";
}

std::string make_eal_config(const DaemonConfig& cfg, int pid, port::EalConfig* out) {
  port::EalConfig e;
  const std::vector<std::uint32_t> lcores = engine_lcores(cfg);
  e.lcores.clear();
  for (const std::uint32_t l : lcores) {
    e.lcores += (e.lcores.empty() ? "" : ",") + std::to_string(l);
  }
  if (lcores.size() > 1) e.main_lcore = static_cast<int>(lcores.front());
  e.file_prefix = cfg.file_prefix.empty() ? "uroced-" + std::to_string(pid) : cfg.file_prefix;
  // Everything the args do not switch off stays on, as rte_eal_init would.
  e.hugepages = true;
  e.pci = true;
  e.telemetry = true;
  const auto& a = cfg.eal_args;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string& s = a[i];
    if (s == "-l" || s == "--lcores" || s == "-c" || s.starts_with("--lcores=") ||
        s == "--main-lcore") {
      return "eal.args: " + in_quotes(s) + " is set by uroced (use eal.lcore or --lcore)";
    }
    if (s == "--file-prefix" || s.starts_with("--file-prefix=")) {
      return "eal.args: " + in_quotes(s) + " is set by uroced (use eal.file_prefix)";
    }
    if (s == "-m") {
      std::uint32_t mb = 0;
      const std::string v = i + 1 < a.size() ? a[i + 1] : std::string();
      const auto r = std::from_chars(v.data(), v.data() + v.size(), mb);
      if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || mb < 16) {
        return "eal.args: \"-m\" needs a size in MB (at least 16)";
      }
      e.memory_mb = mb;
      ++i;
    } else if (s == "--no-huge") {
      e.hugepages = false;
    } else if (s == "--no-pci") {
      e.pci = false;
    } else if (s == "--no-telemetry") {
      e.telemetry = false;
    } else if (s.starts_with("--log-level=")) {
      e.log_level = s.substr(12);
    } else if (s.starts_with("--vdev=")) {
      e.vdevs.push_back(s.substr(7));
    } else {
      e.extra_args.push_back(s);
    }
  }
  for (const auto& d : cfg.devices) {
    if (d.port_spec.kind == PortKind::kPci) {
      e.pci = true;
      e.allow.push_back(d.port_spec.name);
    } else if (d.port_spec.kind == PortKind::kVdev && d.port_spec.args.empty()) {
      e.vdevs.push_back(d.port_spec.name);
    }
  }
  *out = std::move(e);
  return {};
}

}  // namespace uroce::daemon
