// uroced's configuration: a TOML file (apps/uroced/uroced.example.toml
// documents every key) plus command-line overrides, validated into one
// DaemonConfig before anything is started.
//
//   uroced [--config FILE] [--run-dir DIR] [--lcore N] [--poll busy|backoff|yield]
//          [--eal-arg ARG]... [--device SPEC]... [--log-level LEVEL]
//          [--limit KEY=VALUE]...
//
// Precedence: built-in defaults < the file < the command line. --device
// (repeatable) replaces the file's whole device list; --eal-arg (repeatable)
// is appended to eal.args.
//
// Every error is one line that names the offending key the way the file
// spells it ("device[1].mac: ..."; with --device, N counts the --device
// options from 0), so a user can find and fix it. Loading never throws: the
// third-party parsers' exceptions are caught where they are called.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apps/uroced/resource_limits.h"
#include "datapath/engine/impairment.h"
#include "datapath/engine/pfc_endpoint.h"
#include "datapath/port/eal_config.h"
#include "datapath/wire/addr.h"
#include "datapath/wire/opcodes.h"
#include "sched/dcqcn.h"
#include "sched/homa_settings.h"
#include "sched/pacer.h"
#include "sched/port_limit.h"
#include "sched/tx_policy.h"

namespace uroce::daemon {

enum class PollMode : std::uint8_t { kBusy, kBackoff, kYield };

// How a device reaches the wire, from its `port` string.
enum class PortKind : std::uint8_t {
  kVdev,  // "net_memif0,role=server,..." : an EAL virtual device
  kPci,   // "0000:03:00.0" : a PCI function (EAL probes it)
  kRing,  // "ring:NAME" : one end of a crossed net_ring pair in this process
  // "af_xdp:IFACE[,queue=Q][,count=N][,busy_budget=B]" : AF_XDP sockets
  // on kernel interface IFACE, queues Q..Q+N-1 (DPDK's net_af_xdp;
  // docs/nic.md)
  kAfXdp,
};

struct PortSpec {
  PortKind kind = PortKind::kVdev;
  std::string name;  // vdev name ("net_memif0"), PCI address, ring NAME or IFACE
  std::string args;  // vdev devargs after the first ',' (may be empty); for
                     // af_xdp the PMD's ("iface=IFACE,start_queue=Q,queue_count=N")
  // af_xdp: the interface's queues the port takes, first..first+count-1.
  std::uint32_t first_queue = 0, queue_count = 0;
};

struct DeviceConfig {
  std::string name;    // ibdev name, "uroce0"
  std::string port;    // as written; see PortSpec
  PortSpec port_spec;  // parsed from `port`
  wire::MacAddr mac{};
  wire::Ipv4Addr ipv4{};
  // A global IPv6 address (key ipv6, optional; all zero: none): a RoCE v2
  // GID after the IPv4 one, for RoCEv2 over IPv6 beside the link-local GID
  // 0 every device has.
  wire::Ipv6Addr ipv6{};
  std::uint32_t mtu = 1500;  // Ethernet MTU (L3 bytes)
  // The port's RX buffer size; 0 = one buffer holds the largest frame. Key
  // rx_buf (port::PortConfig::rx_buf).
  std::uint32_t rx_buf = 0;
  // The most QPs the device holds (ibv_device_attr.max_qp; the engine's
  // per-QP tables are sized by it); key max_qps, engine::VnicConfig's default.
  std::uint32_t max_qps = 1024;
  // Loss injection: drop_tx_every, drop_rx_every, drop_tx_rate,
  // drop_rx_rate, drop_seed, drop_tx_max, drop_rx_max
  // (datapath/engine/impairment.h); all off.
  engine::ImpairConfig impair{};
  // The port's speed in Mb/s for PFC quanta; 0: ask the port at start-up
  // (10000 if it does not say). Key link_mbps.
  std::uint32_t link_mbps = 0;
  // The least local ACK timeout exponent an RC QP or DCI gets (key
  // min_ack_timeout, engine::VnicConfig::min_ack_timeout); 0: as asked.
  std::uint32_t min_ack_timeout = 0;
  // RC and UC QPs send from a UDP source port steered to the peer's engine
  // lcore (key steer_src_port, engine::VnicConfig::steer_src_port).
  bool steer_src_port = false;
  // Selective repeat for RC with uroce peers that enable it too (keys lossy
  // and lossy_qps, engine::VnicConfig::lossy and lossy_qps; docs/lossy.md).
  bool lossy = false;
  std::uint32_t lossy_qps = 256;
  // UDP source ports a selective-repeat connection sprays over (key
  // spray_paths, engine::VnicConfig::spray_paths; docs/lossy.md "Spraying").
  std::uint32_t spray_paths = 1;
  // Sprayed packets ECN-capable and paths that mark them avoided a while
  // (key spray_ecn, engine::VnicConfig::spray_ecn).
  bool spray_ecn = false;
  // Packets in flight at most per selective-repeat connection (key
  // lossy_cap, engine::VnicConfig::lossy_cap).
  std::uint32_t lossy_cap = 256;
  // Keep the stage stamps (key stage_stamps, engine::VnicConfig::stage_stamps).
  bool stage_stamps = false;
  // End an application-driven iteration after an RX phase that wrote a
  // completion of peer data (key cut_on_completion,
  // engine::VnicConfig::cut_on_completion).
  bool cut_on_completion = true;
  // On a port whose TX burst is a system call: the most ACKs one held burst
  // reaches (key ack_hold, engine::AckHoldConfig::max_frames; 0 = off).
  std::uint32_t ack_hold = 4;
  // PFC, storm watchdog, TTL: keys tx_ttl and ttl_monitor in [[device]],
  // the rest in its [device.pfc] table (uroced.example.toml); in --device,
  // pfc=P[,P...] (lossless priorities), tx_ttl, link_mbps. link_bps is
  // filled by uroced from link_mbps or the port.
  engine::PfcEndpointConfig pfc{};
  // TX scheduling (sched/tx_policy.h, docs/sched.md), keys in [[device]] and
  // --device alike: isolation ("off" | "classes" | "auto"), strict_classes (the
  // classes served strictly; the rest are weighted), class_weights (the
  // weights of classes 0.. in order). Only isolation and the classes' modes
  // and weights are configurable; the quanta keep their defaults.
  sched::TxPolicyConfig sched{};
  // The pacer's timing wheel (sched/pacer.h); key pace_granularity_ns.
  sched::PacerConfig pacer{};
  // DCQCN (sched/dcqcn.h, docs/sched.md): keys dcqcn (on/off), cnp_dscp,
  // cnp_interval_us; its line rate is the link speed (link_bps above).
  sched::DcqcnSettings dcqcn{};
  // The pump's bound on the port's backlog (sched/port_limit.h,
  // docs/sched.md); key tx_limit_bytes (0: off). Its link rate is the link
  // speed (link_bps above).
  std::uint32_t tx_limit_bytes = 0;
  // The Homa-like scheduler (sched/homa_settings.h, docs/homa.md): keys
  // homa (on/off) and the homa_* keys of config_homa.cpp's table; its
  // priorities map to DSCP through the [device.pfc] tables.
  sched::homa::HomaSettings homa{};
  // The DC target's context pool (docs/dc.md; engine::VnicConfig's dc_*,
  // whose defaults these are): keys dc_contexts, dc_records_log2 and
  // dc_stale_ms, and the DCI's dc_idle_disconnect_us, in config_dc.cpp's
  // table.
  std::uint32_t dc_contexts = 4096;
  std::uint32_t dc_records_log2 = 16;
  std::uint32_t dc_stale_ms = 10'000;
  std::uint32_t dc_idle_disconnect_us = 1000;
};

// Ethernet MTU bounds; every accepted MTU carries at least a 512-byte path
// MTU (wire::path_mtu_for_eth_mtu), so the engine's contract holds.
inline constexpr std::uint32_t kMinMtu = 576;
static_assert(kMinMtu >= wire::kMinRoceEthMtu);
inline constexpr std::uint32_t kMaxMtu = 9216;
inline constexpr std::uint32_t kMaxBackoffUs = 1'000'000;
// EAL's default lcore limit in Debian's DPDK build (RTE_MAX_LCORE).
inline constexpr std::uint32_t kMaxLcore = 127;
// The most engine lcores (eal.lcores): each adds a shard of every device,
// an RX and a TX queue on every port, and hand-off rings to every other.
inline constexpr std::size_t kMaxEngineLcores = 16;

// Where uroced serves its metrics (daemon.metrics_listen,
// metrics_listener.h): nowhere, a unix socket, or a loopback TCP address.
struct MetricsListen {
  enum class Kind : std::uint8_t { kOff, kUnix, kTcp4, kTcp6 };
  Kind kind = Kind::kOff;
  std::string path;        // kUnix: absolute
  std::string host;        // kTcp4: 127.x.y.z; kTcp6: ::1
  std::uint16_t port = 0;  // kTcp4, kTcp6: 1..65535
  std::string text;        // as configured ("" when off)
};

struct DaemonConfig {
  // [daemon]
  std::string run_dir = "/run/uroce";
  PollMode poll = PollMode::kBackoff;
  std::uint32_t backoff_max_us = 200;
  std::string log_level = "info";
  // Members of this group (name) see every client in the status
  // operation; others see only their own. Empty: root only.
  std::string status_group;
  MetricsListen metrics_listen;
  // [eal]
  std::uint32_t lcore = 1;
  // The engine's lcores when it runs on several (docs/engine.md "Several
  // lcores"): one shard of every device on each, the first EAL's main
  // lcore. Empty: the engine runs on `lcore` alone.
  std::vector<std::uint32_t> lcores;
  std::vector<std::string> eal_args = {"--no-huge", "--no-pci", "--no-telemetry", "-m", "512"};
  std::string file_prefix;  // empty: "uroced-<pid>"
  // [[device]]
  std::vector<DeviceConfig> devices;
  // [limits]
  Limits limits;

