// One field list per counter set: every counter's name, where it lives in
// its struct and what it counts, written once next to the struct. Status
// JSON (apps/counters_json.h), uroce-ctl's columns, the testbed's reports
// and sums (add) all walk the list instead of naming the fields again; the
// names are the JSON keys, so they never change once published.
//
// Next to a struct FooCounters (in its namespace):
//   inline constexpr counters::FieldList<FooCounters, 2> kFooCounterFields{{
//       {"tx_frames", &FooCounters::tx_frames, "frames sent"},
//       {"queued", &FooCounters::queued, "frames waiting now", counters::Kind::kLevel}}};
//   static_assert(counters::covers(kFooCounterFields));
//   constexpr const auto& counter_fields(const FooCounters&) { return kFooCounterFields; }
// covers() compares the number of entries (plus the members the caller
// handles apart, e.g. an array by reason) with the struct's member count,
// found by aggregate initialization, and checks that no member or name is
// listed twice: a field added to the struct but not to the list is a build
// error. counter_fields(), found by argument-dependent lookup, is how
// generic code (add() below, the JSON serializer) finds the list.
//
// Plain C++ (no JSON, no allocation): the datapath headers that define the
// counter sets include it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace uroce::counters {

// What a value is: a count that only grows (the daemon's lifetime; a
// Prometheus counter), a level that goes up and down or a maximum (a
// gauge), or a yes/no state (JSON true/false; a gauge of 0 or 1).
enum class Kind : std::uint8_t { kCount, kLevel, kFlag };

template <class S>
struct Field {
  std::string_view name;  // the JSON key and the base of a column header
  std::uint64_t S::*member;
  std::string_view help;  // what one count means (a metric's HELP: never empty)
  Kind kind = Kind::kCount;
};

template <class S, std::size_t N>
using FieldList = std::array<Field<S>, N>;

namespace detail {

// Converts to any member type (never called: only in unevaluated braces).
struct AnyMember {
  template <class T>
  operator T() const;  // NOLINT(google-explicit-constructor)
};

template <class S, std::size_t... I>
constexpr bool initializable(std::index_sequence<I...>) {
  return requires { S{(static_cast<void>(I), AnyMember{})...}; };
}

template <class S, std::size_t N = 0>
constexpr std::size_t member_count() {
  if constexpr (!initializable<S>(std::make_index_sequence<N + 1>{})) {
    return N;
  } else {
    return member_count<S, N + 1>();
  }
}

}  // namespace detail

// The number of members of the aggregate S. An AnyMember initializes a
// whole std::array or struct member (it converts to it, so no brace
// elision), hence this counts members, not scalars. Not valid for a C array
// member, whose elements brace elision would count one by one.
template <class S>
inline constexpr std::size_t kMemberCount = detail::member_count<S>();

// True when `list` names every member of S once, with `others` the members
// kept out of the list (arrays by reason, nested counter sets) that the
// caller writes itself.
template <class S, std::size_t N, class... Others>
constexpr bool covers(const FieldList<S, N>& list, Others S::*... others) {
  static_cast<void>(sizeof...(others));
  for (std::size_t i = 0; i < N; ++i) {
    if (list[i].member == nullptr || list[i].name.empty() || list[i].help.empty()) return false;
    for (std::size_t k = i + 1; k < N; ++k) {
      if (list[k].member == list[i].member || list[k].name == list[i].name) return false;
    }
  }
  return N + sizeof...(Others) == kMemberCount<S>;
}

// The list of a counter set S that extends another set B (struct S : B,
// an aggregate with B as its one base): B's entries, then S's own. A
// device-wide sum that adds counters of its own to a per-object set keeps
// one list of each.
template <class S, class B, std::size_t M, std::size_t N>
consteval FieldList<S, M + N> extend(const FieldList<B, M>& base, const FieldList<S, N>& own) {
  FieldList<S, M + N> out{};
  for (std::size_t i = 0; i < M; ++i) {
    out[i] = Field<S>{base[i].name, base[i].member, base[i].help, base[i].kind};
  }
  for (std::size_t i = 0; i < N; ++i) out[M + i] = own[i];
  return out;
}

// covers() for such a list: B's list covers B, and the rest names every
// member S adds (S's one base counts as one member).
template <class S, class B, std::size_t N, std::size_t M>
constexpr bool covers_extended(const FieldList<S, N>& list, const FieldList<B, M>& base) {
  if (!covers(base)) return false;
  for (std::size_t i = 0; i < N; ++i) {
    if (list[i].member == nullptr || list[i].name.empty() || list[i].help.empty()) return false;
    for (std::size_t k = i + 1; k < N; ++k) {
      if (list[k].member == list[i].member || list[k].name == list[i].name) return false;
    }
  }
  return N - M + 1 == kMemberCount<S>;
}

namespace detail {
// Never defined: reaching it in a constant evaluation is a build error.
void counter_name_not_in_the_list();
}  // namespace detail

// The entry named `name`; a name the list lacks fails the build.
template <class S, std::size_t N>
consteval Field<S> field(const FieldList<S, N>& list, std::string_view name) {
  for (const Field<S>& f : list) {
    if (f.name == name) return f;
  }
  detail::counter_name_not_in_the_list();
  return {};
}

// The entries named in `names`, in that order: the subset a report or a
// table shows; a wrong name is a build error.
template <class S, std::size_t N, std::size_t K>
consteval FieldList<S, K> pick(const FieldList<S, N>& list, const std::string_view (&names)[K]) {
  FieldList<S, K> out{};
  for (std::size_t i = 0; i < K; ++i) out[i] = field(list, names[i]);
  return out;
}

// A struct with a field list (counter_fields() found for it).
template <class S>
concept CounterSet = requires(const S& s) {
  counter_fields(s);
};

// to += from, every listed field.
template <CounterSet S>
constexpr void add(S& to, const S& from) {
  for (const auto& f : counter_fields(from)) to.*f.member += from.*f.member;
}

}  // namespace uroce::counters
