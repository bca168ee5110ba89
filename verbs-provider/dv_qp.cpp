// The uroce_dv_* QP and device calls (uroce_dv.h) behind dv.cpp's exported
// entry points: uroce_dv_create_qp's attribute rules, mapped onto
// create_qp_dc, and uroce_dv_query_device's DC capabilities.
#include <cerrno>
#include <cstring>

#include "datapath/transport/qp_attr.h"
#include "verbs-provider/qp.h"

namespace uroce::provider {

static_assert(UROCE_DV_DCTYPE_DCT == ctl::kDcDct && UROCE_DV_DCTYPE_DCI == ctl::kDcDci);

namespace {

constexpr std::uint64_t kKnownQpInitMask =
    UROCE_DV_QP_INIT_ATTR_MASK_DC | UROCE_DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
constexpr std::uint64_t kKnownContextMask =
    UROCE_DV_CONTEXT_MASK_DCI_STREAMS | UROCE_DV_CONTEXT_MASK_ENGINE_SHARD;

// The DcInit `dv` asks for: 0, or EINVAL for an unknown dc_type, MASK_DC
// on a qp_type other than IBV_QPT_DRIVER (or that type without it), and
// DCI_STREAMS without a DCI. The streams' limits are create_qp_dc's.
int dc_init_of(const ibv_qp_init_attr_ex& attr, const uroce_dv_qp_init_attr& dv, DcInit* out) {
  const bool dc = (dv.comp_mask & UROCE_DV_QP_INIT_ATTR_MASK_DC) != 0;
  const bool streams = (dv.comp_mask & UROCE_DV_QP_INIT_ATTR_MASK_DCI_STREAMS) != 0;
  if (dc != (attr.qp_type == IBV_QPT_DRIVER)) return EINVAL;
  if (!dc) return streams ? EINVAL : 0;
  const uroce_dv_dc_init_attr& d = dv.dc_init_attr;
  // A C program may store any int in the enum field: read it as an int
  // (loading a value outside the enumerators as the C++ enum type is
  // undefined behaviour).
  static_assert(sizeof(d.dc_type) == sizeof(std::uint32_t));
  std::uint32_t type = 0;
  std::memcpy(&type, &d.dc_type, sizeof type);
  switch (type) {
    case UROCE_DV_DCTYPE_DCT:
      if (streams) return EINVAL;
      out->type = ctl::kDcDct;
      out->dct_key = d.dct_access_key;
      return 0;
    case UROCE_DV_DCTYPE_DCI:
      out->type = ctl::kDcDci;
      if (streams) {
        out->log_streams = d.dci_streams.log_num_concurent;
        out->log_errored = d.dci_streams.log_num_errored;
      }
      return 0;
  }
  return EINVAL;
}

}  // namespace

ibv_qp* dv_create_qp(ibv_context* ctx, ibv_qp_init_attr_ex* attr,
                     const uroce_dv_qp_init_attr* dv) noexcept {
  if ((dv->comp_mask & ~kKnownQpInitMask) != 0) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  DcInit dc;
  if (int rc = dc_init_of(*attr, *dv, &dc); rc != 0) {
    errno = rc;
    return nullptr;
  }
  return create_qp_dc(ctx, attr, dc);
}

// The limits come from transport/qp_attr.h, which uroced also enforces, and
// the shard from Hello's reply: no daemon round trip is needed.
int dv_query_device(const ctl::HelloRep& hello, uroce_dv_context* attrs) noexcept {
  attrs->comp_mask &= kKnownContextMask;
  if ((attrs->comp_mask & UROCE_DV_CONTEXT_MASK_DCI_STREAMS) != 0) {
    attrs->dci_streams_caps.max_log_num_concurent = transport::kMaxDciLogStreams;
    attrs->dci_streams_caps.max_log_num_errored = transport::kMaxDciLogErrored;
  }
  if ((attrs->comp_mask & UROCE_DV_CONTEXT_MASK_ENGINE_SHARD) != 0) {
    attrs->engine_shard = hello.shard;
    attrs->engine_shards = hello.shards;
  }
  return 0;
}

}  // namespace uroce::provider
