#!/usr/bin/env python3
"""Publishing in place against publishing from disk, with the cli profile's build of catalog-admin
(issue 39, §4): N staged Parquet objects of one size published by `catalog-admin stage publish`
(footers and statistics by ranged GETs, copies server-side), and the same N files published by
`catalog-admin publish DIR` (read, hashed and uploaded from disk), to s3s-fs (S3) and moto
(DynamoDB), started on loopback ports as the tests start them (bench/publish_many.py's helpers).

    bench/publish_in_place.py [--cases 100x100,10x1024] [--admin PATH] [--parallel N]
                              [--keep DIR] [--only staged|disk]

A case `NxM` is N files of about M MiB. Each size is ONE Parquet file generated once with
pyarrow (bench/stats.py's ten kinds of column, with nulls and strings; row groups of a million
rows, snappy, a page index), then:

- staged: hard-linked N times into s3s-fs's root under `catalog-data/staging/<case>/`, each
  link with the sidecar files s3s-fs keeps an object's metadata in
  (`.bucket-<b64 bucket>.object-<b64 key>.internal.json` holding its ETag, the file's MD5, and
  its full-object SHA-256, as a single PUT with a SHA-256 checksum leaves them; `….metadata.json`
  its content type), so that N objects take the disk of one (without the ETag there, s3s-fs
  hashes the whole file to answer each request: a 1 MiB GET of a 1 GiB object takes over half
  a second here);
- disk: hard-linked N times into a directory given to `publish`.

Per run: wall time; catalog-admin's peak memory (its VmHWM, sampled every second, the peak of
its own address space since exec; wait4's maximum RSS beside it, which also counts this
process's RSS at the fork, and the sampled resident peaks before and from the first byte
written under the version's keys); the bytes catalog-admin read from S3 (the content-length of
every GET response body s3s-fs logged, with the number of GETs and of ranged ones), beside what
catalog-admin itself says it read; S3 requests by operation from s3s-fs's log; DynamoDB
requests by operation through a counting proxy. The bucket's version (and the staged links) are
removed after each run. Without --admin, builds `cargo build --profile cli -p catalog-admin` first.
Figures, not a test: run it on a quiet machine.
"""
import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from publish_many import (  # noqa: E402
    KEY, ROOT, SECRET, Counter, dynamo_proxy, free_port, phases, rss_mib, s3_ops, stored_bytes,
    wait_port)

BUCKET = "catalog-data"
RESPONSE = re.compile(r"resp: Response \{ status: (\d+), .*?headers: \{(.*?)\}, body: Body (.)")
LENGTH = re.compile(r'"content-length": "(\d+)"')


