// Strict reading of TOML tables (toml++): typed reads of named keys with
// range checks, detection of keys nobody asked for, and error messages that
// name the key ("device[0].pfc.mtu: 575 is outside 576..9216").
//
// uroced's configuration (apps/uroced/config_toml.cpp) and the testbed's
// scenario files (testbed/scenario_toml.cpp) both read their tables through
// Fields. It lives in datapath/base because both depend on the datapath and
// the datapath depends on neither, so there is no cycle; it is its own
// library (toml_fields_dep), not part of base_dep, so the datapath modules
// that never read TOML do not take the toml++ dependency.
//
// Two message styles, because the two readers' messages are part of their
// interfaces: kTerse ("key: expected an integer", "key: 7 is outside 0..3",
// "key: unknown key") is uroced's, whose file messages read the same as its
// --device string's, which have no lines; kDetailed adds the type found, the
// line and a suggestion for an unknown key ("link[0]: unknown key 'rate'
// (did you mean 'rate_gbps'?) at line 4"), as scenario files want.
#pragma once

#include <toml++/toml.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace uroce::toml_fields {

enum class Style { kTerse, kDetailed };

// Parses `text` (named `source` in messages) into `out`. Returns "" or, on a
// syntax error, "source:line:column: description".
std::string parse(std::string_view text, std::string_view source, toml::table* out);

// "a string", "an integer", ...: what a node holds, for messages.
std::string type_name(const toml::node& n);

// The keys of one table. Each read registers its key as known, leaves the
// output untouched when the key is absent, and does nothing once an error
// has been recorded; a read returns true only when it stored a value.
// finish() reports the first error, or else the first key (in the table's
// order) that no read asked for.
class Fields {
 public:
  // `path` names the table in messages ("device[0]", "defaults.link").
  Fields(const toml::table& t, std::string path, Style style)
      : t_(t), path_(std::move(path)), style_(style) {}

  const std::string& path() const { return path_; }
  // "path.key": how messages name a key of this table.
  std::string key_path(std::string_view key) const;

  // The key's node, or nullptr if absent or after an error.
  const toml::node* get(std::string_view key);
  bool has(std::string_view key);
  // An error if `key` is absent: "path: missing key 'key'".
  void require(std::string_view key);

  bool str(std::string_view key, std::string& out);
  bool boolean(std::string_view key, bool& out);

  // An integer in [lo, hi] into any integer type that holds that range.
  template <class T>
  bool integer(std::string_view key, T& out, std::int64_t lo = kMinInt, std::int64_t hi = kMaxInt) {
    const toml::node* n = get(key);
    std::int64_t v = 0;
    if (n == nullptr || !integer_value(*n, key_path(key), lo, hi, &v)) return false;
    out = static_cast<T>(v);
    return true;
  }

  // A number (integer or float) in [lo, hi], lo excluded if `lo_open`.
  bool number(std::string_view key, double& out, double lo, double hi, bool lo_open);

  // A string, an integer or a float, as its text (a float with 17 digits),
  // for values with a grammar of their own over several TOML types.
  bool scalar_text(std::string_view key, std::string& out, const std::string& want);

  bool str_list(std::string_view key, std::vector<std::string>& out);

  // An array of at most `max_len` integers in [lo, hi], applied by
  // set(index, value); an element is named "key[index]" in messages.
  template <class Set>
  bool int_array(std::string_view key, const std::string& want, std::size_t max_len,
                 std::int64_t lo, std::int64_t hi, Set set) {
    const toml::node* n = get(key);
    if (n == nullptr) return false;
    const toml::array* a = n->as_array();
    if (a == nullptr || a->size() > max_len) {
      type_error(key_path(key), *n, want);
      return false;
    }
    for (std::size_t i = 0; i < a->size(); ++i) {
      std::int64_t v = 0;
      if (!integer_value(*a->get(i), key_path(key) + "[" + std::to_string(i) + "]", lo, hi, &v)) {
        return false;
      }
      set(i, v);
    }
    return true;
  }

  // A sub-table, or nullptr (and an error if the key holds something else).
  const toml::table* table(std::string_view key, const std::string& want = "a table");

  // Errors about a node that `subject` names (a key path, or an element).
  void type_error(const std::string& subject, const toml::node& n, const std::string& want);
  void value_error(const std::string& subject, const toml::node& n, const std::string& what);
  // A value its read accepted that the caller refuses (not one of a set).
  void reject(std::string_view key, const std::string& what);
  void fail(std::string msg);

  bool ok() const { return err_.empty(); }
  // `expected`, if given, is added to an unknown key's message: "other:
  // unknown key (expected [daemon] or [eal])".
  std::string finish(std::string_view expected = {}) const;

 private:
  static constexpr std::int64_t kMinInt = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();

  bool integer_value(const toml::node& n, const std::string& subject, std::int64_t lo,
                     std::int64_t hi, std::int64_t* out);
  std::string unknown_key(std::string_view key, const toml::node& n) const;
  std::string suggestion(std::string_view key) const;

  const toml::table& t_;
  std::string path_;
  Style style_;
  std::vector<std::string> known_;
  std::string err_;
};

}  // namespace uroce::toml_fields
