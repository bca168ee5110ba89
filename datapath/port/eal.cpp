#include "datapath/port/eal.h"

#include <linux/magic.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <sys/statfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace uroce::port {

int eal_init(const EalConfig& cfg, std::string* error) {
  std::vector<std::string> args = eal_argv(cfg);
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = rte_eal_init(static_cast<int>(args.size()), argv.data());
  if (rc >= 0) return 0;
  const int err = rte_errno != 0 ? rte_errno : EINVAL;
  if (error != nullptr) {
    std::string hint;
    if (err == EALREADY) hint = " (EAL was already initialised in this process)";
    else if (err == ENOMEM) hint = " (raise eal.memory_mb or free memory)";
    else if (err == EACCES) hint = " (run as root, or check the runtime directory)";
    else if (err == EEXIST || err == EBUSY)
      hint = " (another DPDK process uses this file_prefix: pick another)";
    *error = std::string("rte_eal_init failed: ") + std::strerror(err) + hint;
  }
  return -err;
}

std::string eal_hugepage_file(std::string_view line, std::string_view prefix) {
  // address perms offset dev inode [path]; the path is the rest of the line.
  const std::size_t at = line.find('/');
  if (at == std::string_view::npos || prefix.empty()) return "";
  const std::string_view path = line.substr(at);
  if (path.ends_with(" (deleted)")) return "";
  const std::string_view base = path.substr(path.rfind('/') + 1);
  if (!base.starts_with(prefix) || !base.substr(prefix.size()).starts_with("map_")) return "";
  return std::string(path);
}

namespace {

// EAL's hugepage files this process maps now (each once).
std::set<std::string> mapped_hugepage_files(std::string_view prefix) {
  std::set<std::string> out;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::string path = eal_hugepage_file(line, prefix);
    if (path.empty() || out.contains(path)) continue;
    struct statfs fs {};
    if (statfs(path.c_str(), &fs) == 0 && fs.f_type == HUGETLBFS_MAGIC) out.insert(std::move(path));
  }
  return out;
}

}  // namespace

void eal_cleanup() {
  const std::string dir = rte_eal_get_runtime_dir();
  // The runtime directory's name is the file prefix.
  const std::string prefix = std::filesystem::path(dir).filename().string();
  const std::set<std::string> huge = mapped_hugepage_files(prefix);
  rte_eal_cleanup();
  std::error_code ec;
  for (const std::string& f : huge) std::filesystem::remove(f, ec);
  // remove() deletes a directory only when it is empty.
  if (!dir.empty()) std::filesystem::remove(dir, ec);
}

}  // namespace uroce::port
