// Notices that uroced went away and tells the application the verbs way.
//
// One thread per ibv_context blocks in poll() on the control socket with
// events = POLLRDHUP only (never POLLIN: replies are read by CtlClient::call,
// and a readable reply must not wake us). When the peer closes (daemon exit
// or crash: POLLHUP/POLLRDHUP/POLLERR), it marks the CtlClient dead (every
// later control verb fails with EIO, posts fail with EIO, poll_cq returns -1
// on an empty ring) and writes one IBV_EVENT_DEVICE_FATAL record
// (element 0) to the context's async pipe, where ibv_get_async_event finds
// it. The write end is non-blocking: a full pipe (an application that never
// reads events) drops the record instead of hanging the thread.
//
// stop() wakes the thread through a private pipe and joins it; it is safe
// whether or not the daemon died first. Signals are blocked in the thread so
// that the application's handlers never run on it.
#pragma once

#include <pthread.h>

#include "verbs-provider/ctl_client.h"

namespace uroce::provider {

class DeathWatcher {
 public:
  DeathWatcher() = default;
  ~DeathWatcher() { stop(); }
  DeathWatcher(const DeathWatcher&) = delete;
  DeathWatcher& operator=(const DeathWatcher&) = delete;

  // Starts watching client->fd(); `async_write_fd` stays owned by the
  // caller and must outlive stop(). Returns 0 or errno.
  int start(CtlClient* client, int async_write_fd);
  // Idempotent.
  void stop();

  bool running() const { return running_; }

 private:
  static void* run(void* self);

  CtlClient* client_ = nullptr;
  int async_fd_ = -1;
  int wake_rd_ = -1;
  int wake_wr_ = -1;
  pthread_t thread_{};
  bool running_ = false;
};

// Writes one IBV_EVENT_DEVICE_FATAL record to `fd`; true when it was
// written whole.
bool write_device_fatal(int fd);

}  // namespace uroce::provider
