// Between the provider and the embedded engine library (docs/embedded.md):
// the one symbol the provider looks up with dlsym in liburoce-engine.so,
// and the table it returns. Plain C types only: the provider is built
// without exceptions and RTTI and links nothing but libibverbs and libc.
//
// A device in embedded mode has, beside uroce_socket's place in its sysfs
// directory (docs/provider-abi.md), two one-line files written by
// uroce-embedded: device/uroce_engine (the absolute path of the library)
// and device/uroce_embedded (the absolute path of the engine's
// configuration: uroced's command-line arguments, one per line).
#pragma once

#include <cstddef>
#include <cstdint>

namespace uroce::ctl {

// Bumped on any change to EmbeddedOps; the provider refuses another.
inline constexpr std::uint32_t kEmbeddedAbi = 4;
inline constexpr const char* kEmbeddedSymbol = "uroce_embedded_ops";
inline constexpr const char* kEmbeddedConfigFile = "uroce_embedded";
inline constexpr const char* kEmbeddedEngineFile = "uroce_engine";

struct EmbeddedOps {
  std::uint32_t abi;  // kEmbeddedAbi
  // Starts the process's engine on the first call, from the arguments in
  // `config_file` (every later call must name the same file: one engine per
  // process), then opens a control connection to it, which speaks the
  // protocol of uroced's socket (docs/ctl.md). 0 and *fd, or an errno with
  // `error` (`len` bytes, NUL-terminated) saying what to do.
  int (*connect)(const char* config_file, int* fd, char* error, std::size_t len);
  // One iteration of shard `shard`'s engine (the connection's,
  // HelloRep.shard) unless another thread is running one (Engine::drive),
  // before a poll. A shard the engine does not have drives shard 0.
  void (*progress)(std::uint32_t shard);
  // After a post: the same unless a post ran one less than 2 us ago
  // (Engine::drive_post: a burst of posts goes out in one iteration).
  void (*progress_post)(std::uint32_t shard);
  // The application is about to stop driving shard `shard` (it armed a CQ
  // to sleep on its events): the shard's progress thread, if it naps while
  // the application drives, takes over now (Engine::wake_progress).
  void (*progress_idle)(std::uint32_t shard);
};

// The symbol's type: extern "C" const EmbeddedOps* uroce_embedded_ops().
using EmbeddedOpsFn = const EmbeddedOps* (*)();

}  // namespace uroce::ctl
