#!/usr/bin/env python3
"""Statistics of a version on one machine, two ways, over the same synthetic files
(docs/scaling.md):

1. `summarize`: `catalog_stats::summarize_files`, the publish's statistics (every file
   read one after another through the same counts, exact), in its own process
   (`catalog_stats::bench::figures`, as bench/stats_many.py runs it);
2. `partial`: the per-file path a fan-out runs, with the cli profile's `catalog-admin`:
   `stats edges` over every file, then one `stats file` process per file, `--parallel` at a
   time (as a Distributed Map's workers would, here on one machine), then `stats merge`.
   From disk, then (unless `--no-s3`) from s3s-fs on a loopback port, read by ranged GETs.

    bench/stats_scale.py [--files 12] [--rows 2500000] [--parallel 2] [--no-s3] [--keep DIR]

The files hold bench/stats.py's ten kinds of column (about 105 MB per 2,500,000 rows). Each
step prints one JSON line: wall seconds, GB (10^9 bytes of Parquet) per minute, and peak
memory (the process's VmHWM for `summarize`; each `catalog-admin` process's maximum resident
set from GNU time for `partial`: edges, the largest per-file worker, merge). Figures, not a
test; needs /usr/bin/time and bench/stats.py's numpy and pyarrow.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

KEY, SECRET, BUCKET = "bench-access-key", "bench-secret-key", "bench"


def target_dir():
    return os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))


def write_files(parts, files, rows, seed=3):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from stats import ten_columns

    os.makedirs(parts)
    rng = np.random.default_rng(seed)
    for i in range(files):
        table = pa.table(ten_columns(rng, i * rows, rows))
        pq.write_table(table, os.path.join(parts, f"part-{i:05}.parquet"))


def pool(commands, parallel, env):
    """Runs the commands `parallel` at a time, each under GNU time: (wall seconds, the largest
    maximum resident set in MiB). (A child's own rusage would count this Python process's
    pages from before the exec.)"""
    start = time.monotonic()
    running, peak, queue = [], 0.0, list(commands)
    while queue or running:
        while queue and len(running) < parallel:
            args = queue.pop(0)
            proc = subprocess.Popen(["/usr/bin/time", "-f", "maxrss_kb=%M", *args], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            running.append((proc, args))
        done = [r for r in running if r[0].poll() is not None]
        if not done:
            time.sleep(0.01)
            continue
        for proc, args in done:
            running.remove((proc, args))
            err = proc.stderr.read().decode()
            if proc.returncode != 0:
                sys.exit(f"{' '.join(args)} failed: {err}")
            kb = next(l for l in reversed(err.splitlines()) if l.startswith("maxrss_kb="))
            peak = max(peak, int(kb.split("=")[1]) / 1024)
    return time.monotonic() - start, peak


def one(args, env):
    """One process: (wall seconds, maxrss MiB)."""
    return pool([args], 1, env)


def partial_path(admin, names, work, label, parallel, env, total_bytes):
    out = os.path.join(work, f"partials-{label}")
    os.makedirs(out, exist_ok=True)
    edges = os.path.join(out, "edges.json")
    edges_s, edges_mib = one([admin, "stats", "edges", *names, "--out", edges], env)
    partials = [os.path.join(out, f"{i:05}.json") for i in range(len(names))]
    files_s, worker_mib = pool(
        [[admin, "stats", "file", n, "--edges", edges, "--out", p]
         for n, p in zip(names, partials)], parallel, env)
    merged = os.path.join(out, "stats.json")
    merge_s, merge_mib = one([admin, "stats", "merge", *partials, "--out", merged], env)
    with open(merged) as f:
        stats = json.load(f)
    wall = edges_s + files_s + merge_s
    print(json.dumps({
        "step": "partial", "source": label, "files": len(names), "bytes": total_bytes,
        "rows": stats["row_count"], "parallel": parallel,
        "edges_s": round(edges_s, 3), "files_s": round(files_s, 3),
        "merge_s": round(merge_s, 3), "wall_s": round(wall, 3),
        "gb_per_min": round(total_bytes / 1e9 / (wall / 60), 3),
        "edges_peak_mib": round(edges_mib, 1), "worker_peak_mib": round(worker_mib, 1),
        "merge_peak_mib": round(merge_mib, 1),
        "partial_bytes": sum(os.path.getsize(p) for p in partials),
        "approximate_columns": [e["column"] for e in stats["estimates"]],
    }, sort_keys=True), flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=12)
    parser.add_argument("--rows", type=int, default=2_500_000)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--no-s3", action="store_true")
    parser.add_argument("--keep", help="generate into this directory and keep it")
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--profile", "cli", "-q", "-p", "catalog-admin", "--bin",
                    "catalog-admin"], cwd=ROOT, check=True)
    subprocess.run(["cargo", "test", "--release", "-q", "-p", "catalog-stats", "--lib",
                    "--no-run"], cwd=ROOT, check=True)
    admin = os.path.join(target_dir(), "cli", "catalog-admin")
    work = args.keep or tempfile.mkdtemp(prefix="catalog-stats-scale-")
    parts = os.path.join(work, "s3", BUCKET, "parts")
    start = time.monotonic()
    write_files(parts, args.files, args.rows)
    names = sorted(os.listdir(parts))
    total = sum(os.path.getsize(os.path.join(parts, n)) for n in names)
    print(f"# {args.files} files of {args.rows} rows: {total / 1e9:.3f} GB of Parquet "
          f"(generated in {time.monotonic() - start:.0f} s); {os.cpu_count()} cores",
          flush=True)

    from stats_many import run as summarize
    print("## summarize (one process, every file through the same counts)", flush=True)
    summarize(parts, "summarize")

    print("## partial from disk", flush=True)
    paths = [os.path.join(parts, n) for n in names]
    partial_path(admin, paths, work, "disk", args.parallel, os.environ.copy(), total)

    if not args.no_s3:
        s3s_fs = os.environ.get("S3S_FS", os.path.join(ROOT, ".tools", "bin", "s3s-fs"))
        port = free_port()
        server = subprocess.Popen(
            [s3s_fs, "--host", "127.0.0.1", "--port", str(port), "--access-key", KEY,
             "--secret-key", SECRET, os.path.join(work, "s3")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            env = dict(os.environ, AWS_ENDPOINT_URL_S3=f"http://127.0.0.1:{port}",
                       AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
                       AWS_REGION="us-east-1", S3_FORCE_PATH_STYLE="true")
            print("## partial from s3s-fs (ranged GETs on loopback)", flush=True)
            urls = [f"s3://{BUCKET}/parts/{n}" for n in names]
            partial_path(admin, urls, work, "s3s-fs", args.parallel, env, total)
        finally:
            server.terminate()
            server.wait()
    if not args.keep:
        subprocess.run(["rm", "-rf", work], check=True)


if __name__ == "__main__":
    main()
