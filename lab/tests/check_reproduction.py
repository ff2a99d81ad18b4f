"""Checks the committed reproduction report (reports/reproduction/) against
the tables and ground truth committed beside it, with Python's csv, json
and statistics modules only (no code shared with the report):

* every `source` is relative to the report (runs/...), and no statistic
  uses a run whose harness check failed (run_valid false);
* Koh & Kim: every "data interrupt" row (n, mean, min, max) from the
  handovers table, and scenario 2's interrupt per SET-PRIMARY time;
* Bokor (RTO.min = RTO.max, paper settings): eq. (4) as printed = PMR x
  RTO and the kernel-adjusted (PMR+1) x RTO; the kernel's link-down ->
  ADDR_UNREACHABLE statistics recomputed from each run's events.jsonl; the
  kernel's error counter at that moment is PMR + 1 (how Linux counts
  Path.Max.Retrans); the prediction from the kernel's own RTO at each T3
  expiry and its residual, run by run; the recognition means per
  HB.Interval and RTO;
* Koh & Kim at the LAN RTT: each run's interrupt, the TSNs around the
  switch, the correspondent's departure gap and the gaps before the switch
  from the run's tsn.csv;
* Honda: the total handover latency of each table;
* Eklund: the failover time per SACK delay;
* Wang & Song: the DAR bytes per handover from the asconf table.

Usage: check_reproduction.py DIR. Prints one JSON object; exit status 1
when a check fails.
"""

import csv
import json
import pathlib
import re
import statistics
import sys
import tomllib

D = pathlib.Path(sys.argv[1])
failures = []
checked = 0


def rows(table):
    with open(D / "tables" / table / "part-all.csv", newline="") as f:
        return list(csv.DictReader(f))


def asset(name):
    with open(D / "assets" / f"{name}.csv", newline="") as f:
        return list(csv.DictReader(f))


H = rows("handovers")
A = rows("asconf")


def first_per_source(pred):
    seen, out = set(), []
    for r in H:
        if pred(r) and r["source"] not in seen:
            seen.add(r["source"])
            out.append(r)
    return out


def num(x):
    return float(x) if x not in ("", None) else None


MMM = re.compile(r"^(-?[\d.]+) \((-?[\d.]+)–(-?[\d.]+)\)$")


def expect(what, got, want, tol):
    global checked
    checked += 1
    if got is None or want is None or abs(got - want) > tol:
        failures.append(f"{what}: report {got}, recomputed {want}")


def expect_mmm(what, cell, values, places):
    m = MMM.match(cell)
    if not values:
        if cell.split(" ")[0] != "–":
            failures.append(f"{what}: report {cell!r}, recomputed no values")
        return
    if not m:
        failures.append(f"{what}: {cell!r} is not 'mean (min–max)'")
        return
    tol = 0.51 * 10 ** -places
    expect(what + " mean", float(m[1]), statistics.mean(values), tol)
    expect(what + " min", float(m[2]), min(values), tol)
    expect(what + " max", float(m[3]), max(values), tol)


VALID = {}
for f in rows("files"):
    VALID[f["source"]] = f.get("run_valid") != "false"
    checked += 1
    if not f["source"].startswith("runs/"):
        failures.append(f"source not relative to the report: {f['source']}")


def valid(h):
    return VALID.get(h["source"], True) and h.get("run_valid") != "false"


# Koh & Kim
for r in asset("koh-kim-decomposition"):
    if r["component"] != "data interrupt":
        continue
    lan = "koh-kim-1-lan" in r["setup"]
    sweep = "koh-kim-1-lan" if lan else "koh-kim-1"
    delay = float(r["RTT (ms)"]) / 2
    delay = f"{delay:g}"
    sw = first_per_source(
        lambda h: f"/{sweep}/" in h["source"] and valid(h)
        and h["source"].endswith("mn.pcap")
        and h["sender"] == "1"
        and h["class"] == "planned"
        and num(h["data_interrupt_ms"]) is not None
        and f"delay={delay}/" in h["source"]
    )
    v = [float(h["data_interrupt_ms"]) for h in sw]
    what = f"koh-kim {sweep} RTT {r['RTT (ms)']}"
    expect(what + " n", int(r["n"]), len(v), 0)
    expect(what + " mean", float(r["mean"]), statistics.mean(v), 0.006)
    expect(what + " min", float(r["min"]), min(v), 0.006)
    expect(what + " max", float(r["max"]), max(v), 0.006)

