#!/usr/bin/env bash
# Issue 33, must-show 3, in the testbed (docs/lossy-figures.md "Fabric figures"):
# testbed/scenarios/spray_four_paths.toml, one 64 KiB WRITE flow over a
# four-spine ECMP fabric with PFC off, the real engine on both hosts, the
# same seeds side by side for each transport:
#   gbn       go-back-N (lossy off), one UDP source port: hashed to one path
#   sr        selective repeat, one port
#   sr+spray  selective repeat sprayed over 16 ports (spray_paths = 16)
#   sr+ar     selective repeat, one port, the leaves routing adaptively
#             per packet (adaptive_routing)
#   sr+spray+ecn  as sr+spray with spray_ecn (ECN steering), the switches
#             marking CE on priority 3 (RED from 15 KB to 45 KB, every
#             packet above: before a queue drops at about 58 KB)
#             (docs/lossy.md "Spraying")
# Three runs per (transport, seed): `reorder` (10 Gb/s host links: one flow
# cannot congest a 10 Gb/s spine path, so nothing is lost and the spines'
# different delays only reorder), `full` (40 Gb/s host links, no failure)
# and `fail` (as full, l1-sp2 down at 3 ms, routes never reconverge).
# The goodput before and after the failure comes from the same seed cut at
# 3 ms (the runs are identical up to then). A fourth, `flap`, takes the
# same link down at 3 ms and brings it back every other 500 us until it
# stays up from 6.5 ms; its goodput while flapping (3 to 6.5 ms) and once
# settled (7.5 ms to the end) over the pre-failure one say whether the
# connection routes around a flapping link and uses it again once it is
# back. Prints two Markdown tables; exits
# 1 if a run failed its checks (payload mismatch, errors, selective repeat
# not negotiated where on). Under a minute.
#
# CAP sets the hosts' lossy_cap (packets in flight per selective-repeat
# connection; default 256, the window).
#
#   scripts/testbed-spray.sh                  # BUILD_DIR=build
#   TESTBED=/path/uroce-testbed ...  # one built already (scripts/lib/testbed-bin.sh)
#   SEEDS="1 2 3" CAP=16 scripts/testbed-spray.sh
#   MODES="sr+spray sr+spray+ecn" CAP=32 scripts/testbed-spray.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
SEEDS=${SEEDS:-"1 2 3"}
CAP=${CAP:-256}
# shellcheck source=lib/testbed-bin.sh
source scripts/lib/testbed-bin.sh
bin=
uroce_testbed_bin bin
scenario=testbed/scenarios/spray_four_paths.toml
runs=$(mktemp -d /tmp/uroce-testbed-spray.XXXXXX)
trap 'rm -rf "$runs"' EXIT

mode_sets() {
  case "$1" in
    gbn) echo "--set defaults.host.lossy=false --set defaults.host.spray_paths=1" ;;
    sr) echo "--set defaults.host.spray_paths=1" ;;
    sr+spray) echo "--set defaults.host.spray_paths=16" ;;
    sr+ar) echo "--set defaults.host.spray_paths=1 --set defaults.switch.adaptive_routing=true" ;;
    sr+spray+ecn)
      echo "--set defaults.host.spray_paths=16 --set defaults.host.spray_ecn=true" \
        "--set defaults.switch.ecn_priorities=[3]" \
        "--set defaults.switch.ecn_kmin_bytes=15000 --set defaults.switch.ecn_kmax_bytes=45000" \
        "--set defaults.switch.ecn_pmax=1.0"
      ;;
  esac
}

MODES=${MODES:-"gbn sr sr+spray sr+ar sr+spray+ecn"}
# The flap's last change, and where its settled goodput starts (1 ms on).
FLAP_END_MS=6.5
SETTLED_MS=7.5
for mode in $MODES; do
  for seed in $SEEDS; do
    # shellcheck disable=SC2046 # the sets are words on purpose
    run() { "$bin" "$scenario" --seed "$seed" --out "$runs/$mode-$seed-$1" $(mode_sets "$mode") \
      --set defaults.host.lossy_cap="$CAP" --set output.csv=false "${@:2}" >/dev/null; }
    run reorder --set link.0.rate_gbps=10 --set link.1.rate_gbps=10
    run full
    run pre --set scenario.duration_ms=3
    run fail --set link_change.0.enabled=true
    # The flap's changes 0..7; the run cut at 6.5 ms, where the last one
    # (7) would be, goes without it.
    flap_end=()
    for i in 0 1 2 3 4 5 6; do flap_end+=(--set "link_change.$i.enabled=true"); done
    flap=("${flap_end[@]}" --set link_change.7.enabled=true)
    run flap "${flap[@]}"
    run flap_end "${flap_end[@]}" --set scenario.duration_ms="$FLAP_END_MS"
    run settled "${flap[@]}" --set scenario.duration_ms="$SETTLED_MS"
  done
