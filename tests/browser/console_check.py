#!/usr/bin/env python3
"""The SQL console's test data and its reference, with pyarrow and DuckDB in Python (.venv).

    python tests/browser/console_check.py make FILE
    python tests/browser/console_check.py check FILE REPORT

make: writes a Parquet file of 100,000 sensor readings in 10 row groups of 10,000 rows, sorted
by `id` (so a filter on `id` lets a reader skip row groups by their statistics).

check: compares what tests/browser/console.py saw in the browser (REPORT, JSON) with DuckDB in
Python on the same file: each query's answer as the console showed it, and the CSV and Parquet
files it exported, row for row. Exits non-zero on any difference.
"""

import csv
import datetime
import json
import math
import sys

ROWS, ROW_GROUP = 100_000, 10_000
STATIONS = ["centre", "east", "north", "south", "west"]


def make(path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    start = datetime.datetime(2026, 1, 1)
    table = pa.table({
        "id": pa.array(range(ROWS), pa.int64()),
        "station": pa.array([STATIONS[i % 5] for i in range(ROWS)]),
        "reading": pa.array([None if i % 97 == 0 else (i * 7919 % 10007) / 100 for i in range(ROWS)], pa.float64()),
        "measured_at": pa.array([start + datetime.timedelta(minutes=i) for i in range(ROWS)], pa.timestamp("us")),
        "note": pa.array([f"reading {i} at {STATIONS[i % 5]}, checked {'twice' if i % 3 else 'once'}" for i in range(ROWS)]),
    })
    pq.write_table(table, path, row_group_size=ROW_GROUP, compression="snappy")
    assert pq.ParquetFile(path).metadata.num_row_groups == ROWS // ROW_GROUP


def same(shown, expected):
    """A value as the console showed it (text, or None for NULL) against DuckDB's."""
    if expected is None:
        return shown is None
    if isinstance(expected, float):
        return shown is not None and math.isclose(float(shown), expected, rel_tol=1e-12, abs_tol=1e-12)
    if isinstance(expected, datetime.datetime):
        return shown is not None and datetime.datetime.fromisoformat(shown) == expected
    return shown == str(expected)


def check(path, report_path):
    import duckdb
    import pyarrow.parquet as pq

    report = json.load(open(report_path))
    con = duckdb.connect()
    con.execute(f"CREATE VIEW data AS SELECT * FROM read_parquet('{path}')")
    problems = []
    for answer in report["answers"]:
        expected = con.execute(answer["sql"]).fetchall()
        columns = [d[0] for d in con.description]
        if answer["columns"] != columns:
            problems.append(f"{answer['sql']}: columns {answer['columns']} != {columns}")
        if len(answer["rows"]) != len(expected) or not all(
            len(row) == len(want) and all(same(s, e) for s, e in zip(row, want))
            for row, want in zip(answer["rows"], expected)
        ):
            problems.append(f"{answer['sql']}: shown {answer['rows'][:5]} != DuckDB's {expected[:5]}")
        print(f"answer: {answer['sql']!r}: {len(expected)} rows as DuckDB's")

    exported = report["exports"]
    expected = con.execute(exported["sql"]).fetchall()
    columns = [d[0] for d in con.description]
    with open(exported["csv"], newline="") as f:
        rows = list(csv.reader(f))
    if rows[0] != columns:
        problems.append(f"CSV header {rows[0]} != {columns}")
    body = [[None if v == "" else v for v in row] for row in rows[1:]]
    if len(body) != len(expected) or not all(all(same(s, e) for s, e in zip(row, want)) for row, want in zip(body, expected)):
        problems.append(f"CSV rows differ: {body[:3]} != {expected[:3]}")
    parquet = pq.read_table(exported["parquet"])
    if parquet.column_names != columns:
        problems.append(f"Parquet columns {parquet.column_names} != {columns}")
    if [tuple(r.values()) for r in parquet.to_pylist()] != expected:
        problems.append(f"Parquet rows differ: {parquet.to_pylist()[:3]} != {expected[:3]}")
    print(f"exports: {len(expected)} rows in the CSV and the Parquet file, as DuckDB's")
    for p in problems:
        print(f"DIFFERENT {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3]))
