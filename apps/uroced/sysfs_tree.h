// What stock libibverbs discovers a uroce device through when the kernel has
// no RDMA core (docs/provider-abi.md): a sysfs tree under
// RUN/sysfs, read with SYSFS_PATH=RUN/sysfs, and a character device
// /dev/infiniband/uverbsN (its path is hard-coded in libibverbs).
//
// The tree is exactly what verbs-provider/uroce-sysfs.sh writes (same files,
// same contents, a newline after each value), plus
// class/infiniband/<ibdev>/device/uroce_socket holding the absolute path of
// the daemon's control socket, which the provider connects to.
//
// The node is /dev/full's numbers (c 1 7): libibverbs' ioctls on it fail
// with ENOTTY, so it falls back to sysfs. A daemon claims the first free N by
// mknod (EEXIST -> N + 1), so two daemons never share a node, and removes
// only nodes that are still 1:7 character devices.
//
// Control path only (start-up and shut-down); no exceptions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/uroced/config.h"
#include "datapath/wire/addr.h"

namespace uroce::daemon {

inline constexpr const char* kCdevDir = "/dev/infiniband";
// class/infiniband_verbs/abi_version: the kernel uverbs ABI libibverbs 44
// accepts (3..6).
inline constexpr int kUverbsClassAbi = 6;
// uverbsN/abi_version: our own, matched by the provider's match_min/max.
inline constexpr int kUroceDeviceAbi = 1;
inline constexpr const char* kUroceModalias = "uroce:vnic";
inline constexpr std::uint32_t kSysfsGidTableLen = 16;
// How many node numbers claim_cdev tries past `first`.
inline constexpr std::uint32_t kCdevTries = 1000;

struct SysfsDevice {
  std::string ibdev;         // "uroce0"
  std::uint32_t uverbs = 0;  // N of uverbsN
  wire::MacAddr mac{};
  wire::Ipv4Addr ipv4{};  // 0.0.0.0: no GID 1
  wire::Ipv6Addr ipv6{};  // all zero: no global IPv6 GID
  std::uint32_t gid_table_len = kSysfsGidTableLen;
  std::string board_id = "uroce";
  std::string socket_path;  // absolute; written to device/uroce_socket
  // Embedded mode (docs/embedded.md, ctl/embedded_abi.h): both absolute,
  // written to device/uroce_embedded and device/uroce_engine when set.
  std::string embedded_config;
  std::string engine_library;
};

// The tree's view of a configured device, its control socket at `socket`.
SysfsDevice sysfs_device(const DeviceConfig& d, std::string socket);

// "0200:00ff:fe00:0001": the EUI-64 of `mac` as sysfs node_guid shows it.
std::string node_guid_text(const wire::MacAddr& mac);
// The same 8 bytes as ibv_device_attr.node_guid holds them (network order
// in memory).
std::uint64_t node_guid_be(const wire::MacAddr& mac);

// Adds `d` under `root` (created as needed). Fails with EEXIST when its
// uverbsN or ibdev directory is already there, EINVAL for a root of / or
// /sys, or the errno of the failing file operation; `error` says which path.
int add_sysfs_device(const std::string& root, const SysfsDevice& d, std::string* error);
// Removes the device's two directories (missing ones are fine).
int remove_sysfs_device(const std::string& root, const std::string& ibdev, std::uint32_t uverbs);
// Once no device is left: removes class/infiniband_verbs/abi_version and the
// then empty directories up to and including `root` (a non-empty one stays).
void remove_sysfs_skeleton(const std::string& root);

// mknod `dir`/uverbsN c 1 7 mode 0666 for the first free N >= first (creating
// `dir`, mode 0755, if missing). 0 with *n, or the errno: EACCES/EPERM when
// not allowed (uroced needs root or CAP_MKNOD), ENOSPC when kCdevTries names
// were all taken.
int claim_cdev(const std::string& dir, std::uint32_t first, std::uint32_t* n, std::string* error);
// Removes `dir`/uverbsN if it is a 1:7 character device: 0, ENOENT when
// absent, EPERM when something else has that name (left alone).
int release_cdev(const std::string& dir, std::uint32_t n);

// A tree left by a daemon of this run directory that did not exit cleanly
// (SIGKILL, crash): releases the nodes its class/infiniband_verbs/uverbsN
// entries name (only 1:7 character devices) and removes the whole tree.
// Only call it when no daemon serves this run directory. Returns how many
// devices it found.
int cleanup_stale_tree(const std::string& root, const std::string& cdev_dir);

// All devices of one daemon: claims nodes, writes the tree, and undoes both
// in remove_all() (also run by the destructor).
class SysfsTree {
 public:
  SysfsTree(std::string root, std::string cdev_dir = kCdevDir)
      : root_(std::move(root)), cdev_dir_(std::move(cdev_dir)) {}
  ~SysfsTree() { remove_all(); }
  SysfsTree(const SysfsTree&) = delete;
  SysfsTree& operator=(const SysfsTree&) = delete;

  // Claims a node and writes `d` with it (d.uverbs is ignored). 0 and the N
  // used in *uverbs, or an errno with `error` set; nothing stays behind on
  // failure.
  int add(const SysfsDevice& d, std::uint32_t* uverbs, std::string* error);
  // Removes every device, its node and the skeleton.
  void remove_all();

  const std::string& root() const { return root_; }

 private:
  struct Entry {
    std::string ibdev;
    std::uint32_t uverbs;
  };
  std::string root_;
  std::string cdev_dir_;
  std::vector<Entry> entries_;
};

}  // namespace uroce::daemon
