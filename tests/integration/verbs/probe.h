// What the integration programs of this folder share (mcast, solicited,
// mr_fork, mr_kinds, mw_inval, rate_check, recv_visibility,
// thread_shards): one line per check on stdout, "WHAT: ok" or "WHAT:
// FAILED" (the scripts read these lines), a count of failed checks for the
// exit status, a fatal error as "PROGRAM: WHAT: strerror" on stderr with
// exit status 2, and a device opened by its name.
#pragma once

#include <errno.h>  // program_invocation_short_name (GNU)
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace probe {

inline int failures = 0;

inline void report(bool ok, const std::string& what) {
  if (!ok) ++failures;
  std::printf("%s: %s\n", what.c_str(), ok ? "ok" : "FAILED");
  std::fflush(stdout);
}

[[noreturn]] inline void die(const std::string& what, int err) {
  std::fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what.c_str(),
               std::strerror(err));
  std::exit(2);
}

[[noreturn]] inline void die(const std::string& what) { die(what, errno); }

// The device called NAME, opened; dies when there is none (ENODEV when
// ibv_open_device did not say why).
inline ibv_context* open_device(const char* name) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) die("ibv_get_device_list");
  ibv_context* ctx = nullptr;
  errno = 0;
  for (int i = 0; i < n; ++i) {
    if (std::strcmp(ibv_get_device_name(list[i]), name) == 0) ctx = ibv_open_device(list[i]);
  }
  const int err = errno != 0 ? errno : ENODEV;
  ibv_free_device_list(list);
  if (ctx == nullptr) die(std::string("open ") + name, err);
  return ctx;
}

}  // namespace probe
