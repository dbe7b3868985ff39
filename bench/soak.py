"""The local stack under a long mixed run: clients that publish (new datasets and new versions
of theirs, with catalog-admin, several at once) and read (sorted and searched listings,
metadata) for a set time, while moto's resident memory is sampled. Started by bench/soak,
which brings up the stack; prints every sample and a summary.

    python bench/soak.py --api URL --admin PATH --file PARQUET --moto-pid PID --seconds N
"""

import argparse
import collections
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request


def rss_mib(pid):
    """The resident memory of a process and its children (moto's server is one process)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = collections.Counter()
        self.errors = collections.Counter()

    def add(self, what, error=None):
        with self.lock:
            self.counts[what] += 1
            if error:
                self.errors[error[:200]] += 1


def publish(args, tally, slug, meta_path):
    out = subprocess.run(
        [args.admin, "publish", args.file, "--slug", slug, "--metadata", meta_path],
        capture_output=True,
        text=True,
    )
    if out.returncode == 0:
        tally.add("publish ok")
    else:
        tally.add("publish failed", out.stderr.strip().splitlines()[-1] if out.stderr else "?")


def read(args, tally, path):
    try:
        with urllib.request.urlopen(args.api + path, timeout=30) as answer:
            answer.read()
            tally.add(f"read {answer.status}")
    except urllib.error.HTTPError as e:
        tally.add(f"read {e.code}", f"{path}: {e.read()[:200].decode(errors='replace')}")
    except Exception as e:  # the stack stopped answering
        tally.add("read error", f"{path}: {e}")


def client(args, tally, number, deadline, published):
    rng = random.Random(number)
    meta_dir = tempfile.mkdtemp(prefix=f"soak-{number}-")
    mine = []
    while time.monotonic() < deadline:
        if rng.random() < args.publish_share:
            if mine and rng.random() < 0.4:
                slug = rng.choice(mine)
            else:
                slug = f"soak-{number}-{len(mine)}"
                mine.append(slug)
            meta_path = f"{meta_dir}/{slug}.json"
            with open(meta_path, "w") as f:
                json.dump(
                    {
                        "name": f"Soak survey {number} {len(mine)} {rng.randrange(10**6)}",
                        "description": "Counts from a long mixed run of the local stack",
                        "license": "CC0-1.0",
                        "source": "bench/soak",
                        "category": rng.choice(["biology", "transport", "environment"]),
                        "tags": rng.sample(["birds", "rivers", "hourly", "city"], 2),
                    },
                    f,
                )
            publish(args, tally, slug, meta_path)
            with published[1]:
                published[0].add(slug)
        else:
            with published[1]:
                known = sorted(published[0])
            for path in [
                "/datasets?sort=name",
                "/datasets?sort=updated&page=2&page_size=10",
                "/datasets?sort=downloads",
                "/datasets?q=soak%20survey",
                "/datasets?category=biology&tag=birds",
            ] + ([f"/datasets/{rng.choice(known)}"] if known else []):
                read(args, tally, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--api", required=True)
    parser.add_argument("--admin", required=True)
    parser.add_argument("--file", required=True)
    parser.add_argument("--moto-pid", type=int, required=True)
    parser.add_argument("--seconds", type=int, default=3600)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--publish-share", type=float, default=0.3)
    parser.add_argument("--sample-every", type=int, default=15)
    # The local stack's documented bound (docs/development.md).
    parser.add_argument("--max-mib", type=float, default=2048)
    args = parser.parse_args()

    tally = Tally()
    published = (set(), threading.Lock())
    start = time.monotonic()
    deadline = start + args.seconds
    threads = [
        threading.Thread(target=client, args=(args, tally, n, deadline, published), daemon=True)
        for n in range(args.clients)
    ]
    for t in threads:
        t.start()
    samples = []
    while any(t.is_alive() for t in threads):
        mib = rss_mib(args.moto_pid)
        samples.append(mib)
        with tally.lock:
            done = dict(tally.counts)
        print(f"{time.monotonic() - start:7.0f} s  moto {mib:8.1f} MiB  {done}", flush=True)
        time.sleep(args.sample_every)
    for t in threads:
        t.join()
    samples.append(rss_mib(args.moto_pid))
    print()
    print(f"clients {args.clients}, {args.seconds} s, publish share {args.publish_share}")
    print(
        f"moto resident memory: first {samples[0]:.0f} MiB, peak {max(samples):.0f} MiB, "
        f"last {samples[-1]:.0f} MiB"
    )
    for what, count in sorted(tally.counts.items()):
        print(f"  {what}: {count}")
    for error, count in tally.errors.most_common(10):
        print(f"  {count} x {error}")
    failed = tally.counts["publish failed"] + sum(
        c for w, c in tally.counts.items() if w.startswith("read 5") or w == "read error"
    )
    if max(samples) > args.max_mib:
        print(f"moto passed {args.max_mib:.0f} MiB")
        failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
