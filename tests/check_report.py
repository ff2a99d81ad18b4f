#!/usr/bin/env python3
"""Checks a report written by `sctp-handover report` on its own terms and
against the tables it was built from, read with pyarrow (a second reader,
a second implementation of the statistics).

usage: check_report.py REPORT.html ASSETS TABLES [--by COL] [--side S]
                       [--sweep X SERIES METRIC]

Prints one JSON object (figures, tables, checked values, problems) and
exits 1 when there is a problem.
"""

import csv
import glob
import json
import math
import os
import re
import statistics
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pyarrow.dataset as ds

VOID = {"meta", "link", "br", "hr", "img", "input", "col", "area", "base", "wbr", "source"}
SVG_NS = "http://www.w3.org/2000/svg"


class Structure(HTMLParser):
    """Well-formedness (every element closed, in order) and references."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.problems = []
        self.figures = []
        self.svgs = 0
        self.tables = 0
        self.in_style = False
        # HTML tables by id: rows of cell texts (header row first).
        self.table_rows = {}
        self.current_table = None
        self.cell = None

    def handle_starttag(self, tag, attrs):
        self.check_refs(tag, attrs)
        a = dict(attrs)
        if tag == "figure":
            self.figures.append(a.get("data-name"))
        if tag == "svg":
            self.svgs += 1
        if tag == "table":
            self.tables += 1
            self.current_table = a.get("id")
            self.table_rows[self.current_table] = []
        if tag == "tr" and self.current_table is not None:
            self.table_rows[self.current_table].append([])
        if tag in ("td", "th") and self.current_table is not None:
            self.cell = ""
        if tag == "script":
            self.problems.append("a <script> element")
        if tag == "style":
            self.in_style = True
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.check_refs(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False
        if tag in ("td", "th") and self.cell is not None and self.current_table is not None:
            self.table_rows[self.current_table][-1].append(self.cell)
            self.cell = None
        if tag == "table":
            self.current_table = None
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        if self.in_style and ("url(" in data or "@import" in data):
            self.problems.append("the stylesheet refers to another file")

    def check_refs(self, tag, attrs):
        for name, value in attrs:
            value = value or ""
            if name in ("src", "href", "xlink:href", "srcset", "action", "poster"):
                if not value.startswith("#"):
                    self.problems.append(f"<{tag} {name}={value!r}> points outside the page")
            if name == "style" and "url(" in value and "url(#" not in value:
                self.problems.append(f"<{tag} style> refers to another file")
            if name == "xmlns" and value != SVG_NS:
                self.problems.append(f"unexpected namespace {value}")


def slug(text):
    out = ""
    for c in text:
        if c.isascii() and c.isalnum():
            out += c.lower()
        elif not out.endswith("-"):
            out += "-"
    return out.strip("-")


def close(a, b, what, problems):
    if a is None or b is None:
        if a is not b:
            problems.append(f"{what}: {a} vs {b}")
        return
    if not math.isclose(a, b, rel_tol=1e-9, abs_tol=2e-6):
        problems.append(f"{what}: report {a} vs tables {b}")


def number(cell):
    return float(cell) if cell != "" else None


def stats_of(values):
    v = [x for x in values if x is not None and not (isinstance(x, float) and math.isnan(x))]
    if not v:
        return {"n": 0, "mean": None, "median": None, "min": None, "max": None, "std": None}
    return {
        "n": len(v),
        "mean": statistics.fmean(v),
        "median": statistics.median(v),
        "min": min(v),
        "max": max(v),
        "std": statistics.stdev(v) if len(v) >= 2 else None,
    }


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    args = sys.argv[1:]
    html_path, assets, tables = args[0], args[1], args[2]
    by = side = None
    sweep = None
    rest = args[3:]
    while rest:
        if rest[0] == "--by":
            by, rest = rest[1], rest[2:]
        elif rest[0] == "--side":
            side, rest = rest[1], rest[2:]
        elif rest[0] == "--sweep":
            sweep, rest = rest[1:4], rest[4:]
        else:
            raise SystemExit(f"unknown argument {rest[0]}")

    problems = []
    text = open(html_path, encoding="utf-8").read()
    s = Structure()
    s.feed(text)
    s.close()
    problems += s.problems
    if s.stack:
        problems.append(f"unclosed elements: {s.stack}")
    for m in re.finditer(r"https?://[^\s\"'<>)]+", text):
        if m.group(0) != SVG_NS:
            problems.append(f"an external URL: {m.group(0)}")

    # Every figure is also an SVG file that parses as XML, with its CSV.
    for name in s.figures:
        svg = os.path.join(assets, f"{name}.svg")
        try:
            root = ET.parse(svg).getroot()
            if root.tag != f"{{{SVG_NS}}}svg":
                problems.append(f"{svg}: root is {root.tag}")
        except Exception as e:  # noqa: BLE001 - any parse failure is a finding
            problems.append(f"{svg}: {e}")
        if not os.path.exists(os.path.join(assets, f"{name}.csv")):
            problems.append(f"{name}: no CSV beside the SVG")

    rows = ds.dataset(os.path.join(tables, "handovers"), format="parquet").to_table().to_pylist()
    if side:
        rows = [r for r in rows if r.get("capture_side") == side]
    checked = 0

    # The table beneath each handover's time line: every handover of a
    # drawn association has one.
    switches = {}
    for r in rows:
        switches.setdefault((r["source"], r["association"]), []).append(r["switch_frame"])
    for v in switches.values():
        v.sort()
    drawn = {name.rsplit("-tsn", 1)[0] for name in s.figures if "-tsn" in name}
    for r in rows:
        i = switches[(r["source"], r["association"])].index(r["switch_frame"]) + 1
        stem = f"c-{slug(r['source'])}-a{r['association']}"
        path = os.path.join(assets, f"{stem}-h{i}-components.csv")
        if not os.path.exists(path):
            if stem in drawn:
                problems.append(f"{path}: missing for a drawn association")
            continue
        found = [path]
        for line in read_csv(found[0]):
            close(number(line["ms"]), r[line["column"]], f"{found[0]} {line['column']}", problems)
            checked += 1

    # The comparison tables: every group, every statistic. Invalid harness
    # runs (a scripted action did not take effect) are drawn but left out
    # of the statistics.
    rows = [r for r in rows if r.get("run_valid") is not False]
    by_group = {}
    if by:
        for x in rows:
            by_group.setdefault(str_value(x.get(by)), []).append(x)
    for path in sorted(glob.glob(os.path.join(assets, "comparison-*.csv"))):
        if path.endswith("-bars.csv") or path.endswith("comparison-overview.csv"):
            continue
        stem = os.path.basename(path)[len("comparison-"):-len(".csv")]
        column = stem if stem + "_ms" not in rows[0] else stem + "_ms"
        if column not in rows[0]:
            column = stem + "_ms"
        for line in read_csv(path):
            group = line["group"]
            value = group.split(" = ", 1)[1] if " = " in group else group
            members = by_group.get(value, []) if by else rows
            expected = stats_of([x.get(column) for x in members])
            if int(line["n"]) != expected["n"]:
                problems.append(f"{path} {group}: n {line['n']} vs {expected['n']}")
            for k in ("mean", "median", "min", "max", "std"):
                close(number(line[k]), expected[k], f"{path} {group} {k}", problems)
                checked += 1

    if sweep:
        x, series, metric = sweep
        cells = {}
        for r in rows:
            key = (r.get(f"param_{x}"), str_value(r.get(f"param_{series}")))
            cells.setdefault(key, []).append(r)
        for path in glob.glob(os.path.join(assets, "sweep-*.csv")):
            if path.endswith("-figure.csv"):
                continue
            for line in read_csv(path):
                sname, sval = line["series"].split(" = ")
                members = cells.get((float(line["x"]), sval), [])
                expected = stats_of([r.get(f"{metric}_ms") for r in members])
                if int(line["n"]) != expected["n"]:
                    problems.append(f"{path} {line['series']} {line['x']}: n {line['n']} vs {expected['n']}")
                for k in ("mean", "median", "min", "max", "std"):
                    close(number(line[k]), expected[k], f"{path} {line['series']} x={line['x']} {k}", problems)
                    checked += 1

    # Every HTML table holds exactly what its CSV holds.
    html_tables = 0
    for tid, trs in s.table_rows.items():
        name = (tid or "")[len("table-"):]
        path = os.path.join(assets, f"{name}.csv")
        if not os.path.exists(path):
            problems.append(f"HTML table {tid} has no CSV")
            continue
        with open(path, newline="") as f:
            expected = list(csv.reader(f))
        if trs != expected:
            problems.append(f"HTML table {tid} differs from {path}")
        html_tables += 1
        checked += sum(len(r) for r in trs)

    print(
        json.dumps(
            {
                "figures": s.figures,
                "svgs": s.svgs,
                "tables": s.tables,
                "checked": checked,
                "html_tables": html_tables,
                "problems": problems,
            }
        )
    )
    sys.exit(1 if problems else 0)


def str_value(v):
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return "" if v is None else str(v)


if __name__ == "__main__":
    main()
