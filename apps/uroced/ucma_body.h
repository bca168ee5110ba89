// The pieces every ucma command handler uses (ucma_commands.cpp,
// ucma_mcast.cpp): a command's struct copied out of the zero-padded body,
// an IPv4 sockaddr read, and a response copied for the interposer to write
// to the application's response address.
#pragma once

#include <arpa/inet.h>

#include <cstdint>
#include <cstring>

#include "datapath/ctl/protocol.h"

namespace uroce::daemon::ucma {

template <class T>
T body_as(const std::uint8_t* b) {
  T t;
  std::memcpy(&t, b, sizeof(T));
  return t;
}

// An IPv4 address and port from a sockaddr the application passed (IPv4
// only: uroce's RoCEv2 runs over IPv4). False for another family.
inline bool ipv4_of(const void* sa, std::uint32_t* ip, std::uint16_t* port) {
  sockaddr_in in;
  std::memcpy(&in, sa, sizeof(in));
  if (in.sin_family != AF_INET) return false;
  *ip = ntohl(in.sin_addr.s_addr);
  *port = ntohs(in.sin_port);
  return true;
}

// At most `out` bytes of `v`, for the application's `addr`.
template <class T>
void respond(ctl::CmCommandRep* rep, std::uint64_t addr, std::uint16_t out, const T& v) {
  static_assert(sizeof(T) <= ctl::kUcmaMaxResponse);
  rep->response_addr = addr;
  rep->resp_len = out < sizeof(T) ? out : sizeof(T);
  std::memcpy(rep->resp, &v, sizeof(T));
}

}  // namespace uroce::daemon::ucma
