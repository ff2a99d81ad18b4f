"""Reads one table of an `sctp-handover analyze --out` dataset with pyarrow
(a reader other than the polars writer) and prints its rows as JSON lines,
times as integer nanoseconds. Usage: read_tables.py DATASET TABLE"""
import json
import sys

import pyarrow as pa
import pyarrow.dataset as ds

root, table = sys.argv[1], sys.argv[2]
fmt = sys.argv[3] if len(sys.argv) > 3 else "parquet"
data = ds.dataset(f"{root}/{table}", format=fmt).to_table()
for i, field in enumerate(data.schema):
    if pa.types.is_timestamp(field.type):
        data = data.set_column(i, field.name, data.column(i).cast(pa.int64()))
for row in data.to_pylist():
    print(json.dumps(row))