for r in asset("koh-kim-2-table"):
    if "koh-kim-2-lan" not in r["setup"]:
        continue
    at = 1015 + int(r["SET-PRIMARY after the cut (scripted: at_ms − 1015, ms)"])
    sw = first_per_source(
        lambda h: "/koh-kim-2-lan/" in h["source"] and valid(h)
        and h["source"].endswith("mn.pcap") and h["sender"] == "1"
        and num(h["data_interrupt_ms"]) is not None
        and f"at_set_peer_primary={at}/" in h["source"]
    )
    v = [float(h["data_interrupt_ms"]) for h in sw]
    expect_mmm(f"koh-kim-2-lan SET-PRIMARY at {at}", r["data interrupt mean (min–max)"], v, 1)


def kernel(run_dir):
    """link_down -> the CN kernel's first ADDR_UNREACHABLE (ms), and the
    primary's error counter sampled by then (+15 ms)."""
    lines = []
    for line in open(run_dir / "events.jsonl"):
        try:
            lines.append(json.loads(line))
        except ValueError:
            pass

    def t(e):
        s, _, f = e["time"].partition(".")
        return int(s) * 10**9 + int((f + "000000000")[:9])

    lines.sort(key=t)
    down = next(t(e) for e in lines if e["kind"] == "link_down")
    u = next(
        (e for e in lines
         if e.get("node") == "cn" and e["kind"] == "kernel_addr_change"
         and e.get("state") == "unreachable" and t(e) > down),
        None,
    )
    if u is None:
        return None, None
    counts = [
        e["primary_error_count"] for e in lines
        if e.get("node") == "cn" and e["kind"] == "kernel_status"
        and e.get("primary") == u["address"] and "primary_error_count" in e
        and t(e) <= t(u) + 15_000_000
    ]
    return (t(u) - down) / 1e6, (counts[-1] if counts else None)


def expiry_rtos(run_dir, address_hint=None):
    """The cut path's rto_ms last sampled at least one 10 ms poll before
    each rise of the CN's t3_rtx_expireds between link_down and
    ADDR_UNREACHABLE (+15 ms)."""
    lines = []
    for line in open(run_dir / "events.jsonl"):
        try:
            lines.append(json.loads(line))
        except ValueError:
            pass

    def t(e):
        s, _, f = e["time"].partition(".")
        return int(s) * 10**9 + int((f + "000000000")[:9])

    lines.sort(key=t)
    down = next(t(e) for e in lines if e["kind"] == "link_down")
    u = next(
        (e for e in lines
         if e.get("node") == "cn" and e["kind"] == "kernel_addr_change"
         and e.get("state") == "unreachable" and t(e) > down),
        None,
    )
    if u is None:
        return []
    addr = u["address"]
    mib = [e for e in lines if e.get("node") == "cn" and e["kind"] == "kernel_mib"]
    last = 0
    for e in mib:
        if t(e) <= down:
            last = e["t3_rtx_expireds"]
    out = []
    for e in mib:
        if not (down < t(e) <= t(u) + 15_000_000):
            continue
        rto = [p["rto_ms"] for p in lines
               if p.get("node") == "cn" and p["kind"] == "kernel_paddr"
               and p.get("address") == addr and t(p) < t(e) - 10_000_000]
        for _ in range(last, e["t3_rtx_expireds"]):
            if rto:
                out.append(rto[-1])
        last = max(last, e["t3_rtx_expireds"])
    return out


