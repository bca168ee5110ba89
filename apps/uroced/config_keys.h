// uroced's configuration keys as data: one descriptor per key (its name,
// type, range, help, and the functions that store it in and read it from
// the configuration), one table per key set. The tables are the only list
// of keys there is: the [[device]] and [limits] TOML readers, --device and
// --limit, the unknown-key messages, the check for required keys,
// `uroce-ctl keys` and docs/config-keys.md (written by `uroce-ctl keys
// --markdown`; a unit test fails when the committed file differs) all walk
// them. Adding a key is one table entry (and the code that uses its value).
//
// A key's value is read the same way from both sources, by its type:
//
//   type      TOML                      --device / --limit text
//   kText     a string                  the text
//   kInteger  an integer in lo..hi      a decimal integer in lo..hi
//   kU64      an integer >= 0           a decimal integer in 0..2^64-1
//   kNumber   a number in lo..hi        an integer or a real number in lo..hi
//   kSwitch   true or false             on or off
//   kMask     an array of lo..hi        "3" or "3,4" (single digits lo..hi), or "none"
//   kIntList  an array of at most       "1,2,4": at most max_len integers,
//             max_len integers in lo..hi  each in lo..hi
//   kTextList an array of strings       one string (an option given again
//                                       appends: config.cpp)
//
// The range checks and their messages are the readers' (one rule per key:
// "device[0].mtu: 9217 is outside 576..9216"); `set` stores a value that
// passed them and refuses what only the key itself knows to be wrong (a MAC
// that does not parse, an unknown isolation mode).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "apps/uroced/config.h"
#include "apps/uroced/config_values.h"

namespace uroce::toml_fields {
class Fields;
}

namespace uroce::daemon {

enum class KeyType : std::uint8_t {
  kText,
  kInteger,
  kU64,
  kNumber,
  kSwitch,
  kMask,
  kIntList,
  kTextList
};

const char* to_string(KeyType t);

// Where a key may be given.
enum KeySource : std::uint8_t { kInFile = 1, kInArg = 2, kInBoth = 3 };

// One key's value, in the field its type uses.
struct KeyValue {
  std::string text;                // kText
  std::int64_t i = 0;              // kInteger; kNumber when is_int
  std::uint64_t u = 0;             // kU64
  double real = 0;                 // kNumber when !is_int
  bool is_int = true;              // kNumber: which of i and real holds it
  bool on = false;                 // kSwitch
  std::vector<std::int64_t> list;  // kMask (the members), kIntList (in order)
  std::vector<std::string> texts;  // kTextList

