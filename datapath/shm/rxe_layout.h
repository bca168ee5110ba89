// The byte layout of rxe's shared queues (<rdma/rdma_user_rxe.h>) as the C
// ABI defines it, which is what the kernel's rdma_rxe and rdma-core's rxe
// provider use and what our rings keep.
//
// Why constants rather than sizeof/offsetof everywhere: struct rxe_dma_info
// ends in a union of two flexible arrays declared with __DECLARE_FLEX_ARRAY,
// which wraps each in a struct holding an empty struct. An empty struct has
// size 0 in GNU C but size 1 in C++, so a C++ compiler lays the tail out
// differently (checked with g++ 12 and clang 14):
//
//                          C ABI   C++ view of the same header
//   sizeof(rxe_dma_info)     24     32
//   dma.inline_data          +24    +25
//   dma.sge                  +24    +32
//   sizeof(rxe_send_wqe)     208    216
//   sizeof(rxe_recv_wqe)     40     48
//
// Everything before the flexible arrays has the same offsets in both, so C++
// may use the structs for the fixed fields; the flexible part (SGE list or
// inline data) must be addressed with kSendWqeFlexOffset/kRecvWqeFlexOffset
// and never through sizeof(rxe_send_wqe) or wqe->dma.sge.
//
// Queue buffer (struct rxe_queue_buf), indices on separate cache lines:
//
//   offset   0  u32 log2_elem_size
//   offset   4  u32 index_mask          (number of slots - 1)
//   offset 128  u32 producer_index      in [0, index_mask]
//   offset 256  u32 consumer_index      in [0, index_mask]
//   offset 384  data: slot i at 384 + (i << log2_elem_size)
//
// Send WQE slot (C ABI), 208 fixed bytes then the flexible part:
//
//   0    struct rxe_send_wr wr   (wr_id, opcode, send_flags, ex, wr union)
//   144  status, state, iova, mask, first_psn, last_psn, ack_length, ssn,
//        has_rd_atomic           (kernel bookkeeping; ignored by the daemon)
//   184  struct rxe_dma_info     length, resid, cur_sge, num_sge,
//                                sge_offset, reserved (6 x u32)
//   208  rxe_sge sge[num_sge]    (16 bytes each)   -- or --
//        u8 inline_data[length]  (with IBV_SEND_INLINE)
//
// Receive WQE slot: wr_id (0), reserved, padding, rxe_dma_info (16), sge[]
// at 40.
//
// DC addressing (uroce's own, docs/dc.md): every WR of a DCI names its
// target (uroce_dv_wr_set_dc_addr[_stream]). The target cannot travel in
// wr.ud.{remote_qpn, ah_num}, because a DCI also posts RDMA WRITE/READ and
// atomics, whose wr.rdma / wr.atomic members overlap those bytes. It goes at
// a fixed place in the wr union that no member but ud uses: past the
// largest of rdma (16), atomic (32) and mw (32), where ud keeps its address
// vector (wr.ud.av, which uroce never reads: the engine resolves the AH
// number in its own table). 24 bytes at kSendWqeDcOffset (56):
//
//   +0   u32 ah_num     the daemon's AH handle (never 0)
//   +4   u32 dctn       the target DCT's number (24 bits)
//   +8   u64 dc_key     the DCT's access key
//   +16  u16 stream     the DCI stream (< 2^log_num_concurent)
//   +18  6 bytes zero
//
// A DCI WQE thus carries every opcode's own fields and its target at once;
// on any other QP type these bytes are zero or UD's unread AV.
#pragma once

// <rdma/rdma_user_rxe.h> pulls in <linux/in.h>, which clashes with a later
// <netinet/in.h> (DPDK includes it); glibc's header first makes the kernel's
// skip its duplicate definitions.
#include <netinet/in.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include <cstddef>
#include <cstdint>

