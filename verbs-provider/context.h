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
#include <sched.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "datapath/ctl/protocol.h"
#include "datapath/shm/arena_map.h"
#include "datapath/shm/doorbell.h"
#include "datapath/shm/ring.h"
#include "verbs-provider/comp_channel.h"
#include "verbs-provider/ctl_client.h"
#include "verbs-provider/death_watcher.h"
#include "verbs-provider/driver_abi.h"
#include "verbs-provider/embedded.h"
#include "verbs-provider/mr_remap.h"
#include "verbs-provider/object_registry.h"
#include "verbs-provider/poll_yield.h"

namespace uroce::provider {

struct ContextState {
  CtlClient ctl;
  DeathWatcher watcher;
  ObjectRegistry objects;
  MemfdRegistry& memfds = process_memfds();  // shared by all contexts
  ChannelCache channels;
  int async_write_fd = -1;  // our dup of what Hello passed (DEVICE_FATAL)
  ctl::HelloRep hello{};    // device attributes and limits
  // The connection's arena (Hello's reply fd, the only descriptor the
  // provider keeps for shared memory): the doorbell page and every ring of
  // this context, each at an offset a reply names; chunks are mapped when
  // first named and stay mapped until the context closes.
  shm::ArenaMap arena;
  // The doorbell page: rung after every publish into a ring, so the engine
  // visits only rings with new work.
  shm::DoorbellRinger bells;
  // Embedded mode (embedded.h): the in-process engine's progress calls, run
  // before a poll and after a post; null for a device of uroced.
  EmbeddedProgress progress;
  // Never in a child of fork(): the engine, its threads and its ports are
  // the parent's (fork.h).
  void drive() const {
    if (progress.poll != nullptr && !ctl.inherited()) progress.poll(hello.shard);
  }
  void drive_post() const {
    if (progress.post != nullptr && !ctl.inherited()) progress.post(hello.shard);
  }
  // A CQ armed for events: the application may sleep on them next, and
  // only the engine's progress thread would then make them.
  void app_idle() const {
    if (progress.idle != nullptr && !ctl.inherited()) progress.idle(hello.shard);
  }
  // A poll that found its CQ empty, in daemon mode (embedded polls drive
  // the engine instead). On the CPU the daemon's engine is pinned to
  // (HelloRep.engine_cpu): only the engine can fill the CQ, and it shares
  // this core, so yield the core to it now rather than spin out the time
  // slice (a daemon in yield mode yields back when idle). Elsewhere the
  // CPU may still be shared with another spinning program: poll_yield.h.
  void empty_poll() const {
    if (progress.poll != nullptr) return;
    if ((hello.flags & ctl::kHelloEngineCpu) != 0 &&
        static_cast<std::uint32_t>(sched_getcpu()) == hello.engine_cpu) {
      sched_yield();
      return;
    }
    poll_empty();
  }
  // A poll that found completions.
  void found_poll() const {
    if (progress.poll == nullptr) poll_found();
  }

  bool dead() const { return ctl.dead() || ctl.inherited(); }
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
// Adopts the arena Hello's reply carried (st->hello gives its chunk size and
// count, and where the doorbell page lies in it: both sides derive the
// page's layout from the doorbell count) and attaches st->bells. Takes
// ownership of arena_fd. 0, EPROTO (sizes that do not fit) or the mmap
// errno.
int attach_arena(ContextState* st, int arena_fd);
// The address of `bytes` at `offset` in the context's arena (a reply's
// ring), its pages made and mapped into this side (base::populate_pages):
// 0, EPROTO for a range the arena cannot hold, or the mmap errno.
int locate_in_arena(ContextState* st, std::uint64_t offset, std::uint64_t bytes, void** addr);

// Attaches `ring` (an SQ or RQ producer) to a reply's ring: `bytes` of the
// arena at `offset`, of the reply's geometry, whose elements hold at least
// `min_elem` bytes. 0, EPROTO (a geometry that is invalid or does not fit,
// a range outside the arena) or the mmap errno.
template <class Producer>
int attach_arena_ring(ContextState* st, std::uint64_t offset, std::uint64_t bytes,
                      std::uint32_t log2_elem, std::uint32_t log2_slots, std::size_t min_elem,
                      Producer* ring) {
  shm::RingGeometry g;
  g.log2_elem_size = log2_elem;
  g.log2_slots = log2_slots;
  if (!g.valid() || g.elem_size() < min_elem || g.bytes() > bytes) return EPROTO;
  void* mem = nullptr;
  if (int rc = locate_in_arena(st, offset, bytes, &mem); rc != 0) return rc;
  Producer attached;
  if (attached.attach(mem, bytes, g) != shm::RingError::kOk) return EPROTO;
  *ring = attached;
  return 0;
}

int open_state(const char* socket_file, const char* ibdev, ContextState** out, int* async_read_fd);
void close_state(ContextState* st);

// Reads the first line of `path` into `buf` (newline stripped). 0 or errno.
int read_first_line(const char* path, char* buf, std::size_t len);

}  // namespace uroce::provider
