#include "apps/uroced/sysfs_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "datapath/ctl/embedded_abi.h"
#include "datapath/port/gid_table.h"

namespace uroce::daemon {

SysfsDevice sysfs_device(const DeviceConfig& d, std::string socket) {
  SysfsDevice sd;
  sd.ibdev = d.name;
  sd.mac = d.mac;
  sd.ipv4 = d.ipv4;
  sd.ipv6 = d.ipv6;
  sd.socket_path = std::move(socket);
  return sd;
}
namespace {

namespace fs = std::filesystem;

constexpr unsigned kCdevMajor = 1;
constexpr unsigned kCdevMinor = 7;

std::string errtext(int err) { return std::strerror(err); }

// mkdir -p; 0 or errno.
int make_dirs(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  return ec ? ec.value() : 0;
}

// Writes `value` and a newline to `path`, creating its directory: what the
// kernel's sysfs shows. 0 or errno.
int put(const std::string& path, const std::string& value) {
  if (int rc = make_dirs(fs::path(path).parent_path()); rc != 0) return rc;
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  const std::string line = value + "\n";
  const ssize_t n = write(fd, line.data(), line.size());
  const int err = n < 0 ? errno : (static_cast<std::size_t>(n) != line.size() ? EIO : 0);
  close(fd);
  return err;
}

// An empty file (gid_attrs/ndevs/I: no kernel netdev carries our GIDs).
int touch(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

bool forbidden_root(const std::string& root) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(root, ec), ec);
  const std::string s = p.string();
  return root.empty() || s == "/" || s == "/sys" || s.starts_with("/sys/");
}

std::string verbs_dir(const std::string& root) { return root + "/class/infiniband_verbs"; }
std::string uverbs_dir(const std::string& root, std::uint32_t n) {
  return verbs_dir(root) + "/uverbs" + std::to_string(n);
}
std::string ibdev_dir(const std::string& root, const std::string& ibdev) {
  return root + "/class/infiniband/" + ibdev;
}
std::string cdev_path(const std::string& dir, std::uint32_t n) {
  return dir + "/uverbs" + std::to_string(n);
}

int write_device(const std::string& root, const SysfsDevice& d, std::string* where) {
  const std::string verbs = verbs_dir(root);
  const std::string uv = uverbs_dir(root, d.uverbs);
  const std::string ib = ibdev_dir(root, d.ibdev);
  int rc = 0;
  auto step = [&](const std::string& path, int r) {
    if (r != 0 && rc == 0) {
      rc = r;
      *where = path;
    }
  };
  if (access((verbs + "/abi_version").c_str(), F_OK) != 0) {
    step(verbs + "/abi_version", put(verbs + "/abi_version", std::to_string(kUverbsClassAbi)));
  }
  step(uv + "/ibdev", put(uv + "/ibdev", d.ibdev));
  step(uv + "/abi_version", put(uv + "/abi_version", std::to_string(kUroceDeviceAbi)));
  step(uv + "/dev",
       put(uv + "/dev", std::to_string(kCdevMajor) + ":" + std::to_string(kCdevMinor)));
  step(ib + "/node_type", put(ib + "/node_type", "1: CA"));
  step(ib + "/node_guid", put(ib + "/node_guid", node_guid_text(d.mac)));
  step(ib + "/board_id", put(ib + "/board_id", d.board_id));
  step(ib + "/device/modalias", put(ib + "/device/modalias", kUroceModalias));
  step(ib + "/device/uroce_socket", put(ib + "/device/uroce_socket", d.socket_path));
  if (!d.embedded_config.empty()) {
    const std::string cfg = ib + "/device/" + ctl::kEmbeddedConfigFile;
    const std::string lib = ib + "/device/" + ctl::kEmbeddedEngineFile;
    step(cfg, put(cfg, d.embedded_config));
    step(lib, put(lib, d.engine_library));
  }
  const std::string port = ib + "/ports/1";
  const port::GidTable gids(d.mac, d.ipv4, d.ipv6);
  step(port + "/gid_attrs/ndevs", make_dirs(port + "/gid_attrs/ndevs"));
  for (std::uint32_t i = 0; i < d.gid_table_len && rc == 0; ++i) {
    const std::string idx = std::to_string(i);
    const auto e = gids.at(i);
    const std::string gid = (e ? e->gid : port::Gid{}).to_string();
    step(port + "/gids/" + idx, put(port + "/gids/" + idx, gid));
    step(port + "/gid_attrs/types/" + idx,
         put(port + "/gid_attrs/types/" + idx, port::to_string(port::GidType::kRoceV2)));
    step(port + "/gid_attrs/ndevs/" + idx, touch(port + "/gid_attrs/ndevs/" + idx));
  }
  step(port + "/pkeys/0", put(port + "/pkeys/0", "0xffff"));
  return rc;
}

}  // namespace

std::string node_guid_text(const wire::MacAddr& mac) {
  const auto& b = mac.b;
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%02x%02x:%02xff:fe%02x:%02x%02x",
                static_cast<unsigned>(b[0] ^ 0x02), b[1], b[2], b[3], b[4], b[5]);
  return buf;
}

