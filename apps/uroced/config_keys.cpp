// The key readers (by type, from text or TOML), the name lists of the
// unknown-key messages, and the key tables as text and Markdown.
#include "apps/uroced/config_keys.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>

#include "apps/uroced/config_values.h"
#include "datapath/base/toml_fields.h"

namespace uroce::daemon {

using config_detail::fmt_real;
using config_detail::in_quotes;

const char* to_string(KeyType t) {
  switch (t) {
    case KeyType::kText: return "string";
    case KeyType::kInteger: return "integer";
    case KeyType::kU64: return "integer";
    case KeyType::kNumber: return "number";
    case KeyType::kSwitch: return "switch";
    case KeyType::kMask: return "list";
    case KeyType::kIntList: return "list";
    case KeyType::kTextList: return "strings";
  }
  return "?";
}

KeyValue KeyValue::of_mask(std::uint8_t mask) {
  KeyValue v;
  for (int b = 0; b < 8; ++b) {
    if ((mask >> b) & 1u) v.list.push_back(b);
  }
  return v;
}

std::uint8_t KeyValue::mask() const {
  std::uint8_t m = 0;
  for (std::int64_t b : list) m = static_cast<std::uint8_t>(m | (1u << b));
  return m;
}

namespace {

std::string note_of(std::string_view note) {
  return note.empty() ? std::string() : " (" + std::string(note) + ")";
}

// A list's note says what its elements are, not what a value means.
template <class T>
std::string range_error(const KeyDesc<T>& k, const std::string& key, const std::string& shown) {
  const bool list = k.type == KeyType::kMask || k.type == KeyType::kIntList;
  return key + ": " + shown + " is outside " + std::to_string(k.lo) + ".." + std::to_string(k.hi) +
         (list ? std::string() : note_of(k.note));
}

// The type's range check, then the key's own.
template <class T>
std::string store(const KeyDesc<T>& k, const KeyValue& v, const std::string& key, T* out) {
  switch (k.type) {
    case KeyType::kInteger:
      if (v.i < k.lo || v.i > k.hi) return range_error(k, key, std::to_string(v.i));
      break;
    case KeyType::kNumber: {
      const double r = v.is_int ? static_cast<double>(v.i) : v.real;
      if (!(r >= static_cast<double>(k.lo) && r <= static_cast<double>(k.hi))) {
        return range_error(k, key, v.is_int ? std::to_string(v.i) : fmt_real(v.real));
      }
      break;
    }
    case KeyType::kMask:
    case KeyType::kIntList:
      for (std::size_t j = 0; j < v.list.size(); ++j) {
        if (v.list[j] < k.lo || v.list[j] > k.hi) {
          return range_error(k, key + "[" + std::to_string(j) + "]", std::to_string(v.list[j]));
        }
      }
      break;
    case KeyType::kText:
    case KeyType::kU64:
    case KeyType::kSwitch:
    case KeyType::kTextList: break;
  }
  return k.set(v, key, out);
}

bool whole_int(std::string_view s, std::int64_t* v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

template <class T>
std::string mask_grammar(const KeyDesc<T>& k) {
  return std::string(k.noun) + " " + std::to_string(k.lo) + ".." + std::to_string(k.hi);
}

template <class T>
std::string list_grammar(const KeyDesc<T>& k) {
  return "at most " + std::to_string(k.max_len) + " " + std::string(k.noun);
}

}  // namespace

template <class T>
std::string set_key_text(const KeyDesc<T>& k, std::string_view text, const std::string& key,
                         T* out) {
  KeyValue v;
  const std::string bad = key + ": " + in_quotes(text);
  switch (k.type) {
    case KeyType::kText: v.text = std::string(text); break;
    case KeyType::kTextList: v.texts.emplace_back(text); break;
    case KeyType::kInteger:
      if (!whole_int(text, &v.i)) return bad + " is not an integer";
      break;
    case KeyType::kU64: {
      const auto r = std::from_chars(text.data(), text.data() + text.size(), v.u);
      if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) {
        return bad + " is not an unsigned integer";
      }
      break;
    }
    case KeyType::kNumber:
      if (!whole_int(text, &v.i)) {
        const auto r = std::from_chars(text.data(), text.data() + text.size(), v.real);
        if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) {
          return bad + " is not a number";
        }
        v.is_int = false;
      }
      break;
    case KeyType::kSwitch:
      if (text != "on" && text != "off") return bad + " is not on or off";
      v.on = text == "on";
      break;
    case KeyType::kMask:
      // Single digits only: "3,4", never "03" or "3,,4".
      if (text != "none") {
        std::size_t pos = 0;
        while (pos <= text.size()) {
          const std::size_t end = std::min(text.find(',', pos), text.size());
          const std::string_view item = text.substr(pos, end - pos);
          pos = end + 1;
          if (item.size() != 1 || item[0] < '0' + k.lo || item[0] > '0' + k.hi) {
            return bad + " is not a list of " + mask_grammar(k) +
                   " (e.g. \"3\" or \"3,4\"; \"none\")";
          }
          v.list.push_back(item[0] - '0');
        }
      }
      break;
    case KeyType::kIntList: {
      std::size_t pos = 0;
      while (pos <= text.size()) {
        const std::size_t end = std::min(text.find(',', pos), text.size());
        std::int64_t e = 0;
        if (v.list.size() == k.max_len || !whole_int(text.substr(pos, end - pos), &e)) {
          return bad + " is not a list of " + list_grammar(k) + " (" + std::string(k.note) +
                 ", e.g. \"" + std::string(k.example) + "\")";
        }
        v.list.push_back(e);
        pos = end + 1;
      }
      break;
    }
  }
  return store(k, v, key, out);
}

