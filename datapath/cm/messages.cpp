#include "datapath/cm/messages.h"

#include <cstring>

#include "datapath/wire/cm_drep.h"
#include "datapath/wire/cm_dreq.h"
#include "datapath/wire/cm_mra.h"
#include "datapath/wire/cm_rej.h"
#include "datapath/wire/cm_rep.h"
#include "datapath/wire/cm_req.h"
#include "datapath/wire/cm_rtu.h"
#include "datapath/wire/cm_sidr_rep.h"
#include "datapath/wire/cm_sidr_req.h"

namespace uroce::cm {

std::array<std::uint8_t, 16> ipv4_gid(std::uint32_t ip) {
  std::array<std::uint8_t, 16> g{};
  g[10] = 0xff;
  g[11] = 0xff;
  wire::store_be32(g.data() + 12, ip);
  return g;
}

Mad cm_mad(wire::CmAttr attr, std::uint64_t tid) {
  Mad m;
  wire::MadHdr::make_cm(attr, tid).write(m.b.data());
  return m;
}

HeaderCheck check_header(const Mad& m, wire::CmAttr* attr) {
  const wire::MadHdr h = wire::MadHdr::read(m.b.data());
  if (h.base_version() != wire::kMadBaseVersion || h.mgmt_class() != wire::kMgmtClassCm ||
      h.class_version() != wire::kCmClassVersion || h.method() != wire::kMadMethodSend ||
      h.response()) {
    return HeaderCheck::kBadHeader;
  }
  switch (static_cast<wire::CmAttr>(h.attr_id())) {
    case wire::CmAttr::kReq:
    case wire::CmAttr::kMra:
    case wire::CmAttr::kRej:
    case wire::CmAttr::kRep:
    case wire::CmAttr::kRtu:
    case wire::CmAttr::kDreq:
    case wire::CmAttr::kDrep:
    case wire::CmAttr::kSidrReq:
    case wire::CmAttr::kSidrRep:
      *attr = static_cast<wire::CmAttr>(h.attr_id());
      return HeaderCheck::kOk;
    default: return HeaderCheck::kUnknownAttr;
  }
}

Mad build_req(const ReqFields& f, std::uint64_t tid) {
  Mad m = cm_mad(wire::CmAttr::kReq, tid);
  wire::CmReq r;
  r.set_local_comm_id(f.local_id);
  r.set_service_id(f.service_id);
  r.set_local_ca_guid(f.local.ca_guid);
  r.set_local_qkey(f.local.qkey);
  r.set_local_qpn(f.local.qpn);
  r.set_responder_resources(f.local.responder_resources);
  r.set_initiator_depth(f.local.initiator_depth);
  r.set_remote_cm_response_timeout(f.remote_response_timeout);
  r.set_transport_type(wire::kCmTransportRc);
  r.set_flow_control(f.local.flow_control != 0);
  r.set_starting_psn(f.local.psn);
  r.set_local_cm_response_timeout(f.local_response_timeout);
  r.set_retry_count(f.local.retry_count);
  r.set_pkey(kDefaultPkey);
  r.set_path_mtu(f.local.path_mtu);
  r.set_rnr_retry_count(f.local.rnr_retry_count);
  r.set_max_cm_retries(f.max_retries);
  r.set_srq(f.local.srq != 0);
  r.set_primary_local_lid(kPermissiveLid);
  r.set_primary_remote_lid(kPermissiveLid);
  r.set_primary_local_gid(ipv4_gid(f.local_ip));
  r.set_primary_remote_gid(ipv4_gid(f.remote_ip));
  r.set_primary_hop_limit(64);
  r.set_primary_packet_rate(2);  // 2.5 Gb/s: the code Linux sends for "any"
  r.set_primary_local_ack_timeout(f.local.local_ack_timeout);
  std::uint8_t pd[92] = {};
  wire::CmIpPrivate::make_v4(f.src_port, f.local_ip, f.remote_ip).write(pd);
  const std::size_t n = f.consumer.len < kReqConsumerBytes ? f.consumer.len : kReqConsumerBytes;
  std::memcpy(pd + wire::CmIpPrivate::kSize, f.consumer.b.data(), n);
  r.set_private_data(pd, sizeof(pd));
  r.write(m.data());
  return m;
}

Mad build_rep(ConnId local, std::uint32_t remote, const QpParams& p, const PrivateData& pd,
              std::uint64_t tid) {
  Mad m = cm_mad(wire::CmAttr::kRep, tid);
  wire::CmRep r;
  r.set_local_comm_id(local);
  r.set_remote_comm_id(remote);
  r.set_local_qkey(p.qkey);
  r.set_local_qpn(p.qpn);
  r.set_starting_psn(p.psn);
  r.set_responder_resources(p.responder_resources);
  r.set_initiator_depth(p.initiator_depth);
  r.set_target_ack_delay(p.local_ack_timeout);
  r.set_flow_control(p.flow_control != 0);
  r.set_rnr_retry_count(p.rnr_retry_count);
  r.set_srq(p.srq != 0);
  r.set_local_ca_guid(p.ca_guid);
  r.set_private_data(pd.b.data(), pd.len);
  r.write(m.data());
  return m;
}

Mad build_rtu(ConnId local, std::uint32_t remote, std::uint64_t tid) {
  Mad m = cm_mad(wire::CmAttr::kRtu, tid);
  wire::CmRtu r;
  r.set_local_comm_id(local);
  r.set_remote_comm_id(remote);
  r.write(m.data());
  return m;
}

Mad build_mra(ConnId local, std::uint32_t remote, std::uint8_t msg, std::uint8_t service_timeout,
              std::uint64_t tid) {
  Mad m = cm_mad(wire::CmAttr::kMra, tid);
  wire::CmMra r;
  r.set_local_comm_id(local);
  r.set_remote_comm_id(remote);
  r.set_message_mraed(msg);
  r.set_service_timeout(service_timeout);
  r.write(m.data());
  return m;
}

Mad build_rej(ConnId local, std::uint32_t remote, std::uint8_t msg, std::uint16_t reason,
              const PrivateData& pd, std::uint64_t tid) {
  Mad m = cm_mad(wire::CmAttr::kRej, tid);
  wire::CmRej r;
  r.set_local_comm_id(local);
  r.set_remote_comm_id(remote);
  r.set_message_rejected(msg);
  r.set_reason(reason);
  r.set_private_data(pd.b.data(), pd.len);
  r.write(m.data());
  return m;
}

Mad build_dreq(ConnId local, std::uint32_t remote, std::uint32_t remote_qpn, const PrivateData& pd,
               std::uint64_t tid) {
  Mad m = cm_mad(wire::CmAttr::kDreq, tid);
  wire::CmDreq r;
  r.set_local_comm_id(local);
  r.set_remote_comm_id(remote);
  r.set_remote_qpn(remote_qpn);
  const std::size_t n = pd.len < kDreqPrivateBytes ? pd.len : kDreqPrivateBytes;
  std::memcpy(r.raw + wire::CmDreq::kPrivateOffset, pd.b.data(), n);
  r.write(m.data());
  return m;
}

Mad build_drep(ConnId local, std::uint32_t remote, const PrivateData& pd, std::uint64_t tid) {
  Mad m = cm_mad(wire::CmAttr::kDrep, tid);
  wire::CmDrep r;
  r.set_local_comm_id(local);
  r.set_remote_comm_id(remote);
  r.set_private_data(pd.b.data(), pd.len);
  r.write(m.data());
  return m;
}

Mad build_sidr_req(ConnId request_id, std::uint16_t dst_port, std::uint16_t src_port,
                   std::uint32_t local_ip, std::uint32_t remote_ip, const PrivateData& consumer,
                   std::uint64_t tid) {
  Mad m = cm_mad(wire::CmAttr::kSidrReq, tid);
  wire::CmSidrReq r;
  r.set_request_id(request_id);
  r.set_pkey(kDefaultPkey);
  r.set_service_id(wire::ip_service_id(wire::kIpProtoUdp, dst_port));
  std::uint8_t pd[wire::CmSidrReq::kPrivateBytes] = {};
  wire::CmIpPrivate::make_v4(src_port, local_ip, remote_ip).write(pd);
  const std::size_t n = consumer.len < kSidrReqConsumerBytes ? consumer.len : kSidrReqConsumerBytes;
  std::memcpy(pd + wire::CmIpPrivate::kSize, consumer.b.data(), n);
  r.set_private_data(pd, sizeof(pd));
  r.write(m.data());
  return m;
}

Mad build_sidr_rep(std::uint32_t request_id, std::uint8_t status, std::uint32_t qpn,
                   std::uint32_t qkey, std::uint64_t service_id, const PrivateData& pd,
                   std::uint64_t tid) {
  Mad m = cm_mad(wire::CmAttr::kSidrRep, tid);
  wire::CmSidrRep r;
  r.set_request_id(request_id);
  r.set_status(status);
  r.set_qpn(qpn);
  r.set_qkey(qkey);
  r.set_service_id(service_id);
  r.set_private_data(pd.b.data(), pd.len);
  r.write(m.data());
  return m;
}

}  // namespace uroce::cm