def generate(path, mib):
    """One Parquet file of about `mib` MiB of bench/stats.py's ten kinds of column."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from stats import ten_columns

    rng = np.random.default_rng(39)
    rows, step, writer = 0, 1_000_000, None
    while writer is None or os.path.getsize(path) < mib * 2**20:
        n = step
        if rows:
            # The last row group only as large as the size left needs.
            per_row = os.path.getsize(path) / rows
            n = max(1, min(step, int((mib * 2**20 - os.path.getsize(path)) / per_row) + 1))
        table = pa.table(ten_columns(rng, rows, n))
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema, compression="snappy",
                                      write_page_index=True)
        writer.write_table(table, row_group_size=step)
        rows += n
    writer.close()
    return rows


def digests(path):
    md5, sha = hashlib.md5(), hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(8 << 20):
            md5.update(block)
            sha.update(block)
    return md5.hexdigest(), base64.b64encode(sha.digest()).decode()


def b64(text):
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def stage(bucket_root, prefix, source, files, md5, sha):
    """`files` objects under `prefix`, each a hard link of `source` with s3s-fs's sidecars;
    returns the paths to remove afterwards."""
    made = []
    directory = os.path.join(bucket_root, BUCKET, prefix)
    os.makedirs(directory)
    made.append(directory)
    for i in range(files):
        key = f"{prefix}file-{i:03}.parquet"
        os.link(source, os.path.join(bucket_root, BUCKET, key))
        side = os.path.join(bucket_root, f".bucket-{b64(BUCKET)}.object-{b64(key)}")
        with open(side + ".internal.json", "w") as f:
            json.dump({"checksum_sha256": sha, "e_tag": md5}, f)
        with open(side + ".metadata.json", "w") as f:
            json.dump({"content_type": "application/vnd.apache.parquet"}, f)
        made += [side + ".internal.json", side + ".metadata.json"]
    return made


def get_bytes(log_path, offset):
    """GET response bodies s3s-fs logged after `offset`: (count, ranged, bytes)."""
    with open(log_path, "rb") as f:
        f.seek(offset)
        text = f.read().decode("utf-8", "replace")
    count = ranged = total = 0
    for m in RESPONSE.finditer(text):
        # A streamed body is a GET's (HeadObject's and the others' are empty or XML).
        if m.group(3) != "{" or "dyn_stream" not in text[m.end():m.end() + 40]:
            continue
        length = LENGTH.search(m.group(2))
        count += 1
        ranged += m.group(1) == "206"
        total += int(length.group(1)) if length else 0
    return count, ranged, total


def hwm_mib(pid):
    """The process's VmHWM (peak resident memory of its own address space, since its exec)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run(args, env, written):
    """Runs catalog-admin `args`; samples its memory and the bytes under `written`."""
    out_path = os.path.join(tempfile.gettempdir(), f"in-place-{os.getpid()}.log")
    samples, hwm, done = [], [0.0], threading.Event()
    with open(out_path, "wb") as out:
        start = time.monotonic()
        proc = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)

        def sample():
            while not done.is_set():
                samples.append((time.monotonic() - start, rss_mib(proc.pid),
                                stored_bytes(written)))
                hwm[0] = max(hwm[0], hwm_mib(proc.pid))
                done.wait(1.0)

        sampler = threading.Thread(target=sample)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        done.set()
        sampler.join()
    with open(out_path, encoding="utf-8", errors="replace") as f:
        output = f.read()
    os.unlink(out_path)
    return os.waitstatus_to_exitcode(status), wall, usage, output, phases(samples), hwm[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="100x100,10x1024", help="NxMiB, comma-separated")
    parser.add_argument("--admin", help="a catalog-admin binary (default: build the cli profile's)")
    parser.add_argument("--parallel", type=int, default=0, help="--parallel of both commands")
    parser.add_argument("--keep", help="generate the Parquet files here and keep them")
    parser.add_argument("--only", choices=["staged", "disk"], help="run one way")
    parser.add_argument("--generate", nargs=2, metavar=("PATH", "MIB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        print(generate(args.generate[0], int(args.generate[1])))
        return
    cases = [tuple(int(x) for x in c.split("x")) for c in args.cases.split(",")]

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

    work = tempfile.mkdtemp(prefix="publish-in-place-")
    sources = args.keep or os.path.join(work, "sources")
    os.makedirs(sources, exist_ok=True)
    # The bucket's root beside the sources: hard links need one file system.
    bucket_root = os.path.join(work, "s3")
    os.makedirs(os.path.join(bucket_root, BUCKET))
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
            env=dict(os.environ, RUST_LOG="s3s::ops=debug,s3s::service=debug", NO_COLOR="1")))
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
            DATA_BUCKET=BUCKET, DOWNLOADS_TABLE="catalog-downloads",
        )
        subprocess.run([init], env=env, check=True, stdout=subprocess.DEVNULL)
        env["AWS_ENDPOINT_URL_DYNAMODB"] = f"http://127.0.0.1:{proxy_port}"

        results = []
        for files, mib in cases:
            source = os.path.join(sources, f"source-{mib}mib.parquet")
            if not os.path.exists(source):
                started = time.monotonic()
                # In a child: a forked child's wait4 maximum RSS counts its parent's RSS at
                # exec, so this process stays small (no numpy or pyarrow loaded here).
                rows = subprocess.run(
                    [python, os.path.abspath(__file__), "--generate", source, str(mib)],
                    check=True, capture_output=True, text=True).stdout.strip()
                print(f"# generated {source}: {rows} rows in {time.monotonic() - started:.0f} s",
                      flush=True)
            size = os.path.getsize(source)
            md5, sha = digests(source)
            print(f"# case {files}x{mib}: {files} files of {size} bytes "
                  f"({files * size / 2**30:.2f} GiB)", flush=True)
            for way in ("staged", "disk"):
                if args.only and way != args.only:
                    continue
                slug = f"{way}-{files}x{mib}"
                if way == "staged":
                    made = stage(bucket_root, f"staging/{slug}/", source, files, md5, sha)
                    command = [admin, "stage", "publish", f"s3://{BUCKET}/staging/{slug}/"]
                else:
                    directory = os.path.join(work, slug)
                    os.makedirs(directory)
                    for i in range(files):
                        os.link(source, os.path.join(directory, f"file-{i:03}.parquet"))
                    made = [directory]
                    command = [admin, "publish", directory]
                command += ["--slug", slug, "--name", f"Bench {slug}", "--license", "CC0-1.0",
                            "--source", "bench", "--category", "bench"]
                if args.parallel:
                    command += ["--parallel", str(args.parallel)]
                counter.take()
                offset = os.path.getsize(s3_log_path)
                written = os.path.join(bucket_root, BUCKET, "datasets", slug)
                code, wall, usage, output, phase, hwm = run(command, env, written)
                s3, _ = s3_ops(s3_log_path, offset)
                gets, ranged, got = get_bytes(s3_log_path, offset)
                dynamo = counter.take()
                result = {
                    "case": slug, "files": files, "file_bytes": size, "bytes": files * size,
                    "exit": code, "wall_s": round(wall, 1),
                    "peak_mib": round(hwm, 1),
                    "wait4_maxrss_mib": round(usage.ru_maxrss / 1024, 1),
                    "user_s": round(usage.ru_utime, 1), "sys_s": round(usage.ru_stime, 1),
                    "get_requests": gets, "ranged_gets": ranged, "get_bytes": got,
                    "get_share_of_objects": round(got / (files * size), 4),
                    "s3_requests": sum(s3.values()), "s3": s3,
                    "dynamodb_requests": sum(dynamo.values()), "dynamodb": dynamo,
                    **phase,
                }
                print("## catalog-admin said:")
                print("\n".join(line for line in output.splitlines() if line.strip()))
                print(json.dumps(result), flush=True)
                results.append(result)
                shutil.rmtree(written, ignore_errors=True)
                for path in made:
                    if os.path.isdir(path):
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        os.unlink(path)
        print(f"{'case':<22} {'GiB':>6} {'wall s':>7} {'peak MiB':>9} {'GET MiB':>9} "
              f"{'GETs':>6} {'S3 req':>7} {'DDB req':>8}")
        for r in results:
            print(f"{r['case']:<22} {r['bytes'] / 2**30:>6.2f} {r['wall_s']:>7.1f} "
                  f"{r['peak_mib']:>9.1f} {r['get_bytes'] / 2**20:>9.1f} {r['get_requests']:>6} "
                  f"{r['s3_requests']:>7} {r['dynamodb_requests']:>8}")
        failed = [r["case"] for r in results if r["exit"] != 0]
        if failed:
            print(f"failed: {failed}")
            sys.exit(1)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
