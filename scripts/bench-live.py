#!/usr/bin/env python3
"""Reads the runs of scripts/bench-live.sh and prints its table.

    bench-live.py --digest RUN_DIR     parse one run's raw files into run.json
    bench-live.py RESULTS_DIR FRAMES   the table (and bench-live.csv)

A run directory holds: rate, capturer, replay.txt (tcpreplay's output),
capture.err (the capturer's standard error: tcpdump's or watch's counts),
and for watch out.jsonl (its JSON lines) and analyze.jsonl (`analyze` of
its --write file).
"""

import csv
import json
import re
import sys
from decimal import Decimal
from pathlib import Path


def number(pattern, text, cast=int):
    m = re.search(pattern, text)
    return cast(m.group(1)) if m else None


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def same(x, y):
    """Handover records equal: numbers within 1 µs (analyze rounds
    durations to the microsecond, watch keeps nanoseconds)."""
    if isinstance(x, dict) and isinstance(y, dict):
        keys = (set(x) | set(y)) - {"record", "source"}
        return all(k in x and k in y and same(x[k], y[k]) for k in keys)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(same(a, b) for a, b in zip(x, y))
    if isinstance(x, float) or isinstance(y, float):
        return x is not None and y is not None and abs(x - y) <= 0.0011
    return x == y


def digest(run: Path):
    rate = (run / "rate").read_text().strip()
    who = (run / "capturer").read_text().strip()
    replay = (run / "replay.txt").read_text(errors="replace")
    err = (run / "capture.err").read_text(errors="replace")
    d = {
        "rate": rate,
        "capturer": who,
        "sent": number(r"Successful packets:\s+(\d+)", replay),
        "failed": number(r"Failed packets:\s+(\d+)", replay),
        "seconds": number(r"sent in ([\d.]+) seconds", replay, float),
        "pps": number(r"Mbps, ([\d.]+) pps", replay, float),
    }
    if who == "tcpdump":
        d["captured"] = number(r"(\d+) packets? captured", err)
        d["kernel"] = number(r"(\d+) packets? dropped by kernel", err)
        d["interface"] = number(r"(\d+) packets? dropped by interface", err) or 0
        d["queue"] = None
    else:
        # "sctp-handover: 162140 frames (…)" then per interface
        # "IFACE: R received by the filter, K dropped by the kernel, I by
        # the interface[, Q by the watch's queue]".
        d["captured"] = number(r"sctp-handover: (\d+) frames \(", err)
        d["kernel"] = number(r"(\d+) dropped by the kernel", err)
        d["interface"] = number(r"(\d+) by the interface", err)
        d["queue"] = number(r"(\d+) by the watch's queue", err)
        d["queue_peak_mib"] = number(r"queue: at most ([\d.]+) MiB", err, float)
        d["marked"] = number(r"(\d+) handovers? met a drop span", err)
    out = run / "out.jsonl"
    if out.exists():
        lat = {"switch": [], "handover": []}
        handovers = []
        marked = 0
        for line in out.open():
            try:
                v = json.loads(line)
            except ValueError:
                continue
            kind = v.get("type")
            if kind == "handover":
                handovers.append(v["handover"])
                marked += bool(v.get("capture_drops"))
            if kind in lat and v.get("completed_by"):
                delay = Decimal(v["printed"]) - Decimal(v["completed_by"]["time"])
                lat[kind].append(float(delay) * 1000)
        for kind, values in lat.items():
            for p in (50, 90, 99, 100):
                d[f"{kind}_p{p}_ms"] = percentile(values, p)
        d["handovers"] = len(handovers)
        d["handovers_marked"] = marked
        analysed = run / "analyze.jsonl"
        if analysed.exists():
            a = [json.loads(l) for l in analysed.open() if '"record":"handover"' in l]
            key = lambda h: (h["association"], h["switch_frame"])
            a.sort(key=key)
            handovers.sort(key=key)
            d["write_handovers"] = len(a)
            d["write_equal"] = len(a) == len(handovers) and all(
                same(x, y) for x, y in zip(a, handovers)
            )
    (run / "run.json").write_text(json.dumps(d, indent=1))
    return d


def fmt(v, spec="{}"):
    return "-" if v is None else spec.format(v)


