#include "datapath/base/toml_fields.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace uroce::toml_fields {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string num_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

std::string parse(std::string_view text, std::string_view source, toml::table* out) {
  // toml++ reports syntax errors by exception; turned into the message here.
  try {
    *out = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return std::string(source) + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
           ": " + std::string(e.description());
  }
  return {};
}

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

std::string Fields::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

const toml::node* Fields::get(std::string_view key) {
  known_.emplace_back(key);
  if (!err_.empty()) return nullptr;
  return t_.get(key);
}

bool Fields::has(std::string_view key) {
  known_.emplace_back(key);
  return t_.contains(key);
}

void Fields::require(std::string_view key) {
  if (!err_.empty()) return;
  if (!t_.contains(key)) err_ = path_ + ": missing key '" + std::string(key) + "'";
}

bool Fields::str(std::string_view key, std::string& out) {
  const toml::node* n = get(key);
  if (n == nullptr) return false;
  if (!n->is_string()) {
    type_error(key_path(key), *n, "a string");
    return false;
  }
  out = n->as_string()->get();
  return true;
}

bool Fields::boolean(std::string_view key, bool& out) {
  const toml::node* n = get(key);
  if (n == nullptr) return false;
  if (!n->is_boolean()) {
    type_error(key_path(key), *n, "true or false");
    return false;
  }
  out = n->as_boolean()->get();
  return true;
}

bool Fields::integer_value(const toml::node& n, const std::string& subject, std::int64_t lo,
                           std::int64_t hi, std::int64_t* out) {
  if (!n.is_integer()) {
    type_error(subject, n, "an integer");
    return false;
  }
  const std::int64_t v = n.as_integer()->get();
  if (v < lo || v > hi) {
    value_error(subject, n,
                std::to_string(v) +
                    (style_ == Style::kTerse ? " is outside " : " is out of range ") +
                    std::to_string(lo) + ".." + std::to_string(hi));
    return false;
  }
  *out = v;
  return true;
}

bool Fields::number(std::string_view key, double& out, double lo, double hi, bool lo_open) {
  const toml::node* n = get(key);
  if (n == nullptr) return false;
  double v = 0;
  if (n->is_integer()) {
    v = static_cast<double>(n->as_integer()->get());
  } else if (n->is_floating_point()) {
    v = n->as_floating_point()->get();
  } else {
    type_error(key_path(key), *n, "a number");
    return false;
  }
  if (!std::isfinite(v) || v > hi || v < lo || (lo_open && v == lo)) {
    value_error(key_path(key), *n,
                num_text(v) + (style_ == Style::kTerse ? " is outside " : " is out of range ") +
                    (lo_open ? "(" : "[") + num_text(lo) + ", " + num_text(hi) + "]");
    return false;
  }
  out = v;
  return true;
}

bool Fields::scalar_text(std::string_view key, std::string& out, const std::string& want) {
  const toml::node* n = get(key);
  if (n == nullptr) return false;
  if (n->is_string()) {
    out = n->as_string()->get();
  } else if (n->is_integer()) {
    out = std::to_string(n->as_integer()->get());
  } else if (n->is_floating_point()) {
    std::ostringstream s;
    s.precision(17);
    s << n->as_floating_point()->get();
    out = s.str();
  } else {
    type_error(key_path(key), *n, want);
    return false;
  }
  return true;
}

bool Fields::str_list(std::string_view key, std::vector<std::string>& out) {
  const toml::node* n = get(key);
  if (n == nullptr) return false;
  if (!n->is_array()) {
    type_error(key_path(key), *n, "an array of strings");
    return false;
  }
  std::vector<std::string> v;
  for (const toml::node& e : *n->as_array()) {
    if (!e.is_string()) {
      // kTerse names the whole list's type; kDetailed the offending element.
      if (style_ == Style::kTerse) {
        type_error(key_path(key), e, "an array of strings");
      } else {
        value_error(key_path(key), e, "every element must be a string");
      }
      return false;
    }
    v.push_back(e.as_string()->get());
  }
  out = std::move(v);
  return true;
}

const toml::table* Fields::table(std::string_view key, const std::string& want) {
  const toml::node* n = get(key);
  if (n == nullptr) return nullptr;
  if (!n->is_table()) {
    type_error(key_path(key), *n, want);
    return nullptr;
  }
  return n->as_table();
}

void Fields::type_error(const std::string& subject, const toml::node& n, const std::string& want) {
  value_error(subject, n,
              "expected " + want + (style_ == Style::kTerse ? "" : ", got " + type_name(n)));
}

void Fields::value_error(const std::string& subject, const toml::node& n, const std::string& what) {
  if (!err_.empty()) return;
  err_ = subject + ": " + what;
  const auto line = n.source().begin.line;
  if (style_ == Style::kDetailed && line != 0) err_ += " (line " + std::to_string(line) + ")";
}

void Fields::reject(std::string_view key, const std::string& what) {
  if (const toml::node* n = t_.get(key)) value_error(key_path(key), *n, what);
}

void Fields::fail(std::string msg) {
  if (err_.empty()) err_ = std::move(msg);
}

std::string Fields::finish(std::string_view expected) const {
  if (!err_.empty()) return err_;
  for (const auto& [k, v] : t_) {
    const std::string_view key = k.str();
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    std::string msg = unknown_key(key, v);
    if (!expected.empty()) msg += " (expected " + std::string(expected) + ")";
    return msg;
  }
  return {};
}

std::string Fields::unknown_key(std::string_view key, const toml::node& n) const {
  if (style_ == Style::kTerse) return key_path(key) + ": unknown key";
  std::string msg = path_ + ": unknown key '" + std::string(key) + "'";
  if (std::string best = suggestion(key); !best.empty()) msg += " (did you mean '" + best + "'?)";
  const auto line = n.source().begin.line;
  if (line != 0) msg += " at line " + std::to_string(line);
  return msg;
}

// A known key the unknown one starts (rate -> rate_gbps), else the nearest
// by edit distance if it is close for its length, else "".
std::string Fields::suggestion(std::string_view key) const {
  std::string best;
  for (const std::string& kk : known_) {
    if (best.empty() && kk.size() > key.size() && kk.compare(0, key.size(), key) == 0) best = kk;
  }
  std::size_t best_d = std::max<std::size_t>(1, key.size() / 3) + 1;
  for (const std::string& kk : known_) {
    if (!best.empty()) break;
    best_d = std::min(best_d, edit_distance(key, kk));
  }
  for (const std::string& kk : known_) {
    if (best.empty() && edit_distance(key, kk) == best_d) best = kk;
  }
  return best;
}

}  // namespace uroce::toml_fields
