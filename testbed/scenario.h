// A testbed scenario as plain data (what a TOML file says, after parsing),
// and its resolution into a checked topology (indices instead of names,
// ports, every route).
//
// Nodes are hosts and switches. A host has exactly one link; a switch has
// one port per link it is on, numbered in the order the links are listed.
// Routes are per (switch, destination host): `auto_routes` fills every pair
// with a shortest path (ties to the lowest port; with `ecmp`, every port on
// a shortest path, an ECMP group the switch hashes flows over), then
// explicit routes replace entries (that is how loops are made), and route
// changes replace them again at a given time (transient loops). A route
// names the next hop (a neighbour); an empty `via` in a route change
// removes the route.
//
// Link changes take a link down (every frame that arrives over it, either
// way, is lost) or up again at a given time. The switches' routes do not
// notice, unless `reconverge_us` is set: that long after each link change
// the whole table is computed again (auto routes over the links up, then
// the explicit routes), as a routing protocol converges; route changes
// applied before it are replaced.
//
// resolve() checks everything a run relies on and returns an error that
// names the offending entry and key ("link[2].b: unknown node 's9'"), or ""
// with `out` filled.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "datapath/base/time.h"
#include "datapath/wire/addr.h"
#include "pfc/sinks.h"
#include "pfc/storm_watchdog.h"
#include "sched/homa_settings.h"
#include "sched/port_limit.h"
#include "sched/tx_policy.h"
#include "testbed/switch/shared_buffer.h"
#include "testbed/switch/switch_model.h"
#include "testbed/workload.h"

