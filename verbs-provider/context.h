// One open uroce device (ibv_context) and its connection to uroced.
//
// libibverbs allocates UroceContext (calloc of our size, through
// verbs_abi::alloc_driver_context) and hands every verb the ibv_context
// inside it; the C++ state lives in ContextState, which we allocate with
// malloc + placement new and destroy in free_context. Lifetime: from
// open_context (alloc_context) to free_context (ibv_close_device); every
// QP/CQ/SRQ/MR/PD/AH keeps a plain pointer to its ContextState.
//
// Threading: ContextState members are individually thread-safe (see each
// header); the device values from Hello are written once before the context
// is published to the application and only read afterwards.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

#include "datapath/ctl/protocol.h"
#include "datapath/shm/doorbell.h"
#include "datapath/shm/shared_region.h"
#include "verbs-provider/comp_channel.h"
#include "verbs-provider/ctl_client.h"
#include "verbs-provider/death_watcher.h"
#include "verbs-provider/driver_abi.h"
#include "verbs-provider/mr_remap.h"
#include "verbs-provider/object_registry.h"

namespace uroce::provider {

struct ContextState {
  CtlClient ctl;
  DeathWatcher watcher;
  ObjectRegistry objects;
  MemfdRegistry& memfds = process_memfds();  // shared by all contexts
  ChannelCache channels;
  int async_write_fd = -1;  // our dup of what Hello passed (DEVICE_FATAL)
  ctl::HelloRep hello{};    // device attributes and limits
  // The connection's doorbell page (Hello's reply fd): rung after every
  // publish into a ring, so the engine visits only rings with new work.
  shm::SharedRegion bell_region;
  shm::DoorbellRinger bells;

  bool dead() const { return ctl.dead(); }
  ~ContextState();
};

struct UroceContext {
  ::verbs_context vctx;  // libibverbs' part; context is its last member
  ContextState* st;
};

inline UroceContext* to_uctx(ibv_context* ctx) {
  return reinterpret_cast<UroceContext*>(reinterpret_cast<char*>(ctx) -
                                         offsetof(verbs_context, context) -
                                         offsetof(UroceContext, vctx));
}
inline ContextState* state_of(ibv_context* ctx) { return to_uctx(ctx)->st; }

// Creates the C++ state and connects it: reads `socket_file` (the one-line
// absolute socket path uroced writes into sysfs), connects, sends Hello for
// `ibdev` with a fresh async pipe's write end, and starts the death
// watcher. On success *async_read_fd is the pipe's read end (for
// ibv_context.async_fd) and *out owns everything else. Returns 0 or errno.
// Maps the doorbell page Hello's reply carried (st->hello says its count and
// size; both sides derive the layout from the count) and attaches st->bells.
// Takes ownership of page_fd. 0, EPROTO (sizes that do not fit) or the
// mmap errno.
int attach_doorbells(ContextState* st, int page_fd);

int open_state(const char* socket_file, const char* ibdev, ContextState** out, int* async_read_fd);
void close_state(ContextState* st);

// Reads the first line of `path` into `buf` (newline stripped). 0 or errno.
int read_first_line(const char* path, char* buf, std::size_t len);

}  // namespace uroce::provider
