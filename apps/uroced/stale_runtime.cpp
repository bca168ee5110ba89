#include "apps/uroced/stale_runtime.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace uroce::daemon {

std::string write_runtime_record(const std::string& record, long pid,
                                 const std::string& runtime_dir) {
  std::ofstream out(record, std::ios::trunc);
  out << pid << '\n' << runtime_dir << '\n';
  out.close();
  if (!out) return "cannot write " + record + ": " + std::strerror(errno);
  return {};
}

namespace {

// Whether some process holds a lock on `path` (EAL's primary process keeps
// a write lock on <runtime dir>/config while it runs).
bool locked(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  const bool held = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  close(fd);
  return held;
}

}  // namespace

std::string clean_stale_runtime(const std::string& record, std::string* removed) {
  removed->clear();
  std::ifstream in(record);
  if (!in) return {};
  long pid = 0;
  std::string dir;
  in >> pid;
  in.ignore(1);
  std::getline(in, dir);
  namespace fs = std::filesystem;
  const fs::path p(dir);
  if (pid <= 0 || !p.is_absolute() || p.lexically_normal() != p ||
      p.parent_path().filename() != "dpdk" || p.filename().empty()) {
    return record + ": not a record of an EAL runtime directory";
  }
  if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) {
    return "the process that wrote " + record + " (pid " + std::to_string(pid) + ") still runs";
  }
  std::error_code ec;
  if (fs::exists(p, ec)) {
    if (!fs::is_directory(fs::symlink_status(p, ec))) return dir + " is not a directory";
    if (locked(dir + "/config")) return dir + " is in use (its config file is locked)";
    fs::remove_all(p, ec);
    if (ec) return "cannot remove " + dir + ": " + ec.message();
    *removed = dir;
  }
  fs::remove(record, ec);
  return {};
}

}  // namespace uroce::daemon
