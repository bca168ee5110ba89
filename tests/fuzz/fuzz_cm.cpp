// libFuzzer target: the CM state machine (datapath/cm/machine.h) fed
// arbitrary MADs, timer steps and user calls. The input is a script of
// records: one op byte, then for op 0 a MAD (the next 256 bytes, zero-filled
// when short) from the peer, for op 1 a time step (one byte, x 50 ms), for
// op 2 a user call (one byte: accept, reject, disconnect or destroy) on the
// connection the last event named. The machine must not crash, leak into
// sanitizer reports, or keep more connections than were ever created.
//
// Built with -DUROCE_FUZZ_SEEDS instead, `fuzz_cm_seeds corpus DIR` writes
// the seed corpus: the scripts of a full handshake, release and SIDR.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "datapath/cm/machine.h"

namespace {

using namespace uroce;
using namespace uroce::cm;

constexpr std::uint32_t kIpA = 0x0a000001;
constexpr std::uint32_t kIpB = 0x0a000002;
constexpr std::uint16_t kPort = 7174;

void run_script(const std::uint8_t* data, std::size_t size) {
  Machine m{77};
  (void)m.listen(0, kPort, 1);
  (void)m.listen(0, kPort, 2, wire::kIpProtoUdp);
  Output out;
  TimeNs now = 1'000'000;
  ConnectArgs a;
  a.path = Path{0, kIpB, kIpA};
  a.dst_port = kPort;
  ConnId active = 0;
  (void)m.connect(a, now, &out, &active);
  std::size_t created = 1;
  ConnId last = active;
  std::size_t i = 0;
  while (i < size) {
    const std::uint8_t op = data[i++] % 3;
    if (op == 0) {
      Mad mad;
      const std::size_t n = size - i < mad.b.size() ? size - i : mad.b.size();
      std::memcpy(mad.b.data(), data + i, n);
      i += n;
      m.on_mad(Path{0, kIpB, kIpA}, mad, now, &out);
    } else if (op == 1 && i < size) {
      now += TimeNs{data[i++]} * 50 * kNsPerMs;
      m.on_timer(now, &out);
    } else if (op == 2 && i < size) {
      const std::uint8_t call = data[i++] % 4;
      QpParams p;
      p.qpn = 0x22;
      switch (call) {
        case 0: (void)m.accept(last, p, {}, now, &out); break;
        case 1: (void)m.reject(last, {}, now, &out); break;
        case 2: (void)m.disconnect(last, {}, now, &out); break;
        case 3: (void)m.destroy(last, now, &out); break;
      }
    }
    for (const Event& e : out.events) {
      last = e.conn;
      if (e.type == EventType::kConnectRequest || e.type == EventType::kSidrRequest) ++created;
    }
    if (m.conn_count() > created) std::abort();
    out.clear();
  }
}

}  // namespace

#ifndef UROCE_FUZZ_SEEDS

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run_script(data, size);
  return 0;
}

#else

namespace {

void append_mad(std::vector<std::uint8_t>* s, const Mad& m) {
  s->push_back(0);
  s->insert(s->end(), m.b.begin(), m.b.end());
}

// Writes one seed, and replays it once: a seed must itself run clean.
void write(const std::string& path, const std::vector<std::uint8_t>& s) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(s.data(), 1, s.size(), f) != s.size()) std::exit(1);
  std::fclose(f);
  run_script(s.data(), s.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "corpus") {
    std::fprintf(stderr, "usage: fuzz_cm_seeds corpus DIR\n");
    return 2;
  }
  const std::string dir = argv[2];
  ReqFields r;
  r.local_id = 5;
  r.service_id = wire::ip_service_id(wire::kIpProtoTcp, kPort);
  r.local_ip = kIpA;
  r.remote_ip = kIpB;
  std::vector<std::uint8_t> s;
  append_mad(&s, build_req(r, 1));
  s.insert(s.end(), {2, 0});  // accept
  append_mad(&s, build_rtu(5, 77, 1));
  append_mad(&s, build_dreq(5, 77, 0, {}, 2));
  s.insert(s.end(), {2, 2, 1, 200});  // disconnect, then past timewait
  write(dir + "/passive", s);
  s.clear();
  append_mad(&s, build_rep(9, 77, {}, {}, 3));
  s.insert(s.end(), {2, 0});  // RTU
  append_mad(&s, build_drep(9, 77, {}, 4));
  write(dir + "/active", s);
  s.clear();
  append_mad(&s, build_sidr_req(6, kPort, 4000, kIpA, kIpB, {}, 5));
  s.insert(s.end(), {2, 0, 1, 255});
  write(dir + "/sidr", s);
  return 0;
}

#endif
