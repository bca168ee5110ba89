// Building the CM MADs a connection sends, and the first check of one that
// arrives. Pure functions of their arguments.
#pragma once

#include <cstdint>

#include "datapath/cm/types.h"
#include "datapath/wire/cm_ip_private.h"
#include "datapath/wire/mad.h"

namespace uroce::cm {

// RoCE has no LIDs: a REQ names the permissive LID (0xffff), as the Linux
// CM does on RoCE ports.
inline constexpr std::uint16_t kPermissiveLid = 0xffff;
inline constexpr std::uint16_t kDefaultPkey = 0xffff;

// The GID of an IPv4 address in uroce's GID table (index 1): ::ffff:a.b.c.d.
std::array<std::uint8_t, 16> ipv4_gid(std::uint32_t ip);

// A MAD with a CM Send header for `attr` and `tid`, class data zeroed.
Mad cm_mad(wire::CmAttr attr, std::uint64_t tid);

// Why an arriving MAD is not a CM Send this machine reads (Counters).
enum class HeaderCheck { kOk, kBadHeader, kUnknownAttr };
HeaderCheck check_header(const Mad& m, wire::CmAttr* attr);

struct ReqFields {
  ConnId local_id = 0;
  std::uint64_t service_id = 0;
  QpParams local{};
  std::uint8_t remote_response_timeout = 0;
  std::uint8_t local_response_timeout = 0;
  std::uint8_t max_retries = 0;
  std::uint32_t local_ip = 0;
  std::uint32_t remote_ip = 0;
  std::uint16_t src_port = 0;
  PrivateData consumer{};  // after the IP header: at most 56 bytes
};
Mad build_req(const ReqFields& f, std::uint64_t tid);

Mad build_rep(ConnId local, std::uint32_t remote, const QpParams& p, const PrivateData& pd,
              std::uint64_t tid);
Mad build_rtu(ConnId local, std::uint32_t remote, std::uint64_t tid);
Mad build_mra(ConnId local, std::uint32_t remote, std::uint8_t msg, std::uint8_t service_timeout,
              std::uint64_t tid);
Mad build_rej(ConnId local, std::uint32_t remote, std::uint8_t msg, std::uint16_t reason,
              const PrivateData& pd, std::uint64_t tid);
Mad build_dreq(ConnId local, std::uint32_t remote, std::uint32_t remote_qpn, const PrivateData& pd,
               std::uint64_t tid);
Mad build_drep(ConnId local, std::uint32_t remote, const PrivateData& pd, std::uint64_t tid);
// SIDR (12.11): the request carries the IP header and up to
// kSidrReqConsumerBytes of private data; the reply a QP, Q_Key and status.
Mad build_sidr_req(ConnId request_id, std::uint16_t dst_port, std::uint16_t src_port,
                   std::uint32_t local_ip, std::uint32_t remote_ip, const PrivateData& consumer,
                   std::uint64_t tid);
Mad build_sidr_rep(std::uint32_t request_id, std::uint8_t status, std::uint32_t qpn,
                   std::uint32_t qkey, std::uint64_t service_id, const PrivateData& pd,
                   std::uint64_t tid);

// Bytes of consumer private data each message carries (for IP-addressed
// REQs, what is left after wire::CmIpPrivate).
inline constexpr std::size_t kReqConsumerBytes = 92 - wire::CmIpPrivate::kSize;
inline constexpr std::size_t kRepPrivateBytes = 196;
inline constexpr std::size_t kRejPrivateBytes = 148;
inline constexpr std::size_t kDreqPrivateBytes = 220;
inline constexpr std::size_t kDrepPrivateBytes = 224;
inline constexpr std::size_t kSidrReqConsumerBytes = 216 - wire::CmIpPrivate::kSize;
inline constexpr std::size_t kSidrRepPrivateBytes = 136;

}  // namespace uroce::cm
