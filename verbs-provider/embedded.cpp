#include "verbs-provider/embedded.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "datapath/ctl/embedded_abi.h"
#include "verbs-provider/context.h"

namespace uroce::provider {

namespace {

// Loading only; g_ops, once set, is only read. (A pthread mutex: the
// provider links no libstdc++.)
pthread_mutex_t g_load_mu = PTHREAD_MUTEX_INITIALIZER;
const ctl::EmbeddedOps* g_ops = nullptr;

int load_engine_locked(const char* path);

int load_engine(const char* path, const ctl::EmbeddedOps** ops) {
  pthread_mutex_lock(&g_load_mu);
  const int rc = load_engine_locked(path);
  if (rc == 0) *ops = g_ops;
  pthread_mutex_unlock(&g_load_mu);
  return rc;
}

int load_engine_locked(const char* path) {
  if (g_ops == nullptr) {
    // RTLD_NODELETE: the engine's threads outlive any context.
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (h == nullptr) {
      std::fprintf(stderr, "uroce: cannot load the embedded engine: %s\n", dlerror());
      return ELIBACC;
    }
    auto fn = reinterpret_cast<ctl::EmbeddedOpsFn>(dlsym(h, ctl::kEmbeddedSymbol));
    const ctl::EmbeddedOps* o = fn != nullptr ? fn() : nullptr;
    if (o == nullptr || o->abi != ctl::kEmbeddedAbi) {
      std::fprintf(stderr, "uroce: %s is not an embedded engine of this provider (ABI %u)\n", path,
                   ctl::kEmbeddedAbi);
      return ELIBBAD;
    }
    g_ops = o;
  }
  return 0;
}

}  // namespace

int embedded_connect(const char* device_dir, int* fd, EmbeddedProgress* progress) {
  char file[PATH_MAX];
  char config[PATH_MAX];
  char lib[PATH_MAX];
  std::snprintf(file, sizeof(file), "%s/%s", device_dir, ctl::kEmbeddedConfigFile);
  int rc = read_first_line(file, config, sizeof(config));
  if (rc != 0) return rc;
  std::snprintf(file, sizeof(file), "%s/%s", device_dir, ctl::kEmbeddedEngineFile);
  if ((rc = read_first_line(file, lib, sizeof(lib))) != 0) return rc == ENOENT ? ENODEV : rc;
  const ctl::EmbeddedOps* ops = nullptr;
  if ((rc = load_engine(lib, &ops)) != 0) return rc;
  char error[512] = "";
  rc = ops->connect(config, fd, error, sizeof(error));
  if (rc != 0) {
    std::fprintf(stderr, "uroce: %s\n", error);
    return rc;
  }
  progress->poll = ops->progress;
  progress->post = ops->progress_post;
  progress->idle = ops->progress_idle;
  return 0;
}

}  // namespace uroce::provider
