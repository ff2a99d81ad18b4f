"""Checks the committed reproduction report (reports/reproduction/) against
the tables and ground truth committed beside it, with Python's csv, json
and statistics modules only (no code shared with the report):

* Koh & Kim: every "data interrupt" row (n, mean, min, max) from the
  handovers table;
* Bokor (RTO.min = RTO.max): eq. (4) as printed = PMR x RTO and the
  kernel-adjusted (PMR+1) x RTO; the kernel's link-down -> ADDR_UNREACHABLE
  statistics recomputed from each run's events.jsonl; the kernel's error
  counter at that moment is PMR + 1 (how Linux counts Path.Max.Retrans);
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
        if cell != "–":
            failures.append(f"{what}: report {cell!r}, recomputed no values")
        return
    if not m:
        failures.append(f"{what}: {cell!r} is not 'mean (min–max)'")
        return
    tol = 0.51 * 10 ** -places
    expect(what + " mean", float(m[1]), statistics.mean(values), tol)
    expect(what + " min", float(m[2]), min(values), tol)
    expect(what + " max", float(m[3]), max(values), tol)


# Koh & Kim
for r in asset("koh-kim-decomposition"):
    if r["component"] != "data interrupt":
        continue
    sweep = "koh-kim-1" if r["scenario"] == "1" else "koh-kim-2"
    delay = int(r["RTT (ms)"]) // 2
    sw = first_per_source(
        lambda h: f"/{sweep}/" in h["source"]
        and h["source"].endswith("mn.pcap")
        and h["sender"] == "1"
        and h["class"] == "planned"
        and num(h["data_interrupt_ms"]) is not None
        and (sweep == "koh-kim-2" or f"delay={delay}/" in h["source"])
    )
    v = [float(h["data_interrupt_ms"]) for h in sw]
    what = f"koh-kim scenario {r['scenario']} RTT {r['RTT (ms)']}"
    expect(what + " n", int(r["n"]), len(v), 0)
    expect(what + " mean", float(r["mean"]), statistics.mean(v), 0.006)
    expect(what + " min", float(r["min"]), min(v), 0.006)
    expect(what + " max", float(r["max"]), max(v), 0.006)


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


# Bokor, RTO.min = RTO.max
col_k = "kernel: link down → ADDR_UNREACHABLE mean (min–max)"
for r in asset("bokor-linear-table"):
    pmr, rto = int(r["PMR"]), int(r["RTO (ms)"])
    expect(f"bokor eq4 PMR {pmr} RTO {rto}", float(r["eq. as printed"]), pmr * rto, 0)
    expect(f"bokor eq4' PMR {pmr} RTO {rto}", float(r["eq., Linux (PMR+1)"]), (pmr + 1) * rto, 0)
    runs = first_per_source(
        lambda h: "/bokor-linear/" in h["source"] and h["source"].endswith("cn.pcap")
        and h["sender"] == "1" and h["class"] == "failover"
        and f"rto={rto},pmr={pmr}," in h["source"]
    )
    ks, counts = [], []
    for h in runs:
        rel = h["source"][h["source"].index("/bokor-linear/") + 1:]
        ms, count = kernel(D / "runs" / pathlib.Path(rel).parent)
        if ms is not None:
            ks.append(ms)
            counts.append(count)
    expect_mmm(f"bokor kernel unreachable PMR {pmr} RTO {rto}", r[col_k], ks, 1)
    for c in counts:
        expect(f"bokor kernel error count PMR {pmr} RTO {rto}", c, pmr + 1, 0)

# Honda
for name, scenario, sender in [
    ("honda-honda-dad-a", "honda-dad", "0"),
    ("honda-honda-dad-b", "honda-dad", "1"),
    ("honda-honda-nodad-a", "honda-nodad", "0"),
    ("honda-honda-nodad-b", "honda-nodad", "1"),
]:
    r = next(x for x in asset(name) if x["element"] == "Total handover latency")
    sw = first_per_source(
        lambda h: "/honda/" in h["source"] and h["scenario"] == scenario
        and h["capture_side"] == "mn" and h["sender"] == sender
    )
    v = [float(h["total_handover_latency_ms"]) / 1000 for h in sw
         if num(h["total_handover_latency_ms"]) is not None]
    expect_mmm(f"honda {name} total", r["Linux 6.1 (this run), s"], v, 3)

# Eklund
for r in asset("eklund-table"):
    key = r["SACK delay"].split(" ")[0]
    sw = first_per_source(
        lambda h: "/eklund/" in h["source"] and h["source"].endswith("cn.pcap")
        and h["sender"] == "1" and h["class"] == "failover"
        and f"sack_delay={key}/" in h["source"]
    )
    v = [float(h["failover_time_ms"]) for h in sw if num(h["failover_time_ms"]) is not None]
    expect_mmm(f"eklund {key}", r["failover time mean (min–max)"], v, 1)

# Wang & Song
for r in asset("wang-song-table"):
    sweep = "koh-kim-1" if "scenario 1" in r["runs"] else "koh-kim-2"
    sources = [h["source"] for h in first_per_source(
        lambda h: f"/{sweep}/" in h["source"] and h["source"].endswith("mn.pcap")
        and h["sender"] == "1" and h["class"] == "planned")]
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
