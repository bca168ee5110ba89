#include "verbs-provider/context.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <rdma/ib_user_verbs.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <fstream>
#include <string>

#include "tests/verbs-provider/fake_daemon.h"

namespace uroce::provider {
namespace {

using testing::FakeContext;
using testing::FakeServer;
using testing::MiniDaemon;
using testing::Reply;
using testing::Request;

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/uroce_ctx_test.XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf " + path).c_str()); }
  std::string file(const char* name, const std::string& text) const {
    const std::string p = path + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  std::string path;
};

TEST(ReadFirstLine_Files, LineWithoutNewlineAndErrors) {
  TempDir dir;
  char buf[64];
  EXPECT_EQ(read_first_line(dir.file("a", "/run/uroce/uroced.sock\nrest\n").c_str(), buf,
                            sizeof(buf)),
            0);
  EXPECT_STREQ(buf, "/run/uroce/uroced.sock");
  EXPECT_EQ(read_first_line(dir.file("b", "").c_str(), buf, sizeof(buf)), ENOENT);
  EXPECT_EQ(read_first_line((dir.path + "/missing").c_str(), buf, sizeof(buf)), ENOENT);
  EXPECT_EQ(read_first_line(dir.file("c", std::string(100, 'x')).c_str(), buf, sizeof(buf)),
            ENAMETOOLONG);
}

TEST(OpenState_Hello, ConnectsSaysHelloAndWatchesTheDaemon) {
  TempDir dir;
  const std::string sock = dir.path + "/uroced.sock";
  MiniDaemon daemon;
  std::string hello_dev;
  int hello_fds = -1;
  FakeServer server(
      [&](const Request& r) {
        if (r.op == ctl::Op::kHello) {
          hello_dev = r.as<ctl::HelloReq>().ibdev;
          hello_fds = static_cast<int>(r.fds.size());
          // The async write end must not block the daemon.
          EXPECT_NE(fcntl(r.fds[0], F_GETFL) & O_NONBLOCK, 0);
        }
        return daemon(r);
      },
      sock.c_str());
  const std::string socket_file = dir.file("uroce_socket", sock + "\n");
  ContextState* st = nullptr;
  int async_rd = -1;
  ASSERT_EQ(open_state(socket_file.c_str(), "uroce7", &st, &async_rd), 0);
  EXPECT_EQ(hello_dev, "uroce7");
  EXPECT_EQ(hello_fds, 1);
  EXPECT_STREQ(st->hello.device.fw_ver, "fake 1.0");
  EXPECT_TRUE(st->watcher.running());
  // The daemon dies: DEVICE_FATAL arrives on the async fd, verbs fail EIO.
  server.hang_up();
  pollfd pf{async_rd, POLLIN, 0};
  ASSERT_EQ(poll(&pf, 1, 5000), 1);
  ib_uverbs_async_event_desc ev{};
  ASSERT_EQ(read(async_rd, &ev, sizeof(ev)), static_cast<ssize_t>(sizeof(ev)));
  EXPECT_EQ(ev.event_type, static_cast<std::uint32_t>(IBV_EVENT_DEVICE_FATAL));
  EXPECT_TRUE(st->dead());
  close_state(st);
  close(async_rd);
}

TEST(OpenState_Errors, MissingFileNoDaemonAndRefusedHello) {
  TempDir dir;
  ContextState* st = nullptr;
  int rd = -1;
  EXPECT_EQ(open_state((dir.path + "/none").c_str(), "uroce0", &st, &rd), ENOENT);
  const std::string nobody = dir.file("s1", dir.path + "/no.sock\n");
  EXPECT_EQ(open_state(nobody.c_str(), "uroce0", &st, &rd), ENOENT);
  EXPECT_EQ(open_state(nobody.c_str(), std::string(80, 'n').c_str(), &st, &rd), ENAMETOOLONG);

  const std::string sock = dir.path + "/refuse.sock";
  FakeServer server([](const Request&) { return Reply::error(ENODEV); }, sock.c_str());
  const std::string file = dir.file("s2", sock + "\n");
  EXPECT_EQ(open_state(file.c_str(), "uroce0", &st, &rd), ENODEV);
  EXPECT_EQ(st, nullptr);
}

TEST(QueryDeviceEx_Sizes, OldCallersGetOnlyTheBaseStruct) {
  FakeContext fc;
  struct {
    ibv_device_attr_ex attr;
    unsigned char guard[64];
  } buf;
  std::memset(&buf, 0xEE, sizeof(buf));
  // What ibv_query_device passes: only sizeof(ibv_device_attr) is ours.
  ASSERT_EQ(query_device_ex(fc.ctx(), nullptr, &buf.attr, sizeof(ibv_device_attr)), 0);
  EXPECT_STREQ(buf.attr.orig_attr.fw_ver, "fake 1.0");
  EXPECT_EQ(buf.attr.orig_attr.max_qp_wr, 16384);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&buf.attr);
  for (std::size_t i = sizeof(ibv_device_attr); i < sizeof(buf); ++i) {
    ASSERT_EQ(bytes[i], 0xEE) << i;
  }
}

TEST(QueryDeviceEx_Sizes, ExtendedFieldsAsRxeFillsThem) {
  FakeContext fc;
  ibv_device_attr_ex attr;
  std::memset(&attr, 0xEE, sizeof(attr));
  ASSERT_EQ(query_device_ex(fc.ctx(), nullptr, &attr, sizeof(attr)), 0);
  EXPECT_EQ(attr.device_cap_flags_ex, static_cast<std::uint64_t>(IBV_DEVICE_RC_RNR_NAK_GEN));
  EXPECT_EQ(attr.phys_port_cnt_ex, 1u);
  EXPECT_EQ(attr.comp_mask, 0u);
  // Pacing: every QP type uroce has, in the range the daemon accepts.
  EXPECT_EQ(attr.packet_pacing_caps.qp_rate_limit_min, ctl::kMinRateKbps);
  EXPECT_EQ(attr.packet_pacing_caps.qp_rate_limit_max, ctl::kMaxRateKbps);
  EXPECT_EQ(attr.packet_pacing_caps.supported_qpts,
            (1u << IBV_QPT_RC) | (1u << IBV_QPT_UC) | (1u << IBV_QPT_UD));
  // Everything uroce does not have is 0, as rxe reports it (no 0xEE left).
  EXPECT_EQ(attr.odp_caps.general_caps, 0u);
  EXPECT_EQ(attr.odp_caps.per_transport_caps.rc_odp_caps, 0u);
  EXPECT_EQ(attr.odp_caps.per_transport_caps.uc_odp_caps, 0u);
  EXPECT_EQ(attr.odp_caps.per_transport_caps.ud_odp_caps, 0u);
  EXPECT_EQ(attr.completion_timestamp_mask, 0u);
  EXPECT_EQ(attr.hca_core_clock, 0u);
  EXPECT_EQ(attr.tso_caps.max_tso, 0u);
  EXPECT_EQ(attr.tso_caps.supported_qpts, 0u);
  EXPECT_EQ(attr.rss_caps.supported_qpts, 0u);
  EXPECT_EQ(attr.rss_caps.max_rwq_indirection_tables, 0u);
  EXPECT_EQ(attr.rss_caps.max_rwq_indirection_table_size, 0u);
  EXPECT_EQ(attr.rss_caps.rx_hash_fields_mask, 0u);
  EXPECT_EQ(attr.rss_caps.rx_hash_function, 0u);
  EXPECT_EQ(attr.max_wq_type_rq, 0u);
  EXPECT_EQ(attr.raw_packet_caps, 0u);
  EXPECT_EQ(attr.tm_caps.max_rndv_hdr_size, 0u);
  EXPECT_EQ(attr.tm_caps.max_num_tags, 0u);
  EXPECT_EQ(attr.tm_caps.flags, 0u);
  EXPECT_EQ(attr.tm_caps.max_ops, 0u);
  EXPECT_EQ(attr.tm_caps.max_sge, 0u);
  EXPECT_EQ(attr.cq_mod_caps.max_cq_count, 0u);
  EXPECT_EQ(attr.cq_mod_caps.max_cq_period, 0u);
  EXPECT_EQ(attr.max_dm_size, 0u);
  EXPECT_EQ(attr.pci_atomic_caps.fetch_add, 0u);
  EXPECT_EQ(attr.pci_atomic_caps.swap, 0u);
  EXPECT_EQ(attr.pci_atomic_caps.compare_swap, 0u);
  EXPECT_EQ(attr.xrc_odp_caps, 0u);
}

// A caller that owns less than the whole struct (an older libibverbs) gets
// the fields that fit and nothing written past its size.
TEST(QueryDeviceEx_Sizes, PartialExtensionWritesOnlyWhatFits) {
  FakeContext fc;
  ibv_device_attr_ex attr;
  std::memset(&attr, 0xEE, sizeof(attr));
  const std::size_t owned = offsetof(ibv_device_attr_ex, tso_caps);
  ASSERT_EQ(query_device_ex(fc.ctx(), nullptr, &attr, owned), 0);
  EXPECT_EQ(attr.device_cap_flags_ex, static_cast<std::uint64_t>(IBV_DEVICE_RC_RNR_NAK_GEN));
  EXPECT_EQ(attr.hca_core_clock, 0u);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&attr);
  for (std::size_t i = owned; i < sizeof(attr); ++i) ASSERT_EQ(bytes[i], 0xEE) << i;
}

