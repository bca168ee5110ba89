#include "datapath/port/memif_args.h"

namespace uroce::port {

std::optional<MemifArgs> parse_memif_args(std::string_view device, std::string_view args) {
  if (!device.starts_with("net_memif")) return std::nullopt;
  MemifArgs m;
  while (!args.empty()) {
    const std::size_t comma = args.find(',');
    const std::string_view kv = args.substr(0, comma);
    args = comma == std::string_view::npos ? std::string_view{} : args.substr(comma + 1);
    const std::size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = kv.substr(0, eq);
    const std::string_view value = kv.substr(eq + 1);
    if (key == "role") m.client = value == "client" || value == "slave";
    if (key == "zero-copy") m.zero_copy = value == "yes";
    if (key == "socket") m.socket = std::string(value);
    if (key == "socket-abstract") m.socket_abstract = value != "no";
  }
  return m;
}

}  // namespace uroce::port
