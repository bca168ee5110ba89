#!/usr/bin/python3
"""Checks a Prometheus exposition of uroced (docs/metrics.md) against the
status JSON taken just before and just after it.

  metrics_check.py PROM C1 C2 K1 K2

PROM: the listener's text; C1, C2: `uroce-ctl counters --json` before and
after; K1, K2: `uroce-ctl metrics --json` before and after (the same status
with the sums by QP class and the clients). Every number and yes/no of the
status that is a metric (everything but the identity and configuration the
docs list) must be present under its name and labels, found independently
here from the naming rule: a count C1 <= value <= C2 (equal when C1 == C2),
a level or state within C1..C2 (equal when C1 == C2), except the levels the
asking itself moves (the daemon's connections and worker threads). Also:
HELP and TYPE once per family before its samples, the PFC totals equal to
the sums of the priorities, each loop histogram cumulative with +Inf equal
to its count. Prints one summary line; exits 1 with the problems.
"""
import json
import re
import sys
from decimal import Decimal

# What is no metric (identity, configuration; docs/metrics.md).
DAEMON_SKIP = {"version", "pid", "run_dir", "socket", "poll", "lcore", "lcores", "engine_cpu",
               "limits", "workers", "engine", "engine_loops", "users"}
DEVICE_SKIP = {"name", "index", "uverbs", "port", "port_mode", "port_info", "port_stats",
               "port_xdp", "mac", "ipv4", "ipv6_link_local", "ipv6", "mtu", "active_mtu",
               "objects", "shards", "counters", "arp", "mw", "pfc", "sched", "homa", "dc"}
# Levels the asking connection itself changes, and levels that move both
# ways with traffic between the readings (mbufs out and back).
ASKER_LEVELS = {("daemon", "clients"), ("workers", "workers"), ("workers", "idle"),
                ("workers", "queued"), ("port_stats", "mbufs_free")}

CLIENT_SETS = {"client", "client_used", "client_qp"}

problems = []


def parse_prom(text):
    """(samples {(name, labels): Decimal}, types {family: type}, helps)"""
    samples, types, helps, order = {}, {}, {}, []
    label_re = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _, h = line[7:].partition(" ")
            if name in helps:
                problems.append(f"HELP of {name} given twice")
            helps[name] = h
            order.append(name)
        elif line.startswith("# TYPE "):
            name, _, t = line[7:].partition(" ")
            if name in types:
                problems.append(f"TYPE of {name} given twice")
            types[name] = t
        elif line and not line.startswith("#"):
            m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$', line)
            if not m:
                problems.append(f"not a sample line: {line!r}")
                continue
            labels = ()
            if m.group(2):
                labels = tuple((k, bytes(v, "utf-8").decode("unicode_escape"))
                               for k, v in label_re.findall(m.group(2)))
            name = m.group(1)
            family = re.sub(r'_(bucket|count|sum)$', '', name) if name not in types else name
            if family not in types or family not in helps or not helps[family]:
                problems.append(f"{name}: no HELP or TYPE before it")
            samples[(name, labels)] = Decimal(m.group(3).replace("+Inf", "Infinity"))
    return samples, types, helps


def base_name(set_, key):
    if key.endswith("_ns"):
        key = key[:-3] + "_seconds"
    elif key.endswith("_s"):
        key = key[:-2] + "_seconds"
    return re.sub(r'[^a-zA-Z0-9_]', '_', f"uroce_{set_}_{key}")


def as_decimal(v, key):
    if isinstance(v, bool):
        return Decimal(int(v))
    d = Decimal(str(v)) if isinstance(v, float) else Decimal(v)
    return d / Decimal(10**9) if key.endswith("_ns") else d


class Values:
    """Every metric value of one status: {(set, key, labels): json value}."""

    def __init__(self):
        self.v = {}
        self.reason_keys = set()

    def obj(self, o, set_, labels, path, skip=(), nested=()):
        if not isinstance(o, dict):
            return
        for k, v in o.items():
            if k in skip or k in nested:
                continue
            if isinstance(v, (dict, list)):
                problems.append(f"{path}.{k}: a structure this check does not know")
            elif isinstance(v, (bool, int, float)):
                self.v[(set_, k, labels)] = v

    def reasons(self, o, set_, key, labels):
        for r, v in (o or {}).items():
            self.v[(set_, key, labels + (("reason", r),))] = v
            self.reason_keys.add((set_, key))


def lab(o, key):
    v = o.get(key, "")
    return v if isinstance(v, str) else json.dumps(v)


