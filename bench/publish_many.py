#!/usr/bin/env python3
"""Publishing a version of many files with the cli profile's build of catalog-admin (issue 38, §5):
10,000 files of about 100 KB, and 100 files of about 100 MB, each published as a new dataset to
s3s-fs (S3) and moto (DynamoDB, through dev/moto_server.py), started on loopback ports as the
tests start them. Prints, per run: wall time, the catalog-admin process's peak memory (its
VmHWM, read as the maximum resident set size that wait4 reports for it; and, sampled every
second, its resident memory's peak before the first byte reached the bucket, while it reads,
hashes and computes statistics, and from then on), and the requests it
made, by operation: S3's from s3s-fs's own log (each request's `resolved route, op: …` line),
DynamoDB's through a counting proxy in front of moto (each request's X-Amz-Target).

    bench/publish_many.py [--small-files 10000] [--small-kib 100] [--large-files 100]
                          [--large-mib 100] [--admin PATH] [--parallel N] [--keep DIR]
                          [--only small|large]

The 100 large files are one file generated once and hard-linked under 100 paths (same bytes,
other keys: the publish reads, hashes and uploads each as its own file), so that the inputs take
100 MB of disk, not 10 GB; the bucket still holds 10 GB while the run lasts. The small files are
each generated, in ten Hive partitions (`part=0/` … `part=9/`). Without --admin, builds
`cargo build --profile cli -p catalog-admin` first. Figures, not a test: run it on a quiet machine.
"""
import argparse
import collections
import http.client
import http.server
import json
import os
import re
import shutil
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY, SECRET = "local", "local-secret"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port}")


class Counter:
    def __init__(self):
        self.lock = threading.Lock()
        self.ops = collections.Counter()

    def take(self):
        with self.lock:
            ops, self.ops = self.ops, collections.Counter()
        return dict(sorted(ops.items()))


