#include "apps/uroced/sysfs_tree.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace uroce::daemon {
namespace {

namespace fs = std::filesystem;

// A fresh directory under /tmp, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/uroce_test_sysfs.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every regular file under `root`, relative path -> contents.
std::map<std::string, std::string> tree_of(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) {
      out[fs::relative(e.path(), root).string()] = slurp(e.path().string());
    }
  }
  return out;
}

SysfsDevice dev0() {
  SysfsDevice d;
  d.ibdev = "uroce0";
  d.uverbs = 7;
  d.mac = *wire::MacAddr::parse("02:00:00:ab:00:01");
  d.ipv4 = *wire::Ipv4Addr::parse("10.88.0.1");
  d.socket_path = "/run/x/uroced.sock";
  return d;
}

TEST(NodeGuidText, Eui64OfMac) {
  EXPECT_EQ(node_guid_text(*wire::MacAddr::parse("02:00:00:ab:00:01")), "0000:00ff:feab:0001");
  EXPECT_EQ(node_guid_text(*wire::MacAddr::parse("00:11:22:33:44:55")), "0211:22ff:fe33:4455");
}

TEST(NodeGuidBe, BytesInNetworkOrder) {
  const std::uint64_t g = node_guid_be(*wire::MacAddr::parse("00:11:22:33:44:55"));
  const auto* b = reinterpret_cast<const std::uint8_t*>(&g);
  const std::uint8_t want[8] = {0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], want[i]) << i;
}

TEST(AddSysfsDevice_Files, LayoutAndContents) {
  TempDir t;
  const std::string root = t.path() + "/sysfs";
  std::string err;
  ASSERT_EQ(add_sysfs_device(root, dev0(), &err), 0) << err;
  const auto files = tree_of(root);
  EXPECT_EQ(files.at("class/infiniband_verbs/abi_version"), "6\n");
  EXPECT_EQ(files.at("class/infiniband_verbs/uverbs7/ibdev"), "uroce0\n");
  EXPECT_EQ(files.at("class/infiniband_verbs/uverbs7/abi_version"), "1\n");
  EXPECT_EQ(files.at("class/infiniband_verbs/uverbs7/dev"), "1:7\n");
  const std::string ib = "class/infiniband/uroce0/";
  EXPECT_EQ(files.at(ib + "node_type"), "1: CA\n");
  EXPECT_EQ(files.at(ib + "node_guid"), "0000:00ff:feab:0001\n");
  EXPECT_EQ(files.at(ib + "board_id"), "uroce\n");
  EXPECT_EQ(files.at(ib + "device/modalias"), "uroce:vnic\n");
  EXPECT_EQ(files.at(ib + "device/uroce_socket"), "/run/x/uroced.sock\n");
  EXPECT_EQ(files.at(ib + "ports/1/gids/0"), "fe80:0000:0000:0000:0000:00ff:feab:0001\n");
  EXPECT_EQ(files.at(ib + "ports/1/gids/1"), "0000:0000:0000:0000:0000:ffff:0a58:0001\n");
  EXPECT_EQ(files.at(ib + "ports/1/gids/15"), "0000:0000:0000:0000:0000:0000:0000:0000\n");
  EXPECT_EQ(files.count(ib + "ports/1/gids/16"), 0u);
  EXPECT_EQ(files.at(ib + "ports/1/gid_attrs/types/3"), "RoCE v2\n");
  EXPECT_EQ(files.at(ib + "ports/1/gid_attrs/ndevs/3"), "");
  EXPECT_EQ(files.at(ib + "ports/1/pkeys/0"), "0xffff\n");
}

TEST(AddSysfsDevice_Files, GlobalIpv6IsTheGidAfterIpv4) {
  TempDir t;
  const std::string root = t.path() + "/sysfs";
  SysfsDevice d = dev0();
  d.ipv6 = *wire::Ipv6Addr::parse("2001:db8::1");
  std::string err;
  ASSERT_EQ(add_sysfs_device(root, d, &err), 0) << err;
  const auto files = tree_of(root);
  const std::string ib = "class/infiniband/uroce0/";
  EXPECT_EQ(files.at(ib + "ports/1/gids/1"), "0000:0000:0000:0000:0000:ffff:0a58:0001\n");
  EXPECT_EQ(files.at(ib + "ports/1/gids/2"), "2001:0db8:0000:0000:0000:0000:0000:0001\n");
  EXPECT_EQ(files.at(ib + "ports/1/gid_attrs/types/2"), "RoCE v2\n");
  EXPECT_EQ(files.at(ib + "ports/1/gids/3"), "0000:0000:0000:0000:0000:0000:0000:0000\n");
}

