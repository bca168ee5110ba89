#include "verbs-provider/context.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "datapath/base/page_touch.h"
#include "verbs-provider/embedded.h"
#include "verbs-provider/ops.h"

namespace uroce::provider {

ContextState::~ContextState() {
  watcher.stop();
  if (async_write_fd >= 0) ::close(async_write_fd);
}

int read_first_line(const char* path, char* buf, std::size_t len) {
  if (len == 0) return EINVAL;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  std::size_t n = 0;
  while (n < len - 1) {
    const ssize_t r = ::read(fd, buf + n, len - 1 - n);
    if (r < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return err;
    }
    if (r == 0) break;
    n += static_cast<std::size_t>(r);
  }
  ::close(fd);
  buf[n] = '\0';
  char* nl = std::strchr(buf, '\n');
  if (nl != nullptr) *nl = '\0';
  else if (n == len - 1) return ENAMETOOLONG;
  return buf[0] == '\0' ? ENOENT : 0;
}

int locate_in_arena(ContextState* st, std::uint64_t offset, std::uint64_t bytes, void** addr) {
  const shm::ShmStatus ms = st->arena.locate(offset, bytes, addr);
  if (ms.ok()) {
    // The ring's pages made and mapped into this side now, not on the data
    // path's first lap round the ring (a fault per page, docs/first-lap.md):
    // an SQ's or RQ's, which this side writes, charged to this process;
    // a CQ's, which the daemon made already, only mapped. Offsets are
    // page-aligned.
    (void)base::populate_pages(*addr, bytes, base::base_page_bytes());
    return 0;
  }
  return ms.err == shm::ShmError::kMap && ms.sys_errno != 0 ? ms.sys_errno : EPROTO;
}

int attach_arena(ContextState* st, int arena_fd) {
  const ctl::HelloRep& h = st->hello;
  shm::DoorbellGeometry g;
  if (shm::make_doorbell_geometry(h.doorbell_count, &g) != shm::DoorbellError::kOk ||
      g.bytes() > h.doorbell_bytes) {
    ::close(arena_fd);
    return EPROTO;
  }
  const shm::ShmStatus ms = st->arena.adopt(arena_fd, h.arena_chunk_bytes, h.arena_max_chunks);
  if (!ms.ok()) return EPROTO;
  void* page = nullptr;
  if (int rc = locate_in_arena(st, h.doorbell_offset, h.doorbell_bytes, &page); rc != 0) return rc;
  if (st->bells.attach(page, h.doorbell_bytes, g) != shm::DoorbellError::kOk) return EPROTO;
  return 0;
}

int open_state(const char* socket_file, const char* ibdev, ContextState** out, int* async_read_fd) {
  char sock_path[256];
  int rc = read_first_line(socket_file, sock_path, sizeof(sock_path));
  if (rc != 0) return rc;
  if (std::strlen(ibdev) >= ctl::kNameBytes) return ENAMETOOLONG;

  ContextState* st = make_object<ContextState>();
  if (st == nullptr) return ENOMEM;
  // The device's directory: embedded mode names its engine there.
  char dir[PATH_MAX];
  std::snprintf(dir, sizeof(dir), "%s", socket_file);
  if (char* slash = std::strrchr(dir, '/'); slash != nullptr) *slash = '\0';
  int efd = -1;
  rc = embedded_connect(dir, &efd, &st->progress);
  if (rc == 0) st->ctl.adopt(efd);
  else if (rc == ENOENT) rc = st->ctl.connect(sock_path);
  int p[2] = {-1, -1};
  if (rc == 0 && ::pipe2(p, O_CLOEXEC) != 0) rc = errno;
  if (rc == 0) {
    // The daemon writes events without ever blocking; a full pipe drops.
    ::fcntl(p[1], F_SETFL, O_NONBLOCK);
    st->async_write_fd = p[1];
    ctl::HelloReq req{};
    std::memcpy(req.ibdev, ibdev, std::strlen(ibdev));
    const int fds[1] = {p[1]};
    int arena_fd = -1;
    rc = st->ctl.call<ctl::Op::kHello>(req, &st->hello, fds, {&arena_fd, 1}, 1);
    if (rc == 0) rc = attach_arena(st, arena_fd);
  }
  if (rc == 0) rc = st->watcher.start(&st->ctl, st->async_write_fd);
  if (rc != 0) {
    if (p[0] >= 0) ::close(p[0]);
    free_object(st);
    return rc;
  }
  *out = st;
  *async_read_fd = p[0];
  return 0;
}

void close_state(ContextState* st) { free_object(st); }

verbs_context* alloc_context(ibv_device* dev, int cmd_fd, void* /*private_data*/) noexcept {
  auto* uctx =
      verbs_abi::alloc_driver_context<UroceContext>(dev, cmd_fd, offsetof(UroceContext, vctx));
  if (uctx == nullptr) return nullptr;
  char socket_file[IBV_SYSFS_PATH_MAX + 32];
  std::snprintf(socket_file, sizeof(socket_file), "%s/device/uroce_socket", dev->ibdev_path);
  int async_rd = -1;
  const int rc = open_state(socket_file, dev->name, &uctx->st, &async_rd);
  if (rc != 0) {
    verbs_abi::verbs_uninit_context(&uctx->vctx);
    std::free(uctx);
    errno = rc;
    return nullptr;
  }
  verbs_abi::verbs_set_ops(&uctx->vctx, &kUroceOps);
  uctx->vctx.context.async_fd = async_rd;
  uctx->vctx.context.num_comp_vectors = 1;
  return &uctx->vctx;
}

void free_context(ibv_context* ctx) noexcept {
  UroceContext* uctx = to_uctx(ctx);
  // Stops the watcher, then closes the socket: the daemon reclaims whatever
  // the application left behind.
  close_state(uctx->st);
  uctx->st = nullptr;
  verbs_abi::verbs_uninit_context(&uctx->vctx);  // closes cmd_fd and async_fd
  std::free(uctx);
}

int query_device_ex(ibv_context* ctx, const ibv_query_device_ex_input* in, ibv_device_attr_ex* attr,
                    std::size_t attr_size) noexcept {
  if (in != nullptr && in->comp_mask != 0) return EINVAL;
  if (attr_size < sizeof(ibv_device_attr)) return EINVAL;
  ContextState* st = state_of(ctx);
  if (st->dead()) return EIO;
  // Only what the caller owns: the old ibv_query_device passes exactly
  // sizeof(ibv_device_attr).
  std::memset(attr, 0, attr_size);
  attr->orig_attr = st->hello.device;
  // The extended part as rdma-core and the kernel fill it for rxe
  // (ibv_cmd_query_device_any, ib_uverbs_ex_query_device): the capability
  // flags again, 64-bit, and the port count. The rest stays 0 because uroce
  // has none of it, as rxe has none: no ODP (odp_caps, xrc_odp_caps), no
  // completion timestamps (completion_timestamp_mask, hca_core_clock), no
  // raw packet QPs, WQs or RSS (tso_caps, rss_caps, max_wq_type_rq,
  // raw_packet_caps), no tag matching (tm_caps), no CQ moderation
  // (ibv_modify_cq: cq_mod_caps), no device memory (max_dm_size), no PCIe
  // atomics (pci_atomic_caps), and comp_mask 0. A non-zero input comp_mask
  // is EINVAL, as in libibverbs' ibv_query_device_ex and rxe's path.
  auto fits = [&](std::size_t off, std::size_t sz) { return off + sz <= attr_size; };
  if (fits(offsetof(ibv_device_attr_ex, device_cap_flags_ex), sizeof(std::uint64_t))) {
    attr->device_cap_flags_ex = st->hello.device.device_cap_flags;
  }
  if (fits(offsetof(ibv_device_attr_ex, phys_port_cnt_ex), sizeof(std::uint32_t))) {
    attr->phys_port_cnt_ex = st->hello.device.phys_port_cnt;
  }
  // Unlike rxe, every QP type can be paced (ibv_modify_qp_rate_limit,
  // IBV_QP_RATE_LIMIT), in the range the daemon accepts.
  if (fits(offsetof(ibv_device_attr_ex, packet_pacing_caps), sizeof(ibv_packet_pacing_caps))) {
    attr->packet_pacing_caps.qp_rate_limit_min = ctl::kMinRateKbps;
    attr->packet_pacing_caps.qp_rate_limit_max = ctl::kMaxRateKbps;
    attr->packet_pacing_caps.supported_qpts =
        (1u << IBV_QPT_RC) | (1u << IBV_QPT_UC) | (1u << IBV_QPT_UD);
  }
  return 0;
}

int query_port(ibv_context* ctx, std::uint8_t port, ibv_port_attr* attr) noexcept {
  ContextState* st = state_of(ctx);
  if (port != 1) return EINVAL;
  ctl::QueryPortReq req{};
  req.port_num = port;
  ctl::QueryPortRep rep{};
  const int rc = st->ctl.call<ctl::Op::kQueryPort>(req, &rep);
  if (rc != 0) return rc;
  *attr = rep.attr;
  return 0;
}

}  // namespace uroce::provider
