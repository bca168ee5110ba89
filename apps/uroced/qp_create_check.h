// What a CreateQp request asks for, checked before the session touches any
// handle: the transport type, which of the CQs, SRQ and rings it uses, and
// the DC attributes (docs/dc.md), all from the request alone. The provider
// makes the same checks (verbs-provider/qp.cpp), but the daemon never
// trusts a client, so every rule is enforced here again.
#pragma once

#include <cstdint>

#include "datapath/ctl/protocol.h"
#include "datapath/transport/qp_attr.h"

namespace uroce::daemon {

struct QpShape {
  transport::QpType type = transport::QpType::kRc;
  bool send_cq = true;  // uses send_cq_handle (all but a DCT)
  bool recv_cq = true;  // uses recv_cq_handle (all but a DCI)
  bool sq = true;       // has a send queue ring (all but a DCT)
  bool rq = true;       // has a receive queue ring (no SRQ and not DC)
  std::uint64_t dct_key = 0;
  std::uint8_t dci_log_streams = 0;
  std::uint8_t dci_log_errored = 0;
};

// 0 with *out filled, or EINVAL when:
//   - qp_type is none of RC, UC, UD, DRIVER; sq_sig_all is over 1;
//   - RC/UC/UD with a dc_type, a DCT key or DCI streams;
//   - DRIVER without dc_type kDcDct or kDcDci;
//   - a DCT without an SRQ, with a send CQ handle, send capacities or DCI
//     streams;
//   - a DCI with an SRQ, a receive CQ handle, receive capacities, a DCT key,
//     or streams outside transport::dci_streams_valid;
//   - capacities over the device's limits (kMaxQpWr, kMaxSge, kMaxInline;
//     the receive ones only for a QP with its own receive ring).
// Handles are not looked up here: a handle the QP uses that names nothing
// is the session's ENOENT.
int check_create_qp(const ctl::CreateQpReq& r, QpShape* out);

}  // namespace uroce::daemon
