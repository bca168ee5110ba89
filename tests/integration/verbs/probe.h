// What the integration programs of this folder share (mcast, solicited,
// mr_fork, mr_kinds, mw_inval, rate_check, recv_visibility,
// thread_shards, dv_dc, dv_sched): one line per check on stdout, "WHAT:
// ok" or "WHAT: FAILED ..." (the scripts read these lines), a count of
// failed checks for the exit status, a fatal error as "PROGRAM: WHAT:
// strerror" on stderr with exit status 2, and devices found by name.
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

// errno is read before anything else runs (building a string may set it).
[[noreturn]] inline void die(const char* what) {
  const int err = errno;
  die(std::string(what), err);
}

[[noreturn]] inline void die(const std::string& what) { die(what, errno); }

// A check of a value: "WHAT: ok", or "WHAT: FAILED (got G, want W)".
inline void check(const char* what, long got, long want) {
  if (got == want) {
    std::printf("%s: ok\n", what);
  } else {
    std::printf("%s: FAILED (got %ld, want %ld)\n", what, got, want);
    ++failures;
  }
  std::fflush(stdout);
}

// The devices libibverbs lists, freed with this object (an ibv_device
// found here is valid while it lives).
class DeviceList {
 public:
  DeviceList() : list_(ibv_get_device_list(&n_)) {
    if (list_ == nullptr) die("ibv_get_device_list");
  }
  ~DeviceList() { ibv_free_device_list(list_); }
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;

  // The device called NAME, or nullptr.
  ibv_device* find(const char* name) const {
    for (int i = 0; i < n_; ++i) {
      if (std::strcmp(ibv_get_device_name(list_[i]), name) == 0) return list_[i];
    }
    return nullptr;
  }

 private:
  int n_ = 0;
  ibv_device** list_;
};

// The device called NAME, opened; dies when there is none or it does not
// open (ENODEV when ibv_open_device did not say why).
inline ibv_context* open_device(const char* name) {
  const DeviceList devices;
  ibv_device* dev = devices.find(name);
  errno = 0;
  ibv_context* ctx = dev != nullptr ? ibv_open_device(dev) : nullptr;
  if (ctx == nullptr) die(std::string("open ") + name, errno != 0 ? errno : ENODEV);
  return ctx;
}

}  // namespace probe
