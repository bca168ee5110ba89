#include "apps/uroce-ctl/embedded_target.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

namespace uroce::ctl_tool {

namespace {
constexpr std::string_view kVar = "SYSFS_PATH=";
constexpr std::string_view kLeaf = "/sysfs";
}  // namespace

std::string run_dir_from_environ(std::string_view environ, pid_t pid, std::string* dir) {
  const std::string who = "process " + std::to_string(pid);
  std::size_t at = 0;
  while (at < environ.size()) {
    std::size_t end = environ.find('\0', at);
    if (end == std::string_view::npos) end = environ.size();
    const std::string_view entry = environ.substr(at, end - at);
    at = end + 1;
    if (!entry.starts_with(kVar)) continue;
    const std::string_view path = entry.substr(kVar.size());
    if (path.size() <= kLeaf.size() || !path.ends_with(kLeaf)) {
      return who + ": SYSFS_PATH=" + std::string(path) +
             " is not the sysfs tree of uroce-run --embedded (RUN/sysfs)";
    }
    *dir = std::string(path.substr(0, path.size() - kLeaf.size()));
    return "";
  }
  return who +
         " runs no embedded uroce engine (no SYSFS_PATH from uroce-run --embedded in its "
         "environment)";
}

std::string embedded_run_dir(pid_t pid, std::string* dir) {
  const std::string file = "/proc/" + std::to_string(pid) + "/environ";
  std::ifstream in(file, std::ios::binary);
  if (!in) return file + ": " + std::strerror(errno);
  const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return run_dir_from_environ(env, pid, dir);
}

}  // namespace uroce::ctl_tool
