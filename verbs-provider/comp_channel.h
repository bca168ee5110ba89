// Completion channels, provider side.
//
// ibv_create_comp_channel has no provider hook; under uroce-run the
// interposer (preload.cpp) answers it for uroce contexts with the READ end
// of a fresh pipe, having closed the write end. The daemon must hold the
// only write end (so that ibv_get_cq_event sees EOF once it dies), so when a
// CQ is created on such a channel the provider reopens the pipe for writing
// through /proc/self/fd (opening a pipe's read end O_WRONLY yields a new
// write end), hands that to the daemon with CreateCompChannel, and closes
// its copy. Each pipe is registered once per context, keyed by the pipe's
// identity (st_dev, st_ino): the daemon keeps the write end alive, so the
// inode cannot be reused by another pipe while the entry exists.
//
// ibv_destroy_comp_channel has no provider hook either: for channels the
// interposer made, registration leaves a callback in the channel
// (channel_abi.h) through which the interposed destroy calls release(), so
// the daemon closes its write end at once instead of when the connection
// closes.
//
// Threading: lookups and registration serialise on the cache's mutex.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <cstdint>

#include "verbs-provider/channel_abi.h"
#include "verbs-provider/ctl_client.h"

namespace uroce::provider {

// A new write end (O_WRONLY | O_NONBLOCK | O_CLOEXEC) of the pipe whose
// read end is `read_fd` (an anonymous pipe opens for writing at once, with
// or without writers). Returns the fd, or -errno (EINVAL when `read_fd` is
// not a pipe).
int reopen_pipe_for_write(int read_fd);

class ChannelCache {
 public:
  ChannelCache() = default;
  ~ChannelCache();
  ChannelCache(const ChannelCache&) = delete;
  ChannelCache& operator=(const ChannelCache&) = delete;

  // The daemon's handle for the channel whose fd is `channel_fd`,
  // registering it with CreateCompChannel on first use. Returns 0 or errno.
  int handle_for(CtlClient* ctl, int channel_fd, std::uint32_t* handle);
  // The same for a channel the application passed to a verb; when the
  // interposer made it, also leaves the destroy callback in it.
  int handle_for(CtlClient* ctl, ibv_comp_channel* channel, std::uint32_t* handle);

  // Forgets the pipe whose fd is `channel_fd` and tells the daemon
  // (DestroyCompChannel), which closes its write end. 0 when the pipe was
  // never registered (nothing to release), else the daemon's answer (EIO
  // once it is gone: the descriptor went with it).
  int release(CtlClient* ctl, int channel_fd);

  std::size_t size();

 private:
  struct Entry {
    Entry* next;
    dev_t dev;
    ino_t ino;
    std::uint32_t handle;
    PreloadChannel* owner;  // the interposer's channel, or null
  };
  static void on_destroy(void* cookie, ibv_comp_channel* ch);
  CtlClient* ctl_ = nullptr;  // the connection of the channels' context
  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  Entry* head_ = nullptr;
};

}  // namespace uroce::provider
