#!/usr/bin/env bash
# Issue 33, must-show 1, in the testbed (docs/lossy-figures.md "Testbed figures"):
# random loss on one hop with PFC off, go-back-N (lossy off) against
# selective repeat (lossy on), the real engine on both hosts, the same
# seeds side by side. testbed/scenarios/lossy_one_hop.toml, run once per
# (loss, mode, seed, flow): `bulk` alone for the goodput of one long WRITE
# flow, `msgs` alone for the completion times of 64 KiB messages. Prints a
# Markdown table; exits 1 if any run failed its checks (a flow incomplete,
# a payload mismatch or error, selective repeat not negotiated on both
# hosts and both ends of the flow's connection where it was on, or there
# where it was off). About a minute.
#
#   scripts/testbed-lossy.sh                       # BUILD_DIR=build
#   TESTBED=/path/uroce-testbed ...  # one built already (scripts/lib/testbed-bin.sh)
#   SEEDS="1 2 3" LOSSES="0 0.0001 0.001 0.01" scripts/testbed-lossy.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
SEEDS=${SEEDS:-"1 2 3"}
LOSSES=${LOSSES:-"0 0.0001 0.001 0.01"}
# shellcheck source=lib/testbed-bin.sh
source scripts/lib/testbed-bin.sh
bin=
uroce_testbed_bin bin
scenario=testbed/scenarios/lossy_one_hop.toml
runs=$(mktemp -d /tmp/uroce-testbed-lossy.XXXXXX)
trap 'rm -rf "$runs"' EXIT

# The scenario's flows: 0 bulk, 1 msgs; each run keeps one.
for loss in $LOSSES; do
  for mode in gbn sr; do
    lossy=false
    [ "$mode" = sr ] && lossy=true
    for seed in $SEEDS; do
      for flow in bulk msgs; do
        off=1
        [ "$flow" = msgs ] && off=0
        "$bin" "$scenario" --seed "$seed" --out "$runs/$mode-$loss-$seed-$flow" \
          --set "defaults.host.lossy=$lossy" --set "link.0.loss_rate=$loss" \
          --set "rc_flow.$off.enabled=false" --set output.csv=false >/dev/null
      done
    done
  done
done

/usr/bin/python3 - "$runs" "$LOSSES" "$SEEDS" <<'PY'
import json, sys

runs, losses, seeds = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
failed = []


def load(mode, loss, seed, flow):
    name = f"{mode}-{loss}-{seed}-{flow}"
    d = json.load(open(f"{runs}/{name}/summary.json"))
    f = next(x for x in d["rc_flows"] if x["name"] == flow)
    hosts = d["engine"]["hosts"]
    ok = (f["done"] and f["completed"] == f["count"] and f["payload_mismatch"] == 0
          and f["errors"] == 0)
    if mode == "sr":
        ok = ok and all(h["lossy"]["sr_connections"] >= 1 for h in hosts)
        ok = ok and f["src_qp"]["sr_peer"] and f["dst_qp"]["sr_peer"]
    else:
        ok = ok and all("lossy" not in h for h in hosts) and "sr" not in f["src_qp"]
    if not ok:
        failed.append(name)
    # h1 -> s1 (data) and s1 -> h1 (ACKs, SACKs): the lossy hop's two ways.
    lost = f'{d["links"][0].get("lost", 0)} / {d["links"][1].get("lost", 0)}'
    probes = sum(h["lossy"]["sr_tx_probes"] for h in hosts) if mode == "sr" else None
    return f, lost, probes


def pct(x):
    return f"{100 * x:g} %"


rows = []
short = {}
base = {}
for loss in losses:
    for mode in ("gbn", "sr"):
        for seed in seeds:
            b, b_lost, _ = load(mode, loss, seed, "bulk")
            m, m_lost, probes = load(mode, loss, seed, "msgs")
            gbps = b["goodput_gbps"]
            if float(loss) == 0:
                base[(mode, seed)] = gbps
            ref = base.get((mode, seed))
            frac = f"{gbps / ref:.3f}" if ref else "-"
            bq, mq = b["src_qp"], m["src_qp"]
            e = short.setdefault((loss, mode), [[], []])
            e[0].append(gbps / ref if ref else None)
            e[1].append(m["mct_ns"]["p99"])
            rows.append([pct(float(loss)), "go-back-N" if mode == "gbn" else "selective repeat",
                         seed, f"{gbps:.2f}", frac, b_lost, bq["tx_retransmits"], bq["timeouts"],
                         f"{m['mct_ns']['p50'] / 1e3:.1f}", f"{m['mct_ns']['p99'] / 1e3:.1f}",
                         f"{m['mct_ns']['max'] / 1e3:.1f}",
                         m_lost, mq["tx_retransmits"], mq["timeouts"],
                         "-" if probes is None else probes])

head = ["loss (each way)", "mode", "seed", "bulk Gb/s", "of lossless",
        "bulk frames lost (data / ACK)", "bulk retransmitted", "bulk timeouts", "64 KiB p50 us",
        "64 KiB p99 us", "64 KiB max us", "msgs frames lost (data / ACK)", "msgs retransmitted", "msgs timeouts",
        "msgs tail-loss probes"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for r in rows:
    print("| " + " | ".join(str(x) for x in r) + " |")
print()
print("| loss (each way) | mode | bulk goodput of lossless, seeds " + " ".join(seeds) +
      " | 64 KiB p99 us, seeds " + " ".join(seeds) + " |")
print("|---|---|---|---|")
for (loss, mode), (fr, p99) in short.items():
    print(f"| {pct(float(loss))} | {'go-back-N' if mode == 'gbn' else 'selective repeat'} | " +
          ", ".join("-" if x is None else f"{x:.3f}" for x in fr) + " | " +
          ", ".join(f"{x / 1e3:.1f}" for x in p99) + " |")
if failed:
    print("FAILED checks: " + ", ".join(failed))
    sys.exit(1)
PY
