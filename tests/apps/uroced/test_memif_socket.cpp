// Which ports are memif clients, and whether their server listens
// (memif_socket.h): the devargs as users write them, and real Unix sockets
// bound, listening and gone, read back through this process's
// /proc/net/unix.
#include "apps/uroced/memif_socket.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace uroce::daemon {
namespace {

PortSpec vdev(const std::string& name, const std::string& args) {
  return PortSpec{PortKind::kVdev, name, args};
}

TEST(MemifClientSocket, ClientWithAFileSocket) {
  auto s = memif_client_socket(
      vdev("net_memif0", "role=client,socket=/tmp/m.sock,socket-abstract=no,id=0,bsize=8192"));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->path, "/tmp/m.sock");
  EXPECT_FALSE(s->abstract);
}

TEST(MemifClientSocket, DefaultsAreThePmds) {
  auto s = memif_client_socket(vdev("net_memif3", "role=slave"));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->path, "/run/memif.sock");
  EXPECT_TRUE(s->abstract);
}

TEST(MemifClientSocket, ServersAndOtherPortsAreNot) {
  EXPECT_FALSE(memif_client_socket(vdev("net_memif0", "role=server,socket=/tmp/m.sock")));
  // The PMD's default role is server.
  EXPECT_FALSE(memif_client_socket(vdev("net_memif0", "socket=/tmp/m.sock")));
  EXPECT_FALSE(memif_client_socket(vdev("net_af_packet0", "iface=role=client")));
  EXPECT_FALSE(memif_client_socket(PortSpec{PortKind::kRing, "net_memif0", "role=client"}));
}

// A Unix stream socket bound at `path` (abstract when `abstract`), listening
// when `listen_too`. Closed by the destructor.
class BoundSocket {
 public:
  BoundSocket(const std::string& path, bool abstract, bool listen_too) {
    fd_ = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    // An abstract name starts with a NUL byte; /proc lists it with '@'.
    std::memcpy(a.sun_path + (abstract ? 1 : 0), path.data(), path.size());
    const socklen_t len =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + (abstract ? 1 : 0));
    ok_ = fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&a), len) == 0 &&
          (!listen_too || listen(fd_, 1) == 0);
  }
  ~BoundSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return ok_; }

 private:
  int fd_ = -1;
  bool ok_ = false;
};

class MemifListening : public ::testing::Test {
 protected:
  MemifListening() {
    char tmpl[] = "/tmp/uroce_test_memif.XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~MemifListening() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string dir_;
};

TEST_F(MemifListening, FileSocketOnlyWhileListening) {
  const MemifSocket s{dir_ + "/m.sock", false};
  EXPECT_FALSE(memif_socket_listening(s));
  {
    BoundSocket bound(s.path, false, false);
    ASSERT_TRUE(bound.ok());
    // Bound, not listening yet: a connect would be refused.
    EXPECT_FALSE(memif_socket_listening(s));
  }
  {
    std::filesystem::remove(s.path);
    BoundSocket server(s.path, false, true);
    ASSERT_TRUE(server.ok());
    EXPECT_TRUE(memif_socket_listening(s));
    // The same name in the abstract namespace is another socket.
    EXPECT_FALSE(memif_socket_listening(MemifSocket{s.path, true}));
  }
  // The file a closed server leaves behind is not a listener.
  ASSERT_TRUE(std::filesystem::exists(s.path));
  EXPECT_FALSE(memif_socket_listening(s));
}

TEST_F(MemifListening, AbstractSocket) {
  const MemifSocket s{dir_ + "/abstract.sock", true};
  EXPECT_FALSE(memif_socket_listening(s));
  BoundSocket server(s.path, true, true);
  ASSERT_TRUE(server.ok());
  EXPECT_TRUE(memif_socket_listening(s));
  EXPECT_FALSE(memif_socket_listening(MemifSocket{s.path, false}));
}

TEST_F(MemifListening, UnreadableTableSaysNo) {
  const MemifSocket s{dir_ + "/m.sock", false};
  BoundSocket server(s.path, false, true);
  ASSERT_TRUE(server.ok());
  EXPECT_FALSE(memif_socket_listening(s, dir_ + "/no-such-table"));
  std::ofstream(dir_ + "/table") << "Num RefCount Protocol Flags Type St Inode Path\n"
                                 << "0000: 00000002 00000000 00010000 0005 01 42 " << s.path
                                 << "\n";
  EXPECT_TRUE(memif_socket_listening(s, dir_ + "/table"));
}

}  // namespace
}  // namespace uroce::daemon