# Bokor, RTO.min = RTO.max at the paper's settings
col_k = "kernel: link down → ADDR_UNREACHABLE mean (min–max)"
for r in asset("bokor-paper-table"):
    pmr, rto = int(r["PMR"]), int(r["RTO (ms)"])
    expect(f"bokor eq4 PMR {pmr} RTO {rto}", float(r["eq. as printed"]), pmr * rto, 0)
    expect(f"bokor eq4' PMR {pmr} RTO {rto}", float(r["eq., Linux (PMR+1)"]), (pmr + 1) * rto, 0)
    runs = first_per_source(
        lambda h: h["source"].startswith("runs/bokor-paper/bokor-paper/")
        and h["source"].endswith("cn.pcap")
        and valid(h) and h["sender"] == "1" and h["class"] == "failover"
        and re.search(rf"/rto={rto}[/,]", h["source"])
    )
    ks, counts = [], []
    for h in runs:
        ms, count = kernel(D / pathlib.Path(h["source"]).parent)
        if ms is not None:
            ks.append(ms)
            counts.append(count)
    expect_mmm(f"bokor kernel unreachable PMR {pmr} RTO {rto}", r[col_k], ks, 1)
    for c in counts:
        expect(f"bokor kernel error count PMR {pmr} RTO {rto}", c, pmr + 1, 0)

# Bokor: the prediction from the kernel's RTO, run by run.
for r in asset("bokor-kernel-rto-table"):
    run = D / "runs" / r["run"]
    rtos = expiry_rtos(run)
    pmr = int(r["PMR"])
    expect(f"bokor {r['run']} expiries", len(r["kernel: RTO at each expiry (ms)"].split()), len(rtos), 0)
    if len(rtos) >= pmr + 1 and r["predicted, kernel's RTO (ms)"]:
        pred = sum(rtos[: pmr + 1])
        expect(f"bokor {r['run']} kernel prediction", float(r["predicted, kernel's RTO (ms)"]), pred, 0)
        ms, _ = kernel(run)
        expect(f"bokor {r['run']} residual", float(r["residual, kernel's RTO (ms)"]), ms - pred, 0.06)

def scenario_ms(run_dir, key):
    m = re.search(rf"^{key}\s*=\s*([0-9.]+)", (run_dir / "scenario.toml").read_text(), re.M)
    return float(m[1])


# Bokor: recognition per HB.Interval and RTO (each run's scenario.toml).
for r in asset("bokor-recognition-table"):
    hb, rto = r["HB.Interval (ms)"], float(r["RTO (ms)"])
    sw = first_per_source(
        lambda h: "/bokor-hb/" in h["source"] and h["source"].endswith("cn.pcap")
        and valid(h) and h["sender"] == "1" and h["class"] == "return"
        and f"hb_interval={hb}/" in h["source"]
        and scenario_ms(D / pathlib.Path(h["source"]).parent, "rto_min_ms") == rto
    )
    v = [float(h["recognition_link_up_to_data_ms"]) for h in sw
         if num(h["recognition_link_up_to_data_ms"]) is not None]
    expect_mmm(f"bokor recognition HB {hb} RTO {rto}", r["link up → first DATA mean (min–max)"], v, 1)

# Koh & Kim at the LAN RTT: the interrupt beside the correspondent's own
# message spacing, from each run's tsn.csv (first transmission of each TSN
# per capture).
for r in asset("koh-kim-1-spacing"):
    first = {}
    with open(D / "runs" / r["run"] / "tsn.csv", newline="") as f:
        for c in csv.DictReader(f):
            first.setdefault((c["capture"], int(c["tsn"])), (float(c["time"]), c["dst"]))
    mn = sorted((v[0], k[1], v[1]) for k, v in first.items() if k[0] == "mn")
    old = mn[0][2]
    k = next(i for i, x in enumerate(mn) if x[2] != old)
    t_old, tsn_old, _ = [x for x in mn[:k] if x[2] == old][-1]
    t_new, tsn_new, _ = mn[k]
    expect(f"koh-kim {r['run']} interrupt", float(r["data interrupt (MN)"]), (t_new - t_old) * 1e3, 0.006)
    got_old, got_new = (int(x) for x in r["TSN last on the old address → first on the new"].split(" → "))
    expect(f"koh-kim {r['run']} last TSN on the old address", got_old, tsn_old, 0)
    expect(f"koh-kim {r['run']} first TSN on the new address", got_new, tsn_new, 0)
    gaps = [(b[0] - a[0]) * 1e3 for a, b in zip(mn[:k], mn[1:k])
            if b[1] == a[1] + 1 and a[2] == old and b[2] == old]
    n, _, mx = r["gaps between consecutive messages before the switch (MN): n, median, max"].split(", ")
    expect(f"koh-kim {r['run']} gaps before", int(n), len(gaps), 0)
    expect(f"koh-kim {r['run']} longest gap before", float(mx), max(gaps), 0.006)
    cn = {k[1]: v[0] for k, v in first.items() if k[0] == "cn"}
    expect(f"koh-kim {r['run']} CN departure gap", float(r["the same two messages' departure gap (CN capture)"]),
           (cn[tsn_new] - cn[tsn_old]) * 1e3, 0.006)
    # interrupt − period = (departure gap − period) + (transit new − transit old)
    with open(D / "runs" / r["run"] / "scenario.toml", "rb") as f:
        period = float(tomllib.load(f)["traffic"]["interval_ms"])
    total, parts = r["interrupt − period = departure gap − period + transit difference"].split(" = ")
    departure, transit = (float(x) for x in parts.split(" "))
    expect(f"koh-kim {r['run']} interrupt − period", float(total), (t_new - t_old) * 1e3 - period, 0.006)
    expect(f"koh-kim {r['run']} departure gap − period", departure,
           (cn[tsn_new] - cn[tsn_old]) * 1e3 - period, 0.006)
    expect(f"koh-kim {r['run']} transit difference", transit,
           ((t_new - cn[tsn_new]) - (t_old - cn[tsn_old])) * 1e3, 0.006)