// The tree is byte for byte what verbs-provider/uroce-sysfs.sh writes, plus
// device/uroce_socket.
TEST(AddSysfsDevice_MatchesScript, SameFilesAsUroceSysfsSh) {
  TempDir t;
  const std::string ours = t.path() + "/ours";
  const std::string theirs = t.path() + "/theirs";
  std::string err;
  SysfsDevice d0 = dev0();
  SysfsDevice d1 = dev0();
  d1.ibdev = "uroce1";
  d1.uverbs = 8;
  d1.mac = *wire::MacAddr::parse("02:00:00:ab:00:02");
  d1.ipv4 = wire::Ipv4Addr{};  // no IPv4: GID 1 empty
  ASSERT_EQ(add_sysfs_device(ours, d0, &err), 0) << err;
  ASSERT_EQ(add_sysfs_device(ours, d1, &err), 0) << err;
  const std::string script = std::string(UROCE_SOURCE_ROOT) + "/verbs-provider/uroce-sysfs.sh";
  const std::string cmd0 =
      script + " add-device " + theirs + " uroce0 7 --mac 02:00:00:ab:00:01 --ipv4 10.88.0.1";
  const std::string cmd1 = script + " add-device " + theirs + " uroce1 8 --mac 02:00:00:ab:00:02";
  ASSERT_EQ(std::system(cmd0.c_str()), 0);
  ASSERT_EQ(std::system(cmd1.c_str()), 0);
  auto mine = tree_of(ours);
  EXPECT_EQ(mine.erase("class/infiniband/uroce0/device/uroce_socket"), 1u);
  EXPECT_EQ(mine.erase("class/infiniband/uroce1/device/uroce_socket"), 1u);
  EXPECT_EQ(mine, tree_of(theirs));
}

TEST(AddSysfsDevice_Exists, Eexist) {
  TempDir t;
  std::string err;
  ASSERT_EQ(add_sysfs_device(t.path(), dev0(), &err), 0);
  EXPECT_EQ(add_sysfs_device(t.path(), dev0(), &err), EEXIST);
  EXPECT_EQ(err, t.path() +
                     "/class/infiniband_verbs/uverbs7 exists (another daemon with this run "
                     "directory, or a stale tree: remove it)");
}

TEST(AddSysfsDevice_ForbiddenRoot, Einval) {
  std::string err;
  EXPECT_EQ(add_sysfs_device("/sys", dev0(), &err), EINVAL);
  EXPECT_EQ(err, "refusing to write a sysfs tree to /sys: give a directory of our own");
  EXPECT_EQ(add_sysfs_device("/", dev0(), &err), EINVAL);
  EXPECT_EQ(add_sysfs_device("/sys/class/../class", dev0(), &err), EINVAL);
}

TEST(RemoveSysfsDevice_All, SkeletonGoesWithTheLastDevice) {
  TempDir t;
  const std::string root = t.path() + "/sysfs";
  std::string err;
  SysfsDevice d1 = dev0();
  d1.ibdev = "uroce1";
  d1.uverbs = 8;
  ASSERT_EQ(add_sysfs_device(root, dev0(), &err), 0);
  ASSERT_EQ(add_sysfs_device(root, d1, &err), 0);
  EXPECT_EQ(remove_sysfs_device(root, "uroce0", 7), 0);
  remove_sysfs_skeleton(root);  // uroce1 remains: nothing else goes
  EXPECT_FALSE(fs::exists(root + "/class/infiniband/uroce0"));
  EXPECT_FALSE(fs::exists(root + "/class/infiniband_verbs/uverbs7"));
  EXPECT_TRUE(fs::exists(root + "/class/infiniband/uroce1/node_guid"));
  EXPECT_TRUE(fs::exists(root + "/class/infiniband_verbs/abi_version"));
  EXPECT_EQ(remove_sysfs_device(root, "uroce1", 8), 0);
  remove_sysfs_skeleton(root);
  EXPECT_FALSE(fs::exists(root));
  EXPECT_TRUE(fs::exists(t.path()));
}

TEST(RemoveSysfsSkeleton_ForeignFile, LeftAlone) {
  TempDir t;
  const std::string root = t.path() + "/sysfs";
  std::string err;
  ASSERT_EQ(add_sysfs_device(root, dev0(), &err), 0);
  ASSERT_EQ(remove_sysfs_device(root, "uroce0", 7), 0);
  std::ofstream(root + "/class/keep") << "x";
  remove_sysfs_skeleton(root);
  EXPECT_TRUE(fs::exists(root + "/class/keep"));
  EXPECT_FALSE(fs::exists(root + "/class/infiniband_verbs"));
}