def status_values(c):
    out = Values()
    d = c.get("daemon", {})
    out.obj(d, "daemon", (), "daemon", skip=DAEMON_SKIP)
    out.obj(d.get("workers"), "workers", (), "daemon.workers")
    out.obj(d.get("engine"), "engine", (), "daemon.engine")
    for u in d.get("users", []):
        out.obj(u, "user", (("uid", lab(u, "uid")),), "daemon.users", skip={"uid"})
    for dev in c.get("devices", []):
        dl = (("device", dev["name"]),)
        p = f"devices[{dev['name']}]"
        out.obj(dev, "device", dl, p, skip=DEVICE_SKIP)
        out.obj(dev.get("objects"), "objects", dl, p + ".objects")
        for s in dev.get("shards", []):
            out.obj(s, "shard", dl + (("shard", lab(s, "shard")),), p + ".shards", skip={"shard"})
        cn = dev.get("counters", {})
        out.obj(cn, "device", dl, p + ".counters",
                nested={"parse_errors", "wqe_errors", "port_tx", "port_rx"})
        out.reasons(cn.get("parse_errors"), "device", "parse_errors", dl)
        out.reasons(cn.get("wqe_errors"), "device", "wqe_errors", dl)
        out.obj(cn.get("port_tx"), "port_tx", dl, p + ".counters.port_tx")
        out.obj(cn.get("port_rx"), "port_rx", dl, p + ".counters.port_rx")
        out.obj(dev.get("port_stats"), "port_stats", dl, p + ".port_stats")
        out.obj(dev.get("port_xdp"), "port_xdp", dl, p + ".port_xdp")
        arp = dev.get("arp", {})
        out.obj(arp, "arp", dl, p + ".arp", nested={"drops"})
        out.reasons(arp.get("drops"), "arp", "drops", dl)
        mw = dev.get("mw", {})
        out.obj(mw, "mw", dl, p + ".mw", nested={"bind_refused", "inv_refused"})
        out.reasons(mw.get("bind_refused"), "mw", "bind_refused", dl)
        out.reasons(mw.get("inv_refused"), "mw", "inv_refused", dl)
        pfc = dev.get("pfc", {})
        out.obj(pfc, "pfc", dl, p + ".pfc",
                skip={"enabled_priorities", "link_mbps", "tx_ttl", "totals"},
                nested={"priorities", "rx_bad", "ttl"})
        for q in pfc.get("priorities", []):
            out.obj(q, "pfc", dl + (("priority", lab(q, "priority")),), p + ".pfc.priorities",
                    skip={"priority"})
        out.reasons(pfc.get("rx_bad"), "pfc", "rx_bad", dl)
        out.obj(pfc.get("ttl"), "ttl", dl, p + ".pfc.ttl")
        r = (dev.get("homa") or {}).get("receiver")
        if isinstance(r, dict):
            out.obj(r, "homa_receiver", dl, p + ".homa.receiver", skip={"cutoffs"},
                    nested={"counters"})
            out.obj(r.get("counters"), "homa_receiver", dl, p + ".homa.receiver.counters")
        pool = (dev.get("dc") or {}).get("pool")
        if isinstance(pool, dict):
            out.obj(pool, "dc_pool", dl, p + ".dc.pool", nested={"counters"})
            out.obj(pool.get("counters"), "dc_pool", dl, p + ".dc.pool.counters")
        sr = (dev.get("dc") or {}).get("sr")
        if isinstance(sr, dict):
            out.obj(sr, "dc_sr", dl, p + ".dc.sr")
    out.obj(c.get("cm"), "cm", (), "cm")
    return out


def class_values(k):
    out = Values()
    for q in k.get("qp_classes", []):
        l = (("device", q["device"]), ("type", q["type"]), ("class", lab(q, "class")))
        p = f"qp_classes[{q['device']},{q['type']},{q['class']}]"
        out.obj(q, "qp_class", l, p, skip={"device", "type", "class"},
                nested={"engine", "pace", "transport", "homa", "sr", "dci", "dci_streams", "dct",
                        "dcqcn"})
        out.obj(q.get("engine"), "qp", l, p + ".engine")
        out.obj(q.get("pace"), "pace", l, p + ".pace")
        t = {"UC": "uc", "UD": "ud"}.get(q["type"], "rc")
        out.obj(q.get("transport"), t, l, p + ".transport", nested={"rx"})
        out.reasons((q.get("transport") or {}).get("rx"), t, "rx", l)
        out.obj(q.get("homa"), "rc_homa", l, p + ".homa")
        out.obj(q.get("sr"), "rc_sr", l, p + ".sr")
        out.obj(q.get("dci"), "dci", l, p + ".dci")
        out.obj(q.get("dci_streams"), "dci_stream", l, p + ".dci_streams")
        out.obj(q.get("dct"), "dct", l, p + ".dct")
        out.obj(q.get("dcqcn"), "qp_dcqcn", l, p + ".dcqcn", nested={"rp"})
        out.obj((q.get("dcqcn") or {}).get("rp"), "qp_dcqcn", l, p + ".dcqcn.rp")
    for cl in k.get("clients", []):
        l = (("client", lab(cl, "id")), ("pid", lab(cl, "pid")), ("uid", lab(cl, "uid")),
             ("device", lab(cl, "device")))
        p = f"clients[{cl['id']}]"
        out.obj(cl, "client", l, p, skip={"id", "pid", "uid", "gid", "device", "objects"},
                nested={"used", "qp_engine"})
        out.obj(cl.get("used"), "client_used", l, p + ".used")
        out.obj(cl.get("qp_engine"), "client_qp", l, p + ".qp_engine")
    return out


