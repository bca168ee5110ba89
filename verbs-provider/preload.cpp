// liburoce-preload.so: the completion-channel interposer uroce-run puts in
// LD_PRELOAD. ibv_create_comp_channel has no provider hook (the kernel makes
// channels), so for a context of the uroce provider we answer it ourselves:
// a malloc'ed ibv_comp_channel whose fd is the READ end of a new pipe
// (close-on-exec), its write end closed. The provider reopens the pipe for
// writing and gives that end to uroced when a CQ is created on the channel
// (comp_channel.h). libibverbs' own ibv_destroy_comp_channel then works
// unchanged: it closes the fd and frees the struct.
//
// Every other context goes to libibverbs' real function, found with
// dlopen("libibverbs.so.1", RTLD_NOLOAD) + dlsym: dlsym(RTLD_NEXT) returns
// null under pyverbs (docs/provider-abi.md), and a lookup in libibverbs' own handle can
// only find libibverbs' definition, never this one.
//
// No exceptions, no libstdc++; exports only ibv_create_comp_channel.
#include <dlfcn.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "verbs-provider/driver_abi.h"

namespace {

using CreateCompChannel = ibv_comp_channel* (*)(ibv_context*);

bool is_uroce(const ibv_context* ctx) {
  if (ctx == nullptr || ctx->device == nullptr) return false;
  // Every libibverbs device is a verbs_device whose ops name its provider.
  const auto* dev = reinterpret_cast<const uroce::verbs_abi::verbs_device*>(ctx->device);
  return dev->ops != nullptr && dev->ops->name != nullptr &&
         std::strcmp(dev->ops->name, "uroce") == 0;
}

CreateCompChannel real_create() {
  // Once per process; a racing second lookup finds the same pointer.
  static CreateCompChannel fn = nullptr;
  if (fn != nullptr) return fn;
  void* lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return nullptr;
  fn = reinterpret_cast<CreateCompChannel>(dlsym(lib, "ibv_create_comp_channel"));
  dlclose(lib);  // NOLOAD took a reference; the library stays loaded
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
  auto* ch = static_cast<ibv_comp_channel*>(std::malloc(sizeof(ibv_comp_channel)));
  if (ch == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    const int err = errno;
    std::free(ch);
    errno = err;
    return nullptr;
  }
  ::close(p[1]);
  ch->context = context;
  ch->fd = p[0];
  ch->refcnt = 0;
  return ch;
}
