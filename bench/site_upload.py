"""Figures of publishing from the site (issue 40 §3), printed as Markdown.

1. The publishing function's bootstrap (`catalog-publish`), as `sam build` builds it
   (`cargo lambda build --release`): its size.
2. Its cold start under cargo-lambda's runtime emulator (`cargo lambda watch
   --only-lambda-apis`): an event invoked first (an object that is no upload's: read, parsed,
   skipped), waiting in the emulator; then the bootstrap started, and the time from its start
   to the answer (its init, the SDK's set-up, the event). Each round a fresh process.
3. The browser's upload against the AWS CLI's, on the same file, to s3s-fs on loopback: a
   multipart upload through presigned UploadPart URLs, each part a plain HTTP PUT of 8 MiB
   (urllib, four at a time, as a page would send them), against `aws s3 cp --endpoint-url`
   (its defaults: 8 MB parts, ten at a time). Wall time of the whole upload, each a few rounds.
4. The function publishing that file (a Parquet file of about 100 MB, from the browser-style
   upload's object): wall time and the bootstrap's peak resident memory (VmHWM) once done.

   python bench/site_upload.py [--mib 100] [--rounds 3] [--bootstrap PATH] [--aws PATH]

Needs: moto (dev/moto_server.py) and s3s-fs as the tests use them (PYTHON, S3S_FS), the debug
catalog-local-init, cargo-lambda (CARGO_LAMBDA, zig on PATH) and the AWS CLI (`--aws`, e.g. a
venv's `pip install awscli`).
"""

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from publish_many import KEY, ROOT, SECRET, free_port, wait_port  # noqa: E402

BUCKET = "catalog-data"
KEYS_TABLE = "catalog-keys"
PART = 8 * 1024 * 1024


def generate(path, mib):
    """A Parquet file of about `mib` MiB: numbers, timestamps and text, snappy."""
    script = f"""
import sys, numpy as np, pyarrow as pa, pyarrow.parquet as pq
rng = np.random.default_rng(40)
rows = {mib} * 1024 * 1024 // 29
t = pa.table({{
    'id': np.arange(rows, dtype=np.int64),
    'value': rng.normal(size=rows),
    'count': rng.integers(0, 1_000_000, rows),
    'at': pa.array(rng.integers(1.6e15, 1.7e15, rows), pa.timestamp('us')),
    'label': pa.array(rng.integers(0, 50_000, rows).astype(str)),
}})
pq.write_table(t, sys.argv[1], compression='snappy', write_page_index=True)
"""
    subprocess.run([os.environ["PYTHON"], "-c", script, path], check=True)


def boto(service, env):
    import boto3
    return boto3.client(
        service, region_name="us-east-1", aws_access_key_id=KEY, aws_secret_access_key=SECRET,
        endpoint_url=env[f"AWS_ENDPOINT_URL_{service.upper()}"],
        config=__import__("botocore.config").config.Config(
            signature_version="s3v4", s3={"addressing_style": "path"}))


def browser_upload(s3, key, path):
    """The page's calls, with the routes' part: presigned UploadPart URLs, PUT four at a time."""
    size = os.path.getsize(path)
    upload_id = s3.create_multipart_upload(Bucket=BUCKET, Key=key)["UploadId"]
    parts = (size + PART - 1) // PART
    urls = [s3.generate_presigned_url(
        "upload_part", Params={"Bucket": BUCKET, "Key": key, "UploadId": upload_id,
                               "PartNumber": n}, ExpiresIn=3600) for n in range(1, parts + 1)]

    def put(n):
        with open(path, "rb") as f:
            f.seek((n - 1) * PART)
            body = f.read(PART)
        req = urllib.request.Request(urls[n - 1], data=body, method="PUT")
        with urllib.request.urlopen(req) as resp:
            return {"PartNumber": n, "ETag": resp.headers["ETag"]}

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        done = list(pool.map(put, range(1, parts + 1)))
    s3.complete_multipart_upload(Bucket=BUCKET, Key=key, UploadId=upload_id,
                                 MultipartUpload={"Parts": done})
    return time.monotonic() - started


def cli_upload(aws, env, key, path):
    started = time.monotonic()
    subprocess.run([aws, "s3", "cp", path, f"s3://{BUCKET}/{key}", "--endpoint-url",
                    env["AWS_ENDPOINT_URL_S3"], "--no-progress", "--only-show-errors"],
                   env=env, check=True)
    return time.monotonic() - started


