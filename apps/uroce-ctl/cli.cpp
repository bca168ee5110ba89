#include "apps/uroce-ctl/cli.h"

#include <CLI/CLI.hpp>

#include <limits>
#include <vector>

#include "apps/uroce-ctl/capture_client.h"
#include "apps/uroce-ctl/tables.h"
#include "datapath/ctl/protocol.h"

namespace uroce::ctl_tool {

namespace {

const Command kCommands[] = {
    {"status", "the daemon (version, pid, poll mode, lcores) and one row per device", 0,
     &render_status},
    {"counters", "every device's non-zero counters, drops by reason", 0, &render_counters},
    {"pfc",
     "per device and priority: PFC frames sent and received, time paused, storm state; the TTL "
     "loop signals",
     0, &render_pfc},
    {"qps",
     "one row per QP (RECOVERY: go-back-N, selective repeat, spraying paths/avoided); DC "
     "context pools, DCI streams and DCTs",
     ctl::kStatusQps, &render_qps},
    {"sched", "per device the traffic classes, then per QP its class, rate limit and pacing",
     ctl::kStatusQps, &render_sched},
    {"homa", "the Homa-like scheduler: receiver, grants and cutoffs, then per RC QP its sender",
     ctl::kStatusQps, &render_homa},
    {"stages",
     "per device the stage stamps of messages (WQE seen, TX burst, RX burst, completion "
     "written): quantiles, and where the slowest 1 % spent their time (device key stage_stamps)",
     0, &render_stages},
    {"clients",
     "one row per client connection (a user sees their own; root and daemon.status_group all)",
     ctl::kStatusClients, &render_clients},
    {"metrics",
     "every counter as Prometheus metrics (text format 0.0.4), per device, per QP type and "
     "class, per client: what the daemon's metrics listener serves (docs/metrics.md)",
     ctl::kStatusQps | ctl::kStatusClients, &render_metrics},
    {"capture",
     "DEVICE's frames, both directions, as pcapng to -w FILE or standard output, until -c N "
     "frames or Ctrl-C (root only; docs/capture.md)",
     0, nullptr, &run_capture},
    {"keys",
     "uroced's configuration keys from their tables, without a daemon (--markdown: as "
     "docs/config-keys.md)",
     0, nullptr},
};

}  // namespace

std::span<const Command> commands() { return kCommands; }

const Command* find_command(std::string_view name) {
  for (const Command& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

void add_options(CLI::App& app, Options* o) {
  std::vector<std::string> names;
  std::string list;
  for (const Command& c : kCommands) {
    names.emplace_back(c.name);
    list += (list.empty() ? "" : " | ") + std::string(c.name);
  }
  auto* o_run = app.add_option("--run-dir", o->run_dir,
                               "the daemon's run directory (default $UROCE_RUN_DIR or /run/uroce)")
                    ->type_name("DIR");
  auto* o_sock =
      app.add_option("--socket", o->socket, "the daemon's control socket")->type_name("PATH");
  auto* o_pid = app.add_option("--pid", o->pid,
                               "a program's embedded engine (uroce-run --embedded): its process ID")
                    ->type_name("PID")
                    ->check(CLI::PositiveNumber);
  o_run->excludes(o_sock);
  o_pid->excludes(o_run)->excludes(o_sock);
  app.add_option("command", o->command, list)
      ->type_name("COMMAND")
      ->required()
      ->check(CLI::IsMember(names));
  app.add_option("device", o->device, "capture: the device (uroce0, ...)")->type_name("DEVICE");
  app.add_flag("--json", o->json, "print the daemon's JSON instead of tables");
  app.add_flag("--markdown", o->markdown, "keys: print docs/config-keys.md");
  app.add_option("-w,--write", o->write,
                 "capture: the pcapng file to write (mode 0600; - or none: standard output)")
      ->type_name("FILE");
  app.add_option("-c,--count", o->count, "capture: stop after N frames (default: at Ctrl-C)")
      ->type_name("N")
      ->check(CLI::Range(std::uint64_t{1}, std::numeric_limits<std::uint64_t>::max()));
  app.add_option("--snaplen", o->snaplen,
                 "capture: bytes kept of each frame (at least " + std::to_string(ctl::kMinSnaplen) +
                     "; default: whole frames)")
      ->type_name("N")
      ->check(CLI::Range(ctl::kMinSnaplen, std::numeric_limits<std::uint32_t>::max()));
}

std::string check_options(const CLI::App& app, const Options& o) {
  const bool capture = o.command == "capture";
  if (capture) {
    if (o.device.empty()) return "capture needs a DEVICE (uroce-ctl capture uroce0 -w FILE)";
    if (o.json) return "--json does not go with capture (its output is pcapng)";
    return "";
  }
  if (!o.device.empty()) return o.command + " takes no DEVICE: only capture does";
  for (const char* opt : {"-w", "-c", "--snaplen"}) {
    if (app.count(opt) != 0) return std::string(opt) + " goes with capture only";
  }
  return "";
}

std::string socket_path(const Options& o) {
  return o.socket.empty() ? o.run_dir + "/uroced.sock" : o.socket;
}

}  // namespace uroce::ctl_tool