def table(results: Path, frames: int):
    runs = []
    for run in sorted((results / "runs").iterdir()):
        j = run / "run.json"
        runs.append(json.loads(j.read_text()) if j.exists() else digest(run))
    order = {"tcpdump": 0, "watch-text": 1, "watch-jsonl": 2, "watch-write": 3}
    rate_key = lambda r: (1, 0) if r == "top" else (0, int(r))
    runs.sort(key=lambda d: (rate_key(d["rate"]), order.get(d["capturer"], 9)))
    head = (
        f"{'rate':>7} {'capturer':<12} {'sent':>7} {'sent/s':>8} {'captured':>8} "
        f"{'kernel':>7} {'iface':>5} {'queue':>6} {'lost %':>6} "
        f"{'switch latency ms p50/p90/p99/max':>34} {'marked':>6} {'--write = analyze':>18}"
    )
    lines = [head, "-" * len(head)]
    for d in runs:
        lost = sum(x or 0 for x in (d["kernel"], d["interface"], d["queue"]))
        sent = d["sent"] or 0
        d["lost"] = lost
        d["lost_pct"] = 100 * lost / sent if sent else None
        lat = "/".join(
            fmt(d.get(f"switch_p{p}_ms"), "{:.1f}") for p in (50, 90, 99, 100)
        )
        if d.get("switch_p50_ms") is None:
            lat = "-"
        eq = d.get("write_equal")
        eq = "-" if eq is None else f"{'yes' if eq else 'NO'} ({d['write_handovers']})"
        lines.append(
            f"{d['rate']:>7} {d['capturer']:<12} {fmt(d['sent']):>7} {fmt(d['pps'], '{:.0f}'):>8} "
            f"{fmt(d['captured']):>8} {fmt(d['kernel']):>7} {fmt(d['interface']):>5} "
            f"{fmt(d['queue']):>6} {fmt(d['lost_pct'], '{:.2f}'):>6} {lat:>34} "
            f"{fmt(d.get('handovers_marked')):>6} {eq:>18}"
        )
    lines.append("")
    lines.append(
        "sent/s: the rate tcpreplay achieved (at top speed it competes with the capturer for the CPUs);"
    )
    lines.append(
        "kernel/iface/queue: frames dropped by the kernel's buffer, the interface, watch's queue;"
    )
    lines.append(
        "latency: `switch` lines, printed − completed_by.time (JSON lines); marked: handovers printed with capture_drops."
    )
    lines.append("")
    lines.append(
        "Highest offered rate kept up with (no frame lost in any run at that rate or below;"
    )
    lines.append("`top` is tcpreplay --topspeed, above every fixed rate):")
    for who in sorted({d["capturer"] for d in runs}, key=lambda w: order.get(w, 9)):
        mine = sorted(
            (d for d in runs if d["capturer"] == who), key=lambda d: rate_key(d["rate"])
        )
        best = None
        for d in mine:
            if d["lost"] > 0:
                break
            best = d
        lossy = [d for d in mine if d["lost"] > 0]
        if best is None:
            lines.append(f"  {who:<12} none (lost frames at {mine[0]['rate']})")
            continue
        at = [x["pps"] for x in mine if x["rate"] == best["rate"] and x["pps"]]
        lines.append(
            f"  {who:<12} {best['rate']:>7} (sent at {fmt(min(at, default=None), '{:.0f}')}"
            f"–{fmt(max(at, default=None), '{:.0f}')}/s)"
            + (f", lost frames at {lossy[0]['rate']}" if lossy else ", no loss in any run")
        )
    text = "\n".join(lines)
    print(text)
    with open(results / "bench-live.csv", "w", newline="") as f:
        keys = sorted({k for d in runs for k in d})
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(runs)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--digest":
        d = digest(Path(sys.argv[2]))
        lost = [d.get(k) for k in ("kernel", "interface", "queue")]
        print(
            f"  {d['rate']:>7} {d['capturer']:<12} sent {d['sent']} at {fmt(d['pps'], '{:.0f}')}/s,"
            f" captured {d['captured']}, dropped kernel/iface/queue {'/'.join(fmt(x) for x in lost)}",
            file=sys.stderr,
        )
    elif len(sys.argv) == 3:
        table(Path(sys.argv[1]), int(sys.argv[2]))
    else:
        sys.exit(__doc__)