  static KeyValue of_text(std::string s) { return KeyValue{.text = std::move(s)}; }
  static KeyValue of_int(std::int64_t v) { return KeyValue{.i = v}; }
  static KeyValue of_u64(std::uint64_t v) { return KeyValue{.u = v}; }
  static KeyValue of_real(double v) { return KeyValue{.real = v, .is_int = false}; }
  static KeyValue of_switch(bool v) { return KeyValue{.on = v}; }
  static KeyValue of_list(std::vector<std::int64_t> v) { return KeyValue{.list = std::move(v)}; }
  // The bits of `mask` as a kMask value.
  static KeyValue of_mask(std::uint8_t mask);
  // The kMask value's members as bits.
  std::uint8_t mask() const;
};

// One key of a configuration object T (DeviceConfig, Limits, DaemonConfig).
template <class T>
struct KeyDesc {
  std::string_view name;
  KeyType type = KeyType::kInteger;
  std::int64_t lo = 0, hi = 0;  // kInteger, kNumber: the value's; kMask, kIntList: each element's
  std::string_view help;
  // Stores a value that passed the type and range checks; "" or the error,
  // whose subject is `key` ("device[0].mac").
  std::string (*set)(const KeyValue& v, const std::string& key, T* out) = nullptr;
  // The value `in` holds, for the defaults in docs/config-keys.md.
  KeyValue (*get)(const T& in) = nullptr;
  // Said after a range error and in the docs' range: "0 = off"; for a
  // kIntList, what its elements are ("classes 0.. in order").
  std::string_view note = {};
  std::uint8_t sources = kInBoth;
  bool required = false;
  // kMask, kIntList: what the elements are ("priorities", "weights"); for
  // a kIntList also the most it holds and an example.
  std::string_view noun = {};
  std::size_t max_len = 0;
  std::string_view example = {};
  // kText: non-empty when the file may also give a number (read as its
  // text), and what the value is in the message when it is neither.
  std::string_view scalar = {};
  // The uroced option that overrides a [daemon] or [eal] key ("--lcore").
  std::string_view flag = {};
  // Whether a running uroced takes a new value on SIGHUP (config_reload.h);
  // a change to any other key refuses the reload.
  bool live = false;
};

// `k`, taken by a running uroced on SIGHUP.
template <class T>
constexpr KeyDesc<T> live_key(KeyDesc<T> k) {
  k.live = true;
  return k;
}

// A key set: a table of keys and where they are documented.
template <class T>
struct KeySet {
  std::string_view title;  // "[[device]]: Homa-like scheduler"
  std::string_view doc;    // "docs/homa.md"
  std::span<const KeyDesc<T>> keys;
};

// ---- The tables --------------------------------------------------------------------
// [[device]] and --device: the base keys, loss injection, PFC and TTL, TX
// scheduling, DCQCN (config_keys_device.cpp), the Homa-like scheduler
// (config_homa.cpp) and the DC target (config_dc.cpp), in that order.
std::span<const KeySet<DeviceConfig>> device_key_sets();
std::span<const KeyDesc<DeviceConfig>> homa_keys();  // config_homa.cpp
std::span<const KeyDesc<DeviceConfig>> dc_keys();    // config_dc.cpp
// [device.pfc], a table of its own in the file (config_pfc.cpp).
const KeySet<DeviceConfig>& pfc_table_key_set();
// [limits] and --limit (config_limits.cpp).
const KeySet<Limits>& limit_key_set();
// [daemon] and [eal], and the options that override them (config_daemon.cpp).
const KeySet<DaemonConfig>& daemon_key_set();
const KeySet<DaemonConfig>& eal_key_set();
const KeyDesc<DaemonConfig>* find_daemon_key(const KeySet<DaemonConfig>& set,
                                             std::string_view name);

const KeyDesc<DeviceConfig>* find_device_key(std::string_view name);
const KeyDesc<Limits>* find_limit_key(std::string_view name);

// "a, b or c": the names of every key that `source` may give, for the
// unknown-key messages.
std::string device_key_names(KeySource source);
std::string pfc_table_key_names();
// The names of a [daemon] or [eal] set's keys, for its unknown-key message.
std::string daemon_key_names(const KeySet<DaemonConfig>& set);
std::string limit_key_names();

// ---- The readers ------------------------------------------------------------------
// Key `k` from its text (--device, --limit), checked by type and range, then
// set; `key` names it in messages. Returns "" or the error.
template <class T>
std::string set_key_text(const KeyDesc<T>& k, std::string_view text, const std::string& key,
                         T* out);

// Key `k` from TOML table `f` if present (through the same checks); errors
// are recorded in `f`. Returns whether the key was present.
template <class T>
bool read_key_toml(toml_fields::Fields& f, const KeyDesc<T>& k, T* out);

// Every key's value in `in` as --device text ("on", "3,4", "none", "1500").
template <class T>
std::string key_value_text(const KeyDesc<T>& k, const T& in);

// ---- The documentation -----------------------------------------------------------
// The key tables as text (uroce-ctl keys), as docs/config-keys.md
// (uroce-ctl keys --markdown), or as roff subsections for uroced(8)
// (apps/man generates the page with them).
std::string keys_text();
std::string keys_markdown();
std::string keys_man();

// ---- Building descriptors -----------------------------------------------------------
// The common shapes: an integer, a u64, a real or a switch stored in the
// field that the member pointers Path... name (&DeviceConfig::homa,
// &HomaSettings::rtt_bytes: d.homa.rtt_bytes), divided by `Scale` when read
// back (microsecond keys over nanosecond fields).
namespace key_fields {

template <auto First, auto... Rest, class O>
constexpr auto& field(O& o) {
  if constexpr (sizeof...(Rest) == 0) {
    return o.*First;
  } else {
    return field<Rest...>(o.*First);
  }
}

template <class T, std::uint64_t Scale, auto... Path>
std::string set_num(const KeyValue& v, const std::string&, T* out) {
  auto& f = field<Path...>(*out);
  using F = std::remove_reference_t<decltype(f)>;
  if constexpr (std::is_same_v<F, bool>) {
    f = v.on;
  } else if constexpr (std::is_floating_point_v<F>) {
    f = v.is_int ? static_cast<F>(v.i) : static_cast<F>(v.real);
  } else if constexpr (std::is_same_v<F, std::uint64_t> && Scale == 1) {
    f = v.u != 0 ? v.u : static_cast<F>(v.i);  // kU64 or kInteger
  } else {
    f = static_cast<F>(static_cast<std::uint64_t>(v.i) * Scale);
  }
  return {};
}

template <class T, std::uint64_t Scale, auto... Path>
KeyValue get_num(const T& in) {
  const auto& f = field<Path...>(in);
  using F = std::remove_cvref_t<decltype(f)>;
  if constexpr (std::is_same_v<F, bool>) {
    return KeyValue::of_switch(f);
  } else if constexpr (std::is_floating_point_v<F>) {
    return KeyValue::of_real(f);
  } else {
    KeyValue v = KeyValue::of_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(f) / Scale));
    v.u = static_cast<std::uint64_t>(f) / Scale;
    return v;
  }
}

}  // namespace key_fields

// An integer key in lo..hi; `note` is said after a range error ("0 = off").
template <class T, auto... Path>
constexpr KeyDesc<T> integer_key(std::string_view name, std::int64_t lo, std::int64_t hi,
                                 std::string_view help, std::string_view note = {}) {
  return {.name = name,
          .type = KeyType::kInteger,
          .lo = lo,
          .hi = hi,
          .help = help,
          .set = &key_fields::set_num<T, 1, Path...>,
          .get = &key_fields::get_num<T, 1, Path...>,
          .note = note};
}

