#include "verbs-provider/comp_channel.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace uroce::provider {

int reopen_pipe_for_write(int read_fd) {
  struct stat st {};
  if (::fstat(read_fd, &st) != 0) return -errno;
  if (!S_ISFIFO(st.st_mode)) return -EINVAL;
  char path[40];
  std::snprintf(path, sizeof(path), "/proc/self/fd/%d", read_fd);
  // Non-blocking: the daemon's engine must never block writing an event.
  const int fd = ::open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  return fd >= 0 ? fd : -errno;
}

ChannelCache::~ChannelCache() {
  while (head_ != nullptr) {
    Entry* e = head_;
    head_ = e->next;
    // The context goes before the channel: the interposer's destroy must
    // not call back into freed state (the daemon closed its end already).
    if (e->owner != nullptr) {
      e->owner->on_destroy = nullptr;
      e->owner->cookie = nullptr;
    }
    std::free(e);
  }
  pthread_mutex_destroy(&mu_);
}

std::size_t ChannelCache::size() {
  pthread_mutex_lock(&mu_);
  std::size_t n = 0;
  for (Entry* e = head_; e != nullptr; e = e->next) ++n;
  pthread_mutex_unlock(&mu_);
  return n;
}

int ChannelCache::handle_for(CtlClient* ctl, int channel_fd, std::uint32_t* handle) {
  struct stat st {};
  if (::fstat(channel_fd, &st) != 0) return errno;
  if (!S_ISFIFO(st.st_mode)) return EINVAL;
  pthread_mutex_lock(&mu_);
  for (Entry* e = head_; e != nullptr; e = e->next) {
    if (e->dev == st.st_dev && e->ino == st.st_ino) {
      *handle = e->handle;
      pthread_mutex_unlock(&mu_);
      return 0;
    }
  }
  int rc = 0;
  auto* e = static_cast<Entry*>(std::malloc(sizeof(Entry)));
  const int wr = e != nullptr ? reopen_pipe_for_write(channel_fd) : -ENOMEM;
  if (wr < 0) {
    rc = -wr;
  } else {
    ctl::CreateCompChannelReq req{};
    ctl::CreateCompChannelRep rep{};
    const int fds[1] = {wr};
    rc = ctl->call<ctl::Op::kCreateCompChannel>(req, &rep, fds);
    ::close(wr);  // the daemon has its own now (or none, on failure)
    if (rc == 0) {
      *e = Entry{head_, st.st_dev, st.st_ino, rep.channel_handle, nullptr};
      ctl_ = ctl;
      head_ = e;
      e = nullptr;
      *handle = rep.channel_handle;
    }
  }
  std::free(e);
  pthread_mutex_unlock(&mu_);
  return rc;
}

int ChannelCache::handle_for(CtlClient* ctl, ibv_comp_channel* channel, std::uint32_t* handle) {
  const int rc = handle_for(ctl, channel->fd, handle);
  PreloadChannel* pc = rc == 0 ? as_preload_channel(channel) : nullptr;
  if (pc == nullptr) return rc;
  struct stat st {};
  if (::fstat(channel->fd, &st) != 0) return errno;
  pthread_mutex_lock(&mu_);
  for (Entry* e = head_; e != nullptr; e = e->next) {
    if (e->dev == st.st_dev && e->ino == st.st_ino && e->owner == nullptr) {
      e->owner = pc;
      pc->cookie = this;
      pc->on_destroy = &ChannelCache::on_destroy;
    }
  }
  pthread_mutex_unlock(&mu_);
  return 0;
}

int ChannelCache::release(CtlClient* ctl, int channel_fd) {
  struct stat st {};
  if (::fstat(channel_fd, &st) != 0) return errno;
  pthread_mutex_lock(&mu_);
  Entry** link = &head_;
  while (*link != nullptr && ((*link)->dev != st.st_dev || (*link)->ino != st.st_ino))
    link = &(*link)->next;
  Entry* e = *link;
  if (e != nullptr) *link = e->next;
  pthread_mutex_unlock(&mu_);
  if (e == nullptr) return 0;
  ctl::DestroyCompChannelReq req{};
  req.channel_handle = e->handle;
  std::free(e);
  return ctl->call<ctl::Op::kDestroyCompChannel>(req, nullptr);
}

void ChannelCache::on_destroy(void* cookie, ibv_comp_channel* ch) {
  auto* self = static_cast<ChannelCache*>(cookie);
  // Nothing to report to the application: its destroy succeeds either way
  // (a dead daemon already dropped the write end).
  (void)self->release(self->ctl_, ch->fd);
}

}  // namespace uroce::provider
