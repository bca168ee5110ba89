// Drives the ABI stub provider through stock libibverbs calls that ibv_devinfo
// does not make: the old ibv_query_device (which hands the provider a short
// attribute buffer), alloc/dealloc_pd, query_rt_values, and verbs the stub
// leaves unset, which must reach libibverbs' EOPNOTSUPP defaults. A member
// misplaced in our verbs_context_ops would route one of these calls to the
// wrong function.
//
//   stub_probe DEVICE     (environment as set by stub_devinfo.sh)
//
// Prints one line per check; exits 1 on the first failure.
#include <infiniband/verbs.h>
#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "FAIL: %s (errno %d: %s)\n", what, errno,
               std::strerror(errno));
  return 1;
}

int probe(ibv_context* ctx) {
  ibv_device_attr dev{};
  if (ibv_query_device(ctx, &dev) != 0) return fail("ibv_query_device");
  if (dev.phys_port_cnt != 1 || dev.max_pd == 0)
    return fail("ibv_query_device values");
  std::printf("query_device: ports=%u max_pd=%d fw=%s\n", dev.phys_port_cnt,
              dev.max_pd, dev.fw_ver);

  ibv_port_attr port{};
  if (ibv_query_port(ctx, 1, &port) != 0) return fail("ibv_query_port 1");
  if (port.state != IBV_PORT_ACTIVE || port.link_layer != IBV_LINK_LAYER_ETHERNET)
    return fail("ibv_query_port values");
  const int gid_tbl_len = port.gid_tbl_len;
  // Verbs return a positive errno value; the stub has one port.
  if (ibv_query_port(ctx, 2, &port) != EINVAL)
    return fail("ibv_query_port 2 should be EINVAL");
  std::printf("query_port: active, ethernet, gid_tbl_len=%d; port 2 refused\n",
              gid_tbl_len);

  ibv_gid gid{};
  if (ibv_query_gid(ctx, 1, 0, &gid) != 0 || gid.raw[0] != 0xfe || gid.raw[1] != 0x80)
    return fail("ibv_query_gid 0 (sysfs fallback)");
  std::printf("query_gid: index 0 is link-local\n");

  if (fcntl(ctx->async_fd, F_GETFD) < 0) return fail("async_fd not open");
  if (ctx->num_comp_vectors != 1) return fail("num_comp_vectors");

  ibv_pd* a = ibv_alloc_pd(ctx);
  ibv_pd* b = ibv_alloc_pd(ctx);
  if (a == nullptr || b == nullptr) return fail("ibv_alloc_pd");
  if (a->context != ctx || b->context != ctx || a->handle == b->handle)
    return fail("ibv_alloc_pd values");
  std::printf("alloc_pd: handles %u and %u\n", a->handle, b->handle);

  errno = 0;
  if (ibv_create_cq(ctx, 16, nullptr, nullptr, 0) != nullptr || errno != EOPNOTSUPP)
    return fail("ibv_create_cq should be EOPNOTSUPP");
  char buf[64];
  errno = 0;
  // ibv_reg_mr is a macro that ANDs the flags with another enum type; an int
  // keeps clang's C++20 enum-enum deprecation warning out.
  const int access = IBV_ACCESS_LOCAL_WRITE;
  if (ibv_reg_mr(a, buf, sizeof(buf), access) != nullptr ||
      errno != EOPNOTSUPP)
    return fail("ibv_reg_mr should be EOPNOTSUPP");
  std::printf("unset verbs: create_cq and reg_mr give EOPNOTSUPP\n");

  // The stub's query_rt_values sits right after the op rdma-core 36 inserted
  // mid-table: it answers only if our table has that insertion too.
  ibv_values_ex values{};
  values.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
  const int rt = ibv_query_rt_values_ex(ctx, &values);
  if (rt != 0 || values.comp_mask != IBV_VALUES_MASK_RAW_CLOCK) {
    errno = rt;
    return fail("ibv_query_rt_values_ex (ops table layout)");
  }
  std::printf("query_rt_values: raw clock %lld.%09ld\n",
              static_cast<long long>(values.raw_clock.tv_sec),
              values.raw_clock.tv_nsec);

  if (ibv_dealloc_pd(b) != 0 || ibv_dealloc_pd(a) != 0) return fail("ibv_dealloc_pd");
  std::printf("dealloc_pd: ok\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: stub_probe DEVICE\n");
    return 2;
  }
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) return fail("ibv_get_device_list");
  ibv_device* dev = nullptr;
  for (int i = 0; i < n; ++i) {
    if (std::strcmp(ibv_get_device_name(list[i]), argv[1]) == 0) dev = list[i];
  }
  if (dev == nullptr) {
    ibv_free_device_list(list);
    return fail("device not listed");
  }
  ibv_context* ctx = ibv_open_device(dev);
  ibv_free_device_list(list);
  if (ctx == nullptr) return fail("ibv_open_device");
  const int rc = probe(ctx);
  if (ibv_close_device(ctx) != 0) return fail("ibv_close_device");
  if (rc == 0) std::printf("close_device: ok\n");
  return rc;
}
