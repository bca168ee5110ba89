#include "datapath/shm/rxe_layout.h"

#include <gtest/gtest.h>

#include <cstddef>

extern "C" {
extern const std::size_t uroce_c_queue_buf_size;
extern const std::size_t uroce_c_queue_buf_producer;
extern const std::size_t uroce_c_queue_buf_consumer;
extern const std::size_t uroce_c_send_wqe_size;
extern const std::size_t uroce_c_send_wqe_dma;
extern const std::size_t uroce_c_send_wqe_sge;
extern const std::size_t uroce_c_send_wqe_inline;
extern const std::size_t uroce_c_send_wqe_ud_av;
extern const std::size_t uroce_c_recv_wqe_size;
extern const std::size_t uroce_c_recv_wqe_sge;
extern const std::size_t uroce_c_sge_size;
}

namespace uroce::shm {
namespace {

TEST(RxeLayout_CAbi, QueueHeaderMatches) {
  EXPECT_EQ(kQueueHeaderBytes, uroce_c_queue_buf_size);
  EXPECT_EQ(kProducerIndexOffset, uroce_c_queue_buf_producer);
  EXPECT_EQ(kConsumerIndexOffset, uroce_c_queue_buf_consumer);
}

TEST(RxeLayout_CAbi, SendWqeFlexibleTailMatches) {
  EXPECT_EQ(kSendWqeDmaOffset, uroce_c_send_wqe_dma);
  EXPECT_EQ(kSendWqeFlexOffset, uroce_c_send_wqe_sge);
  EXPECT_EQ(kSendWqeFlexOffset, uroce_c_send_wqe_inline);
  EXPECT_EQ(kSendWqeFlexOffset, uroce_c_send_wqe_size);
  // Fixed fields agree between the two languages.
  EXPECT_EQ(offsetof(rxe_send_wqe, wr.wr.ud.av), uroce_c_send_wqe_ud_av);
}

// The DC block lies where the C ABI puts wr.ud.av, past every member of
// the wr union that RDMA and atomic WRs use.
TEST(RxeLayout_CAbi, DcBlockAtUdAvInTheCAbi) {
  EXPECT_EQ(kSendWqeDcOffset, uroce_c_send_wqe_ud_av);
  EXPECT_EQ(kDcAhNumOffset, 56u);
  EXPECT_EQ(kDcDctnOffset, 60u);
  EXPECT_EQ(kDcKeyOffset, 64u);
  EXPECT_EQ(kDcStreamOffset, 72u);
  EXPECT_LE(offsetof(rxe_send_wqe, wr.wr.atomic.reserved) + 4, kSendWqeDcOffset);
  EXPECT_LE(offsetof(rxe_send_wqe, wr.wr.rdma.reserved) + 4, kSendWqeDcOffset);
  EXPECT_LE(kSendWqeDcOffset + kDcBytes, offsetof(rxe_send_wqe, status));
}

TEST(RxeLayout_CAbi, RecvWqeFlexibleTailMatches) {
  EXPECT_EQ(kRecvWqeFlexOffset, uroce_c_recv_wqe_sge);
  EXPECT_EQ(kRecvWqeFlexOffset, uroce_c_recv_wqe_size);
  EXPECT_EQ(kRxeSgeBytes, uroce_c_sge_size);
}

// Why the constants exist: C++ lays out the flexible-array union differently
// (an empty struct has size 1 in C++). If a compiler ever agrees with C, this
// fails and the constants can be retired in favour of offsetof.
TEST(RxeLayout_CAbi, CxxViewOfTailDiffers) {
  EXPECT_NE(sizeof(rxe_send_wqe), uroce_c_send_wqe_size);
  EXPECT_NE(offsetof(rxe_send_wqe, dma.sge), uroce_c_send_wqe_sge);
  EXPECT_NE(sizeof(rxe_recv_wqe), uroce_c_recv_wqe_size);
}

}  // namespace
}  // namespace uroce::shm