// The same over a field in units `Scale` times smaller (a _us key over a
// nanosecond field: Scale 1000).
template <class T, std::uint64_t Scale, auto... Path>
constexpr KeyDesc<T> scaled_key(std::string_view name, std::int64_t lo, std::int64_t hi,
                                std::string_view help) {
  return {.name = name,
          .type = KeyType::kInteger,
          .lo = lo,
          .hi = hi,
          .help = help,
          .set = &key_fields::set_num<T, Scale, Path...>,
          .get = &key_fields::get_num<T, Scale, Path...>};
}

template <class T, auto... Path>
constexpr KeyDesc<T> switch_key(std::string_view name, std::string_view help) {
  return {.name = name,
          .type = KeyType::kSwitch,
          .help = help,
          .set = &key_fields::set_num<T, 1, Path...>,
          .get = &key_fields::get_num<T, 1, Path...>};
}

// A real number in lo..hi (an integer is taken as one).
template <class T, auto... Path>
constexpr KeyDesc<T> real_key(std::string_view name, std::int64_t lo, std::int64_t hi,
                              std::string_view help, std::string_view note) {
  return {.name = name,
          .type = KeyType::kNumber,
          .lo = lo,
          .hi = hi,
          .help = help,
          .set = &key_fields::set_num<T, 1, Path...>,
          .get = &key_fields::get_num<T, 1, Path...>,
          .note = note};
}

// Any unsigned 64-bit value (TOML: 0..2^63-1, its integers' range).
template <class T, auto... Path>
constexpr KeyDesc<T> u64_key(std::string_view name, std::string_view help) {
  return {.name = name,
          .type = KeyType::kU64,
          .lo = 0,
          .hi = std::numeric_limits<std::int64_t>::max(),
          .help = help,
          .set = &key_fields::set_num<T, 1, Path...>,
          .get = &key_fields::get_num<T, 1, Path...>};
}

// A text key whose setter parses the text (`set` stores it or says why not).
template <class T>
constexpr KeyDesc<T> text_key(std::string_view name, std::string_view help,
                              std::string (*set)(const KeyValue&, const std::string&, T*),
                              KeyValue (*get)(const T&), bool required = false) {
  return {.name = name,
          .type = KeyType::kText,
          .help = help,
          .set = set,
          .get = get,
          .required = required};
}

// The names of an enum's values, for a choice_key: `what` is the value in
// the message for any other text ("a mode").
template <class E, std::size_t N>
struct KeyChoices {
  std::string_view what;
  std::array<std::pair<std::string_view, E>, N> options;
};

namespace key_fields {

// "\"a\" or \"b\"", "\"a\", \"b\" or \"c\"".
template <class E, std::size_t N>
std::string choice_list(const KeyChoices<E, N>& c) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? " or " : ", ";
    out += config_detail::in_quotes(c.options[i].first);
  }
  return out;
}

template <class T, const auto& Choices, auto... Path>
std::string set_choice(const KeyValue& v, const std::string& key, T* out) {
  for (const auto& [name, value] : Choices.options) {
    if (v.text == name) {
      field<Path...>(*out) = value;
      return {};
    }
  }
  return key + ": " + config_detail::in_quotes(v.text) + " is not " + std::string(Choices.what) +
         " (expected " + choice_list(Choices) + ")";
}

template <class T, const auto& Choices, auto... Path>
KeyValue get_choice(const T& in) {
  for (const auto& [name, value] : Choices.options) {
    if (field<Path...>(in) == value) return KeyValue::of_text(std::string(name));
  }
  return KeyValue::of_text("?");
}

}  // namespace key_fields

// A text key that names one of the values of the enum field at Path...
// (Choices: a KeyChoices with static storage).
template <class T, const auto& Choices, auto... Path>
constexpr KeyDesc<T> choice_key(std::string_view name, std::string_view help) {
  return text_key<T>(name, help, &key_fields::set_choice<T, Choices, Path...>,
                     &key_fields::get_choice<T, Choices, Path...>);
}

// The lossless priorities (DeviceConfig::pfc.enable): --device's `pfc` and
// [device.pfc]'s `priorities` are this one key under two names.
constexpr KeyDesc<DeviceConfig> lossless_priorities_key(std::string_view name, KeySource sources,
                                                        std::string_view help) {
  return {.name = name,
          .type = KeyType::kMask,
          .lo = 0,
          .hi = 7,
          .help = help,
          .set =
              [](const KeyValue& v, const std::string&, DeviceConfig* d) {
                d->pfc.enable = v.mask();
                return std::string();
              },
          .get = [](const DeviceConfig& d) { return KeyValue::of_mask(d.pfc.enable); },
          .sources = sources,
          .noun = "priorities"};
}

}  // namespace uroce::daemon