template <class T>
bool read_key_toml(toml_fields::Fields& f, const KeyDesc<T>& k, T* out) {
  KeyValue v;
  const std::string key = f.key_path(k.name);
  auto collect = [&](std::size_t, std::int64_t e) { v.list.push_back(e); };
  switch (k.type) {
    case KeyType::kText:
      if (k.scalar.empty() ? !f.str(k.name, v.text)
                           : !f.scalar_text(k.name, v.text, std::string(k.scalar))) {
        return false;
      }
      break;
    case KeyType::kInteger:
      if (!f.integer(k.name, v.i)) return false;
      break;
    case KeyType::kU64: {
      std::int64_t i = 0;
      if (!f.integer(k.name, i)) return false;
      if (i < 0) {
        f.fail(key + ": " + std::to_string(i) + " is negative");
        return true;
      }
      v.u = static_cast<std::uint64_t>(i);
      break;
    }
    case KeyType::kNumber: {
      const toml::node* n = f.get(k.name);
      if (n == nullptr) return false;
      if (n->is_integer()) {
        v.i = *n->value<std::int64_t>();
      } else if (n->is_floating_point()) {
        v.real = *n->value<double>();
        v.is_int = false;
      } else {
        f.type_error(key, *n, "a number");
        return true;
      }
      break;
    }
    case KeyType::kSwitch:
      if (!f.boolean(k.name, v.on)) return false;
      break;
    // Fields checks the elements' range (naming "key[i]").
    case KeyType::kMask:
      if (!f.int_array(k.name, "an array of " + mask_grammar(k), SIZE_MAX, k.lo, k.hi, collect)) {
        return false;
      }
      break;
    case KeyType::kIntList:
      if (!f.int_array(k.name, "an array of " + list_grammar(k), k.max_len, k.lo, k.hi, collect)) {
        return false;
      }
      break;
    case KeyType::kTextList:
      if (!f.str_list(k.name, v.texts)) return false;
      break;
  }
  f.fail(store(k, v, key, out));
  return true;
}

template <class T>
std::string key_value_text(const KeyDesc<T>& k, const T& in) {
  const KeyValue v = k.get(in);
  switch (k.type) {
    case KeyType::kText: return v.text;
    case KeyType::kInteger: return std::to_string(v.i);
    case KeyType::kU64: return std::to_string(v.u);
    case KeyType::kNumber: return v.is_int ? std::to_string(v.i) : fmt_real(v.real);
    case KeyType::kSwitch: return v.on ? "on" : "off";
    case KeyType::kMask:
    case KeyType::kIntList: {
      if (v.list.empty()) return "none";
      std::string s;
      for (std::int64_t e : v.list) s += (s.empty() ? "" : ",") + std::to_string(e);
      return s;
    }
    case KeyType::kTextList: {
      std::string s;
      for (const std::string& e : v.texts) s += (s.empty() ? "" : " ") + e;
      return s.empty() ? "none" : s;
    }
  }
  return {};
}

template std::string set_key_text(const KeyDesc<DeviceConfig>&, std::string_view,
                                  const std::string&, DeviceConfig*);
template std::string set_key_text(const KeyDesc<Limits>&, std::string_view, const std::string&,
                                  Limits*);
template bool read_key_toml(toml_fields::Fields&, const KeyDesc<DeviceConfig>&, DeviceConfig*);
template bool read_key_toml(toml_fields::Fields&, const KeyDesc<Limits>&, Limits*);
template std::string key_value_text(const KeyDesc<DeviceConfig>&, const DeviceConfig&);
template std::string key_value_text(const KeyDesc<Limits>&, const Limits&);
template std::string set_key_text(const KeyDesc<DaemonConfig>&, std::string_view,
                                  const std::string&, DaemonConfig*);