std::uint64_t node_guid_be(const wire::MacAddr& mac) {
  const std::uint8_t bytes[8] = {static_cast<std::uint8_t>(mac.b[0] ^ 0x02),
                                 mac.b[1],
                                 mac.b[2],
                                 0xff,
                                 0xfe,
                                 mac.b[3],
                                 mac.b[4],
                                 mac.b[5]};
  std::uint64_t v = 0;
  std::memcpy(&v, bytes, sizeof(v));
  return v;
}

int add_sysfs_device(const std::string& root, const SysfsDevice& d, std::string* error) {
  if (forbidden_root(root)) {
    *error = "refusing to write a sysfs tree to " + root + ": give a directory of our own";
    return EINVAL;
  }
  const std::string uv = uverbs_dir(root, d.uverbs);
  const std::string ib = ibdev_dir(root, d.ibdev);
  for (const std::string& p : {uv, ib}) {
    if (access(p.c_str(), F_OK) == 0) {
      *error = p + " exists (another daemon with this run directory, or a stale tree: remove it)";
      return EEXIST;
    }
  }
  std::string where;
  const int rc = write_device(root, d, &where);
  if (rc != 0) {
    *error = "cannot write " + where + ": " + errtext(rc);
    (void)remove_sysfs_device(root, d.ibdev, d.uverbs);
  }
  return rc;
}

int remove_sysfs_device(const std::string& root, const std::string& ibdev, std::uint32_t uverbs) {
  std::error_code ec1, ec2;
  fs::remove_all(ibdev_dir(root, ibdev), ec1);
  fs::remove_all(uverbs_dir(root, uverbs), ec2);
  return ec1 ? ec1.value() : (ec2 ? ec2.value() : 0);
}

void remove_sysfs_skeleton(const std::string& root) {
  const std::string verbs = verbs_dir(root);
  // Only when no device is left in either class.
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(verbs, ec)) {
    if (e.path().filename() != "abi_version") return;
  }
  if (!fs::is_empty(root + "/class/infiniband", ec) && !ec) return;
  (void)unlink((verbs + "/abi_version").c_str());
  for (const std::string& d : {verbs, root + "/class/infiniband", root + "/class", root}) {
    (void)rmdir(d.c_str());
  }
}

int claim_cdev(const std::string& dir, std::uint32_t first, std::uint32_t* n, std::string* error) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    const int err = errno;
    *error = "cannot create " + dir + ": " + errtext(err) +
             (err == EACCES || err == EPERM ? " (run uroced as root)" : "");
    return err;
  }
  for (std::uint32_t i = first; i < first + kCdevTries; ++i) {
    const std::string path = cdev_path(dir, i);
    if (mknod(path.c_str(), S_IFCHR | 0600, makedev(kCdevMajor, kCdevMinor)) == 0) {
      // mknod's mode is filtered by the umask; everyone may open the node
      // (it is /dev/full: harmless), as with uroce-sysfs.sh.
      if (chmod(path.c_str(), 0666) != 0) {
        const int err = errno;
        (void)unlink(path.c_str());
        *error = "cannot chmod " + path + ": " + errtext(err);
        return err;
      }
      *n = i;
      return 0;
    }
    if (errno != EEXIST) {
      const int err = errno;
      *error = "cannot create " + path + ": " + errtext(err) +
               (err == EACCES || err == EPERM ? " (run uroced as root or with CAP_MKNOD)" : "");
      return err;
    }
  }
  *error = "no free " + dir + "/uverbsN for N in " + std::to_string(first) + ".." +
           std::to_string(first + kCdevTries - 1) + " (remove stale nodes)";
  return ENOSPC;
}

int release_cdev(const std::string& dir, std::uint32_t n) {
  const std::string path = cdev_path(dir, n);
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return errno;
  if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != kCdevMajor || minor(st.st_rdev) != kCdevMinor) {
    return EPERM;
  }
  return unlink(path.c_str()) == 0 ? 0 : errno;
}

int cleanup_stale_tree(const std::string& root, const std::string& cdev_dir) {
  std::error_code ec;
  int found = 0;
  for (const auto& e : fs::directory_iterator(verbs_dir(root), ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with("uverbs")) continue;
    std::uint32_t n = 0;
    const char* first = name.c_str() + 6;
    const char* last = name.c_str() + name.size();
    const auto r = std::from_chars(first, last, n);
    if (r.ec != std::errc() || r.ptr != last || first == last) continue;
    (void)release_cdev(cdev_dir, n);
    ++found;
  }
  fs::remove_all(root, ec);
  return found;
}

int SysfsTree::add(const SysfsDevice& d, std::uint32_t* uverbs, std::string* error) {
  std::uint32_t n = 0;
  if (int rc = claim_cdev(cdev_dir_, 0, &n, error); rc != 0) return rc;
  SysfsDevice dev = d;
  dev.uverbs = n;
  if (int rc = add_sysfs_device(root_, dev, error); rc != 0) {
    (void)release_cdev(cdev_dir_, n);
    return rc;
  }
  entries_.push_back({d.ibdev, n});
  *uverbs = n;
  return 0;
}

void SysfsTree::remove_all() {
  for (const Entry& e : entries_) {
    (void)remove_sysfs_device(root_, e.ibdev, e.uverbs);
    (void)release_cdev(cdev_dir_, e.uverbs);
  }
  if (!entries_.empty()) remove_sysfs_skeleton(root_);
  entries_.clear();
}

}  // namespace uroce::daemon