def compare(before, after, samples, types, what):
    """Every value of `before` (and `after`) against the samples."""
    n = equal = 0
    for key, v1 in before.v.items():
        set_, k, labels = key
        if key not in after.v:
            # A client that came or went between the snapshots (the asking
            # uroce-ctl's own connection is one) is not compared.
            if set_ not in CLIENT_SETS:
                problems.append(f"{what}: {set_}.{k}{dict(labels)} gone between the snapshots")
            continue
        v2 = after.v[key]
        base = base_name(set_, k)
        if base + "_total" in types:
            name, kind = base + "_total", "counter"
        elif base in types:
            name, kind = base, types[base]
        else:
            problems.append(f"{what}: no family for {set_}.{k} (expected {base}[_total])")
            continue
        m = samples.get((name, labels))
        if m is None:
            problems.append(f"{what}: {name}{dict(labels)} missing")
            continue
        n += 1
        a, b = as_decimal(v1, k), as_decimal(v2, k)
        if kind == "counter":
            if isinstance(v1, bool) or not (a <= m <= b):
                problems.append(f"{what}: {name}{dict(labels)} = {m}, not within {a}..{b}")
        elif (set_, k) in ASKER_LEVELS:
            pass  # present; its value depends on who asks
        elif not (min(a, b) <= m <= max(a, b)):
            problems.append(f"{what}: {name}{dict(labels)} = {m}, not within {a}..{b}")
        if a == b and m == a:
            equal += 1
    return n, equal


def check_totals(c1, c2, samples):
    for dev in c1.get("devices", []):
        other = next(d for d in c2["devices"] if d["name"] == dev["name"])
        for key, v1 in dev.get("pfc", {}).get("totals", {}).items():
            base = base_name("pfc", key) + "_total"
            s = sum(v for (name, l), v in samples.items()
                    if name == base and ("device", dev["name"]) in l)
            a = as_decimal(v1, key)
            b = as_decimal(other["pfc"]["totals"][key], key)
            if not a <= s <= b:
                problems.append(f"pfc totals.{key} of {dev['name']}: the priorities sum to {s}, "
                                f"not within {a}..{b}")


def check_histograms(c1, c2, samples):
    n = 0
    for l1 in c1.get("daemon", {}).get("engine_loops", []):
        lc = (("lcore", lab(l1, "lcore")),)
        l2 = next(x for x in c2["daemon"]["engine_loops"] if x["lcore"] == l1["lcore"])
        for key in ("work_ns", "idle_ns", "oversleep_ns"):
            fam = base_name("engine_loop", key)
            count = samples.get((fam + "_count", lc))
            inf = samples.get((fam + "_bucket", lc + (("le", "+Inf"),)))
            if count is None or inf is None:
                problems.append(f"{fam}{dict(lc)}: no _count or +Inf bucket")
                continue
            if not sum(l1[key]) <= count <= sum(l2[key]) or inf != count:
                problems.append(f"{fam}{dict(lc)}: count {count}, +Inf {inf}, status "
                                f"{sum(l1[key])}..{sum(l2[key])}")
            buckets = sorted((Decimal(dict(l)["le"]), v) for (name, l), v in samples.items()
                             if name == fam + "_bucket" and dict(l).get("lcore") == lc[0][1]
                             and dict(l)["le"] != "+Inf")
            if any(b[1] > a[1] for b, a in zip(buckets, buckets[1:])) or \
                    (buckets and buckets[-1][1] > inf):
                problems.append(f"{fam}{dict(lc)}: buckets not cumulative")
            n += 1
    return n


def main():
    prom, c1p, c2p, k1p, k2p = sys.argv[1:6]
    samples, types, _ = parse_prom(open(prom).read())
    c1, c2 = (json.load(open(p)) for p in (c1p, c2p))
    k1, k2 = (json.load(open(p)) for p in (k1p, k2p))
    n, equal = compare(status_values(c1), status_values(c2), samples, types, "counters")
    s1, s2 = class_values(k1), class_values(k2)
    classes = sum(1 for k in s1.v if k[0] == "qp_class")
    clients = sum(1 for k in s1.v if k[0] == "client" and k[1] == "requests" and k in s2.v)
    cn, cequal = compare(s1, s2, samples, types, "classes/clients")
    check_totals(c1, c2, samples)
    h = check_histograms(c1, c2, samples)
    print(f"{n} status values present ({equal} equal to both snapshots, the rest within them); "
          f"{cn} values of {classes} QP class lines and {clients} clients ({cequal} equal); "
          f"{h} loop histograms; {len(samples)} samples, {len(types)} families")
    if problems:
        for p in problems[:40]:
            print("  " + p)
        if len(problems) > 40:
            print(f"  ... {len(problems) - 40} more")
        sys.exit(1)


if __name__ == "__main__":
    main()
