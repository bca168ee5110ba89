#include "apps/uroced/quotas.h"

#include <algorithm>
#include <cerrno>

namespace uroce::daemon {

Usage& Usage::operator+=(const Usage& o) {
  connections += o.connections;
  qps += o.qps;
  cqs += o.cqs;
  mrs += o.mrs;
  reg_bytes += o.reg_bytes;
  map_bytes += o.map_bytes;
  return *this;
}

Usage& Usage::operator-=(const Usage& o) {
  auto sub = [](std::uint64_t& a, std::uint64_t b) { a = a > b ? a - b : 0; };
  sub(connections, o.connections);
  sub(qps, o.qps);
  sub(cqs, o.cqs);
  sub(mrs, o.mrs);
  sub(reg_bytes, o.reg_bytes);
  sub(map_bytes, o.map_bytes);
  return *this;
}

Limits resolve_limits(const Limits& l, const DeviceMaxima& dev) {
  Limits r = l;
  auto three_quarters = [](std::uint64_t v) { return std::max<std::uint64_t>(1, v / 4 * 3); };
  auto or_default = [](std::uint64_t& v, std::uint64_t d) {
    if (v == 0) v = d;
  };
  or_default(r.user_connections, three_quarters(r.connections));
  or_default(r.user_qps, three_quarters(dev.qps));
  or_default(r.user_cqs, three_quarters(dev.cqs));
  or_default(r.user_mrs, three_quarters(dev.mrs));
  or_default(r.user_reg_bytes, kDefaultUserBytes);
  or_default(r.user_map_bytes, kDefaultUserBytes);
  or_default(r.client_qps, r.user_qps);
  or_default(r.client_cqs, r.user_cqs);
  or_default(r.client_mrs, r.user_mrs);
  or_default(r.client_reg_bytes, r.user_reg_bytes);
  or_default(r.client_map_bytes, r.user_map_bytes);
  return r;
}

namespace {

// Whether `have` + `more` stays within `limit` (no overflow).
bool fits(std::uint64_t have, std::uint64_t more, std::uint64_t limit) {
  return more == 0 || (have <= limit && more <= limit - have);
}

}  // namespace

int Quotas::charge(uid_t uid, const Usage& d, Usage* client) {
  std::lock_guard<std::mutex> lk(mu_);
  Usage& u = users_[uid];
  if (uid != 0) {
    const Limits& l = limits_;
    int rc = 0;
    if (!fits(u.connections, d.connections, l.user_connections)) {
      rc = EAGAIN;
    } else if (!fits(u.qps, d.qps, l.user_qps) || !fits(client->qps, d.qps, l.client_qps) ||
               !fits(u.cqs, d.cqs, l.user_cqs) || !fits(client->cqs, d.cqs, l.client_cqs) ||
               !fits(u.mrs, d.mrs, l.user_mrs) || !fits(client->mrs, d.mrs, l.client_mrs) ||
               !fits(u.reg_bytes, d.reg_bytes, l.user_reg_bytes) ||
               !fits(client->reg_bytes, d.reg_bytes, l.client_reg_bytes) ||
               !fits(u.map_bytes, d.map_bytes, l.user_map_bytes) ||
               !fits(client->map_bytes, d.map_bytes, l.client_map_bytes)) {
      rc = ENOMEM;
    }
    if (rc != 0) {
      if (u == Usage{}) users_.erase(uid);
      return rc;
    }
  }
  u += d;
  *client += d;
  return 0;
}

void Quotas::release(uid_t uid, const Usage& d, Usage* client) {
  std::lock_guard<std::mutex> lk(mu_);
  *client -= d;
  const auto it = users_.find(uid);
  if (it == users_.end()) return;
  it->second -= d;
  if (it->second == Usage{}) users_.erase(it);
}

std::map<uid_t, Usage> Quotas::users() const {
  std::lock_guard<std::mutex> lk(mu_);
  return users_;
}

}  // namespace uroce::daemon