done

/usr/bin/python3 - "$runs" "$SEEDS" "$MODES" "$FLAP_END_MS" "$SETTLED_MS" <<'PY'
import json, sys

runs, seeds, modes = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
flap_end_ns, settled_ns = (round(float(x) * 1e6) for x in sys.argv[4:6])
failed = []
KIB64 = 65536


def load(mode, seed, kind):
    d = json.load(open(f"{runs}/{mode}-{seed}-{kind}/summary.json"))
    f = d["rc_flows"][0]
    if f["payload_mismatch"] != 0 or f["errors"] != 0:
        failed.append(f"{mode} seed {seed} {kind}: payload mismatch or errors")
    if mode != "gbn" and not f["src_qp"]["sr_peer"]:
        failed.append(f"{mode} seed {seed} {kind}: selective repeat not negotiated")
    return d, f


def gbps(messages, ns):
    return messages * KIB64 * 8 / ns if ns > 0 else 0.0


def since_pre(q, pq):
    """The source QP's packets sent again (% of those sent) and tail-loss
    probes between the pre-failure cut (pq) and the end of a run (q)."""
    rt = q["tx_retransmits"] - pq["tx_retransmits"]
    tx = q["tx_packets"] - pq["tx_packets"]
    probes = q.get("sr", {}).get("sr_tx_probes", 0) - pq.get("sr", {}).get("sr_tx_probes", 0)
    return 100 * rt / max(tx, 1), probes


print("| transport | seed | reorder: Gb/s, retransmitted | full: Gb/s, retransmitted, "
      "switch drops | pre-failure Gb/s | post-failure Gb/s (ratio) | "
      "post: retransmitted, probes, timeouts |")
print("|---|---|---|---|---|---|---|")
for mode in modes:
    for seed in seeds:
        _, r = load(mode, seed, "reorder")
        dfull, full = load(mode, seed, "full")
        dpre, pre = load(mode, seed, "pre")
        dfail, fail = load(mode, seed, "fail")
        start = full["start_ns"]
        rq = r["src_qp"]
        fq = full["src_qp"]
        drops = sum(sum(s["drops_packets"].values()) for s in dfull["switches"])
        g_pre = gbps(pre["completed"], 3_000_000 - start)
        g_post = gbps(fail["completed"] - pre["completed"], dfail["end_ns"] - 3_000_000)
        ratio = g_post / g_pre if g_pre > 0 else 0.0
        q = fail["src_qp"]
        pq = pre["src_qp"]
        post_pct, probes = since_pre(q, pq)
        print(f"| {mode} | {seed} | {gbps(r['completed'], dfull['end_ns'] - start):.2f}, "
              f"{rq['tx_retransmits']}/{rq['tx_packets']} "
              f"({100 * rq['tx_retransmits'] / max(rq['tx_packets'], 1):.2f} %) | "
              f"{gbps(full['completed'], dfull['end_ns'] - start):.2f}, "
              f"{100 * fq['tx_retransmits'] / max(fq['tx_packets'], 1):.1f} %, {drops} | "
              f"{g_pre:.2f} | {g_post:.2f} ({ratio:.2f}) | "
              f"{post_pct:.1f} %, {probes}, "
              f"{q['timeouts'] - pq['timeouts']} |")
print()
print(f"| transport | seed | pre-failure Gb/s | flapping (3-{flap_end_ns / 1e6:g} ms) Gb/s "
      f"(ratio) | settled ({settled_ns / 1e6:g} ms on) Gb/s (ratio) | "
      "flap: retransmitted, probes |")
print("|---|---|---|---|---|---|")
for mode in modes:
    for seed in seeds:
        _, pre = load(mode, seed, "pre")
        _, end = load(mode, seed, "flap_end")
        _, settled = load(mode, seed, "settled")
        dflap, flap = load(mode, seed, "flap")
        g_pre = gbps(pre["completed"], 3_000_000 - pre["start_ns"])
        g_flap = gbps(end["completed"] - pre["completed"], flap_end_ns - 3_000_000)
        g_after = gbps(flap["completed"] - settled["completed"], dflap["end_ns"] - settled_ns)
        pct, probes = since_pre(flap["src_qp"], pre["src_qp"])
        r_flap = g_flap / g_pre if g_pre else 0.0
        r_after = g_after / g_pre if g_pre else 0.0
        print(f"| {mode} | {seed} | {g_pre:.2f} | {g_flap:.2f} ({r_flap:.2f}) | "
              f"{g_after:.2f} ({r_after:.2f}) | {pct:.1f} %, {probes} |")
if failed:
    print("\nFAILED:\n  " + "\n  ".join(failed))
    sys.exit(1)
PY
