#!/usr/bin/env python3
"""Times the statistics step of `catalog-admin publish` against pandas and DuckDB.

    bench/stats.py [--rows 10000000] [--wide-rows 1000000] [--widths 10,200] [--keep DIR]

For each width, generates a Parquet file of 10 kinds of column (integers, floats with nulls,
low- and high-cardinality strings, booleans, dates, timestamps), repeated with their own random
values up to the width: 10 columns of `--rows` rows, wider files of `--wide-rows` rows (pandas
could not hold 200 columns of 10 million rows in this machine's memory). Then it summarizes each
file three ways, each in its own process, and prints wall time and peak memory (max RSS) side
by side:

- catalog-admin inspect (the cli profile's build): every statistic of the spec, exact here;
- pandas: read_parquet + describe + nunique + value_counts per column (what the same statistics
  cost in pandas; exact);
- DuckDB SUMMARIZE (approximate unique counts and quantiles).

Figures, not a test: run it on a quiet machine and read the ratios.
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ten_columns(rng, start, n):
    """The ten kinds of column, n rows from row `start`."""
    import numpy as np
    import pyarrow as pa

    ids = np.arange(start, start + n, dtype=np.int64)
    # Nulls, not NaN: DuckDB's SUMMARIZE fails on NaN ("STDDEV_SAMP is out of range").
    price = rng.normal(100, 15, n)
    qty = rng.integers(0, 1000, n).astype(np.int32)
    cat = rng.choice(np.array(["alpha", "beta", "gamma", "delta", "epsilon"]), n)
    user = np.char.add("user-", rng.integers(0, 2_000_000, n).astype(str))
    flag = rng.random(n) < 0.3
    day = (np.datetime64("2020-01-01") + rng.integers(0, 1500, n).astype("timedelta64[D]"))
    ts = (np.datetime64("2024-01-01T00:00:00", "us")
          + rng.integers(0, 10**12, n).astype("timedelta64[us]"))
    score = rng.exponential(2.0, n).astype(np.float32)
    temp = rng.normal(15, 8, n)
    mask = rng.random(n) < 0.05
    return {
        "id": ids,
        "price": pa.array(price, mask=rng.random(n) < 0.03),
        "qty": qty,
        "category": pa.array(cat, mask=rng.random(n) < 0.01),
        "user": user,
        "flag": flag,
        "day": day,
        "ts": pa.array(ts, type=pa.timestamp("us", tz="UTC")),
        "score": score,
        "temp": pa.array(temp, mask=mask),
    }


def generate(path, rows, width):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(42)
    # Row groups of 1 million rows at 10 columns, fewer rows as the width grows.
    chunk = min(1_000_000, 10_000_000 // width)
    writer = None
    for start in range(0, rows, chunk):
        n = min(chunk, rows - start)
        columns = {}
        for block in range(max(1, width // 10)):
            suffix = "" if block == 0 else f"_{block}"
            for name, column in ten_columns(rng, start, n).items():
                columns[name + suffix] = column
        table = pa.table(columns)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema, compression="snappy")
        writer.write_table(table, row_group_size=chunk)
    writer.close()


def timed(cmd):
    """Runs cmd in a child under GNU time; returns (wall seconds, peak RSS in MiB)."""
    out = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + cmd, check=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    last = out.stderr.strip().splitlines()[-1].split()
    return float(last[0]), int(last[1]) / 1024


PANDAS = r"""
import sys, pandas as pd
df = pd.read_parquet(sys.argv[1])
df.describe(include="all")
df.nunique()
for c in df.columns:
    df[c].value_counts().head(5)
    df[c].isna().sum()
df.select_dtypes("number").median()
"""

DUCKDB = r"""
import sys, duckdb
duckdb.sql("PRAGMA disable_progress_bar")
duckdb.sql(f"SUMMARIZE SELECT * FROM read_parquet('{sys.argv[1]}')").fetchall()
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows at 10 columns")
    parser.add_argument("--wide-rows", type=int, default=1_000_000, help="rows when wider")
    parser.add_argument("--widths", default="10,200", help="column counts, multiples of 10")
    parser.add_argument("--keep", help="directory to keep the generated files in")
    parser.add_argument("--admin", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "cli", "catalog-admin"))
    args = parser.parse_args()
    try:
        import duckdb  # noqa: F401
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "duckdb==1.4.4"], check=True)
    if not os.path.exists(args.admin):
        subprocess.run(["cargo", "build", "--profile", "cli", "-p", "catalog-admin"], cwd=ROOT, check=True)

    workdir = args.keep or tempfile.mkdtemp(prefix="catalog-bench-")
    os.makedirs(workdir, exist_ok=True)
    print(f"{os.cpu_count()} cores")
    for width in (int(w) for w in args.widths.split(",")):
        rows = args.rows if width <= 10 else args.wide_rows
        path = os.path.join(workdir, f"bench-{rows}x{width}.parquet")
        if not os.path.exists(path):
            print(f"generating {rows:,} rows x {width} columns ...", file=sys.stderr)
            generate(path, rows, width)
        size = os.path.getsize(path) / 2**20
        print(f"\nfile: {path} ({size:.0f} MiB, {rows:,} rows, {width} columns)")
        results = {}
        results["catalog-admin inspect"] = timed([args.admin, "inspect", path])
        results["pandas (describe+nunique+value_counts)"] = timed(
            [sys.executable, "-c", PANDAS, path])
        results["duckdb SUMMARIZE"] = timed([sys.executable, "-c", DUCKDB, path])
        ours_s, ours_mib = results["catalog-admin inspect"]
        print(f"{'tool':<40} {'wall s':>8} {'peak MiB':>9} {'time vs ours':>13} {'memory vs ours':>15}")
        for name, (secs, mib) in results.items():
            print(f"{name:<40} {secs:>8.2f} {mib:>9.0f} {secs / ours_s:>12.2f}x {mib / ours_mib:>14.2f}x")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
