// The [daemon] and [eal] key sets: where uroced keeps its files, how its
// engine polls, what it logs, and how DPDK's EAL starts (docs/engine.md).
// File keys; those with a `flag` are also uroced options, which override
// the file (config.cpp reads them through the same descriptors).
#include <string>

#include "apps/uroced/config_keys.h"
#include "apps/uroced/config_values.h"

namespace uroce::daemon {

using namespace config_detail;

namespace {

using C = DaemonConfig;
using KC = KeyDesc<DaemonConfig>;

// A file key that an option overrides.
constexpr KC with_flag(KC k, std::string_view flag) {
  k.flag = flag;
  return k;
}

// A key of the file alone.
constexpr KC in_file(KC k) {
  k.sources = kInFile;
  return k;
}

const KC kDaemonKeys[] = {
    with_flag(text_key<C>(
                  "run_dir", "the run directory: the clients' socket and the sysfs tree",
                  [](const KeyValue& v, const std::string&, C* c) {
                    c->run_dir = v.text;
                    return std::string();
                  },
                  [](const C& c) { return KeyValue::of_text(c.run_dir); }),
              "--run-dir"),
    with_flag(text_key<C>(
                  "poll",
                  "how the engine waits for work: busy, backoff (sleeps when idle) or yield",
                  [](const KeyValue& v, const std::string& key, C* c) {
                    return parse_poll(v.text, key, &c->poll);
                  },
                  [](const C& c) { return KeyValue::of_text(to_string(c.poll)); }),
              "--poll"),
    in_file(integer_key<C, &C::backoff_max_us>(
        "backoff_max_us", 0, kMaxBackoffUs,
        "backoff mode: the longest sleep of an idle engine (us)")),
    in_file(text_key<C>(
        "status_group",
        "members of this group see every client in `uroce-ctl status`; others their own",
        [](const KeyValue& v, const std::string&, C* c) {
          c->status_group = v.text;
          return std::string();
        },
        [](const C& c) { return KeyValue::of_text(c.status_group); })),
    live_key(with_flag(text_key<C>(
                           "log_level", "trace, debug, info, warn, error, critical or off",
                           [](const KeyValue& v, const std::string& key, C* c) {
                             return parse_log_level(v.text, key, &c->log_level);
                           },
                           [](const C& c) { return KeyValue::of_text(c.log_level); }),
                       "--log-level")),
};

const KC kEalKeys[] = {
    with_flag(integer_key<C, &C::lcore>("lcore", 0, kMaxLcore, "the EAL lcore of the engine"),
              "--lcore"),
    with_flag({.name = "lcores",
               .type = KeyType::kIntList,
               .lo = 0,
               .hi = kMaxLcore,
               .help =
                   "the engine's lcores, one shard of every device on each (empty: lcore alone)",
               .set =
                   [](const KeyValue& v, const std::string&, C* c) {
                     c->lcores.assign(v.list.begin(), v.list.end());
                     return std::string();
                   },
               .get =
                   [](const C& c) {
                     return KeyValue::of_list(
                         std::vector<std::int64_t>(c.lcores.begin(), c.lcores.end()));
                   },
               .note = "the first is EAL's main lcore",
               .noun = "lcores",
               .max_len = kMaxEngineLcores,
               .example = "1,2"},
              "--lcores"),
    with_flag({.name = "args",
               .type = KeyType::kTextList,
               .help = "EAL arguments (-l and --file-prefix are uroced's)",
               .set =
                   [](const KeyValue& v, const std::string&, C* c) {
                     c->eal_args = v.texts;
                     return std::string();
                   },
               .get =
                   [](const C& c) {
                     KeyValue v;
                     v.texts = c.eal_args;
                     return v;
                   }},
              "--eal-arg"),
    in_file(text_key<C>(
        "file_prefix", "the EAL's --file-prefix (empty: uroced-PID)",
        [](const KeyValue& v, const std::string&, C* c) {
          c->file_prefix = v.text;
          return std::string();
        },
        [](const C& c) { return KeyValue::of_text(c.file_prefix); })),
};

}  // namespace

const KeySet<DaemonConfig>& daemon_key_set() {
  static const KeySet<DaemonConfig> set{"[daemon]", "docs/engine.md", kDaemonKeys};
  return set;
}

const KeySet<DaemonConfig>& eal_key_set() {
  static const KeySet<DaemonConfig> set{"[eal]", "docs/engine.md", kEalKeys};
  return set;
}

const KeyDesc<DaemonConfig>* find_daemon_key(const KeySet<DaemonConfig>& set,
                                             std::string_view name) {
  for (const KeyDesc<DaemonConfig>& k : set.keys) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

}  // namespace uroce::daemon
