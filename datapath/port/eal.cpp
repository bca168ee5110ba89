#include "datapath/port/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
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

void eal_cleanup() {
  const std::string dir = rte_eal_get_runtime_dir();
  rte_eal_cleanup();
  // remove() deletes a directory only when it is empty.
  std::error_code ec;
  if (!dir.empty()) std::filesystem::remove(dir, ec);
}

}  // namespace uroce::port
