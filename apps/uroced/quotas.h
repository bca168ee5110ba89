// Per-user and per-client accounting against Limits (resource_limits.h),
// shared by every session of the daemon.
//
// A session charges what an object will cost before creating it and
// commits the charge once the object exists (Charge, RAII: a creation that
// fails on the way releases it); destroying the object releases it. The
// user's totals live here, the client's in the session (Usage), so the one
// charge() checks both under one lock: two connections of a user racing
// cannot overshoot the user's limit.
//
// Errors: ENOMEM for QPs, CQs, MRs, registered and mapped bytes (what a
// context at the device's max_qp/max_cq/max_mr already gets from uroced,
// and rxe's object pools and ib_umem_get's RLIMIT_MEMLOCK check return),
// EAGAIN for a user's connections (as fork(2) at RLIMIT_NPROC).
//
// Thread-safe (one mutex; control path only).
#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>

#include "apps/uroced/resource_limits.h"

namespace uroce::daemon {

class Quotas {
 public:
  Quotas() = default;
  explicit Quotas(const Limits& resolved) : limits_(resolved) {}
  void set_limits(const Limits& resolved) {
    std::lock_guard<std::mutex> lk(mu_);
    limits_ = resolved;
  }
  Limits limits() const {
    std::lock_guard<std::mutex> lk(mu_);
    return limits_;
  }

  // Adds `d` to user `uid` and to `*client` when both stay within their
  // limits (root: always). 0, or the errno of the first limit it exceeds.
  int charge(uid_t uid, const Usage& d, Usage* client);
  // Takes `d` off user `uid` and `*client`.
  void release(uid_t uid, const Usage& d, Usage* client);
  // What each user with anything charged holds.
  std::map<uid_t, Usage> users() const;

 private:
  Limits limits_{};
  mutable std::mutex mu_;
  std::map<uid_t, Usage> users_;
};

// A charge that is released again unless commit() is called.
class Charge {
 public:
  Charge(Quotas* q, uid_t uid, const Usage& d, Usage* client)
      : q_(q), uid_(uid), d_(d), client_(client) {
    rc_ = q_ != nullptr ? q_->charge(uid_, d_, client_) : 0;
  }
  ~Charge() {
    if (rc_ == 0 && !committed_ && q_ != nullptr) q_->release(uid_, d_, client_);
  }
  Charge(const Charge&) = delete;
  Charge& operator=(const Charge&) = delete;
  int error() const { return rc_; }
  void commit() { committed_ = true; }

 private:
  Quotas* q_;
  uid_t uid_;
  Usage d_;
  Usage* client_;
  int rc_ = 0;
  bool committed_ = false;
};

}  // namespace uroce::daemon
