// uroce-ctl's side of the Status request (protocol.h, kStatus): connect to
// the daemon's socket, send one StatusReq, receive the JSON body.
#pragma once

#include <cstdint>
#include <string>

namespace uroce::ctl_tool {

// Sends StatusReq{flags} on the connected socket `sock` and returns 0 with
// the reply's JSON in *json, or an errno value with *error saying what went
// wrong (a daemon's error status is returned as its errno).
int query_status(int sock, std::uint32_t flags, std::string* json, std::string* error);

// Connects to `socket_path` and runs query_status. ECONNREFUSED/ENOENT come
// with a hint that the daemon is not running there.
int fetch_status(const std::string& socket_path, std::uint32_t flags, std::string* json,
                 std::string* error);

}  // namespace uroce::ctl_tool
