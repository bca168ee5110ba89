// Protection domains and memory regions.
//
// A PD is a plain ibv_pd whose handle is the daemon's. An MR is a verbs_mr
// (what dereg_mr/rereg_mr receive) plus the memfd backing its pages
// (mr_remap.h): reg_mr moves the pages onto a shared memfd and passes it to
// the daemon with RegMr, so the engine touches the application's bytes with
// no copy; dereg_mr tells the daemon to drop and unmap it, then releases our
// reference.
#pragma once

#include "verbs-provider/context.h"
#include "verbs-provider/driver_abi.h"
#include "verbs-provider/mr_remap.h"

namespace uroce::provider {

struct UroceMr {
  verbs_abi::verbs_mr vmr;  // first: libibverbs converts by address
  ContextState* st = nullptr;
  MrBacking backing;
  std::uint64_t iova = 0;  // the address peers name (ibv_reg_mr_iova)
};

inline UroceMr* to_umr(verbs_abi::verbs_mr* vmr) { return reinterpret_cast<UroceMr*>(vmr); }

}  // namespace uroce::provider
