/* The rxe structures' sizes and offsets as the C compiler (the ABI rdma_rxe
 * and rdma-core use) lays them out, for test_rxe_layout.cpp to compare with
 * the constants C++ code must use. */
#include <rdma/rdma_user_rxe.h>
#include <stddef.h>

const size_t uroce_c_queue_buf_size = sizeof(struct rxe_queue_buf);
const size_t uroce_c_queue_buf_producer = offsetof(struct rxe_queue_buf, producer_index);
const size_t uroce_c_queue_buf_consumer = offsetof(struct rxe_queue_buf, consumer_index);
const size_t uroce_c_send_wqe_size = sizeof(struct rxe_send_wqe);
const size_t uroce_c_send_wqe_dma = offsetof(struct rxe_send_wqe, dma);
const size_t uroce_c_send_wqe_sge = offsetof(struct rxe_send_wqe, dma.sge);
const size_t uroce_c_send_wqe_inline = offsetof(struct rxe_send_wqe, dma.inline_data);
const size_t uroce_c_send_wqe_ud_av = offsetof(struct rxe_send_wqe, wr.wr.ud.av);
const size_t uroce_c_recv_wqe_size = sizeof(struct rxe_recv_wqe);
const size_t uroce_c_recv_wqe_sge = offsetof(struct rxe_recv_wqe, dma.sge);
const size_t uroce_c_sge_size = sizeof(struct rxe_sge);
