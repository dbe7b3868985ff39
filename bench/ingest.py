#!/usr/bin/env python3
"""CSV to Parquet (issue 39, §4): `catalog-admin convert` (arrow-csv through csv-core, written as
`publish` writes it: zstd, a page index, row groups and pages sized for the rows API) against
DuckDB's `COPY (SELECT * FROM read_csv(…)) TO … (FORMAT parquet, COMPRESSION zstd)` and
pyarrow's `csv.read_csv` + `parquet.write_table(compression="zstd")`, on the same synthetic
CSV, in the same run. Prints, per size and tool: wall seconds, MB/s of CSV read, the process's
peak resident memory (its VmHWM, as wait4 reports it), and the Parquet bytes written.

    bench/ingest.py [--sizes 1,10] [--admin PATH] [--keep DIR] [--skip-pyarrow-over GB]

The CSV (GB as 10^9 bytes, about 100 bytes a row) is generated once per size by DuckDB
(`COPY (SELECT … FROM range(n)) TO … (HEADER)`): an int64 id, a timestamp with a zone, a date,
a low-cardinality text (200 sensors), a float, a boolean, a text of 8 to 40 characters (empty,
so null, in 1 row of 10), and an int64 with nulls. Without --admin, builds
`cargo build --profile cli -p catalog-admin` first. pyarrow's read_csv holds the whole table in
memory: past --skip-pyarrow-over GB of CSV (default 12) it is not run, and the output says so.
Figures, not a test: run it on a quiet machine.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = os.environ.get("PYTHON", os.path.join(ROOT, ".venv", "bin", "python"))
ROW_BYTES = 100

GENERATE = """
import duckdb, sys
path, rows = sys.argv[1], int(sys.argv[2])
duckdb.sql(f'''
COPY (
  SELECT
    i AS id,
    TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_seconds(i) AS ts,
    DATE '2020-01-01' + CAST(i % 2000 AS INTEGER) AS day,
    'sensor-' || lpad(CAST(hash(i) % 200 AS VARCHAR), 3, '0') AS sensor,
    round((hash(i * 7) % 1000000) / 1000.0 - 500.0, 3) AS value,
    (hash(i * 13) % 2 = 0) AS flag,
    CASE WHEN i % 10 = 3 THEN NULL
         ELSE repeat(chr(97 + CAST(hash(i * 5) % 26 AS INTEGER)), 8 + CAST(hash(i * 3) % 33 AS INTEGER))
    END AS note,
    CASE WHEN i % 7 = 0 THEN NULL ELSE CAST(hash(i * 11) % 100000 AS BIGINT) END AS count
  FROM range({rows}) t(i)
) TO '{path}' (FORMAT csv, HEADER, TIMESTAMPFORMAT '%Y-%m-%dT%H:%M:%SZ')
''')
"""

DUCKDB = """
import duckdb, sys
src, out = sys.argv[1], sys.argv[2]
duckdb.sql(f"COPY (SELECT * FROM read_csv('{src}')) TO '{out}' (FORMAT parquet, COMPRESSION zstd)")
"""

PYARROW = """
import sys
import pyarrow.csv as csv, pyarrow.parquet as pq
src, out = sys.argv[1], sys.argv[2]
pq.write_table(csv.read_csv(src), out, compression="zstd")
"""


def timed(argv):
    """Runs argv; returns (wall seconds, peak RSS in MiB, exit status, stderr's tail)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - start
        err.seek(0)
        tail = err.read().decode(errors="replace")[-2000:]
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), tail


def size_of(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,10", help="GB of CSV, comma-separated")
    parser.add_argument("--admin", help="a built catalog-admin (else the cli profile's build)")
    parser.add_argument("--keep", help="a directory for the CSV files, kept between runs")
    parser.add_argument("--skip-pyarrow-over", type=float, default=12.0)
    args = parser.parse_args()

    admin = args.admin
    if admin is None:
        subprocess.run(["cargo", "build", "--profile", "cli", "-q", "-p", "catalog-admin"],
                       cwd=ROOT, check=True)
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
        admin = os.path.join(target, "cli", "catalog-admin")
    data = args.keep or tempfile.mkdtemp(prefix="catalog-bench-ingest-")
    os.makedirs(data, exist_ok=True)
    print(f"# CSV to Parquet, {time.strftime('%Y-%m-%d', time.gmtime())}, "
          f"{os.cpu_count()} cores")
    print()
    print("| CSV | tool | wall s | MB/s | peak MiB | Parquet MB | exit |")
    print("|---|---|---|---|---|---|---|")
    try:
        for gb in [float(s) for s in args.sizes.split(",")]:
            rows = int(gb * 1e9 / ROW_BYTES)
            csv_path = os.path.join(data, f"synthetic-{gb:g}gb.csv")
            if not os.path.exists(csv_path):
                subprocess.run([PYTHON, "-c", GENERATE, csv_path, str(rows)], check=True)
            csv_bytes = os.path.getsize(csv_path)
            label = f"{csv_bytes / 1e9:.2f} GB, {rows:,} rows"
            runs = [
                ("catalog-admin convert", lambda out: [admin, "convert", csv_path, "--out", out]),
                ("DuckDB COPY", lambda out: [PYTHON, "-c", DUCKDB, csv_path,
                                             os.path.join(out, "out.parquet")]),
                ("pyarrow read_csv + write_table",
                 lambda out: [PYTHON, "-c", PYARROW, csv_path, os.path.join(out, "out.parquet")]),
            ]
            for name, argv in runs:
                if name.startswith("pyarrow") and gb > args.skip_pyarrow_over:
                    print(f"| {label} | {name} | not run: read_csv holds the table in memory "
                          f"(over --skip-pyarrow-over {args.skip_pyarrow_over:g} GB) | | | | |")
                    continue
                out = tempfile.mkdtemp(prefix="out-", dir=data)
                wall, peak, code, tail = timed(argv(out))
                written = size_of(out) / 1e6
                shutil.rmtree(out, ignore_errors=True)
                print(f"| {label} | {name} | {wall:.1f} | {csv_bytes / 1e6 / wall:.0f} | "
                      f"{peak:.0f} | {written:.0f} | {code} |", flush=True)
                if code != 0:
                    print(f"\n{name} failed:\n```\n{tail}\n```\n", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(data, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
