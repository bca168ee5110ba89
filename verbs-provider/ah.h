// Address handles. The daemon resolves the destination (GID -> IPv4 -> MAC
// through its ARP agent) when the AH is created; UD send WQEs then carry
// only the daemon's handle as wr.ud.ah_num, which the engine looks up in
// its own table (an address the application wrote could not be trusted).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace uroce::provider {

struct ContextState;

struct UroceAh {
  ibv_ah ah;  // first: the application's ibv_ah*
  ContextState* st;
  std::uint32_t ah_num;  // the daemon's handle, never 0
};

inline UroceAh* to_uah(ibv_ah* ah) { return reinterpret_cast<UroceAh*>(ah); }

}  // namespace uroce::provider
