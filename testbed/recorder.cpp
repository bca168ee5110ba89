#include "testbed/recorder.h"

#include <cerrno>
#include <cinttypes>

#include "testbed/simulator.h"

namespace uroce::testbed {

namespace {

void add_u64(std::string& s, std::uint64_t v) {
  s += ',';
  s += std::to_string(v);
}

// bytes over dt as Gb/s with three decimals; integer arithmetic so the
// text does not depend on floating-point formatting.
void add_gbps(std::string& s, std::uint64_t bytes, TimeNs dt) {
  s += ',';
  if (dt == 0) {
    s += "0.000";
    return;
  }
  // bits per ns = Gb/s; keep three decimals.
  const unsigned __int128 milli = static_cast<unsigned __int128>(bytes) * 8 * 1000 / dt;
  const auto m = static_cast<std::uint64_t>(milli);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03" PRIu64, m / 1000, m % 1000);
  s += buf;
}

}  // namespace

Recorder::~Recorder() { close(); }

int Recorder::open(const std::string& path) {
  close();
  f_ = std::fopen(path.c_str(), "wb");
  if (f_ == nullptr) return errno != 0 ? errno : EIO;
  header_done_ = false;
  write_error_ = false;
  rows_ = 0;
  return 0;
}

int Recorder::close() {
  if (f_ == nullptr) return 0;
  int rc = write_error_ ? EIO : 0;
  if (std::fclose(f_) != 0 && rc == 0) rc = errno != 0 ? errno : EIO;
  f_ = nullptr;
  return rc;
}

void Recorder::header(const Simulator& sim) {
  const Topology& t = sim.topology();
  std::string h = "time_us";
  for (std::uint32_t s = 0; s < t.num_switches; ++s) {
    const std::uint32_t node = t.switch_node(s);
    h += "," + t.names[node] + ".buffer_bytes";
    for (const auto& p : t.ports[node]) {
      const std::string port = t.names[node] + ">" + t.names[p.peer.node];
      h += "," + port + ".in_bytes," + port + ".out_bytes," + port + ".paused";
    }
  }
  for (std::uint32_t l = 0; l < t.links.size(); ++l) {
    const std::string a = t.names[t.links[l][0].node];
    const std::string b = t.names[t.links[l][1].node];
    h += "," + a + "->" + b + ".gbps," + b + "->" + a + ".gbps";
  }
  for (std::uint32_t i = 0; i < t.num_hosts; ++i) {
    h += "," + t.names[i] + ".tx_gbps," + t.names[i] + ".rx_gbps";
  }
  h += ",deadlocks\n";
  if (std::fputs(h.c_str(), f_) < 0) write_error_ = true;
  last_dir_bytes_.assign(sim.link_dirs().size(), 0);
  last_host_tx_.assign(t.num_hosts, 0);
  last_host_rx_.assign(t.num_hosts, 0);
  last_t_ = 0;
  header_done_ = true;
}

void Recorder::sample(const Simulator& sim, TimeNs now) {
  if (f_ == nullptr) return;
  if (!header_done_) header(sim);
  const Topology& t = sim.topology();
  const TimeNs dt = now - last_t_;
  line_.clear();
  char buf[48];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03" PRIu64, now / 1000, now % 1000);
  line_ += buf;
  for (std::uint32_t s = 0; s < t.num_switches; ++s) {
    const SwitchModel& m = sim.switches()[s];
    add_u64(line_, m.buffer().used());
    for (std::uint16_t p = 0; p < m.num_ports(); ++p) {
      std::uint64_t in = 0;
      std::uint64_t out = 0;
      std::uint64_t paused = 0;
      for (std::uint8_t c = 0; c < pfc::kNumPriorities; ++c) {
        in += m.buffer().queue_bytes(p, c);
        out += m.egress_bytes(p, c);
        if (m.paused(p, c, now)) paused |= 1u << c;
      }
      add_u64(line_, in);
      add_u64(line_, out);
      add_u64(line_, paused);
    }
  }
  for (std::size_t d = 0; d < sim.link_dirs().size(); ++d) {
    const std::uint64_t b = sim.link_dirs()[d].counters().bytes;
    add_gbps(line_, b - last_dir_bytes_[d], dt);
    last_dir_bytes_[d] = b;
  }
  for (std::uint32_t h = 0; h < t.num_hosts; ++h) {
    const HostCounters& c = sim.hosts()[h].counters();
    add_gbps(line_, c.tx_bytes - last_host_tx_[h], dt);
    add_gbps(line_, c.rx_bytes - last_host_rx_[h], dt);
    last_host_tx_[h] = c.tx_bytes;
    last_host_rx_[h] = c.rx_bytes;
  }
  add_u64(line_, sim.deadlocks().active());
  line_ += '\n';
  if (std::fputs(line_.c_str(), f_) < 0) write_error_ = true;
  last_t_ = now;
  ++rows_;
}

}  // namespace uroce::testbed
