#!/usr/bin/env python3
"""Times statistics over many files: `catalog_stats::summarize_files` (every Column
statistic of a version, exact, the files read one after another through the same counts) and
`scan_files` (each file's row count and per-column min, max and null count for the manifest,
from the footers), with the process's peak memory (VmHWM).

    bench/stats_many.py [--small-files 1000] [--small-rows 2000] [--large-files 4]
                        [--large-rows 2500000] [--keep DIR]

Generates, with bench/stats.py's ten kinds of column (integers, floats with nulls, low- and
high-cardinality strings, booleans, dates, timestamps):
- `--small-files` files of `--small-rows` rows (about 100 KB each), and one file of the same
  rows;
- `--large-files` files of `--large-rows` rows (about 100 MB each), and one file of the same
  rows.
Each step runs in its own process (an ignored test of catalog-stats, release build:
`catalog_stats::bench::figures`), which prints one JSON line: wall seconds, peak MiB, passes.
Figures, not a test: run it on a quiet machine.
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))


def write_parts(directory, files, rows, seed):
    """`files` files of `rows` rows each under directory/parts, and one file of all of them
    under directory/one; the two hold the same rows in the same order."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from stats import ten_columns

    parts = os.path.join(directory, "parts")
    one = os.path.join(directory, "one")
    os.makedirs(parts)
    os.makedirs(one)
    rng = np.random.default_rng(seed)
    writer = None
    for i in range(files):
        table = pa.table(ten_columns(rng, i * rows, rows))
        pq.write_table(table, os.path.join(parts, f"part-{i:05}.parquet"))
        if writer is None:
            writer = pq.ParquetWriter(os.path.join(one, "all.parquet"), table.schema)
        writer.write_table(table)
    writer.close()
    return parts, one


def size_mib(directory):
    return sum(os.path.getsize(os.path.join(directory, f)) for f in os.listdir(directory)) / 2**20


def run(directory, step):
    env = dict(os.environ, CATALOG_STATS_BENCH_DIR=directory, CATALOG_STATS_BENCH_STEP=step)
    out = subprocess.run(
        ["cargo", "test", "--release", "-q", "-p", "catalog-stats", "--lib",
         "bench::figures", "--", "--ignored", "--nocapture", "--exact"],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True,
    ).stdout
    line = next(l for l in out.splitlines() if l.startswith("{"))
    print(line, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small-files", type=int, default=1000)
    parser.add_argument("--small-rows", type=int, default=2000)
    parser.add_argument("--large-files", type=int, default=4)
    parser.add_argument("--large-rows", type=int, default=2_500_000)
    parser.add_argument("--keep", help="generate into this directory and keep it")
    args = parser.parse_args()
    # Build once, so that no step's time includes compiling.
    subprocess.run(["cargo", "test", "--release", "-q", "-p", "catalog-stats", "--lib",
                    "--no-run"], cwd=ROOT, check=True)
    base = args.keep or tempfile.mkdtemp(prefix="catalog-stats-many-")
    for label, files, rows, seed in [("small", args.small_files, args.small_rows, 1),
                                     ("large", args.large_files, args.large_rows, 2)]:
        directory = os.path.join(base, label)
        parts, one = write_parts(directory, files, rows, seed)
        print(f"# {label}: {files} files of {rows} rows ({size_mib(parts):.1f} MiB, "
              f"{size_mib(parts) / files * 1024:.0f} KiB each); one file of the same rows "
              f"({size_mib(one):.1f} MiB)", flush=True)
        for step, source in [("summarize", parts), ("summarize", one), ("scan", parts)]:
            print(f"## {step} {'parts' if source == parts else 'one file'}", flush=True)
            run(source, step)
    if not args.keep:
        subprocess.run(["rm", "-rf", base], check=True)


if __name__ == "__main__":
    main()
