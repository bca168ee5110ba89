// What one user or one client may take from the daemon (the [limits]
// table of uroced.toml; issue 12: one unprivileged process must not be
// able to exhaust a shared root service).
#pragma once

#include <cstdint>

namespace uroce::daemon {

struct Limits {
  // Connection threads of the whole daemon (each connection is served by
  // a thread of its own). Over it, a connection is closed at once, except
  // that root's Status request is still answered (Server).
  std::uint64_t connections = 256;
};

}  // namespace uroce::daemon
