// The Homa-like scheduler's device keys (docs/homa.md, "On real daemons"):
// its key table, and the check that runs HomaSettings::first_bad_field(),
// the scheduler's own rule of what it can run, over the device's settings.
//
// Each key's range is the scheduler's (test_config_homa.cpp checks them
// against first_bad_field()), so the readers refuse what it would; the one
// rule between keys, a grant timeout longer than the resend interval, is
// found by first_bad_field() at validation.
#include <string>

#include "apps/uroced/config_keys.h"
#include "apps/uroced/config_values.h"

namespace uroce::daemon {

using namespace config_detail;

namespace {

using D = DeviceConfig;
using sched::homa::HomaSettings;

constexpr std::int64_t kU32 = 0xFFFF'FFFF;
// TOML integers and --device's are signed 64-bit.
constexpr std::int64_t kI64 = 0x7FFF'FFFF'FFFF'FFFF;
// The scheduler's least useful grant room (homa_settings.h): rtt_bytes and
// max_incoming below it never grant.
constexpr std::int64_t kMinRoom = HomaSettings{}.grant_increment;
// The microsecond keys stop at 10 s: a grant silent that long is from a
// peer that is gone, which RC's own retries already handle.
constexpr std::int64_t kMaxHomaUs = 10'000'000;

using H = HomaSettings;
const KeyDesc<D> kHomaKeys[] = {
    switch_key<D, &D::homa, &H::enabled>("homa", "the Homa-like receiver-driven scheduler for RC"),
    integer_key<D, &D::homa, &H::priorities>("homa_priorities", 1, 8,
                                             "the priorities the scheduler uses (0..N-1)"),
    integer_key<D, &D::homa, &H::unsched_priorities>("homa_unsched_priorities", 1, 8,
                                                     "the most of them given to unscheduled bytes"),
    integer_key<D, &D::homa, &H::unsched_bytes>("homa_unsched_bytes", 1, kU32,
                                                "bytes a message sends before its first grant"),
    integer_key<D, &D::homa, &H::rtt_bytes>("homa_rtt_bytes", kMinRoom, kU32,
                                            "bytes granted ahead of what arrived, per message"),
    integer_key<D, &D::homa, &H::overcommit>("homa_overcommit", 1, 64, "messages granted at once"),
    integer_key<D, &D::homa, &H::max_incoming>("homa_max_incoming", kMinRoom, kI64,
                                               "the most bytes granted and not yet received"),
    integer_key<D, &D::homa,
                &H::fifo_permille>("homa_fifo_permille", 0, 1000,
                                   "the share of granted bytes for the oldest message"),
    scaled_key<D, kNsPerUs, &D::homa, &H::resend_ns>("homa_resend_us", 1, kMaxHomaUs,
                                                     "a grant is re-sent after this silence"),
    scaled_key<D, kNsPerUs, &D::homa, &H::grant_timeout_ns>(
        "homa_grant_timeout_us", 1, kMaxHomaUs,
        "a sender's wait for a grant before it sends MLEN again; more than homa_resend_us"),
};

}  // namespace

std::span<const KeyDesc<DeviceConfig>> homa_keys() { return kHomaKeys; }

namespace config_detail {

std::string check_homa(const DeviceConfig& d, std::size_t i) {
  const std::string_view bad = d.homa.first_bad_field();
  if (bad.empty()) return {};
  const std::string key = dev_key(i, std::string(bad).c_str());
  const KeyDesc<DeviceConfig>* k = find_device_key(bad);
  // A field without a key keeps its default, which the scheduler accepts;
  // should that ever change, say which field rather than nothing.
  if (k == nullptr) return dev_key(i, "homa") + ": the scheduler refuses its " + std::string(bad);
  const std::int64_t v = k->get(d).i;
  if (bad == "homa_grant_timeout_us") {
    const std::int64_t resend = find_device_key("homa_resend_us")->get(d).i;
    if (v <= resend) {
      return key + ": " + std::to_string(v) + " must be more than homa_resend_us (" +
             std::to_string(resend) + ")";
    }
  }
  return key + ": " + std::to_string(v) + " is outside " + std::to_string(k->lo) + ".." +
         std::to_string(k->hi);
}

}  // namespace config_detail

}  // namespace uroce::daemon