TEST(QueryDeviceEx_Errors, InputMaskShortBufferAndDeadDaemon) {
  FakeContext fc;
  ibv_device_attr_ex attr{};
  ibv_query_device_ex_input in{};
  in.comp_mask = 1;
  EXPECT_EQ(query_device_ex(fc.ctx(), &in, &attr, sizeof(attr)), EINVAL);
  EXPECT_EQ(query_device_ex(fc.ctx(), nullptr, &attr, sizeof(ibv_device_attr) - 1), EINVAL);
  fc.st()->ctl.mark_dead();
  EXPECT_EQ(query_device_ex(fc.ctx(), nullptr, &attr, sizeof(attr)), EIO);
}

TEST(QueryPort_Ports, PortOneFromTheDaemonOthersEinval) {
  FakeContext fc;
  ibv_port_attr attr{};
  ASSERT_EQ(query_port(fc.ctx(), 1, &attr), 0);
  EXPECT_EQ(attr.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(attr.gid_tbl_len, 16);
  EXPECT_EQ(query_port(fc.ctx(), 2, &attr), EINVAL);
  EXPECT_EQ(query_port(fc.ctx(), 0, &attr), EINVAL);
  fc.st()->ctl.mark_dead();
  EXPECT_EQ(query_port(fc.ctx(), 1, &attr), EIO);
}

}  // namespace
}  // namespace uroce::provider