template bool read_key_toml(toml_fields::Fields&, const KeyDesc<DaemonConfig>&, DaemonConfig*);
template std::string key_value_text(const KeyDesc<DaemonConfig>&, const DaemonConfig&);

// ---- Lookup and names ------------------------------------------------------------------

const KeyDesc<DeviceConfig>* find_device_key(std::string_view name) {
  for (const KeySet<DeviceConfig>& s : device_key_sets()) {
    for (const KeyDesc<DeviceConfig>& k : s.keys) {
      if (k.name == name) return &k;
    }
  }
  return nullptr;
}

const KeyDesc<Limits>* find_limit_key(std::string_view name) {
  for (const KeyDesc<Limits>& k : limit_key_set().keys) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

namespace {

// "a, b or c"
std::string one_of(const std::vector<std::string_view>& names) {
  std::string s;
  for (std::size_t j = 0; j < names.size(); ++j) {
    if (j != 0) s += j + 1 == names.size() ? " or " : ", ";
    s += names[j];
  }
  return s;
}

}  // namespace

std::string device_key_names(KeySource source) {
  std::vector<std::string_view> names;
  for (const KeySet<DeviceConfig>& s : device_key_sets()) {
    for (const KeyDesc<DeviceConfig>& k : s.keys) {
      if ((k.sources & source) != 0) names.push_back(k.name);
    }
  }
  // The file's PFC settings are a table of their own (config_toml.cpp).
  if (source == kInFile) names.push_back("[device.pfc]");
  return one_of(names);
}

std::string pfc_table_key_names() {
  std::vector<std::string_view> names;
  for (const KeyDesc<DeviceConfig>& k : pfc_table_key_set().keys) names.push_back(k.name);
  return one_of(names);
}

std::string daemon_key_names(const KeySet<DaemonConfig>& set) {
  std::vector<std::string_view> names;
  for (const KeyDesc<DaemonConfig>& k : set.keys) names.push_back(k.name);
  return one_of(names);
}

std::string limit_key_names() {
  std::vector<std::string_view> names;
  for (const KeyDesc<Limits>& k : limit_key_set().keys) names.push_back(k.name);
  return one_of(names);
}

// ---- The documentation -----------------------------------------------------------

namespace {

struct Row {
  std::string name, type, range, def, where, help;
};

template <class T>
Row row_of(const KeyDesc<T>& k, const T& defaults) {
  Row r;
  r.name = std::string(k.name);
  r.type = to_string(k.type);
  switch (k.type) {
    case KeyType::kInteger:
    case KeyType::kNumber:
      r.range = std::to_string(k.lo) + ".." + std::to_string(k.hi) + note_of(k.note);
      break;
    case KeyType::kU64: r.range = "0..18446744073709551615"; break;
    case KeyType::kSwitch: r.range = "on, off (TOML: true, false)"; break;
    case KeyType::kMask: r.range = mask_grammar(k) + ", or none"; break;
    case KeyType::kIntList:
      r.range = list_grammar(k) + " " + std::to_string(k.lo) + ".." + std::to_string(k.hi) + " (" +
                std::string(k.note) + ")";
      break;
    case KeyType::kText: r.range = "-"; break;
    case KeyType::kTextList: r.range = "an array of strings"; break;
  }
  if (k.required) {
    r.def = "required";
  } else {
    r.def = key_value_text(k, defaults);
    if (r.def.empty()) r.def = "none";
  }
  if (!k.flag.empty()) {
    r.where = "file, " + std::string(k.flag);
  } else {
    r.where = k.sources == kInBoth ? "both" : k.sources == kInFile ? "file" : "--device";
  }
  r.help = std::string(k.help) + (k.live ? " (reloaded on SIGHUP)" : "");
  return r;
}

template <class T>
void rows_text(const KeySet<T>& s, const T& defaults, std::string* out) {
  *out += fmt::format("{} ({})\n", s.title, s.doc);
  for (const KeyDesc<T>& k : s.keys) {
    const Row r = row_of(k, defaults);
    *out += fmt::format("  {:<24} {:<8} {:<10} {}\n", r.name, r.type, r.def, r.range);
    *out += fmt::format("  {:<24} {}\n", "", r.help);
  }
}

std::string md_cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

template <class T>
void rows_markdown(const KeySet<T>& s, const T& defaults, bool with_where, std::string* out) {
  *out += fmt::format("\n## {}\n\nDescribed in {}.\n\n", s.title, s.doc);
  *out += with_where
              ? "| key | type | range | default | in | meaning |\n|---|---|---|---|---|---|\n"
              : "| key | type | range | default | meaning |\n|---|---|---|---|---|\n";
  for (const KeyDesc<T>& k : s.keys) {
    const Row r = row_of(k, defaults);
    *out +=
        fmt::format("| `{}` | {} | {} | {} |", r.name, r.type, md_cell(r.range), md_cell(r.def));
    if (with_where) *out += fmt::format(" {} |", r.where);
    *out += fmt::format(" {} |\n", md_cell(r.help));
  }
}

// Text for roff: a backslash as \e, a line that would start with a
// control character (. or ') guarded by \&, and a break point (\:) after
// each ',' and ';' not followed by a space, so that long lists ("0,0,0,...") can wrap.
std::string roff_text(std::string_view s) {
  std::string out;
  bool line_start = true;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else {
      out += c;
      if ((c == ',' || c == ';') && i + 1 < s.size() && s[i + 1] != ' ') out += "\\:";
    }
  }
  return out;
}

// One key set as a man page's subsection: a tagged paragraph per key.
template <class T>
void rows_man(const KeySet<T>& s, const T& defaults, bool with_where, std::string* out) {
  *out += fmt::format(".SS \"{}\"\nDescribed in {} of the uroce sources.\n", roff_text(s.title),
                      roff_text(s.doc));
  for (const KeyDesc<T>& k : s.keys) {
    const Row r = row_of(k, defaults);
    *out += fmt::format(".TP\n.B {}\n", roff_text(r.name));
    *out += roff_text(r.help) + "\n.br\n";
    *out += fmt::format("\\fI{}\\fR; {}; default: {}", roff_text(r.type), roff_text(r.range),
                        roff_text(r.def));
    if (with_where) *out += "; in: " + roff_text(r.where);
    *out += "\n";
  }
}

}  // namespace

