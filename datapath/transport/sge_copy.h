// Moving payload between registered memory and packets, through scatter/
// gather lists checked against the MR table.
//
// gather: copies `len` bytes starting `offset` bytes into the message an SGE
// list describes, into `dst` (a TX frame's payload area) — the one copy a
// payload byte makes on the send side.
// scatter: copies `src` into the message an SGE list describes, starting
// `offset` bytes in (receive buffers, READ response targets).
//
// Each SGE is resolved with MrTable::resolve (lkey, PD, bounds, and
// kLocalWrite for scatter), so a bad SGE is detected before any byte moves
// and nothing is written outside a registered region.
#pragma once

#include <cstdint>
#include <span>

#include "datapath/transport/mr_table.h"
#include "datapath/transport/wr.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/payload.h"

namespace uroce::transport {

struct SgeCopyResult {
  MrError err = MrError::kOk;
  // True when the SGE list is shorter than offset + length (local length
  // error: IBV_WC_LOC_LEN_ERR on a receive).
  bool too_long = false;
};

SgeCopyResult gather(const MrTable& mrs, PdHandle pd, const Sge* sge, std::uint32_t num_sge,
                     std::uint64_t offset, std::span<std::uint8_t> dst);

// gather into a frame being written: copies w.size() bytes through `w`,
// which carries the ICRC over them (wire::PayloadWriter).
SgeCopyResult gather(const MrTable& mrs, PdHandle pd, const Sge* sge, std::uint32_t num_sge,
                     std::uint64_t offset, wire::PayloadWriter& w);

SgeCopyResult scatter(const MrTable& mrs, PdHandle pd, const Sge* sge, std::uint32_t num_sge,
                      std::uint64_t offset, std::span<const std::uint8_t> src);

// scatter of a chained frame's payload (payload.h, not contiguous): piece
// by piece within the one walk, so that a bad SGE still leaves memory
// untouched.
SgeCopyResult scatter_chained(const MrTable& mrs, PdHandle pd, const Sge* sge,
                              std::uint32_t num_sge, std::uint64_t offset,
                              const wire::Payload& src);

// scatter of a received payload: a contiguous one as above, else
// scatter_chained.
inline SgeCopyResult scatter(const MrTable& mrs, PdHandle pd, const Sge* sge, std::uint32_t num_sge,
                             std::uint64_t offset, const wire::Payload& src) {
  if (src.contiguous()) [[likely]]
    return scatter(mrs, pd, sge, num_sge, offset, src.head());
  return scatter_chained(mrs, pd, sge, num_sge, offset, src);
}

}  // namespace uroce::transport
