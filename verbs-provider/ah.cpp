#include "verbs-provider/ah.h"

#include <cerrno>
#include <cstdlib>

#include "verbs-provider/context.h"
#include "verbs-provider/ops.h"

namespace uroce::provider {

ibv_ah* create_ah(ibv_pd* pd, ibv_ah_attr* attr) noexcept {
  ContextState* st = state_of(pd->context);
  ctl::CreateAhReq req{};
  req.pd_handle = pd->handle;
  req.attr = *attr;
  ctl::CreateAhRep rep{};
  int rc = st->ctl.call<ctl::Op::kCreateAh>(req, &rep);
  if (rc == 0 && rep.ah_handle == 0) rc = EPROTO;  // 0 would mean "no AH" in a WQE
  if (rc != 0) {
    errno = rc;
    return nullptr;
  }
  auto* ah = static_cast<UroceAh*>(std::calloc(1, sizeof(UroceAh)));
  if (ah == nullptr) {
    ctl::DestroyAhReq d{};
    d.ah_handle = rep.ah_handle;
    st->ctl.call<ctl::Op::kDestroyAh>(d, nullptr);
    errno = ENOMEM;
    return nullptr;
  }
  // context and pd are set by libibverbs' ibv_create_ah once we return.
  ah->ah.handle = rep.ah_handle;
  ah->st = st;
  ah->ah_num = rep.ah_handle;
  return &ah->ah;
}

int destroy_ah(ibv_ah* ibah) noexcept {
  UroceAh* ah = to_uah(ibah);
  ctl::DestroyAhReq req{};
  req.ah_handle = ah->ah_num;
  const int rc = destroy_status(ah->st->ctl.call<ctl::Op::kDestroyAh>(req, nullptr));
  if (rc == 0) std::free(ah);
  return rc;
}

}  // namespace uroce::provider
