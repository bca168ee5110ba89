// Embedded mode on the provider's side (docs/embedded.md): a device whose
// sysfs directory names an engine library and its configuration
// (ctl/embedded_abi.h) is served by an engine in this process. The library
// is loaded once per process and never unloaded (its threads run until
// exit); each context gets its own control connection to it.
#pragma once

#include <cstdint>

namespace uroce::provider {

// Drives the engine shard that serves the context (HelloRep.shard).
using ProgressFn = void (*)(std::uint32_t shard);

struct EmbeddedProgress {
  ProgressFn poll = nullptr;  // before a poll
  ProgressFn post = nullptr;  // after a post
  ProgressFn idle = nullptr;  // before the application sleeps on events
};

// `device_dir` is the device's sysfs directory (.../device). ENOENT when
// the device is not in embedded mode (the caller connects to uroced);
// otherwise 0 with *fd a connected control socket and *progress the
// engine's progress calls, or an errno (the reason also printed on stderr:
// libibverbs has no way to carry it).
int embedded_connect(const char* device_dir, int* fd, EmbeddedProgress* progress);

}  // namespace uroce::provider