namespace uroce::testbed {

inline constexpr TimeNs kNever = pfc::kNoDeadline;

struct LinkSpec {
  std::string a;
  std::string b;
  std::uint64_t rate_bps = 40'000'000'000ull;
  TimeNs delay_ns = 1000;
  // Bytes added to each frame's wire time (e.g. 20 for preamble and
  // inter-frame gap); 0 by default, so rates are in frame bits.
  std::uint32_t overhead_bytes = 0;
  // Fraction of data frames lost in each direction (link.h), drawn per
  // direction from a stream the run's seed derives: random loss on a hop.
  double loss_rate = 0;
};

struct HostSpec {
  std::string name;
  // Receive processing rate; 0 = consumes at once (never pauses its switch).
  std::uint64_t rx_bps = 0;
  // With a finite rx_bps: the host's receive buffer and its PFC thresholds
  // (pfc::IngressAccounting, dynamic mode).
  std::uint64_t rx_buffer_bytes = 1u << 20;
  std::uint64_t rx_headroom_bytes = 64u << 10;
  std::uint32_t rx_alpha_num = 1;
  std::uint32_t rx_alpha_den = 1;
  std::uint64_t rx_xon_offset_bytes = 16u << 10;
  // Packets a source may queue per priority while the NIC is paused or
  // busy; a source finding it full skips that packet (counted).
  std::uint32_t tx_queue_packets = 64;
  // kind = "engine": the host runs the real engine (engine_host.h) and can
  // be an end of [[rc_flow]]s; its Ethernet MTU bounds their path MTU.
  bool engine = false;
  std::uint32_t eth_mtu = 9000;
  // Engine hosts only: the priorities the engine's own endpoint PFC
  // (datapath/engine/pfc_endpoint.h) generates and obeys (key `pfc`); 0
  // (default): the engine's PFC is off and the Host port model honours the
  // switch's pauses instead. engine_rx_budget: staged frames the engine
  // processes per poll; engine_poll_ns: virtual CPU time one engine poll
  // takes (0: none, the engine is infinitely fast).
  std::uint8_t engine_pfc = 0;
  std::uint32_t engine_rx_budget = 64;
  TimeNs engine_poll_ns = 0;
  // Engine hosts only: DCQCN (sched/dcqcn.h; key `dcqcn`), with the host's
  // link rate as its line rate; `cnp_interval_us` its notification point's
  // CNP interval.
  bool engine_dcqcn = false;
  TimeNs engine_cnp_interval_ns = 50'000;
  // Engine hosts only: the DC target's context pool (uroced's device keys
  // dc_contexts, dc_records_log2, dc_stale_ms; docs/dc.md "Target").
  std::uint32_t engine_dc_contexts = 4096;
  std::uint32_t engine_dc_records_log2 = 16;
  std::uint32_t engine_dc_stale_ms = 10'000;
  // Engine hosts only: the fraction of RoCEv2 frames the engine drops on
  // receive (datapath/engine/impairment.h), from a stream the run's seed
  // derives per host: a lossy link into the host.
  double engine_drop_rx_rate = 0;
  // Engine hosts only: the device's TX policy, read through uroced's device
  // keys of the same names and rules (`isolation`, `strict_classes`,
  // `class_weights`; docs/sched.md).
  sched::TxPolicyConfig engine_sched{};
  // The host's TX queue below the engine (key `tx_queue`): false
  // ("priority", the default) one FIFO per PFC priority served 7..0, as an
  // RNIC's per-class queues; true ("fifo") one FIFO for every data frame,
  // as a memif or af_packet ring: a frame waits behind all queued before it
  // whatever its priority, and a paused priority at its head holds the rest.
  bool tx_fifo = false;
  // Engine hosts only: the engine's port limit (sched/port_limit.h; key
  // `tx_limit_bytes`, uroced's device key), at the host's link rate; 0: off.
  std::uint32_t engine_tx_limit_bytes = 0;
  // Engine hosts only: the Homa-like scheduler (sched/homa_settings.h; keys
  // `homa`, `homa_priorities`, ...): off by default.
  sched::homa::HomaSettings engine_homa{};
  // Engine hosts only: selective repeat with peers that turn it on too
  // (uroced's device keys `lossy`, `lossy_qps` and `spray_paths`,
  // engine::VnicConfig's; docs/lossy.md): off by default, one path.
  bool engine_lossy = false;
  std::uint32_t engine_lossy_qps = 256;
  std::uint32_t engine_spray_paths = 1;
  bool engine_spray_ecn = false;         // key `spray_ecn`
  std::uint32_t engine_lossy_cap = 256;  // key `lossy_cap`
};

struct SwitchSpec {
  std::string name;
  // pfc_enable, xoff_quanta and refresh_percent come from PfcSpec.
  SharedBufferConfig buffer;
  EcnConfig ecn;
  // ECMP groups pick the least-queued member per packet (key
  // `adaptive_routing`) instead of hashing each flow to one.
  bool adaptive = false;
};

struct RouteSpec {
  std::string sw;
  std::string dst;
  std::string via;
};

struct RouteChangeSpec {
  TimeNs at_ns = 0;
  std::string sw;
  std::string dst;
  std::string via;  // empty: remove the route
};

struct LinkChangeSpec {
  TimeNs at_ns = 0;
  std::string link;  // "a-b" as the link is written, either order
  bool up = false;
  // false: left out of the run (as RcFlowSpec's `enabled`), so one file
  // holds the failure and --set turns it on.
  bool enabled = true;
};

struct FlowSpec {
  std::string name;
  std::string src;
  std::string dst;
  std::uint64_t rate_bps = 1'000'000'000ull;
  std::uint32_t size_bytes = 1024;  // Ethernet frame without FCS
  std::uint8_t ttl = 64;
  std::uint8_t prio = 3;
  bool ecn_capable = false;
  TimeNs start_ns = 0;
  TimeNs stop_ns = kNever;
  // Seeded: the first packet is sent at start + uniform[0, start_jitter).
  TimeNs start_jitter_ns = 0;
  // Seeded: each gap is the nominal gap x uniform[1 - jitter, 1 + jitter].
  double jitter = 0.0;
};

// An RC workload between two engine hosts (rc_flow.h): `count` messages
// of `size_bytes`, SEND or RDMA WRITE, at most `window` outstanding, from
// start_ns. The QPs' path: MTU, service level (-> priority -> DSCP through
// the default pfc::PriorityMap), TTL and the retransmission timeout
// exponent (4.096 us x 2^timeout).
struct RcFlowSpec {
  std::string name;
  std::string src;
  std::string dst;
  bool write = false;  // op = "write"; else "send"
  std::uint32_t size_bytes = 65536;
  std::uint64_t count = 100;
  std::uint32_t window = 8;
  std::uint32_t mtu = 1024;
  std::uint8_t sl = 3;
  std::uint8_t ttl = 64;
  std::uint8_t timeout = 14;
  TimeNs start_ns = 0;
  // false: the flow is left out of the run (no QPs; reported as
  // "disabled"), so one file can hold every point of an experiment and
  // --set picks the flows of each.
  bool enabled = true;
  // true: every message's completion time (completion seen by the source -
  // post) goes to rc_mct.csv in the output directory, for a CDF.
  bool mct_samples = false;
};

// A DC fan-out between engine hosts (dc_flow.h): one DCI on `src` sends
// `count` messages of `size_bytes` round robin over one DCT on each host of
// `targets` (message i to target i mod T, on DCI stream i mod streams),
// SEND or RDMA WRITE (both with immediate), at most `window` outstanding,
// from start_ns. Path keys as RcFlowSpec's; the engines lower the MTU to
// the DC path MTU of their eth_mtu.
struct DcFlowSpec {
  std::string name;
  std::string src;
  std::vector<std::string> targets;
  bool write = false;  // op = "write"; else "send"
  std::uint32_t size_bytes = 4096;
  std::uint64_t count = 1000;
  std::uint32_t window = 16;
  std::uint32_t streams = 1;  // 1, 2, 4, 8 or 16
  std::uint32_t mtu = 1024;
  std::uint8_t sl = 3;
  std::uint8_t ttl = 64;
  std::uint8_t timeout = 14;
  TimeNs start_ns = 0;
  bool enabled = true;
};

// [workload]: messages of a size distribution arriving as a Poisson process
// at an offered load between uniform random ordered pairs of every engine
// host, each pair with its own pool of RC QPs (message_workload.h;
// docs/homa-testbed.md). The scenario's seed drives the arrivals.
struct WorkloadScenario {
  bool enabled = false;  // the table is present
  // The size distribution's CSV file (workload.h); scenario_from_file()
  // makes a relative path relative to the scenario file's directory.
  std::string distribution;
  // 0: the file's lengths; else longer lengths become this one
  // (SizeDistribution::truncated, as Homa's cp_node caps at 1,000,000).
  std::uint64_t max_length_bytes = 0;
  double load = 0.5;  // Homa's: message data bytes / link rate, per host
  TimeNs warmup_ns = kNsPerMs;
  TimeNs measure_ns = 10 * kNsPerMs;  // arrivals measured after the warmup
  std::uint32_t qps_per_pair = 4;
  bool write = false;  // op = "write_imm"; else "send" (SEND with immediate)
  std::uint32_t mtu = 4096;
  std::uint8_t sl = 3;
  std::uint8_t ttl = 64;
  std::uint8_t timeout = 14;
  std::uint32_t buckets = 10;  // equal-count length buckets of the slowdown table
  bool samples = false;        // every measured message to messages.csv
  // Incast bursts beside the Poisson messages (incast.h): 0 = none, else
  // this many senders to one receiver every incast_every_ns, from t = 0,
  // each sending incast_bytes.
  std::uint32_t incast_senders = 0;
  std::uint64_t incast_bytes = 65536;
  TimeNs incast_every_ns = kNsPerMs;
};

// A raw MAC Control frame sent from `from` to its neighbour `to` at `at`:
// a well-formed PFC frame by default, with any field made bad on purpose.
struct PfcInjectSpec {
  TimeNs at_ns = 0;
  std::string from;
  std::string to;
  std::uint8_t class_enable = 0;
  std::array<std::uint16_t, 8> quanta{};
  std::uint16_t opcode = 0x0101;
  std::uint16_t ethertype = 0x8808;
  std::optional<wire::MacAddr> dst_mac;  // default 01:80:C2:00:00:01
  std::uint32_t length = 60;             // < 60 truncates the frame
};

struct PfcSpec {
  std::uint8_t enable = 0x08;  // lossless priorities, network-wide
  std::uint16_t xoff_quanta = 0xffff;
  std::uint32_t refresh_percent = 50;
  std::uint16_t max_quanta = 0xffff;  // received pauses are clamped to this
};

struct DeadlockSpec {
  bool enabled = true;
  TimeNs stall_ns = 500 * kNsPerUs;
  TimeNs check_ns = 100 * kNsPerUs;
  bool stop = false;  // end the run at the first detection
};

struct WatchdogSpec {
  bool enabled = false;
  TimeNs detection_ns = 200 * kNsPerMs;
  TimeNs restoration_ns = 200 * kNsPerMs;
  pfc::StormAction action = pfc::StormAction::kDrop;
};

struct OutputSpec {
  TimeNs sample_ns = 100 * kNsPerUs;
  bool csv = true;
  bool pcap = false;                    // every link
  std::vector<std::string> pcap_links;  // or these ("a-b")
  std::uint32_t pcap_snaplen = 128;
};

struct Scenario {
  std::string name = "scenario";
  std::string description;
  TimeNs duration_ns = 10 * kNsPerMs;
  std::uint64_t seed = 1;
  bool auto_routes = true;
  bool ecmp = false;              // [routing] ecmp
  TimeNs reconverge_ns = kNever;  // [routing] reconverge_us; kNever: routes never react
  std::vector<HostSpec> hosts;
  std::vector<SwitchSpec> switches;
  std::vector<LinkSpec> links;
  std::vector<RouteSpec> routes;
  std::vector<RouteChangeSpec> route_changes;
  std::vector<LinkChangeSpec> link_changes;
  std::vector<FlowSpec> flows;
  std::vector<RcFlowSpec> rc_flows;
  std::vector<DcFlowSpec> dc_flows;
  std::vector<PfcInjectSpec> pfc_injections;
  WorkloadScenario workload;
  PfcSpec pfc;
  DeadlockSpec deadlock;
  WatchdogSpec watchdog;
  OutputSpec output;
};

// ---- Resolved form -------------------------------------------------------

// Node ids: hosts 0..H-1 in file order, then switches H..H+S-1.
struct PortEnd {
  std::uint32_t node = 0;
  std::uint16_t port = 0;
};

struct ResolvedRouteChange {
  TimeNs at_ns = 0;
  std::uint32_t sw = 0;    // switch index
  std::uint16_t dst = 0;   // host index
  std::int32_t port = -1;  // -1: remove
};

// An enabled [[link_change]] (`index` into Scenario::link_changes).
struct ResolvedLinkChange {
  std::uint32_t index = 0;
  TimeNs at_ns = 0;
  std::uint32_t link = 0;
  bool up = false;
};

// A [[route]] entry by index: switch, destination host, egress port.
struct StaticRoute {
  std::uint32_t sw = 0;
  std::uint16_t dst = 0;
  std::uint16_t port = 0;
};

struct ResolvedFlow {
  std::uint16_t src = 0;  // host index
  std::uint16_t dst = 0;
};

struct ResolvedDcFlow {
  std::uint16_t src = 0;  // host index
  std::vector<std::uint16_t> targets;
};

struct ResolvedInject {
  PortEnd from;
  std::uint32_t link = 0;
};

struct Topology {
  std::uint32_t num_hosts = 0;
  std::uint32_t num_switches = 0;
  std::vector<std::string> names;             // by node id
  std::vector<std::array<PortEnd, 2>> links;  // by link index: a end, b end
  // ports[node][port] = {link index, direction 0 (a->b) or 1 (b->a) for
  // frames this port sends}.
  struct PortInfo {
    std::uint32_t link = 0;
    std::uint8_t dir = 0;
    PortEnd peer;
  };
  std::vector<std::vector<PortInfo>> ports;
  // [switch][host] -> egress ports (empty: no route; several: ECMP).
  std::vector<std::vector<std::vector<std::uint16_t>>> routes;
  std::vector<StaticRoute> static_routes;
  std::vector<ResolvedRouteChange> route_changes;
  std::vector<ResolvedLinkChange> link_changes;
  std::vector<ResolvedFlow> flows;
  std::vector<ResolvedFlow> rc_flows;
  std::vector<ResolvedDcFlow> dc_flows;
  std::vector<ResolvedInject> injections;
  std::vector<bool> pcap_link;      // by link index
  std::vector<wire::MacAddr> macs;  // by node id
  std::vector<wire::Ipv4Addr> ips;  // by host index
  // [workload]: its hosts (host indices of the engine hosts, in file
  // order), the path of each ordered pair of them as link directions
  // (2 x link + 0 for a -> b, 1 for b -> a; [s][d] by workload index) and
  // the size distribution read from its file.
  std::vector<std::uint32_t> workload_hosts;
  std::vector<std::vector<std::vector<std::uint32_t>>> workload_paths;
  SizeDistribution workload_dist;

