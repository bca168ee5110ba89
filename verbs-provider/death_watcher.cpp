#include "verbs-provider/death_watcher.h"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/ib_user_verbs.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace uroce::provider {

bool write_device_fatal(int fd) {
  ib_uverbs_async_event_desc ev{};
  ev.element = 0;
  ev.event_type = IBV_EVENT_DEVICE_FATAL;
  for (;;) {
    const ssize_t n = ::write(fd, &ev, sizeof(ev));
    if (n == static_cast<ssize_t>(sizeof(ev))) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

int DeathWatcher::start(CtlClient* client, int async_write_fd) {
  if (running_) return EBUSY;
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return errno;
  client_ = client;
  async_fd_ = async_write_fd;
  wake_rd_ = p[0];
  wake_wr_ = p[1];
  // The thread starts with every signal blocked; the caller's mask is
  // restored right after.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const int rc = pthread_create(&thread_, nullptr, &DeathWatcher::run, this);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    ::close(wake_rd_);
    ::close(wake_wr_);
    wake_rd_ = wake_wr_ = -1;
    return rc;
  }
  running_ = true;
  return 0;
}

void DeathWatcher::stop() {
  if (!running_) return;
  const char b = 0;
  while (::write(wake_wr_, &b, 1) < 0 && errno == EINTR) {
  }
  pthread_join(thread_, nullptr);
  ::close(wake_rd_);
  ::close(wake_wr_);
  wake_rd_ = wake_wr_ = -1;
  running_ = false;
}

void* DeathWatcher::run(void* arg) {
  auto* self = static_cast<DeathWatcher*>(arg);
  pollfd pf[2] = {{self->client_->fd(), POLLRDHUP, 0}, {self->wake_rd_, POLLIN, 0}};
  for (;;) {
    const int n = ::poll(pf, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return nullptr;  // cannot watch; stop() still joins cleanly
    }
    if (pf[1].revents != 0) return nullptr;  // stop()
    if ((pf[0].revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) != 0) {
      self->client_->mark_dead();
      write_device_fatal(self->async_fd_);
      return nullptr;
    }
  }
}

}  // namespace uroce::provider
