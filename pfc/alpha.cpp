#include "pfc/alpha.h"

#include <cmath>
#include <cstdlib>
#include <numeric>
#include <string>

namespace uroce::pfc {

std::string parse_alpha(std::string_view s, std::uint32_t& num, std::uint32_t& den) {
  constexpr std::uint64_t kMaxTerm = 65536;
  const std::string text(s);
  auto whole = [](std::string_view t, std::uint64_t& v) {
    if (t.empty() || t.size() > 9) return false;
    v = 0;
    for (const char c : t) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return true;
  };
  std::uint64_t n = 0;
  std::uint64_t d = 1;
  const std::size_t slash = text.find('/');
  if (slash != std::string::npos) {
    if (!whole(std::string_view(text).substr(0, slash), n) ||
        !whole(std::string_view(text).substr(slash + 1), d)) {
      return "'" + text + "' is not a fraction of whole numbers such as \"1/16\"";
    }
  } else if (whole(text, n)) {
    d = 1;
  } else {
    // A decimal: exact in 1/65536 units or refused.
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0) {
      return "'" + text + "' is not a positive number or fraction";
    }
    const double scaled = v * static_cast<double>(kMaxTerm);
    if (scaled != std::floor(scaled) || scaled > static_cast<double>(kMaxTerm * kMaxTerm)) {
      return "'" + text + "' is not a multiple of 1/65536; write it as a fraction such as \"3/10\"";
    }
    n = static_cast<std::uint64_t>(scaled);
    d = kMaxTerm;
  }
  if (n == 0 || d == 0) return "'" + text + "' must be > 0";
  const std::uint64_t g = std::gcd(n, d);
  n /= g;
  d /= g;
  if (n > kMaxTerm || d > kMaxTerm) {
    return "'" + text + "' is out of range (terms of the reduced fraction must be <= 65536)";
  }
  num = static_cast<std::uint32_t>(n);
  den = static_cast<std::uint32_t>(d);
  return {};
}

}  // namespace uroce::pfc
