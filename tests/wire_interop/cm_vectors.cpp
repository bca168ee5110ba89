// cm_vectors: the C++ side of the CM interop test (check_cm_tshark.py).
//
//   cm_vectors PCAP   writes one RoCEv2 frame per CM message (REQ, MRA,
//                     REP, RTU, REJ, DREQ, DREP), each a GSI datagram (UD
//                     SEND_ONLY to QP1, Q_Key 0x80010000) whose MAD
//                     datapath/cm/messages.cpp built, and prints one JSON
//                     line per frame: the message and the field values it
//                     was built from, which tshark must decode back.
#include <cstdio>
#include <string>
#include <vector>

#include "datapath/cm/messages.h"
#include "datapath/port/pcap_writer.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/cm_mra.h"
#include "datapath/wire/cm_rej.h"

namespace {

using namespace uroce;

std::vector<std::uint8_t> gsi_frame(const cm::Mad& m, std::uint32_t psn) {
  wire::PacketSpec s;
  s.eth_src = wire::MacAddr{{0x02, 0, 0, 0, 0, 0x01}};
  s.eth_dst = wire::MacAddr{{0x02, 0, 0, 0, 0, 0x02}};
  s.ip_src = wire::Ipv4Addr{0x0a000001};
  s.ip_dst = wire::Ipv4Addr{0x0a000002};
  s.udp_src = 0xc001;
  s.opcode = wire::op::kUdSendOnly;
  s.dest_qp = wire::kGsiQpn;
  s.psn = psn;
  s.deth = wire::DethHdr::make(wire::kGsiQkey, wire::kGsiQpn);
  s.payload = std::span<const std::uint8_t>(m.b.data(), m.b.size());
  std::vector<std::uint8_t> f(wire::kMaxRoceFrame);
  const int n = wire::build_roce(s, f);
  f.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: cm_vectors PCAP\n");
    return 2;
  }
  port::PcapWriter pcap;
  if (pcap.open(argv[1]) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  std::uint32_t psn = 0;
  auto emit = [&](const cm::Mad& m, const std::string& json) {
    const std::vector<std::uint8_t> f = gsi_frame(m, psn++);
    if (f.empty() || pcap.write(psn * 1000, f) != 0) std::exit(1);
    std::printf("%s\n", json.c_str());
  };

  cm::ReqFields r;
  r.local_id = 0x11223344;
  r.service_id = wire::ip_service_id(wire::kIpProtoTcp, 7174);
  r.local.qpn = 0x000123;
  r.local.psn = 0xabcdef;
  r.local.path_mtu = 5;
  r.local.responder_resources = 16;
  r.local.initiator_depth = 8;
  r.local.retry_count = 7;
  r.local.rnr_retry_count = 6;
  r.remote_response_timeout = 20;
  r.local_response_timeout = 19;
  r.max_retries = 15;
  r.local_ip = 0x0a000001;
  r.remote_ip = 0x0a000002;
  r.src_port = 40001;
  emit(cm::build_req(r, 0x0102030405060708ull),
       R"({"msg":"req","attr":16,"tid":72623859790382856,"dport":7174,"localqpn":291,)"
       R"("startpsn":11259375,"respres":16,"initdepth":8,"remoteresptout":20,)"
       R"("localresptout":19,"maxcmretr":15,"pppmtu":5,"rnrretrcount":6,)"
       R"("sport":40001,"sip4":"10.0.0.1","dip4":"10.0.0.2"})");
  emit(cm::build_mra(0x55667788, 0x11223344, wire::kCmMsgReq, 23, 0x0102030405060708ull),
       R"({"msg":"mra","attr":17})");
  cm::QpParams p;
  p.qpn = 0x000456;
  p.psn = 0x123456;
  p.responder_resources = 4;
  p.initiator_depth = 2;
  emit(cm::build_rep(0x55667788, 0x11223344, p, {}, 0x0102030405060708ull),
       R"({"msg":"rep","attr":19,"remotecommid":287454020,"localqpn":1110,)"
       R"("startpsn":1193046,"respres":4,"initdepth":2})");
  emit(cm::build_rtu(0x11223344, 0x55667788, 0x0102030405060708ull),
       R"({"msg":"rtu","attr":20,"localcommid":287454020,"remotecommid":1432778632})");
  emit(cm::build_rej(0, 0x11223344, wire::kCmMsgReq, wire::kRejInvalidServiceId, {}, 7),
       R"({"msg":"rej","attr":18,"localcommid":0,"remotecommid":287454020,"reason":8,)"
       R"("msgrej":0})");
  emit(cm::build_dreq(0x11223344, 0x55667788, 0x000456, {}, 9),
       R"({"msg":"dreq","attr":21,"localcommid":287454020,"remotecommid":1432778632})");
  emit(cm::build_drep(0x55667788, 0x11223344, {}, 9),
       R"({"msg":"drep","attr":22,"localcommid":1432778632,"remotecommid":287454020})");
  return pcap.close() == 0 ? 0 : 1;
}