def record_upload(dynamo, org, upload_id, dataset, filename, size, sha256):
    """The upload's item as catalog_aws::dynamo::uploads writes it, completed (publishing)."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    dynamo.put_item(TableName=KEYS_TABLE, Item={
        "key_hash": {"S": f"UPLOAD#{org}#{upload_id}"}, "org": {"S": org},
        "upload_id": {"S": upload_id}, "dataset": {"S": dataset}, "filename": {"S": filename},
        "size": {"N": str(size)}, "sha256": {"S": sha256}, "uploaded_by": {"S": "bench"},
        "created_at": {"S": now}, "updated_at": {"S": now}, "state": {"S": "publishing"},
        "s3_upload_id": {"S": "bench"}, "part_size": {"N": str(PART)},
        "purge_at": {"N": str(int(time.time()) + 86400)}})


def event_file(directory, key):
    path = os.path.join(directory, f"event-{uuid.uuid4().hex}.json")
    with open(path, "w") as f:
        json.dump({"detail-type": "Object Created", "source": "aws.s3",
                   "detail": {"bucket": {"name": BUCKET}, "object": {"key": key}}}, f)
    return path


def invoke(cargo_lambda, port, event):
    started = time.monotonic()
    out = subprocess.run([cargo_lambda, "lambda", "invoke", "catalog-publish", "--data-file",
                          event, "-A", "127.0.0.1", "-P", str(port), "-o", "json"],
                         capture_output=True, text=True, cwd=ROOT)
    wall = time.monotonic() - started
    if out.returncode != 0:
        raise SystemExit(f"invoke failed: {out.stderr}")
    return wall, json.loads(out.stdout)


def vm_hwm_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bootstrap", help="catalog-publish's bootstrap (default: build it)")
    parser.add_argument("--aws", default="aws", help="the AWS CLI")
    args = parser.parse_args()

    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    cargo_lambda = os.environ.get("CARGO_LAMBDA", "cargo-lambda")
    bootstrap = args.bootstrap
    if not bootstrap:
        subprocess.run([cargo_lambda, "lambda", "build", "--release", "-p", "catalog-publish"],
                       cwd=ROOT, check=True)
        bootstrap = os.path.join(target, "lambda", "catalog-publish", "bootstrap")
    init = os.path.join(target, "debug", "catalog-local-init")
    work = tempfile.mkdtemp(prefix="site-upload-")
    procs = []
    try:
        moto_port, s3_port, rt_port = free_port(), free_port(), free_port()
        procs.append(subprocess.Popen(
            [os.environ["PYTHON"], os.path.join(ROOT, "dev", "moto_server.py"), "-H", "127.0.0.1",
             "-p", str(moto_port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        os.makedirs(os.path.join(work, "s3"))
        procs.append(subprocess.Popen(
            [os.environ["S3S_FS"], "--host", "127.0.0.1", "--port", str(s3_port), "--access-key",
             KEY, "--secret-key", SECRET, os.path.join(work, "s3")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_port(moto_port)
        wait_port(s3_port)
        env = dict(
            os.environ, AWS_REGION="us-east-1", AWS_DEFAULT_REGION="us-east-1",
            AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_EC2_METADATA_DISABLED="true",
            AWS_ENDPOINT_URL_DYNAMODB=f"http://127.0.0.1:{moto_port}",
            AWS_ENDPOINT_URL_S3=f"http://127.0.0.1:{s3_port}", S3_FORCE_PATH_STYLE="true",
            AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER=f"http://127.0.0.1:{moto_port}",
            DATASETS_TABLE="catalog-datasets", KEYS_TABLE=KEYS_TABLE, DATA_BUCKET=BUCKET,
            DOWNLOADS_TABLE="catalog-downloads")
        subprocess.run([init], env=env, check=True, stdout=subprocess.DEVNULL)
        s3, dynamo = boto("s3", env), boto("dynamodb", env)

        path = os.path.join(work, "big.parquet")
        generate(path, args.mib)
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            sha256 = hashlib.file_digest(f, "sha256").hexdigest()

        print("# Publishing from the site: figures\n")
        print(f"{datetime.date.today()}, {os.cpu_count()} cores; a Parquet file of "
              f"{size:,} bytes ({size / 2**20:.1f} MiB), s3s-fs and moto on loopback.\n")
        print("## The publishing function's bootstrap\n")
        print(f"catalog-publish: {os.path.getsize(bootstrap):,} bytes "
              f"({os.path.getsize(bootstrap) / 1e6:.2f} MB)\n")

        print("## Upload: the browser's presigned parts against the AWS CLI\n")
        print("| round | browser-style (8 MiB parts, 4 at a time) | aws s3 cp |")
        print("|---|---|---|")
        browser, cli = [], []
        last_key = None
        for r in range(args.rounds):
            upload_id = uuid.uuid4().hex
            last_key = f"uploads/bench/{upload_id}/big.parquet"
            b = browser_upload(s3, last_key, path)
            c = cli_upload(args.aws, env, f"bench/cli-{r}.parquet", path)
            browser.append(b)
            cli.append(c)
            print(f"| {r + 1} | {b:.2f} s, {size / 2**20 / b:.0f} MiB/s | "
                  f"{c:.2f} s, {size / 2**20 / c:.0f} MiB/s |")
        mb, mc = statistics.median(browser), statistics.median(cli)
        print(f"| median | {mb:.2f} s, {size / 2**20 / mb:.0f} MiB/s | "
              f"{mc:.2f} s, {size / 2**20 / mc:.0f} MiB/s |\n")

        print("## Cold start and the publish, under cargo-lambda's emulator\n")
        watch = subprocess.Popen(
            [cargo_lambda, "lambda", "watch", "--only-lambda-apis", "--timeout", "900", "-A",
             "127.0.0.1", "-P", str(rt_port)], cwd=ROOT, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        procs.append(watch)
        wait_port(rt_port)
        fn_env = dict(env, AWS_LAMBDA_RUNTIME_API=f"http://127.0.0.1:{rt_port}/.rt/catalog-publish",
                      AWS_LAMBDA_FUNCTION_NAME="catalog-publish", AWS_LAMBDA_FUNCTION_VERSION="1",
                      AWS_LAMBDA_FUNCTION_MEMORY_SIZE="3008", AWS_LAMBDA_LOG_FORMAT="JSON")
        skip = event_file(work, "uploads/bench/nothing/here.parquet")
        colds, warms = [], []
        fn = None
        for _ in range(args.rounds + 1):
            if fn:
                fn.kill()
                fn.wait()
            # The invocation waits in the emulator first; the clock starts with the process.
            asked = subprocess.Popen(
                [cargo_lambda, "lambda", "invoke", "catalog-publish", "--data-file", skip, "-A",
                 "127.0.0.1", "-P", str(rt_port), "-o", "json"], cwd=ROOT,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1.0)
            started = time.monotonic()
            fn = subprocess.Popen([bootstrap], env=fn_env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
            out, err = asked.communicate()
            colds.append(time.monotonic() - started)
            assert "skipped" in out, (out, err)
            warm, _ = invoke(cargo_lambda, rt_port, skip)
            warms.append(warm)
        colds, warms = colds[1:], warms[1:]  # the first round attaches the function to watch
        cold, warm = statistics.median(colds), statistics.median(warms)
        print(f"Cold start: from the process's start to the answer of an invocation already "
              f"waiting (an object that is no upload's, skipped), {len(colds)} rounds: median "
              f"{cold * 1000:.0f} ms (each: {', '.join(f'{c * 1000:.0f}' for c in colds)}). "
              f"A warm invocation, `cargo lambda invoke` included: {warm * 1000:.0f} ms. "
              f"Resident memory after the cold invocation: {vm_hwm_mib(fn.pid):.1f} MiB.\n")

        upload_id = last_key.split("/")[2]
        record_upload(dynamo, "bench", upload_id, "big", "big.parquet", size, sha256)
        wall, answer = invoke(cargo_lambda, rt_port, event_file(work, last_key))
        peak = vm_hwm_mib(fn.pid)
        print(f"Publishing the {size / 2**20:.0f} MiB file (one invocation): {wall:.1f} s; "
              f"answer {json.dumps(answer)}; peak resident memory (VmHWM) {peak:.0f} MiB.")
        fn.kill()
    finally:
        for p in procs:
            p.kill()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