  std::string socket_path() const { return run_dir + "/uroced.sock"; }
  std::string sysfs_root() const { return run_dir + "/sysfs"; }
};

// What the command line said; unset fields leave the file's values alone.
struct CommandLine {
  std::optional<std::string> config_file;
  std::optional<std::string> run_dir;
  std::optional<std::uint32_t> lcore;
  std::optional<std::string> lcores;  // "1,2", as eal.lcores reads it
  std::optional<std::string> poll;
  std::optional<std::string> log_level;
  std::vector<std::string> eal_args;
  std::vector<std::string> devices;
  std::vector<std::string> limits;  // --limit KEY=VALUE, [limits] keys
};

// Parses argv. Returns -1 when the caller should go on; otherwise the exit
// code to return now (0 after --help, which it printed; 1 after an error,
// which it printed to stderr with a hint to try --help).
int parse_command_line(int argc, char** argv, CommandLine* out);

// One of the options parse_command_line takes, as its --help shows it: for
// the man page (apps/man), which is generated from the parser's own list.
struct OptionHelp {
  std::string names;  // "--run-dir", "-h,--help"
  std::string value;  // "TEXT", "UINT"; empty for a flag
  std::string help;
  bool repeatable = false;
};
std::vector<OptionHelp> command_line_help();

// Reads TOML text into `out` (over its current values). `source` names the
// text in parse errors ("uroced.toml:3:7: ..."). Returns "" or the error.
// Does not run validate().
std::string load_toml(std::string_view text, std::string_view source, DaemonConfig* out);

// One --device SPEC ("name=uroce0;mac=...;ipv4=...;mtu=9000;port=ring:p0")
// into `out`; `index` is its position, used in error messages. Returns ""
// or the error. The keys, their types and ranges are the device key tables
// (config_keys.h; docs/config-keys.md lists them): name, port, mac and ipv4
// are required, the rest optional.
std::string parse_device_spec(std::string_view spec, std::size_t index, DeviceConfig* out);

// Applies `cl` (without reading cl.config_file) over `cfg`.
std::string apply_command_line(const CommandLine& cl, DaemonConfig* cfg);

// The whole-configuration checks: at least one device; unique names, MACs
// and IPv4 addresses; every ring named by exactly two devices; paths that
// fit a Unix socket address; the checks between keys (PFC, Homa). A single
// key's value was checked when it was read, by its table entry. Returns ""
// or the error.
std::string validate(const DaemonConfig& cfg);

// Defaults, then cl.config_file (if any), then the rest of `cl`, then
// validate(). Returns "" or the error.
std::string load_config(const CommandLine& cl, DaemonConfig* out);

// The engine's lcores: cfg.lcores, or cfg.lcore alone when that is empty.
// Shard i of every device runs on the i-th.
std::vector<std::uint32_t> engine_lcores(const DaemonConfig& cfg);

// The EAL settings for `cfg`: -l <the engine's lcores> (the first the main
// lcore), --file-prefix (default
// "uroced-<pid>"), eal_args translated into EalConfig fields (-m, --no-huge,
// --no-pci, --no-telemetry, --vdev, -a, --log-level; anything else kept
// verbatim), vdevs without devargs added as --vdev, and PCI devices
// allowed (-a, PCI probing on). Returns "" or the error (an eal.args entry
// that sets what uroced controls: -l, --lcores, -c, --file-prefix).
std::string make_eal_config(const DaemonConfig& cfg, int pid, port::EalConfig* out);

// Why DPDK's dpdk-dumpcap (a secondary process) cannot attach to a daemon
// of `cfg`'s EAL arguments, or "" when it can (docs/capture.md): it needs
// EAL's shared files (not --in-memory or --no-shconf) and memory it can
// map (hugepages: not --no-huge).
std::string dumpcap_blocker(const DaemonConfig& cfg);

const char* to_string(PollMode m);

}  // namespace uroce::daemon
