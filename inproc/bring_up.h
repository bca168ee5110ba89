// QP bring-up for in-process drivers of a Vnic: the modify_qp calls that
// take a QP from RESET to the state it serves in, as an application's
// ibv_modify_qp calls would, with the attribute masks the engine checks
// (datapath/transport/qp_modify_rules.h). The benchmarks (bench/
// engine_rig.h, bench/dc_scale.cpp), the testbed's driver
// (testbed/rc_driver.cpp) and the engine's unit tests
// (tests/datapath/engine/vnic_test_support.h) all bring QPs up through here.
//
//   RC, UC  RESET -> INIT (access) -> RTR (path, MTU, peer QPN, RQ PSN; RC:
//           responder resources, RNR timer) -> RTS (SQ PSN; RC: timeout,
//           retries, initiator depth)
//   UD      RESET -> INIT (Q_Key) -> RTR -> RTS (SQ PSN)
//   DCI     RESET -> INIT -> RTR (MTU) -> RTS (SQ PSN, timeout, retries,
//           initiator depth): it has no destination of its own
//   DCT     RESET -> INIT (access) -> RTR (RNR timer, the answers' traffic
//           class in the AV, MTU): a DCT serves in RTR
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "datapath/engine/vnic_api.h"
#include "datapath/transport/mr_table.h"
#include "datapath/transport/qp_attr.h"
#include "datapath/transport/qp_common.h"
#include "datapath/wire/opcodes.h"

namespace uroce::inproc {

// A connected QP's far end and path (RC or UC).
struct ConnectAttrs {
  transport::QpType type = transport::QpType::kRc;
  transport::PathAddr av{};
  wire::PathMtu mtu = wire::PathMtu::k1024;
  std::uint32_t dest_qpn = 0;
  std::uint32_t sq_psn = 0;  // first PSN this QP sends
  std::uint32_t rq_psn = 0;  // first PSN it expects (the peer's sq_psn)
  std::uint32_t access = transport::access::kRemoteAny;
  // RC only.
  std::uint8_t timeout = 14;  // 4.096 us x 2^timeout
  std::uint8_t retry_cnt = 7;
  std::uint8_t rnr_retry = 7;
  std::uint8_t min_rnr_timer = 1;
  std::uint8_t max_rd_atomic = 4;       // initiator depth
  std::uint8_t max_dest_rd_atomic = 4;  // responder resources
};

struct UdAttrs {
  std::uint32_t qkey = 0;
  std::uint32_t sq_psn = 0;
};

struct DciAttrs {
  wire::PathMtu mtu = wire::PathMtu::k1024;  // the engine lowers it to the DC path MTU
  std::uint32_t sq_psn = 0;
  std::uint8_t timeout = 14;
  std::uint8_t retry_cnt = 7;
  std::uint8_t rnr_retry = 7;
  std::uint8_t max_rd_atomic = 4;
};

struct DctAttrs {
  wire::PathMtu mtu = wire::PathMtu::k1024;
  std::uint8_t dscp = 0;  // of its answers (docs/dc.md)
  std::uint8_t min_rnr_timer = 1;
  std::uint32_t access = transport::access::kRemoteAny;
};

// The modify_qp calls of one bring-up, in order.
struct BringUp {
  std::array<engine::QpModify, 3> steps{};
  std::size_t count = 0;
};

BringUp connected_bring_up(const ConnectAttrs& a);
BringUp ud_bring_up(const UdAttrs& a);
BringUp dci_bring_up(const DciAttrs& a);
BringUp dct_bring_up(const DctAttrs& a);

// Applies `b` to QP `id` of `vnic` (an engine::Vnic): 0, or the first
// step's error (the QP stays in the state the last good step left).
template <class Vnic>
int bring_up(Vnic& vnic, engine::ObjId id, const BringUp& b) {
  for (std::size_t i = 0; i < b.count; ++i) {
    if (int rc = vnic.modify_qp(id, b.steps[i]); rc != 0) return rc;
  }
  return 0;
}

}  // namespace uroce::inproc
