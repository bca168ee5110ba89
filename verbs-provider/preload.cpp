// liburoce-preload.so: the completion-channel interposer uroce-run puts in
// LD_PRELOAD. ibv_create_comp_channel has no provider hook (the kernel makes
// channels), so for a context of the uroce provider we answer it ourselves:
// a malloc'ed ibv_comp_channel whose fd is the READ end of a new pipe
// (close-on-exec), its write end closed. The provider reopens the pipe for
// writing and gives that end to uroced when a CQ is created on the channel
// (comp_channel.h). The struct is a PreloadChannel (channel_abi.h), so that
// ibv_destroy_comp_channel, interposed too, can first have the provider
// tell the daemon to drop its write end, then close the fd and free it.
//
// Every other context goes to libibverbs' real function, found with
// dlopen("libibverbs.so.1", RTLD_NOLOAD) + dlsym: dlsym(RTLD_NEXT) returns
// null under pyverbs (docs/provider-abi.md), and a lookup in libibverbs' own handle can
// only find libibverbs' definition, never this one.
//
// ibv_get_cq_event is interposed too, for its errno after the daemon died.
//
// No exceptions, no libstdc++; exports only the three interposed functions.
#include <dlfcn.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "verbs-provider/channel_abi.h"
#include "verbs-provider/driver_abi.h"

namespace {

using CreateCompChannel = ibv_comp_channel* (*)(ibv_context*);
using DestroyCompChannel = int (*)(ibv_comp_channel*);
using GetCqEvent = int (*)(ibv_comp_channel*, ibv_cq**, void**);
using uroce::provider::PreloadChannel;

bool is_uroce(const ibv_context* ctx) {
  if (ctx == nullptr || ctx->device == nullptr) return false;
  // Every libibverbs device is a verbs_device whose ops name its provider.
  const auto* dev = reinterpret_cast<const uroce::verbs_abi::verbs_device*>(ctx->device);
  return dev->ops != nullptr && dev->ops->name != nullptr &&
         std::strcmp(dev->ops->name, "uroce") == 0;
}

void* real_symbol(const char* name) {
  void* lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return nullptr;
  void* fn = dlsym(lib, name);
  dlclose(lib);  // NOLOAD took a reference; the library stays loaded
  return fn;
}

CreateCompChannel real_create() {
  // Once per process; a racing second lookup finds the same pointer.
  static CreateCompChannel fn = nullptr;
  if (fn == nullptr)
    fn = reinterpret_cast<CreateCompChannel>(real_symbol("ibv_create_comp_channel"));
  return fn;
}

GetCqEvent real_get_cq_event() {
  static GetCqEvent fn = nullptr;
  if (fn == nullptr) fn = reinterpret_cast<GetCqEvent>(real_symbol("ibv_get_cq_event"));
  return fn;
}

DestroyCompChannel real_destroy() {
  static DestroyCompChannel fn = nullptr;
  if (fn == nullptr)
    fn = reinterpret_cast<DestroyCompChannel>(real_symbol("ibv_destroy_comp_channel"));
  return fn;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) ibv_comp_channel* ibv_create_comp_channel(
    ibv_context* context) {
  if (!is_uroce(context)) {
    const CreateCompChannel real = real_create();
    if (real == nullptr) {
      errno = ENOSYS;
      return nullptr;
    }
    return real(context);
  }
  auto* pc = static_cast<PreloadChannel*>(std::malloc(sizeof(PreloadChannel)));
  if (pc == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    const int err = errno;
    std::free(pc);
    errno = err;
    return nullptr;
  }
  ::close(p[1]);
  pc->ch.context = context;
  pc->ch.fd = p[0];
  pc->ch.refcnt = 0;
  pc->magic = uroce::provider::kPreloadChannelMagic;
  pc->on_destroy = nullptr;
  pc->cookie = nullptr;
  return &pc->ch;
}

// As libibverbs' own (EBUSY while CQs use the channel, all under the
// context's mutex), with the provider's callback before the close.
extern "C" __attribute__((visibility("default"))) int ibv_destroy_comp_channel(
    ibv_comp_channel* channel) {
  ibv_context* context = channel->context;
  if (!is_uroce(context)) {
    const DestroyCompChannel real = real_destroy();
    return real == nullptr ? ENOSYS : real(channel);
  }
  PreloadChannel* pc = uroce::provider::as_preload_channel(channel);
  pthread_mutex_lock(&context->mutex);
  if (channel->refcnt != 0) {
    pthread_mutex_unlock(&context->mutex);
    return EBUSY;
  }
  if (pc != nullptr && pc->on_destroy != nullptr) pc->on_destroy(pc->cookie, channel);
  ::close(channel->fd);
  if (pc != nullptr) pc->magic = 0;
  std::free(channel);
  pthread_mutex_unlock(&context->mutex);
  return 0;
}

// libibverbs' own, with errno set when it fails at end of file: the daemon
// holds the only write end of a uroce channel's pipe, so EOF means it died,
// and libibverbs would return -1 with errno untouched (often 0).
extern "C" __attribute__((visibility("default"))) int ibv_get_cq_event(ibv_comp_channel* channel,
                                                                       ibv_cq** cq,
                                                                       void** cq_context) {
  const GetCqEvent real = real_get_cq_event();
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  if (!is_uroce(channel->context)) return real(channel, cq, cq_context);
  errno = 0;
  const int rc = real(channel, cq, cq_context);
  if (rc != 0 && errno == 0) errno = EIO;
  return rc;
}
