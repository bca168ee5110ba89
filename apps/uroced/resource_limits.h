// What one user or one client may take from the daemon (the [limits]
// table of uroced.toml; issue 12: one unprivileged process must not be
// able to exhaust a shared root service).
//
// Per-user limits count everything a user's connections hold on all
// devices together; per-client limits count one connection (one
// ibv_context). A value of 0 means the default:
//   - user_qps, user_cqs, user_mrs: three quarters of the smallest device
//     maximum (max_qp, max_cq, max_mr), so one user can take most of a
//     device but a quarter always stays for the others;
//   - user_connections: three quarters of `connections`;
//   - user_reg_bytes, user_map_bytes: kDefaultUserBytes (16 TiB, one eighth
//     of the 47-bit address space the daemon maps registrations into);
//   - every client_* key: the user's value.
// root (uid 0) is counted but never refused: it can stop the daemon anyway.
#pragma once

#include <cstdint>

namespace uroce::daemon {

inline constexpr std::uint64_t kDefaultUserBytes = std::uint64_t{16} << 40;

struct Limits {
  // Connections served at once, all users together (each has a thread).
  // Over it, a connection is closed at once, except that root's Status
  // request is still answered (Server).
  std::uint64_t connections = 256;
  std::uint64_t user_connections = 0;
  std::uint64_t user_qps = 0, user_cqs = 0, user_mrs = 0;
  std::uint64_t user_reg_bytes = 0, user_map_bytes = 0;
  std::uint64_t client_qps = 0, client_cqs = 0, client_mrs = 0;
  std::uint64_t client_reg_bytes = 0, client_map_bytes = 0;
};

// What a user or a client holds, or may hold.
struct Usage {
  std::uint64_t connections = 0;  // device connections (after Hello)
  std::uint64_t qps = 0, cqs = 0, mrs = 0;
  std::uint64_t reg_bytes = 0;  // sum of registered lengths
  std::uint64_t map_bytes = 0;  // sum of what the daemon maps for them
  Usage& operator+=(const Usage& o);
  Usage& operator-=(const Usage& o);  // saturating at 0
  bool operator==(const Usage&) const = default;
};

// The device maxima the defaults derive from.
struct DeviceMaxima {
  std::uint64_t qps = 0, cqs = 0, mrs = 0;
};

// `l` with every 0 replaced by its default (see the header comment).
Limits resolve_limits(const Limits& l, const DeviceMaxima& dev);

}  // namespace uroce::daemon
