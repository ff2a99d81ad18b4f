"""Two datasets (`analyze --out`, `python -m sctp_handover.cluster`) hold the
same tables: the same part files, the same schemas, the same rows (in any
order; `analysis_seconds`, a wall time, left out).

    python compare.py DIR1 DIR2     exit status 0 when equal
"""

import os
import sys

import pyarrow as pa
import pyarrow.dataset as ds

TABLES = ("files", "associations", "paths", "asconf", "events", "handovers")
VARYING = {"analysis_seconds"}


def parts(root, table):
    d = os.path.join(root, table)
    return sorted(n for n in os.listdir(d) if not n.startswith((".", "_")))


def rows(root, table):
    t = ds.dataset(os.path.join(root, table), format="parquet").to_table()
    t = t.drop_columns([c for c in t.column_names if c in VARYING])
    schema = t.schema
    # Nanosecond times as integers (datetime has microseconds only).
    for i, f in enumerate(schema):
        if pa.types.is_timestamp(f.type):
            t = t.set_column(i, f.name, t.column(i).cast(pa.int64()))
    return schema, sorted((tuple(r.items()) for r in t.to_pylist()), key=repr)


def differences(a, b):
    out = []
    for table in TABLES:
        pa_, pb = parts(a, table), parts(b, table)
        if pa_ != pb:
            out.append(f"{table}: part files differ: {sorted(set(pa_) ^ set(pb))[:5]}")
            continue
        sa, ra = rows(a, table)
        sb, rb = rows(b, table)
        if sa != sb:
            out.append(f"{table}: schemas differ:\n{sa}\n---\n{sb}")
        elif ra != rb:
            extra = [r for r in ra if r not in rb][:2] + [r for r in rb if r not in ra][:2]
            out.append(f"{table}: rows differ ({len(ra)} vs {len(rb)}), e.g. {extra}")
    return out


def main():
    a, b = sys.argv[1:3]
    diffs = differences(a, b)
    for d in diffs:
        print(d)
    if not diffs:
        counts = ", ".join(f"{t} {len(rows(a, t)[1])}" for t in TABLES)
        print(f"equal: {counts} rows")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