# Honda
for name, scenario, sender in [
    ("honda-planned-dad-a", "honda-planned-dad", "0"),
    ("honda-planned-dad-b", "honda-planned-dad", "1"),
    ("honda-planned-nodad-a", "honda-planned-nodad", "0"),
    ("honda-planned-nodad-b", "honda-planned-nodad", "1"),
]:
    r = next(x for x in asset(name) if x["element"] == "Total handover latency")
    sw = first_per_source(
        lambda h: "/honda-planned/" in h["source"] and h["scenario"] == scenario
        and valid(h) and h["capture_side"] == "mn" and h["sender"] == sender
    )
    v = [float(h["total_handover_latency_ms"]) / 1000 for h in sw
         if num(h["total_handover_latency_ms"]) is not None]
    expect_mmm(f"honda {name} total", r["Linux 6.1, SmSCTP's order (honda-planned), s"], v, 3)

# Eklund
for r in asset("eklund-table"):
    key = r["SACK delay"].split(" ")[0]
    sw = first_per_source(
        lambda h: "/eklund/" in h["source"] and h["source"].endswith("cn.pcap") and valid(h)
        and h["sender"] == "1" and h["class"] == "failover"
        and f"sack_delay={key}/" in h["source"]
    )
    v = [float(h["failover_time_ms"]) for h in sw if num(h["failover_time_ms"]) is not None]
    expect_mmm(f"eklund {key}", r["failover time mean (min–max)"], v, 1)

# Wang & Song
for r in asset("wang-song-table"):
    sweep = re.search(r"\(([a-z0-9-]+)\)$", r["runs"])[1]
    scenario2 = sweep.startswith("koh-kim-2")
    sources = [h["source"] for h in first_per_source(
        lambda h: f"/{sweep}/" in h["source"] and h["source"].endswith("mn.pcap")
        and valid(h) and h["sender"] == "1" and (scenario2 or h["class"] == "planned"))]
    totals = []
    for s in sources:
        chunks, acks, total = set(), set(), 0.0
        for a in A:
            if a["source"] != s or a["frame"] == "":
                continue
            if (a["frame"], a["serial"]) not in chunks:
                chunks.add((a["frame"], a["serial"]))
                total += float(a["bytes"] or 0)
            if a["ack_frame"] and (a["ack_frame"], a["serial"]) not in acks:
                acks.add((a["ack_frame"], a["serial"]))
                total += float(a["ack_bytes"] or 0)
        totals.append(total)
    cell = r["DAR total bytes (bits)"].split(" (")[0:2]
    expect_mmm(f"wang-song {sweep}", " (".join(cell).rstrip(), totals, 1)

print(json.dumps({"checked": checked, "failures": failures}, ensure_ascii=False, indent=1))
sys.exit(1 if failures or checked == 0 else 0)
