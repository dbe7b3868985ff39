#!/usr/bin/env python3
"""Times the statistics step of `catalog-admin publish` against pandas and DuckDB.

    bench/stats.py [--rows 10000000] [--keep DIR]

Generates a Parquet file of ~10 million rows and 10 columns (integers, floats with nulls,
low- and high-cardinality strings, booleans, dates, timestamps), then summarizes it three ways,
each in its own process, and prints wall time and peak memory (max RSS) side by side:

- catalog-admin inspect (release build): every statistic of the spec, exact here;
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


def generate(path, rows):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(42)
    chunk = 1_000_000
    writer = None
    for start in range(0, rows, chunk):
        n = min(chunk, rows - start)
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
        table = pa.table({
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
        })
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
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--keep", help="directory to keep the generated file in")
    parser.add_argument("--admin", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "catalog-admin"))
    args = parser.parse_args()
    try:
        import duckdb  # noqa: F401
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "duckdb==1.4.4"], check=True)
    if not os.path.exists(args.admin):
        subprocess.run(["cargo", "build", "--release", "-p", "catalog-admin"], cwd=ROOT, check=True)

    workdir = args.keep or tempfile.mkdtemp(prefix="catalog-bench-")
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, f"bench-{args.rows}.parquet")
    if not os.path.exists(path):
        print(f"generating {args.rows:,} rows x 10 columns ...", file=sys.stderr)
        generate(path, args.rows)
    size = os.path.getsize(path) / 2**20
    print(f"file: {path} ({size:.0f} MiB, {args.rows:,} rows, 10 columns), "
          f"{os.cpu_count()} cores", file=sys.stderr)

    results = {}
    results["catalog-admin inspect"] = timed([args.admin, "inspect", path])
    results["pandas (describe+nunique+value_counts)"] = timed([sys.executable, "-c", PANDAS, path])
    results["duckdb SUMMARIZE"] = timed([sys.executable, "-c", DUCKDB, path])

    ours = results["catalog-admin inspect"][0]
    print(f"{'tool':<40} {'wall s':>8} {'peak MiB':>9} {'vs ours':>8}")
    for name, (secs, mib) in results.items():
        print(f"{name:<40} {secs:>8.2f} {mib:>9.0f} {secs / ours:>7.2f}x")


if __name__ == "__main__":
    main()