  bool is_host(std::uint32_t node) const { return node < num_hosts; }
  // The first egress port of switch `sw`'s route to host `h`, or -1.
  std::int32_t route(std::uint32_t sw, std::uint32_t h) const {
    return routes[sw][h].empty() ? -1 : routes[sw][h][0];
  }
  std::uint32_t switch_node(std::uint32_t sw) const { return num_hosts + sw; }
  // "a-b" as written in the scenario.
  std::string link_name(std::uint32_t link) const;
};

// Checks `sc` and fills `out`; "" on success, else the first problem.
std::string resolve(const Scenario& sc, Topology& out);

// Computes t.routes again: auto routes (shortest paths, ECMP groups with
// sc.ecmp) over the links whose `link_down` entry is false, then
// t.static_routes. resolve() calls it with every link up; a run's
// reconvergence with the links as they are then.
void fill_routes(const Scenario& sc, Topology& t, const std::vector<bool>& link_down);

// The problem with a flow's path MTU of `mtu` bytes, at key `key`, between
// the hosts `ends` (indices into sc.hosts), or "": it must be an IB path MTU
// and fit each host's eth_mtu, with DC's longer headers when `dc`. The one
// check behind the RC flows, the DC fan-outs and the workload.
std::string path_mtu_error(const Scenario& sc, const std::string& key, std::uint32_t mtu,
                           std::span<const std::uint32_t> ends, bool dc);

// The switch model configuration of switch `sw` (after resolve()).
SwitchConfig switch_config(const Scenario& sc, const Topology& topo, std::uint32_t sw,
                           std::uint64_t seed);

}  // namespace uroce::testbed
