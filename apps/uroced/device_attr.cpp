#include "apps/uroced/device_attr.h"

#include <cstdio>
#include <cstring>

#include "apps/uroced/sysfs_tree.h"
#include "datapath/engine/mcast_table.h"

namespace uroce::daemon {

ibv_device_attr device_attr(const Device& dev) {
  const engine::VnicConfig& c = dev.config();
  ibv_device_attr a;
  std::memset(&a, 0, sizeof(a));
  std::snprintf(a.fw_ver, sizeof(a.fw_ver), "uroce %s", UROCE_VERSION);
  a.node_guid = node_guid_be(c.mac);
  a.sys_image_guid = a.node_guid;
  a.max_mr_size = kMaxMrBytes;
  a.page_size_cap = kPageSize;
  a.vendor_id = kVendorId;
  a.vendor_part_id = 0;
  a.hw_ver = 0;
  a.max_qp = static_cast<int>(c.max_qps);
  a.max_qp_wr = static_cast<int>(kMaxQpWr);
  // Only what the transport does: RNR NAKs, and a system image GUID.
  a.device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SYS_IMAGE_GUID;
  // Memory windows of types 1 and 2B, LOCAL_INV and SEND_WITH_INV of type-2
  // windows (docs/memory-windows.md): what verbs programs reach of the base
  // memory management extensions, as rxe reports them.
  a.device_cap_flags |=
      IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_MEM_MGT_EXTENSIONS;
  a.max_sge = static_cast<int>(kMaxSge);
  a.max_sge_rd = static_cast<int>(kMaxSge);
  a.max_cq = static_cast<int>(c.max_cqs);
  a.max_cqe = static_cast<int>(kMaxCqe);
  a.max_mr = static_cast<int>(c.max_mrs);
  a.max_mw = static_cast<int>(c.max_mws);
  a.max_pd = static_cast<int>(kMaxPd);
  a.max_qp_rd_atom = static_cast<int>(kMaxRdAtom);
  a.max_qp_init_rd_atom = static_cast<int>(kMaxRdAtom);
  a.max_res_rd_atom = static_cast<int>(c.max_qps * kMaxRdAtom);
  a.atomic_cap = IBV_ATOMIC_HCA;
  a.max_ah = static_cast<int>(c.max_ahs);
  // UD multicast (docs/multicast.md), rxe's limits.
  a.max_mcast_grp = static_cast<int>(engine::kMaxMcastGroups);
  a.max_mcast_qp_attach = static_cast<int>(engine::kMaxMcastQpAttach);
  a.max_total_mcast_qp_attach = static_cast<int>(engine::kMaxTotalMcastQpAttach);
  a.max_srq = static_cast<int>(c.max_srqs);
  a.max_srq_wr = static_cast<int>(kMaxSrqWr);
  a.max_srq_sge = static_cast<int>(kMaxSge);
  a.max_pkeys = 1;
  a.local_ca_ack_delay = 15;
  a.phys_port_cnt = 1;
  // Also implemented (device_cap_flags_ex repeats them): PORT_ACTIVE and
  // PORT_ERR events when the link comes and goes (Server::check_links), and
  // address vectors that must name port 1 (an AH or a UD QP's path on any
  // other port is refused with EINVAL).
  a.device_cap_flags |= IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_UD_AV_PORT_ENFORCE;
  return a;
}

ibv_port_attr port_attr(const Device& dev) {
  ibv_port_attr a;
  std::memset(&a, 0, sizeof(a));
  const bool up = dev.link_up();
  a.state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
  a.max_mtu = IBV_MTU_4096;
  a.active_mtu = to_ibv_mtu(dev.active_mtu());
  a.gid_tbl_len = kGidTableLen;
  // The daemon's CM answers REQs and SIDR_REQs on QP1 (docs/cm.md), as
  // rxe's port announces; no SM, no other capability.
  a.port_cap_flags = IBV_PORT_CM_SUP;
  a.max_msg_sz = kMaxMsgBytes;
  a.pkey_tbl_len = 1;
  a.max_vl_num = 1;
  a.active_width = 2;  // 4X
  a.active_speed = 4;  // QDR: 4X QDR = 40 Gb/s
  a.phys_state = up ? kPhysStateLinkUp : kPhysStateDisabled;
  a.link_layer = IBV_LINK_LAYER_ETHERNET;
  return a;
}

}  // namespace uroce::daemon
