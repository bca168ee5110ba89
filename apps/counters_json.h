// Counter sets as JSON, from their field lists (datapath/base/counter_fields.h):
// the daemon's status (apps/uroced/status_json.cpp) and the testbed's
// reports (testbed/*report.cpp) write every counter through here, so a key
// is the field list's name and a new field shows up without another line.
//
// Any struct with a field list converts to a JSON object of its listed
// counters (j = c, {"counters", c}) and back; put() writes a list or a subset of one
// (counters::pick) into an object that holds other keys too.
//
// A status value that is no member of a counter set (a level the status
// reads from elsewhere, a count kept under another name) is a Value: its
// key, how to read it and what it means, in a list next to the code that
// writes it, so that the JSON and the metrics (apps/uroced/metrics_text.h)
// read one definition.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "datapath/base/counter_fields.h"

namespace uroce::counters {

// j[name] = c.member for each entry of `list`, in its order; `strip`, when
// a name starts with it, is left out of the key (a report that shows the
// homa_ counters of a device under "homa").
template <class Json, class S, std::size_t N>
void put(Json& j, const S& c, const FieldList<S, N>& list, std::string_view strip = {}) {
  for (const Field<S>& f : list) {
    std::string_view key = f.name;
    if (!strip.empty() && key.starts_with(strip)) key.remove_prefix(strip.size());
    j[std::string(key)] = c.*f.member;
  }
}

// The same for the whole list of a counter set.
template <class Json, CounterSet S>
void put(Json& j, const S& c) {
  put(j, c, counter_fields(c));
}

// One status value of a T: the JSON key, how to read it, what it means
// (never empty: a metric's HELP) and its kind. A kFlag is written as
// true/false.
template <class T>
struct Value {
  std::string_view name;
  std::uint64_t (*get)(const T&);
  std::string_view help;
  Kind kind = Kind::kCount;
};

template <class T, std::size_t N>
using ValueList = std::array<Value<T>, N>;

// True when every entry has a reader, a name and help, and no name is
// listed twice.
template <class T, std::size_t N>
constexpr bool well_formed(const ValueList<T, N>& list) {
  for (std::size_t i = 0; i < N; ++i) {
    if (list[i].get == nullptr || list[i].name.empty() || list[i].help.empty()) return false;
    for (std::size_t k = i + 1; k < N; ++k) {
      if (list[k].name == list[i].name) return false;
    }
  }
  return true;
}

// j[name] = the value, for each entry of `list`.
template <class Json, class T, std::size_t N>
void put(Json& j, const T& v, const ValueList<T, N>& list) {
  for (const Value<T>& e : list) {
    if (e.kind == Kind::kFlag) {
      j[std::string(e.name)] = e.get(v) != 0;
    } else {
      j[std::string(e.name)] = e.get(v);
    }
  }
}

// {reason name: count} for a counter array indexed by the enum E, with
// `name` giving each reason's name; `skip_zero` leaves out the reasons that
// counted nothing (an empty object then).
template <class E, class Json = nlohmann::json, std::size_t N, class Name>
Json by_reason(const std::array<std::uint64_t, N>& counts, Name name, std::size_t first = 0,
               bool skip_zero = false) {
  Json j = Json::object();
  for (std::size_t i = first; i < N; ++i) {
    if (skip_zero && counts[i] == 0) continue;
    j[std::string(name(static_cast<E>(i)))] = counts[i];
  }
  return j;
}

}  // namespace uroce::counters

namespace nlohmann {

template <class S>
struct adl_serializer<S, std::enable_if_t<uroce::counters::CounterSet<S>>> {
  template <class Json>
  static void to_json(Json& j, const S& c) {
    j = Json::object();
    uroce::counters::put(j, c);
  }
  // Every listed counter from its key (a status object read back).
  template <class Json>
  static void from_json(const Json& j, S& c) {
    for (const auto& f : counter_fields(c)) {
      c.*f.member = j.at(std::string(f.name)).template get<std::uint64_t>();
    }
  }
};

}  // namespace nlohmann
