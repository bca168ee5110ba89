// The dynamic-threshold alpha of PFC buffer accounting (ingress_accounting.h
// at an endpoint, the testbed's shared-buffer switches): the one grammar
// uroced's configuration and the testbed's scenarios both read it with.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace uroce::pfc {

// Parses an alpha such as "1/16", "8" or "0.25" (exact in 1/65536 units)
// into a reduced fraction with terms <= 65536. Returns "" or the problem,
// quoting the text.
std::string parse_alpha(std::string_view s, std::uint32_t& num, std::uint32_t& den);

}  // namespace uroce::pfc