// mknod needs root (CAP_MKNOD); the nodes go into a temporary directory,
// never /dev/infiniband.
TEST(ClaimCdev_FirstFree, SkipsTakenNumbers) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (mknod)";
  TempDir t;
  const std::string dir = t.path() + "/infiniband";
  std::string err;
  std::uint32_t a = 99, b = 99;
  ASSERT_EQ(claim_cdev(dir, 0, &a, &err), 0) << err;
  ASSERT_EQ(claim_cdev(dir, 0, &b, &err), 0) << err;
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 1u);
  struct stat st;
  ASSERT_EQ(stat((dir + "/uverbs1").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(major(st.st_rdev), 1u);
  EXPECT_EQ(minor(st.st_rdev), 7u);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  EXPECT_EQ(release_cdev(dir, 0), 0);
  EXPECT_EQ(release_cdev(dir, 0), ENOENT);
  std::uint32_t c = 99;
  ASSERT_EQ(claim_cdev(dir, 0, &c, &err), 0);
  EXPECT_EQ(c, 0u);  // freed number reused
  EXPECT_EQ(release_cdev(dir, 0), 0);
  EXPECT_EQ(release_cdev(dir, 1), 0);
}

TEST(ReleaseCdev_NotOurs, LeftAlone) {
  TempDir t;
  std::ofstream(t.path() + "/uverbs3") << "regular file";
  EXPECT_EQ(release_cdev(t.path(), 3), EPERM);
  EXPECT_TRUE(fs::exists(t.path() + "/uverbs3"));
}

TEST(ClaimCdev_NoPermission, ExplainsWhatToDo) {
  if (geteuid() == 0) GTEST_SKIP() << "root may create anything";
  TempDir t;
  std::string err;
  std::uint32_t n = 0;
  const int rc = claim_cdev(t.path(), 0, &n, &err);
  EXPECT_EQ(rc, EPERM);
  EXPECT_EQ(err, "cannot create " + t.path() +
                     "/uverbs0: Operation not permitted (run uroced as root or with "
                     "CAP_MKNOD)");
}

TEST(SysfsTree_AddRemoveAll, CleansEverything) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (mknod)";
  TempDir t;
  const std::string root = t.path() + "/sysfs";
  const std::string dir = t.path() + "/infiniband";
  {
    SysfsTree tree(root, dir);
    std::string err;
    std::uint32_t n0 = 99, n1 = 99;
    SysfsDevice d1 = dev0();
    d1.ibdev = "uroce1";
    ASSERT_EQ(tree.add(dev0(), &n0, &err), 0) << err;
    ASSERT_EQ(tree.add(d1, &n1, &err), 0) << err;
    EXPECT_EQ(n0, 0u);
    EXPECT_EQ(n1, 1u);
    EXPECT_EQ(slurp(root + "/class/infiniband_verbs/uverbs1/ibdev"), "uroce1\n");
    EXPECT_TRUE(fs::exists(dir + "/uverbs1"));
    // A second device of the same name fails and leaves no node behind.
    std::uint32_t n2 = 99;
    EXPECT_EQ(tree.add(dev0(), &n2, &err), EEXIST);
    EXPECT_FALSE(fs::exists(dir + "/uverbs2"));
    tree.remove_all();
    EXPECT_FALSE(fs::exists(root));
    EXPECT_FALSE(fs::exists(dir + "/uverbs0"));
    EXPECT_FALSE(fs::exists(dir + "/uverbs1"));
  }
}

TEST(CleanupStaleTree_Crashed, NodesAndTreeGo) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (mknod)";
  TempDir t;
  const std::string root = t.path() + "/sysfs";
  const std::string dir = t.path() + "/infiniband";
  std::string err;
  std::uint32_t n = 0;
  ASSERT_EQ(claim_cdev(dir, 5, &n, &err), 0);
  SysfsDevice d = dev0();
  d.uverbs = n;
  ASSERT_EQ(add_sysfs_device(root, d, &err), 0);
  // A node that is not ours stays, even if a stale entry names it.
  std::ofstream(dir + "/uverbs9") << "not a node";
  SysfsDevice d9 = dev0();
  d9.ibdev = "uroce9";
  d9.uverbs = 9;
  ASSERT_EQ(add_sysfs_device(root, d9, &err), 0);
  EXPECT_EQ(cleanup_stale_tree(root, dir), 2);
  EXPECT_FALSE(fs::exists(root));
  EXPECT_FALSE(fs::exists(dir + "/uverbs" + std::to_string(n)));
  EXPECT_TRUE(fs::exists(dir + "/uverbs9"));
  EXPECT_EQ(cleanup_stale_tree(root, dir), 0);  // nothing left
}

}  // namespace
}  // namespace uroce::daemon
