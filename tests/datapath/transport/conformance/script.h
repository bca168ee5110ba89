// The conformance script language (README.md in this folder): tokenizing
// and checking each line of a script before anything runs, so that a typo
// is reported with its line number instead of surfacing as a confusing
// mismatch later.
//
// A line is
//   [at TIME | by TIME] COMMAND {WORD | KEY=VALUE}   [# comment]
// The command decides which words and keys are allowed; values stay text
// here and are interpreted by the runner (runner.h), which reports bad
// values with the line number as well.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "datapath/base/time.h"

namespace uroce::transport::conformance {

enum class TimeMode : std::uint8_t {
  kNone,  // no prefix: the line happens at the current time
  kAt,    // exactly at this time
  kBy,    // at or before this time (expectations only)
};

struct Line {
  int no = 0;  // 1-based line number in the file
  TimeMode mode = TimeMode::kNone;
  TimeNs time = 0;  // meaningful unless mode == kNone
  std::string cmd;
  // Bare words after the command (e.g. "rc", "rc_send_only", "ackreq"),
  // in order.
  std::vector<std::string> words;
  // KEY=VALUE pairs, in order; a key appears at most once.
  std::vector<std::pair<std::string, std::string>> kv;

  const std::string* find(std::string_view key) const;
  bool has_word(std::string_view w) const;
};

struct ParseResult {
  std::vector<Line> lines;
  int error_line = 0;  // 0: no error
  std::string error;
  bool ok() const { return error_line == 0; }
};

// "0", "250ns", "3us", "0.65ms", "67.108864ms", "1s" -> nanoseconds.
// Fractions finer than a nanosecond are rejected.
std::optional<TimeNs> parse_time(std::string_view s);
// Decimal or 0x-prefixed hexadecimal, up to 64 bits.
std::optional<std::uint64_t> parse_number(std::string_view s);
// Formats nanoseconds the way scripts write them (e.g. "643us").
std::string format_time(TimeNs t);

// Splits and checks every line: time prefix, known command, allowed words
// and keys (the first error wins, with its line number).
ParseResult parse_script(std::string_view text);

}  // namespace uroce::transport::conformance
