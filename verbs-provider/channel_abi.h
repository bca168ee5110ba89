// The completion channel as liburoce-preload.so allocates it, shared by the
// interposer (preload.cpp) and the provider (comp_channel.cpp).
//
// ibv_destroy_comp_channel has no provider hook, yet the daemon holds a
// write end of every registered channel's pipe and must let go of it when
// the channel goes (issue 12: 2,000 create/destroy cycles used to leave
// 2,000 descriptors in uroced). So the interposer allocates this larger
// struct, the application sees only its first member, and when the
// provider registers the channel with the daemon it leaves a callback in
// it; the interposed ibv_destroy_comp_channel calls that callback (which
// sends DestroyCompChannel) before closing the pipe. Function pointers
// instead of exported symbols: the provider exports nothing (provider.map).
//
// Header-only and plain C layout: preload.cpp links no libstdc++.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

namespace uroce::provider {

// "urocechn": tells a channel the interposer made from any other.
inline constexpr std::uint64_t kPreloadChannelMagic = 0x6e68636563'6f7275ull;

struct PreloadChannel {
  ibv_comp_channel ch;  // what the application holds: must stay first
  std::uint64_t magic;
  // Set by the provider once the daemon holds a write end; called by the
  // interposer (under the context's mutex, refcnt 0) before the pipe is
  // closed. Cleared again by the provider when its context goes first.
  void (*on_destroy)(void* cookie, ibv_comp_channel* ch);
  void* cookie;
};
static_assert(offsetof(PreloadChannel, ch) == 0);

// The interposer's struct behind `ch`. Only valid for channels of uroce
// contexts, which only the interposer creates (libibverbs' own function
// fails without a kernel device).
inline PreloadChannel* as_preload_channel(ibv_comp_channel* ch) {
  auto* pc = reinterpret_cast<PreloadChannel*>(ch);
  return pc->magic == kPreloadChannelMagic ? pc : nullptr;
}

}  // namespace uroce::provider
