// uroce-embedded: runs an unmodified verbs program with uroce devices whose
// engine runs inside the program (docs/embedded.md). uroce-run --embedded
// calls it:
//
//   uroce-embedded [uroced options] -- CMD [ARGS...]
//
// The options are uroced's (--device, --config, --poll, --eal-arg, ...;
// not --run-dir) and are checked here as uroced checks them. Then, in a
// private run directory (mkdtemp under $TMPDIR or /tmp):
//   engine.args   the options, one per line, with the run directory and a
//                 log level of warn unless one was given;
//   sysfs/        the device tree libibverbs reads (sysfs_tree.h), each
//                 device naming engine.args and the engine library
//                 ($UROCE_ENGINE_LIB) beside its uroce_socket, plus a
//                 /dev/infiniband node per device;
// and CMD runs as a child with SYSFS_PATH at that tree and $UROCE_PRELOAD
// (the completion-channel interposer) in front of LD_PRELOAD. SIGINT and
// SIGTERM are passed on to it. When it ends, the tree, its nodes and the
// directory are removed, and uroce-embedded exits as CMD did (128 + the
// signal when a signal ended it). A program killed before its engine
// could remove EAL's runtime directory (/var/run/dpdk/<file prefix>)
// leaves the engine's record of it (stale_runtime.h): that directory goes
// too.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "apps/uroced/config.h"
#include "apps/uroced/stale_runtime.h"
#include "apps/uroced/sysfs_tree.h"

namespace uroce::daemon {
namespace {

pid_t g_child = 0;

void pass_on(int sig) {
  if (g_child > 0) kill(g_child, sig);
}

int usage() {
  std::fprintf(stderr,
               "usage: uroce-embedded [uroced options] -- CMD [ARGS...]\n"
               "  (uroced --help lists the options; --run-dir is chosen here)\n");
  return 2;
}

int fail(const std::string& what) {
  std::fprintf(stderr, "uroce-embedded: %s\n", what.c_str());
  return 1;
}

int run(int argc, char** argv) {
  int dash = 1;
  while (dash < argc && std::strcmp(argv[dash], "--") != 0) ++dash;
  if (dash + 1 >= argc) return usage();
  std::vector<std::string> opts(argv + 1, argv + dash);
  bool has_log_level = false;
  for (const std::string& o : opts) {
    if (o == "--run-dir" || o.starts_with("--run-dir=")) {
      return fail("--run-dir: embedded mode makes its own run directory");
    }
    if (o == "--log-level" || o.starts_with("--log-level=")) has_log_level = true;
  }
  CommandLine cl;
  if (const int rc = parse_command_line(dash, argv, &cl); rc >= 0) return rc;
  DaemonConfig cfg;
  if (std::string err = load_config(cl, &cfg); !err.empty()) return fail(err);
  const char* engine_lib = std::getenv("UROCE_ENGINE_LIB");
  if (engine_lib == nullptr || engine_lib[0] != '/') {
    return fail(
        "UROCE_ENGINE_LIB must name liburoce-engine.so by its absolute path (uroce-run "
        "sets it)");
  }

  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && tmp[0] == '/' ? tmp : "/tmp") + "/uroce-embedded.XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return fail("cannot create a run directory " + pattern + ": " + std::strerror(errno));
  }
  const std::string dir = pattern;
  const std::string args_file = dir + "/engine.args";
  int rc = 0;
  {
    std::ofstream out(args_file);
    for (const std::string& o : opts) out << o << '\n';
    out << "--run-dir\n" << dir << '\n';
    if (!has_log_level) out << "--log-level\nwarn\n";
    if (!out) rc = fail("cannot write " + args_file);
  }
  SysfsTree tree(dir + "/sysfs");
  for (std::size_t i = 0; rc == 0 && i < cfg.devices.size(); ++i) {
    const DeviceConfig& d = cfg.devices[i];
    SysfsDevice sd = sysfs_device(d, dir + "/uroced.sock");
    sd.embedded_config = args_file;
    sd.engine_library = engine_lib;
    std::uint32_t n = 0;
    std::string err;
    if (tree.add(sd, &n, &err) != 0) rc = fail(d.name + ": " + err);
  }
  int status = 0;
  if (rc == 0) {
    const pid_t child = fork();
    if (child < 0) {
      rc = fail(std::string("fork: ") + std::strerror(errno));
    } else if (child == 0) {
      setenv("SYSFS_PATH", (dir + "/sysfs").c_str(), 1);
      if (const char* pre = std::getenv("UROCE_PRELOAD"); pre != nullptr && pre[0] != '\0') {
        const char* old = std::getenv("LD_PRELOAD");
        const std::string v = std::string(pre) + (old != nullptr && old[0] != '\0' ? ":" : "") +
                              (old != nullptr ? old : "");
        setenv("LD_PRELOAD", v.c_str(), 1);
      }
      execvp(argv[dash + 1], argv + dash + 1);
      std::fprintf(stderr, "uroce-embedded: %s: %s\n", argv[dash + 1], std::strerror(errno));
      _exit(127);
    } else {
      g_child = child;
      struct sigaction sa {};
      sa.sa_handler = pass_on;
      sigaction(SIGINT, &sa, nullptr);
      sigaction(SIGTERM, &sa, nullptr);
      while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
  }
  std::string removed;
  if (std::string why = clean_stale_runtime(dir + "/" + kRuntimeRecord, &removed); !why.empty()) {
    std::fprintf(stderr, "uroce-embedded: EAL runtime directory of the program left in place: %s\n",
                 why.c_str());
  } else if (!removed.empty()) {
    std::fprintf(stderr,
                 "uroce-embedded: removed the EAL runtime directory %s of the program, whose "
                 "engine did not exit cleanly\n",
                 removed.c_str());
  }
  tree.remove_all();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}

}  // namespace
}  // namespace uroce::daemon

int main(int argc, char** argv) { return uroce::daemon::run(argc, argv); }
