// The [[device]] key sets other than Homa's (config_homa.cpp) and DC's
// (config_dc.cpp): the base keys, loss injection, PFC and TTL, TX
// scheduling and DCQCN; and the list of all device key sets in order.
#include <limits>

#include "apps/uroced/config_keys.h"
#include "apps/uroced/config_values.h"
#include "datapath/port/eth_port.h"

namespace uroce::daemon {

using namespace config_detail;

namespace {

using D = DeviceConfig;
using KD = KeyDesc<DeviceConfig>;
constexpr std::int64_t kU32 = std::numeric_limits<std::uint32_t>::max();

const KD kBaseKeys[] = {
    text_key<D>(
        "name", "the ibdev name (sysfs, ibv_devices)",
        [](const KeyValue& v, const std::string& key, D* d) {
          d->name = v.text;
          return check_ibdev_name(v.text, key);
        },
        [](const D& d) { return KeyValue::of_text(d.name); }, true),
    text_key<D>(
        "port",
        "how the device reaches the wire: a vdev devargs string (net_<pmd><n>,...), a PCI "
        "address, \"af_xdp:IFACE[,queue=Q][,count=N][,busy_budget=B]\" (AF_XDP sockets on a kernel "
        "interface, docs/nic.md) or \"ring:NAME\" (a ring joins two devices of this daemon)",
        [](const KeyValue& v, const std::string& key, D* d) { return set_port(v.text, key, d); },
        [](const D& d) { return KeyValue::of_text(d.port); }, true),
    text_key<D>(
        "mac", "the port's unicast MAC address (02:00:00:00:00:01)",
        [](const KeyValue& v, const std::string& key, D* d) { return set_mac(v.text, key, d); },
        [](const D& d) { return KeyValue::of_text(d.mac.to_string()); }, true),
    text_key<D>(
        "ipv4", "the device's IPv4 address: RoCE v2 GID 1",
        [](const KeyValue& v, const std::string& key, D* d) { return set_ipv4(v.text, key, d); },
        [](const D& d) { return KeyValue::of_text(d.ipv4.to_string()); }, true),
    text_key<D>(
        "ipv6", "a global unicast IPv6 address: a RoCE v2 GID after the IPv4 one",
        [](const KeyValue& v, const std::string& key, D* d) { return set_ipv6(v.text, key, d); },
        [](const D& d) { return KeyValue::of_text(d.ipv6.is_zero() ? "" : d.ipv6.to_string()); },
        false),
    integer_key<D, &D::mtu>("mtu", kMinMtu, kMaxMtu,
                            "the Ethernet MTU (L3 bytes); the path MTU follows from it"),
    {.name = "rx_buf",
     .type = KeyType::kInteger,
     .lo = 0,
     .hi = port::kMaxRxBuf,
     .help = "the port's RX buffer size in bytes: longer frames arrive chained (docs/nic.md)",
     .set =
         [](const KeyValue& v, const std::string& key, D* d) {
           if (v.i != 0 && v.i < port::kMinRxBuf) {
             return key + ": " + std::to_string(v.i) + " is below " +
                    std::to_string(port::kMinRxBuf) + " (0 = one buffer holds the largest frame)";
           }
           d->rx_buf = static_cast<std::uint32_t>(v.i);
           return std::string();
         },
     .get = [](const D& d) { return KeyValue::of_int(d.rx_buf); },
     .note = "0 = one buffer holds the largest frame"},
    integer_key<D, &D::max_qps>("max_qps", 1, 131072,
                                "the most QPs the device holds (ibv_device_attr.max_qp)"),
    integer_key<D, &D::link_mbps>("link_mbps", 0, 1'000'000,
                                  "the link speed in Mb/s (PFC quanta, DCQCN, the port limit)",
                                  "0 = ask the port"),
    integer_key<D, &D::min_ack_timeout>(
        "min_ack_timeout", 0, 31,
        "the least local ACK timeout (4.096 us x 2^N) of an RC QP or DCI, whatever modify_qp "
        "asked: for peers that can stall for longer than the QP's retries last",
        "0 = as asked"),
    switch_key<D, &D::steer_src_port>(
        "steer_src_port",
        "RC and UC QPs send from a UDP source port that the peer's RSS (the documented key "
        "and table) maps to the lcore of its QP; off: rxe's ports"),
    switch_key<D, &D::lossy>(
        "lossy",
        "selective repeat for RC with uroce peers that turn it on too (a HELLO handshake per "
        "connection) and for DC (from a connection's first request; a target with it off "
        "answers NO_SR): a lost packet is sent again alone, not everything behind it; rxe, "
        "RNICs and peers with it off stay go-back-N"),
    integer_key<D, &D::lossy_qps>(
        "lossy_qps", 1, 131072,
        "RC connections (per engine lcore) that can use selective repeat at once: their state, "
        "about 4 KiB each, is made when the device starts; a connection beyond them stays "
        "go-back-N"),
    integer_key<D, &D::spray_paths>(
        "spray_paths", 1, 16,
        "UDP source ports (ECMP paths) a selective-repeat connection (RC or DC) spreads its SEND "
        "and WRITE packets over, round robin, skipping for a while a path that lost a packet; "
        "each keeps the peer's RX queue of the connection's own port; go-back-N connections "
        "(rxe, RNICs) keep one port",
        "1 = no spraying"),
    switch_key<D, &D::spray_ecn>(
        "spray_ecn",
        "ECN steering for spraying connections: their SEND and WRITE packets are ECN-capable "
        "(ECT(0)) and a path whose switch marks one CE (the peer echoes it in a SACK) is skipped "
        "for 32 packets; for fabrics that mark before they drop"),
    integer_key<D, &D::lossy_cap>(
        "lossy_cap", 1, 256,
        "packets a selective-repeat connection has in flight at most: one bandwidth-delay "
        "product of the fabric keeps switch queues short without PFC (IRN's BDP cap); "
        "go-back-N connections keep rxe's window",
        "256 = the selective-repeat window"),
    switch_key<D, &D::stage_stamps>(
        "stage_stamps",
        "keep the stage stamps of messages (WQE seen, TX burst, RX burst, completion written) for "
        "`uroce-ctl stages` (docs/tails.md); costs a few clock reads per iteration"),
    switch_key<D, &D::cut_on_completion>(
        "cut_on_completion",
        "embedded mode: an iteration that an application's poll drives ends after receiving "
        "when it wrote a completion of peer data (a receive, a READ or atomic response), so the "
        "application sees it before the engine pumps and flushes; the ACK it owes leaves with "
        "the next iteration (docs/tails.md)"),
    {.name = "ack_hold",
     .type = KeyType::kInteger,
     .lo = 0,
     .hi = 32,
     .help = "on a port whose every TX burst is a system call (af_xdp, af_packet): while "
             "frames keep arriving, a TX burst of nothing but ACKs waits for up to this many ACKs "
             "(or 20 us, or an iteration that receives nothing), a newer ACK of a QP replacing "
             "its older one, and leaves with the next other frame, so a receiver makes fewer "
             "sendto calls (docs/nic.md); an embedded engine's progress thread then naps at most "
             "1 ms while the application drives",
     .set =
         [](const KeyValue& v, const std::string& key, D* d) {
           if (v.i == 1) return key + ": 1 holds nothing (0 = off, or 2 to 32)";
           d->ack_hold = static_cast<std::uint32_t>(v.i);
           return std::string();
         },
     .get = [](const D& d) { return KeyValue::of_int(d.ack_hold); },
     .note = "0 = off"},
};

using engine::ImpairConfig;
const KD kImpairKeys[] = {
    integer_key<D, &D::impair, &ImpairConfig::drop_tx_every>("drop_tx_every", 0, kU32,
                                                             "drop every Nth RoCEv2 frame sent",
                                                             "0 = off"),
    integer_key<D, &D::impair, &ImpairConfig::drop_rx_every>("drop_rx_every", 0, kU32,
                                                             "drop every Nth RoCEv2 frame received",
                                                             "0 = off"),
    real_key<D, &D::impair,
             &ImpairConfig::drop_tx_rate>("drop_tx_rate", 0, 1,
                                          "drop this fraction of RoCEv2 frames sent, at random",
                                          "a fraction of RoCEv2 frames"),
    real_key<D, &D::impair,
             &ImpairConfig::drop_rx_rate>("drop_rx_rate", 0, 1,
                                          "drop this fraction of RoCEv2 frames received, at random",
                                          "a fraction of RoCEv2 frames"),
    u64_key<D, &D::impair, &ImpairConfig::drop_seed>("drop_seed", "the seed of the random drops"),
    integer_key<D, &D::impair, &ImpairConfig::drop_tx_max>(
        "drop_tx_max", 0, kU32, "stop dropping sent frames after this many drops", "0 = no cap"),
    integer_key<D, &D::impair,
                &ImpairConfig::drop_rx_max>("drop_rx_max", 0, kU32,
                                            "stop dropping received frames after this many drops",
                                            "0 = no cap"),
};

using engine::PfcEndpointConfig;
const KD kPfcKeys[] = {
    lossless_priorities_key(
        "pfc", kInArg,
        "the lossless priorities (the file sets them and the rest of PFC in [device.pfc])"),
    integer_key<D, &D::pfc, &PfcEndpointConfig::ttl,
                &pfc::TtlMonitorConfig::tx_ttl>("tx_ttl", 1, 255, "the IP TTL of the frames sent"),
    switch_key<D, &D::pfc,
               &PfcEndpointConfig::ttl_monitor>("ttl_monitor",
                                                "count received frames whose TTL says they looped"),
};

using sched::TrafficClassConfig;
using sched::TxPolicyConfig;
const KD kSchedKeys[] = {
    text_key<D>(
        "isolation",
        "TX isolation: off, classes (traffic classes from DSCP) or auto (classes from each QP's "
        "behaviour)",
        [](const KeyValue& v, const std::string& key, D* d) {
          return set_isolation(v.text, key, d);
        },
        [](const D& d) {
          return KeyValue::of_text(std::string(sched::isolation_name(d.sched.isolation)));
        },
        false),
    {.name = "strict_classes",
     .type = KeyType::kMask,
     .lo = 0,
     .hi = 7,
     .help = "the classes served strictly, before the weighted ones",
     .set =
         [](const KeyValue& v, const std::string&, D* d) {
           d->sched.classes.set_strict(v.mask());
           return std::string();
         },
     .get =
         [](const D& d) {
           std::uint8_t m = 0;
           for (std::uint32_t c = 0; c < sched::kNumClasses; ++c) {
             if (d.sched.classes.classes[c].mode == sched::ClassMode::kStrict) {
               m = static_cast<std::uint8_t>(m | (1u << c));
             }
           }
           return KeyValue::of_mask(m);
         },
     .noun = "classes",
     .live = true},
    {.name = "class_weights",
     .type = KeyType::kIntList,
     .lo = 1,
     .hi = kMaxClassWeight,
     .help = "the weighted classes' weights",
     .set =
         [](const KeyValue& v, const std::string&, D* d) {
           for (std::size_t c = 0; c < v.list.size(); ++c) {
             d->sched.classes.classes[c].weight = static_cast<std::uint32_t>(v.list[c]);
           }
           return std::string();
         },
     .get =
         [](const D& d) {
           std::vector<std::int64_t> w;
           for (const auto& c : d.sched.classes.classes) w.push_back(c.weight);
           return KeyValue::of_list(std::move(w));
         },
     .note = "classes 0.. in order",
     .noun = "weights",
     .max_len = sched::kNumClasses,
     .example = "1,1,2,4",
     .live = true},
    {.name = "class_rates_mbps",
     .type = KeyType::kIntList,
     .lo = 0,
     .hi = sched::kMaxClassRateMbps,
     .help = "each class's rate limit in Mb/s (0: none)",
     .set =
         [](const KeyValue& v, const std::string&, D* d) {
           for (std::size_t c = 0; c < v.list.size(); ++c) {
             d->sched.classes.classes[c].rate_mbps = static_cast<std::uint32_t>(v.list[c]);
           }
           return std::string();
         },
     .get =
         [](const D& d) {
           std::vector<std::int64_t> r;
           for (const auto& c : d.sched.classes.classes) r.push_back(c.rate_mbps);
           return KeyValue::of_list(std::move(r));
         },
     .note = "classes 0.. in order",
     .noun = "rates in Mb/s",
     .max_len = sched::kNumClasses,
     .example = "0,0,0,1000",
     .live = true},
    live_key(
        integer_key<D, &D::sched, &TxPolicyConfig::classes, &TrafficClassConfig::class_quantum>(
            "class_quantum_bytes", sched::kMinClassQuantum, sched::kMaxClassQuantum,
            "bytes a weighted class may send per pass per unit of weight")),
    integer_key<D, &D::pacer, &sched::PacerConfig::granularity_ns>("pace_granularity_ns",
                                                                   kMinPaceGranularityNs,
                                                                   kMaxPaceGranularityNs,
                                                                   "the pacer's timing wheel slot"),
    integer_key<D, &D::tx_limit_bytes>("tx_limit_bytes", 0, sched::kMaxPortLimitBytes,
                                       "the most bytes the pump keeps queued at the port",
                                       "0 = no limit"),
};

using sched::DcqcnSettings;
const KD kDcqcnKeys[] = {
    switch_key<D, &D::dcqcn, &DcqcnSettings::enabled>(
        "dcqcn", "DCQCN congestion control (CE marks in, CNPs out, rate limits per QP)"),
    integer_key<D, &D::dcqcn, &DcqcnSettings::cnp_dscp>("cnp_dscp", 0, 63,
                                                        "the DSCP of the CNPs sent"),
    scaled_key<D, kNsPerUs, &D::dcqcn,
               &DcqcnSettings::cnp_interval_ns>("cnp_interval_us", 1, kMaxCnpIntervalUs,
                                                "at most one CNP per QP per this interval"),
};

}  // namespace

// Built on first use: the Homa and DC tables live in other files.
std::span<const KeySet<DeviceConfig>> device_key_sets() {
  static const KeySet<DeviceConfig> sets[] = {
      {"[[device]]: the device", "README.md", kBaseKeys},
      {"[[device]]: loss injection", "datapath/engine/impairment.h", kImpairKeys},
      {"[[device]]: PFC and TTL", "docs/pfc.md", kPfcKeys},
      {"[[device]]: TX scheduling", "docs/sched.md", kSchedKeys},
      {"[[device]]: DCQCN", "docs/sched.md", kDcqcnKeys},
      {"[[device]]: the Homa-like scheduler", "docs/homa.md", homa_keys()},
      {"[[device]]: the DC target", "docs/dc.md", dc_keys()},
  };
  return sets;
}

}  // namespace uroce::daemon
