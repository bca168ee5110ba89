// liburoce-preload.so as uroce-run loads it: dlopen'ed here (meson passes
// its path in UROCE_PRELOAD_LIB) and its ibv_create_comp_channel called
// with a context of the uroce provider.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "verbs-provider/channel_abi.h"
#include "verbs-provider/driver_abi.h"

namespace uroce::provider {
namespace {

using CreateFn = ibv_comp_channel* (*)(ibv_context*);
using DestroyFn = int (*)(ibv_comp_channel*);
using GetCqEventFn = int (*)(ibv_comp_channel*, ibv_cq**, void**);

struct Lib {
  Lib() {
    const char* path = std::getenv("UROCE_PRELOAD_LIB");
    if (path != nullptr) handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      fn = reinterpret_cast<CreateFn>(dlsym(handle, "ibv_create_comp_channel"));
      destroy = reinterpret_cast<DestroyFn>(dlsym(handle, "ibv_destroy_comp_channel"));
      get_cq_event = reinterpret_cast<GetCqEventFn>(dlsym(handle, "ibv_get_cq_event"));
    }
  }
  ~Lib() {
    if (handle != nullptr) dlclose(handle);
  }
  void* handle = nullptr;
  CreateFn fn = nullptr;
  DestroyFn destroy = nullptr;
  GetCqEventFn get_cq_event = nullptr;
};

// A uroce context as the interposer recognises it (the provider's name).
struct FakeUroceContext {
  FakeUroceContext() {
    ops.name = "uroce";
    dev.ops = &ops;
    ctx.device = &dev.device;
    pthread_mutex_init(&ctx.mutex, nullptr);
  }
  ~FakeUroceContext() { pthread_mutex_destroy(&ctx.mutex); }
  verbs_abi::verbs_device_ops ops{};
  verbs_abi::verbs_device dev{};
  ibv_context ctx{};
};

int callback_calls = 0;
int callback_fd_open = 0;
void count_destroy(void* cookie, ibv_comp_channel* ch) {
  callback_calls += cookie == &callback_calls;
  callback_fd_open = fcntl(ch->fd, F_GETFD) >= 0;
}

TEST(PreloadCreateCompChannel_Uroce, ReadEndOfAPipeWithoutWriters) {
  Lib lib;
  if (lib.handle == nullptr) GTEST_SKIP() << "UROCE_PRELOAD_LIB not set or not loadable";
  ASSERT_NE(lib.fn, nullptr);
  verbs_abi::verbs_device_ops ops{};
  ops.name = "uroce";
  verbs_abi::verbs_device dev{};
  dev.ops = &ops;
  ibv_context ctx{};
  ctx.device = &dev.device;
  ibv_comp_channel* ch = lib.fn(&ctx);
  ASSERT_NE(ch, nullptr);
  EXPECT_EQ(ch->context, &ctx);
  EXPECT_EQ(ch->refcnt, 0);
  struct stat st {};
  ASSERT_EQ(fstat(ch->fd, &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(fcntl(ch->fd, F_GETFL) & O_ACCMODE, O_RDONLY);
  EXPECT_EQ(fcntl(ch->fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  // Its write end is closed: until the daemon holds one, readers see EOF.
  pollfd pf{ch->fd, POLLIN, 0};
  ASSERT_EQ(poll(&pf, 1, 0), 1);
  EXPECT_NE(pf.revents & POLLHUP, 0);
  // ibv_destroy_comp_channel's way of freeing it.
  close(ch->fd);
  std::free(ch);
}

TEST(PreloadDestroyCompChannel_Uroce, CallsTheProviderBeforeClosingAndRefusesWhileUsed) {
  Lib lib;
  if (lib.handle == nullptr) GTEST_SKIP() << "UROCE_PRELOAD_LIB not set or not loadable";
  ASSERT_NE(lib.destroy, nullptr);
  FakeUroceContext fc;
  ibv_comp_channel* ch = lib.fn(&fc.ctx);
  ASSERT_NE(ch, nullptr);
  PreloadChannel* pc = as_preload_channel(ch);
  ASSERT_NE(pc, nullptr);
  EXPECT_EQ(pc->on_destroy, nullptr);
  pc->on_destroy = &count_destroy;
  pc->cookie = &callback_calls;
  callback_calls = 0;
  // A CQ still uses it: libibverbs' EBUSY, and the daemon is not told.
  ch->refcnt = 1;
  EXPECT_EQ(lib.destroy(ch), EBUSY);
  EXPECT_EQ(callback_calls, 0);
  ch->refcnt = 0;
  const int fd = ch->fd;
  EXPECT_EQ(lib.destroy(ch), 0);
  EXPECT_EQ(callback_calls, 1);
  EXPECT_EQ(callback_fd_open, 1);  // told while the pipe still existed
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);
}

TEST(PreloadDestroyCompChannel_Uroce, WithoutCallbackJustCloses) {
  Lib lib;
  if (lib.handle == nullptr) GTEST_SKIP() << "UROCE_PRELOAD_LIB not set or not loadable";
  FakeUroceContext fc;
  ibv_comp_channel* ch = lib.fn(&fc.ctx);
  ASSERT_NE(ch, nullptr);
  const int fd = ch->fd;
  EXPECT_EQ(lib.destroy(ch), 0);
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);
}

TEST(PreloadGetCqEvent_DaemonGone, EndOfFileGivesEio) {
  Lib lib;
  if (lib.handle == nullptr) GTEST_SKIP() << "UROCE_PRELOAD_LIB not set or not loadable";
  ASSERT_NE(lib.get_cq_event, nullptr);
  FakeUroceContext fc;
  // A channel whose pipe has no writer: what is left once the daemon, which
  // held the only write end, died. libibverbs' read sees end of file.
  ibv_comp_channel* ch = lib.fn(&fc.ctx);
  ASSERT_NE(ch, nullptr);
  ibv_cq* cq = nullptr;
  void* cq_context = nullptr;
  errno = 0;
  EXPECT_EQ(lib.get_cq_event(ch, &cq, &cq_context), -1);
  EXPECT_EQ(errno, EIO);
  // A non-blocking channel with a live writer and nothing in it keeps
  // read's own EAGAIN.
  ASSERT_EQ(fcntl(ch->fd, F_SETFL, O_NONBLOCK), 0);
  const int wr = open(("/proc/self/fd/" + std::to_string(ch->fd)).c_str(), O_WRONLY);
  ASSERT_GE(wr, 0);
  errno = 0;
  EXPECT_EQ(lib.get_cq_event(ch, &cq, &cq_context), -1);
  EXPECT_EQ(errno, EAGAIN);
  close(wr);
  EXPECT_EQ(lib.destroy(ch), 0);
}

TEST(PreloadCreateCompChannel_Exports, OnlyTheInterposedSymbol) {
  Lib lib;
  if (lib.handle == nullptr) GTEST_SKIP() << "UROCE_PRELOAD_LIB not set or not loadable";
  EXPECT_EQ(dlsym(lib.handle, "is_uroce"), nullptr);
  EXPECT_EQ(dlsym(lib.handle, "real_create"), nullptr);
}

}  // namespace
}  // namespace uroce::provider