std::string keys_man() {
  std::string out;
  const DeviceConfig dev;
  for (const KeySet<DeviceConfig>& s : device_key_sets()) rows_man(s, dev, true, &out);
  rows_man(pfc_table_key_set(), dev, true, &out);
  rows_man(limit_key_set(), Limits{}, false, &out);
  const DaemonConfig daemon;
  rows_man(daemon_key_set(), daemon, true, &out);
  rows_man(eal_key_set(), daemon, true, &out);
  return out;
}

std::string keys_text() {
  std::string out;
  const DeviceConfig dev;
  for (const KeySet<DeviceConfig>& s : device_key_sets()) {
    rows_text(s, dev, &out);
    out += "\n";
  }
  rows_text(pfc_table_key_set(), dev, &out);
  out += "\n";
  rows_text(limit_key_set(), Limits{}, &out);
  out += "\n";
  const DaemonConfig daemon;
  rows_text(daemon_key_set(), daemon, &out);
  out += "\n";
  rows_text(eal_key_set(), daemon, &out);
  return out;
}

std::string keys_markdown() {
  std::string out =
      "# uroced's configuration keys\n\n"
      "<!-- Generated by `uroce-ctl keys --markdown > docs/config-keys.md` from the key\n"
      "     tables (apps/uroced/config_keys.h); the unit test ConfigKeys.DocIsCurrent fails\n"
      "     when this file differs. Do not edit by hand. -->\n\n"
      "Every `[[device]]` key is given the same way in the TOML file and in\n"
      "`--device \"key=value;...\"` unless its `in` column says `file` or `--device`;\n"
      "a switch is `true`/`false` in the file and `on`/`off` in `--device`, a list\n"
      "an array in the file and `\"a,b\"` in `--device`. `[limits]` keys are also\n"
      "`--limit KEY=VALUE`. `[device.pfc]` is a table inside a `[[device]]` (file\n"
      "only). A `[daemon]` or `[eal]` key whose `in` column names an option is\n"
      "also that uroced option, which overrides the file (`--eal-arg` appends one\n"
      "argument to `args`).\n";
  const DeviceConfig dev;
  for (const KeySet<DeviceConfig>& s : device_key_sets()) rows_markdown(s, dev, true, &out);
  rows_markdown(pfc_table_key_set(), dev, true, &out);
  rows_markdown(limit_key_set(), Limits{}, false, &out);
  const DaemonConfig daemon;
  rows_markdown(daemon_key_set(), daemon, true, &out);
  rows_markdown(eal_key_set(), daemon, true, &out);
  return out;
}

}  // namespace uroce::daemon
