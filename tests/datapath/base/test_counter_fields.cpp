#include "datapath/base/counter_fields.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace uroce::test_counter_fields {

struct Inner {
  std::uint64_t a = 0;
  std::uint64_t b = 0;
};

struct Sample {
  std::uint64_t sent = 0;
  std::array<std::uint64_t, 4> by_reason{};
  Inner inner{};
  std::uint64_t dropped = 0;
};

inline constexpr counters::FieldList<Sample, 2> kSampleFields{{
    {"sent", &Sample::sent, "frames sent"},
    {"dropped", &Sample::dropped, "frames dropped"},
}};
constexpr const auto& counter_fields(const Sample&) { return kSampleFields; }

// An array member and a nested struct count as one member each.
static_assert(counters::kMemberCount<Sample> == 4);
static_assert(counters::kMemberCount<Inner> == 2);

// The list with the two members written apart covers Sample; without them,
// or with one of them missing, it does not.
static_assert(counters::covers(kSampleFields, &Sample::by_reason, &Sample::inner));
static_assert(!counters::covers(kSampleFields));
static_assert(!counters::covers(kSampleFields, &Sample::inner));

// A field of the struct missing from the list.
inline constexpr counters::FieldList<Sample, 1> kMissing{{{"sent", &Sample::sent, "frames sent"}}};
static_assert(!counters::covers(kMissing, &Sample::by_reason, &Sample::inner));

// The same member twice (and another missing) keeps the count but is refused.
inline constexpr counters::FieldList<Sample, 2> kTwice{{
    {"sent", &Sample::sent, "frames sent"},
    {"sent_again", &Sample::sent, "frames sent"},
}};
static_assert(!counters::covers(kTwice, &Sample::by_reason, &Sample::inner));

// Two members under one name.
inline constexpr counters::FieldList<Sample, 2> kSameName{{
    {"sent", &Sample::sent, "frames sent"},
    {"sent", &Sample::dropped, "frames dropped"},
}};
static_assert(!counters::covers(kSameName, &Sample::by_reason, &Sample::inner));

// An entry without a name.
inline constexpr counters::FieldList<Sample, 2> kNoName{{
    {"sent", &Sample::sent, "frames sent"},
    {"", &Sample::dropped, "frames dropped"},
}};
static_assert(!counters::covers(kNoName, &Sample::by_reason, &Sample::inner));

// An entry without help: every list is a metric's HELP (docs/metrics.md).
inline constexpr counters::FieldList<Sample, 2> kNoHelp{{
    {"sent", &Sample::sent, "frames sent"},
    {"dropped", &Sample::dropped, ""},
}};
static_assert(!counters::covers(kNoHelp, &Sample::by_reason, &Sample::inner));

static_assert(counters::CounterSet<Sample>);
static_assert(!counters::CounterSet<Inner>);

TEST(CounterFields_Pick, KeepsTheOrderAsked) {
  constexpr auto picked = counters::pick(kSampleFields, {"dropped", "sent"});
  static_assert(picked.size() == 2);
  EXPECT_EQ(picked[0].name, "dropped");
  EXPECT_EQ(picked[0].member, &Sample::dropped);
  EXPECT_EQ(picked[1].name, "sent");
  EXPECT_EQ(picked[1].help, "frames sent");
}

TEST(CounterFields_Add, SumsTheListedFieldsOnly) {
  Sample a;
  a.sent = 1;
  a.dropped = 2;
  a.inner.a = 5;
  Sample b;
  b.sent = 10;
  b.dropped = 20;
  b.by_reason[1] = 7;
  b.inner.a = 3;
  counters::add(a, b);
  EXPECT_EQ(a.sent, 11u);
  EXPECT_EQ(a.dropped, 22u);
  // Members outside the list are the caller's to sum.
  EXPECT_EQ(a.by_reason[1], 0u);
  EXPECT_EQ(a.inner.a, 5u);
}

}  // namespace uroce::test_counter_fields
