// ABI proof, NOT the uroce provider: a minimal liburoce-rdmav34.so that stock
// libibverbs 44 loads, matches to a device of the fake sysfs tree written by
// uroce-sysfs.sh, and opens. It answers query_device(_ex), query_port,
// alloc/dealloc_pd (and query_rt_values, a layout sentinel) with fixed,
// made-up values and talks to no daemon; every
// other verb gets libibverbs' "not supported" default. Its only purpose is to
// show that verbs-provider/driver_abi.h matches the library we run against
// (tests/verbs-provider/stub_devinfo.sh runs ibv_devices and ibv_devinfo -v).
//
// No exception may cross into libibverbs (C frames): the library is built
// without exceptions and every callback is noexcept.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "verbs-provider/driver_abi.h"

namespace uroce::verbs_stub {
namespace {

using namespace uroce::verbs_abi;

// Matching: uroce devices carry this modalias in class/infiniband/<dev>/
// device/modalias (written by uroce-sysfs.sh). A modalias match, unlike a
// name match, cannot claim a kernel device that happens to be called uroce*.
constexpr char kModaliasPattern[] = "uroce:*";

// The uverbs ABI a uroce device advertises in uverbsN/abi_version. There is no
// kernel driver behind it, so this is our own number, not a kernel's.
constexpr std::uint32_t kUverbsAbi = 1;

constexpr int kPortCount = 1;

struct StubContext {
  verbs_context vctx;
  int async_write_fd;       // write end of the pipe whose read end is async_fd
  std::uint32_t gid_count;  // files in ports/1/gids: the GID table length
  std::uint32_t next_pd_handle;
};

StubContext* to_stub(ibv_context* ctx) {
  return reinterpret_cast<StubContext*>(
      reinterpret_cast<char*>(ctx) - offsetof(StubContext, vctx) -
      offsetof(verbs_context, context));
}

// libibverbs reads GIDs from sysfs itself, one file per table entry, and
// fails ibv_devinfo if gid_tbl_len names an entry without a file: report
// exactly as many entries as there are files.
std::uint32_t count_gid_files(const ibv_device* dev) {
  char path[IBV_SYSFS_PATH_MAX + 32];
  std::snprintf(path, sizeof(path), "%s/ports/1/gids", dev->ibdev_path);
  DIR* dir = opendir(path);
  if (dir == nullptr) return 0;
  std::uint32_t n = 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n;
}

int stub_query_device_ex(ibv_context* ctx, const ibv_query_device_ex_input* in,
                         ibv_device_attr_ex* attr,
                         std::size_t attr_size) noexcept {
  if (in != nullptr && in->comp_mask != 0) return EINVAL;
  if (attr_size < sizeof(ibv_device_attr)) return EINVAL;
  std::memset(attr, 0, attr_size);
  ibv_device_attr& a = attr->orig_attr;
  std::snprintf(a.fw_ver, sizeof(a.fw_ver), "0.0.0-abi-stub");
  a.node_guid = ibv_get_device_guid(ctx->device);
  a.sys_image_guid = a.node_guid;
  a.max_mr_size = 1ull << 32;
  a.page_size_cap = 4096;
  a.vendor_id = 0xffffff;  // no IEEE OUI: like rxe, "none"
  a.max_qp = 64;
  a.max_qp_wr = 1024;
  a.max_sge = 4;
  a.max_cq = 64;
  a.max_cqe = 4096;
  a.max_mr = 64;
  a.max_pd = 64;
  a.max_pkeys = 1;
  a.phys_port_cnt = kPortCount;
  return 0;
}

int stub_query_port(ibv_context* ctx, std::uint8_t port,
                    ibv_port_attr* attr) noexcept {
  if (port < 1 || port > kPortCount) return EINVAL;
  std::memset(attr, 0, sizeof(*attr));
  attr->state = IBV_PORT_ACTIVE;
  attr->max_mtu = IBV_MTU_4096;
  attr->active_mtu = IBV_MTU_1024;
  attr->gid_tbl_len = static_cast<int>(to_stub(ctx)->gid_count);
  attr->max_msg_sz = 1u << 23;
  attr->pkey_tbl_len = 1;
  attr->max_vl_num = 1;     // VL0 only
  attr->active_width = 1;   // 1X
  attr->active_speed = 1;   // 2.5 Gb/s
  attr->phys_state = 5;     // LinkUp
  attr->link_layer = IBV_LINK_LAYER_ETHERNET;
  return 0;
}

ibv_pd* stub_alloc_pd(ibv_context* ctx) noexcept {
  auto* pd = static_cast<ibv_pd*>(std::calloc(1, sizeof(ibv_pd)));
  if (pd == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  pd->context = ctx;
  pd->handle = to_stub(ctx)->next_pd_handle++;
  return pd;
}

int stub_dealloc_pd(ibv_pd* pd) noexcept {
  std::free(pd);
  return 0;
}

// A layout sentinel more than a feature: query_rt_values is the first member
// after query_qp_data_in_order, the one rdma-core 36 inserted mid-table. If
// our table and libibverbs' disagree about that insertion, this lands in the
// wrong slot and stub_probe sees EOPNOTSUPP instead of a clock.
int stub_query_rt_values(ibv_context* /*ctx*/, ibv_values_ex* values) noexcept {
  std::uint32_t filled = 0;
  if ((values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) != 0) {
    clock_gettime(CLOCK_MONOTONIC, &values->raw_clock);
    filled |= IBV_VALUES_MASK_RAW_CLOCK;
  }
  values->comp_mask = filled;
  return 0;
}

void stub_free_context(ibv_context* ctx) noexcept {
  StubContext* stub = to_stub(ctx);
  close(stub->async_write_fd);
  verbs_uninit_context(&stub->vctx);  // closes cmd_fd and async_fd
  std::free(stub);                    // libibverbs calloc'ed it
}

// Designated initialisers must follow member order; these are in it.
constexpr verbs_context_ops kStubOps = {
    .alloc_pd = stub_alloc_pd,
    .dealloc_pd = stub_dealloc_pd,
    .free_context = stub_free_context,
    .query_device_ex = stub_query_device_ex,
    .query_port = stub_query_port,
    .query_rt_values = stub_query_rt_values,
};

verbs_context* stub_alloc_context(ibv_device* dev, int cmd_fd,
                                  void* /*private_data*/) noexcept {
  auto* stub = alloc_driver_context<StubContext>(dev, cmd_fd,
                                                 offsetof(StubContext, vctx));
  if (stub == nullptr) return nullptr;
  verbs_set_ops(&stub->vctx, &kStubOps);
  stub->vctx.context.num_comp_vectors = 1;
  // Without a kernel, libibverbs' own async fd allocation would fail and
  // ibv_open_device with it; a pipe gives ibv_get_async_event a readable fd
  // (16-byte records) that simply never has an event here.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    const int err = errno;
    verbs_uninit_context(&stub->vctx);
    std::free(stub);
    errno = err;
    return nullptr;
  }
  stub->vctx.context.async_fd = fds[0];
  stub->async_write_fd = fds[1];
  stub->gid_count = count_gid_files(dev);
  stub->next_pd_handle = 1;
  return &stub->vctx;
}

verbs_device* stub_alloc_device(verbs_sysfs_dev* /*sysfs_dev*/) noexcept {
  // Zeroed, as libibverbs requires; it fills the ibv_device part itself.
  return static_cast<verbs_device*>(std::calloc(1, sizeof(verbs_device)));
}

void stub_uninit_device(verbs_device* dev) noexcept { std::free(dev); }

constexpr verbs_match_ent kMatchTable[] = {
    {.driver_data = nullptr, .u = {.modalias = kModaliasPattern},
     .kind = kMatchModalias},
    {},
};

constexpr verbs_device_ops kDeviceOps = {
    .name = "uroce",
    .match_min_abi_version = kUverbsAbi,
    .match_max_abi_version = kUverbsAbi,
    .match_table = kMatchTable,
    .alloc_context = stub_alloc_context,
    .alloc_device = stub_alloc_device,
    .uninit_device = stub_uninit_device,
};

// dlopen runs this; libibverbs then tries every registered driver on the
// devices it has not matched yet.
__attribute__((constructor)) void register_stub_driver() {
  verbs_register_driver_34(&kDeviceOps);
}

}  // namespace
}  // namespace uroce::verbs_stub