def dynamo_proxy(upstream_port, counter):
    """A proxy in front of moto counting each request's X-Amz-Target (DynamoDB's operation)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            target = self.headers.get("x-amz-target", "?").split(".")[-1]
            with counter.lock:
                counter.ops[target] += 1
            conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=300)
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            conn.request("POST", self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(k, v)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            conn.close()

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    port = free_port()
    server = Server(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return port


S3_OP = re.compile(r"resolved route, op: (\w+)")


def s3_ops(log_path, offset):
    """S3 operations s3s-fs logged after `offset`, and the new offset."""
    with open(log_path, "rb") as f:
        f.seek(offset)
        text = f.read()
    ops = collections.Counter(m.group(1) for m in S3_OP.finditer(text.decode("utf-8", "replace")))
    return dict(sorted(ops.items())), offset + len(text)


def write_small(directory, files, kib):
    """`files` Parquet files of about `kib` KiB under ten Hive partitions."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(38)
    rows = max(1, kib * 1024 // 20)
    for i in range(files):
        path = os.path.join(directory, f"part={i % 10}", f"file-{i:05}.parquet")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        table = pa.table(
            {
                "id": pa.array(np.arange(i * rows, (i + 1) * rows, dtype=np.int64)),
                "value": pa.array(rng.random(rows)),
                "code": pa.array(rng.integers(0, 2**31, rows, dtype=np.int32)),
            }
        )
        pq.write_table(table, path, compression="NONE")


def write_large(directory, files, mib):
    """One Parquet file of about `mib` MiB, hard-linked under `files` paths."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(39)
    rows = mib * 1024 * 1024 // 20
    first = os.path.join(directory, "file-000.parquet")
    writer = None
    step = 1 << 20
    for start in range(0, rows, step):
        n = min(step, rows - start)
        table = pa.table(
            {
                "id": pa.array(np.arange(start, start + n, dtype=np.int64)),
                "value": pa.array(rng.random(n)),
                "code": pa.array(rng.integers(0, 2**31, n, dtype=np.int32)),
            }
        )
        if writer is None:
            writer = pq.ParquetWriter(first, table.schema, compression="NONE")
        writer.write_table(table)
    writer.close()
    for i in range(1, files):
        os.link(first, os.path.join(directory, f"file-{i:03}.parquet"))


def total_bytes(directory):
    total = count = 0
    for base, _, names in os.walk(directory):
        for name in names:
            total += os.path.getsize(os.path.join(base, name))
            count += 1
    return count, total


def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def stored_bytes(directory):
    total = 0
    for base, _, names in os.walk(directory):
        for name in names:
            try:
                total += os.path.getsize(os.path.join(base, name))
            except OSError:
                pass
    return total


def sample(pid, bucket, samples, done):
    """Every second: the publish's resident memory and the bytes the bucket holds under the
    dataset's prefix (how far the uploads are), until `done` is set."""
    start = time.monotonic()
    while not done.is_set():
        samples.append((time.monotonic() - start, rss_mib(pid), stored_bytes(bucket)))
        done.wait(1.0)


def phases(samples):
    """The resident memory's peak before the first byte reached the bucket (reading, statistics,
    hashing) and from then on (uploads, manifest, activation), as sampled."""
    first = next((t for t, _, stored in samples if stored > 0), None)
    before = max((rss for t, rss, _ in samples if first is None or t < first), default=0.0)
    after = max((rss for t, rss, _ in samples if first is not None and t >= first), default=0.0)
    return {"first_upload_s": first, "rss_peak_before_uploads_mib": round(before, 1),
            "rss_peak_from_uploads_mib": round(after, 1)}


def publish(admin, directory, slug, env, parallel, bucket):
    args = [admin, "publish", directory, "--slug", slug, "--name", f"Bench {slug}",
            "--license", "CC0-1.0", "--source", "bench", "--category", "bench"]
    if parallel:
        args += ["--parallel", str(parallel)]
    out_path = os.path.join(tempfile.gettempdir(), f"publish-{slug}-{os.getpid()}.log")
    with open(out_path, "wb") as out:
        start = time.monotonic()
        proc = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)
        samples, done = [], threading.Event()
        sampler = threading.Thread(target=sample, args=(proc.pid, bucket, samples, done))
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        done.set()
        sampler.join()
    with open(out_path, encoding="utf-8", errors="replace") as f:
        output = f.read()
    os.unlink(out_path)
    code = os.waitstatus_to_exitcode(status)
    return code, wall, usage, output, phases(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small-files", type=int, default=10_000)
    parser.add_argument("--small-kib", type=int, default=100)
    parser.add_argument("--large-files", type=int, default=100)
    parser.add_argument("--large-mib", type=int, default=100)
    parser.add_argument("--admin", help="a catalog-admin binary (default: build the cli profile's)")
    parser.add_argument("--parallel", type=int, default=0, help="--parallel of the publish")
    parser.add_argument("--keep", help="generate the inputs here and keep them")
    parser.add_argument("--only", choices=["small", "large"], help="run one case")
    args = parser.parse_args()

    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    admin = args.admin
    if not admin:
        subprocess.run(["cargo", "build", "--profile", "cli", "-p", "catalog-admin", "--bin",
                        "catalog-admin"], cwd=ROOT, check=True)
        admin = os.path.join(target, "cli", "catalog-admin")
    python = os.environ.get("PYTHON", os.path.join(ROOT, ".venv", "bin", "python"))
    s3s_fs = os.environ.get("S3S_FS", os.path.join(ROOT, ".tools", "bin", "s3s-fs"))
    init = os.path.join(target, "debug", "catalog-local-init")
    if not os.path.exists(init):
        subprocess.run(["cargo", "build", "-p", "catalog-dev", "--bin", "catalog-local-init"],
                       cwd=ROOT, check=True)

    work = tempfile.mkdtemp(prefix="publish-many-")
    inputs = args.keep or os.path.join(work, "inputs")
    bucket_root = os.path.join(work, "s3")
    os.makedirs(bucket_root)
    procs = []
    try:
        moto_port, s3_port = free_port(), free_port()
        moto_log = open(os.path.join(work, "moto.log"), "wb")
        procs.append(subprocess.Popen(
            [python, os.path.join(ROOT, "dev", "moto_server.py"), "-H", "127.0.0.1", "-p",
             str(moto_port)], stdout=moto_log, stderr=subprocess.STDOUT))
        s3_log_path = os.path.join(work, "s3s.log")
        s3_log = open(s3_log_path, "wb")
        procs.append(subprocess.Popen(
            [s3s_fs, "--host", "127.0.0.1", "--port", str(s3_port), "--access-key", KEY,
             "--secret-key", SECRET, bucket_root],
            stdout=s3_log, stderr=subprocess.STDOUT,
            env=dict(os.environ, RUST_LOG="s3s::ops=debug", NO_COLOR="1")))
        wait_port(moto_port)
        wait_port(s3_port)
        counter = Counter()
        proxy_port = dynamo_proxy(moto_port, counter)
        env = dict(
            os.environ,
            AWS_REGION="us-east-1", AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
            AWS_EC2_METADATA_DISABLED="true",
            AWS_ENDPOINT_URL_DYNAMODB=f"http://127.0.0.1:{moto_port}",
            AWS_ENDPOINT_URL_S3=f"http://127.0.0.1:{s3_port}", S3_FORCE_PATH_STYLE="true",
            AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER=f"http://127.0.0.1:{moto_port}",
            DATASETS_TABLE="catalog-datasets", KEYS_TABLE="catalog-keys",
            DATA_BUCKET="catalog-data", DOWNLOADS_TABLE="catalog-downloads",
        )
        subprocess.run([init], env=env, check=True, stdout=subprocess.DEVNULL)
        env["AWS_ENDPOINT_URL_DYNAMODB"] = f"http://127.0.0.1:{proxy_port}"

        cases = [
            ("small", args.small_files, f"{args.small_kib} KiB", write_small, args.small_kib),
            ("large", args.large_files, f"{args.large_mib} MiB", write_large, args.large_mib),
        ]
        results = []
        for slug, files, each, write, size in cases:
            if args.only and slug != args.only:
                continue
            directory = os.path.join(inputs, slug)
            if not os.path.isdir(directory):
                os.makedirs(directory)
                started = time.monotonic()
                write(directory, files, size)
                print(f"# generated {files} files of about {each} in "
                      f"{time.monotonic() - started:.0f} s", flush=True)
            count, total = total_bytes(directory)
            print(f"# {slug}: {count} files, {total / 2**20:.1f} MiB", flush=True)
            counter.take()
            _, offset = s3_ops(s3_log_path, 0)
            bucket = os.path.join(bucket_root, "catalog-data", "datasets", slug)
            code, wall, usage, output, phase = publish(admin, directory, slug, env,
                                                       args.parallel, bucket)
            s3, _ = s3_ops(s3_log_path, offset)
            dynamo = counter.take()
            result = {
                "case": slug, "files": count, "bytes": total, "exit": code,
                "wall_s": round(wall, 1), "peak_mib": round(usage.ru_maxrss / 1024, 1),
                "user_s": round(usage.ru_utime, 1), "sys_s": round(usage.ru_stime, 1),
                "s3_requests": sum(s3.values()), "s3": s3,
                "dynamodb_requests": sum(dynamo.values()), "dynamodb": dynamo,
                **phase,
            }
            print("## catalog-admin said:")
            print("\n".join(line for line in output.splitlines() if line.strip()))
            print(json.dumps(result), flush=True)
            results.append(result)
            # The bucket holds the version: take it away before the next case.
            shutil.rmtree(bucket, ignore_errors=True)
        failed = [r["case"] for r in results if r["exit"] != 0]
        over = [r["case"] for r in results if r["peak_mib"] > 500]
        if failed or over:
            print(f"failed: {failed}; over 500 MiB: {over}")
            sys.exit(1)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
