// dv.cpp's exported entry points, called through liburoce.so.1 as a program
// linked with -luroce calls them: the argument and device checks they make
// before the provider's code (test_dv_qp.cpp tests that code), and the
// header's inline DC setters.
#include <gtest/gtest.h>
#include <infiniband/uroce_dv.h>

#include <cerrno>
#include <cstddef>

#include "verbs-provider/driver_abi.h"

extern "C" {
extern const std::size_t uroce_c_dv_qp_init_attr_size;
extern const std::size_t uroce_c_dv_dc_init_attr_size;
extern const std::size_t uroce_c_dv_dc_init_attr_key;
extern const std::size_t uroce_c_dv_qp_init_attr_send_ops;
extern const std::size_t uroce_c_dv_qp_ex_size;
extern const std::size_t uroce_c_dv_context_size;
}

namespace {

TEST(UroceDvH_CAbi, CAndCxxAgree) {
  EXPECT_EQ(sizeof(uroce_dv_qp_init_attr), uroce_c_dv_qp_init_attr_size);
  EXPECT_EQ(sizeof(uroce_dv_dc_init_attr), uroce_c_dv_dc_init_attr_size);
  EXPECT_EQ(offsetof(uroce_dv_dc_init_attr, dct_access_key), uroce_c_dv_dc_init_attr_key);
  EXPECT_EQ(offsetof(uroce_dv_qp_init_attr, send_ops_flags), uroce_c_dv_qp_init_attr_send_ops);
  EXPECT_EQ(sizeof(uroce_dv_qp_ex), uroce_c_dv_qp_ex_size);
  EXPECT_EQ(sizeof(uroce_dv_context), uroce_c_dv_context_size);
}

// A context of a device another provider allocated: its ops are not ours.
struct OtherDevice {
  OtherDevice() { ctx.device = &dev.device; }
  uroce::verbs_abi::verbs_device dev{};
  ibv_context ctx{};
};

TEST(UroceDvIsSupported_Other, False) {
  OtherDevice o;
  EXPECT_FALSE(uroce_dv_is_supported(&o.dev.device));
  EXPECT_FALSE(uroce_dv_is_supported(nullptr));
}

TEST(UroceDvQueryDevice_Errors, OtherDeviceEopnotsuppNullEinval) {
  OtherDevice o;
  uroce_dv_context c{};
  c.comp_mask = UROCE_DV_CONTEXT_MASK_DCI_STREAMS;
  EXPECT_EQ(uroce_dv_query_device(&o.ctx, &c), EOPNOTSUPP);
  EXPECT_EQ(c.dci_streams_caps.max_log_num_concurent, 0u);
  EXPECT_EQ(uroce_dv_query_device(nullptr, &c), EINVAL);
  EXPECT_EQ(uroce_dv_query_device(&o.ctx, nullptr), EINVAL);
}

TEST(UroceDvCreateQp_Errors, OtherDeviceEopnotsuppNullEinval) {
  OtherDevice o;
  ibv_qp_init_attr_ex a{};
  a.qp_type = IBV_QPT_DRIVER;
  uroce_dv_qp_init_attr d{};
  d.comp_mask = UROCE_DV_QP_INIT_ATTR_MASK_DC;
  d.dc_init_attr.dc_type = UROCE_DV_DCTYPE_DCI;
  errno = 0;
  EXPECT_EQ(uroce_dv_create_qp(&o.ctx, &a, &d), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  errno = 0;
  EXPECT_EQ(uroce_dv_create_qp(nullptr, &a, &d), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(uroce_dv_create_qp(&o.ctx, nullptr, &d), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(uroce_dv_create_qp(&o.ctx, &a, nullptr), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

TEST(UroceDvQpExFromIbvQpEx_Errors, OtherDeviceEopnotsuppNullEinval) {
  OtherDevice o;
  ibv_qp_ex x{};
  x.qp_base.context = &o.ctx;
  errno = 0;
  EXPECT_EQ(uroce_dv_qp_ex_from_ibv_qp_ex(&x), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  x.qp_base.context = nullptr;
  errno = 0;
  EXPECT_EQ(uroce_dv_qp_ex_from_ibv_qp_ex(&x), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  errno = 0;
  EXPECT_EQ(uroce_dv_qp_ex_from_ibv_qp_ex(nullptr), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

// The header's static inline setters call the QP's function pointers with
// their arguments unchanged (stream 0 for the one without a stream).
struct Seen {
  uroce_dv_qp_ex* qp = nullptr;
  ibv_ah* ah = nullptr;
  std::uint32_t dctn = 0;
  std::uint64_t key = 0;
  int stream = -1;
  int calls = 0;
};
Seen seen;

void record_addr(uroce_dv_qp_ex* qp, ibv_ah* ah, std::uint32_t dctn, std::uint64_t key) {
  seen = {qp, ah, dctn, key, -1, seen.calls + 1};
}
void record_stream(uroce_dv_qp_ex* qp, ibv_ah* ah, std::uint32_t dctn, std::uint64_t key,
                   std::uint16_t stream) {
  seen = {qp, ah, dctn, key, stream, seen.calls + 1};
}

TEST(UroceDvWrSetDcAddr_Inline, CallsThroughTheQpsPointers) {
  uroce_dv_qp_ex x{};
  x.wr_set_dc_addr = record_addr;
  x.wr_set_dc_addr_stream = record_stream;
  auto* ah = reinterpret_cast<ibv_ah*>(0x1000);
  uroce_dv_wr_set_dc_addr(&x, ah, 0xABCDEF, 0x1122334455667788ull);
  EXPECT_EQ(seen.calls, 1);
  EXPECT_EQ(seen.qp, &x);
  EXPECT_EQ(seen.ah, ah);
  EXPECT_EQ(seen.dctn, 0xABCDEFu);
  EXPECT_EQ(seen.key, 0x1122334455667788ull);
  EXPECT_EQ(seen.stream, -1);
  uroce_dv_wr_set_dc_addr_stream(&x, ah, 7, 8, 15);
  EXPECT_EQ(seen.calls, 2);
  EXPECT_EQ(seen.dctn, 7u);
  EXPECT_EQ(seen.key, 8u);
  EXPECT_EQ(seen.stream, 15);
}

}  // namespace
