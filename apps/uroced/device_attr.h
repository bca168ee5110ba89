// What a uroce device reports to verbs (ibv_query_device, ibv_query_port)
// and the limits the daemon enforces on every request against it. The two
// come from the same constants so that what a client is told is exactly what
// the daemon accepts.
#pragma once

#include <infiniband/verbs.h>

#include <bit>
#include <cstddef>
#include <cstdint>

#include "apps/uroced/device.h"
#include "apps/uroced/ring_arena.h"
#include "apps/uroced/sysfs_tree.h"
#include "datapath/ctl/protocol.h"
#include "datapath/shm/ring.h"
#include "datapath/shm/rxe_layout.h"
#include "datapath/shm/wqe_copy.h"
#include "datapath/transport/wr.h"

namespace uroce::daemon {

// Per-object limits (rxe-like where rxe has one).
inline constexpr std::uint32_t kMaxQpWr = 16384;  // max_qp_wr
// max_cqe: the largest CQ whose region (its ring and the notify word after
// it) fits one arena chunk, the largest extent a client's arena hands out
// (ring_arena.h): 2^19 slots of 64 bytes, one kept empty. Far above rxe's
// 32,767 because middleware sizes one CQ for many connections at its
// defaults: libfabric's verbs;ofi_rxm asks for (128 + 128) x
// FI_UNIVERSE_SIZE (256) = 65,536 CQEs and fails when ibv_create_cq
// refuses them (mlx5 devices offer 4,194,303).
inline constexpr std::uint32_t kMaxCqLog2Slots = 19;
inline constexpr std::uint32_t kMaxCqe = (1u << kMaxCqLog2Slots) - 1;
inline constexpr std::size_t cq_region_bytes(std::uint32_t log2_slots) {
  return shm::kQueueHeaderBytes + (std::size_t{1} << log2_slots) * std::bit_ceil(shm::kCqeBytes) +
         ctl::kCqNotifyBytes;
}
static_assert(cq_region_bytes(kMaxCqLog2Slots) <= RingArena::kChunkBytes);
static_assert(cq_region_bytes(kMaxCqLog2Slots + 1) > RingArena::kChunkBytes);
static_assert(kMaxCqLog2Slots <= shm::kMaxLog2Slots);
inline constexpr std::uint32_t kMaxSrqWr = 16384;  // max_srq_wr
// max_pd: PDs of the device, all clients together (Device::take_pd), as
// rxe's pool counts them.
inline constexpr std::uint32_t kMaxPd = 65536;
inline constexpr std::uint32_t kMaxRdAtom = 16;           // max_qp_rd_atom, init_rd_atom
inline constexpr std::uint64_t kMaxMrBytes = 1ull << 36;  // one registration
inline constexpr std::uint32_t kMaxSge = transport::kMaxSge;
inline constexpr std::uint32_t kMaxInline = transport::kMaxInline;
inline constexpr std::uint32_t kVendorId = 0xFFFFFF;
inline constexpr std::uint32_t kPageSize = 4096;
inline constexpr int kGidTableLen = static_cast<int>(kSysfsGidTableLen);
// ibv_port_attr.max_msg_sz: what RC and UC carry in one message (a longer
// SGE list is refused when the WQE is copied).
inline constexpr std::uint32_t kMaxMsgBytes = 1u << 31;
static_assert(kMaxMsgBytes == shm::kMaxMessageBytes);
// IBV_PORT_PHYS_STATE_LINK_UP.
inline constexpr std::uint8_t kPhysStateLinkUp = 5;
// IBTA PortPhysicalState 3: Disabled (the link is down).
inline constexpr std::uint8_t kPhysStateDisabled = 3;

// ibv_device_attr of `dev`: fw_ver "uroce <version>", node_guid and
// sys_image_guid the EUI-64 of its MAC, the object limits of its
// VnicConfig and the constants above.
ibv_device_attr device_attr(const Device& dev);

// ibv_port_attr of port 1 of `dev`: ACTIVE / LinkUp while its link is up
// (DOWN / Disabled otherwise), Ethernet link layer,
// max_mtu 4096, active_mtu from its Ethernet MTU (1500 -> 1024,
// 9000 -> 4096), 16 GIDs, one P_Key, 4X QDR (about what one engine core moves
// over memif).
ibv_port_attr port_attr(const Device& dev);

// ibv_mtu value of a path MTU (same numbering).
inline ibv_mtu to_ibv_mtu(wire::PathMtu m) { return static_cast<ibv_mtu>(m); }

}  // namespace uroce::daemon