namespace uroce::shm {

// struct rxe_queue_buf header; slot data starts right after it.
inline constexpr std::size_t kQueueHeaderBytes = 384;
inline constexpr std::size_t kProducerIndexOffset = 128;
inline constexpr std::size_t kConsumerIndexOffset = 256;

// Fields of struct rxe_dma_info before its flexible arrays.
inline constexpr std::size_t kDmaHeaderBytes = 24;

inline constexpr std::size_t kSendWqeDmaOffset = 184;
inline constexpr std::size_t kSendWqeFlexOffset = kSendWqeDmaOffset + kDmaHeaderBytes;
inline constexpr std::size_t kRecvWqeDmaOffset = 16;
inline constexpr std::size_t kRecvWqeFlexOffset = kRecvWqeDmaOffset + kDmaHeaderBytes;
inline constexpr std::size_t kRxeSgeBytes = 16;
inline constexpr std::size_t kCqeBytes = 48;

static_assert(sizeof(rxe_queue_buf) == kQueueHeaderBytes);
static_assert(offsetof(rxe_queue_buf, producer_index) == kProducerIndexOffset);
static_assert(offsetof(rxe_queue_buf, consumer_index) == kConsumerIndexOffset);
static_assert(offsetof(rxe_queue_buf, data) == kQueueHeaderBytes);

static_assert(offsetof(rxe_dma_info, length) == 0);
static_assert(offsetof(rxe_dma_info, resid) == 4);
static_assert(offsetof(rxe_dma_info, cur_sge) == 8);
static_assert(offsetof(rxe_dma_info, num_sge) == 12);
static_assert(offsetof(rxe_dma_info, sge_offset) == 16);
static_assert(offsetof(rxe_dma_info, reserved) == 20);

static_assert(sizeof(rxe_send_wr) == 144);
static_assert(offsetof(rxe_send_wr, wr_id) == 0);
static_assert(offsetof(rxe_send_wr, opcode) == 12);
static_assert(offsetof(rxe_send_wr, send_flags) == 16);
static_assert(offsetof(rxe_send_wr, ex) == 20);
static_assert(offsetof(rxe_send_wr, wr) == 24);
static_assert(offsetof(rxe_send_wqe, dma) == kSendWqeDmaOffset);
static_assert(offsetof(rxe_recv_wqe, dma) == kRecvWqeDmaOffset);

inline constexpr std::size_t kSendWqeDcOffset =
    offsetof(rxe_send_wqe, wr) + offsetof(rxe_send_wr, wr) + 32;
inline constexpr std::size_t kDcAhNumOffset = kSendWqeDcOffset;
inline constexpr std::size_t kDcDctnOffset = kSendWqeDcOffset + 4;
inline constexpr std::size_t kDcKeyOffset = kSendWqeDcOffset + 8;
inline constexpr std::size_t kDcStreamOffset = kSendWqeDcOffset + 16;
inline constexpr std::size_t kDcBytes = 24;

// The DC block overlaps no field of the members RDMA and atomic WRs use
// (nor mw), nor wr.ud's QPN, Q_Key and AH number; it lies inside the wr
// union (before the kernel bookkeeping at 144), and the key is 8-aligned.
static_assert(sizeof(rxe_send_wr::wr.rdma) <= 32 && sizeof(rxe_send_wr::wr.atomic) <= 32 &&
              sizeof(rxe_send_wr::wr.mw) <= 32);
static_assert(offsetof(rxe_send_wr, wr.ud.ah_num) + 4 <= offsetof(rxe_send_wr, wr) + 32);
static_assert(offsetof(rxe_send_wqe, wr.wr.ud.av) == kSendWqeDcOffset);
static_assert(kSendWqeDcOffset == 56 && kDcKeyOffset % 8 == 0);
static_assert(kSendWqeDcOffset + kDcBytes <= offsetof(rxe_send_wqe, wr) + sizeof(rxe_send_wr));
static_assert(sizeof(rxe_send_wr::wr.ud.av) >= kDcBytes);

static_assert(sizeof(rxe_sge) == kRxeSgeBytes);
static_assert(sizeof(ib_uverbs_wc) == kCqeBytes);

}  // namespace uroce::shm
