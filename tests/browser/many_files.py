#!/usr/bin/env python3
"""The dataset page of a version of many files, in headless Chromium (Debian's), driven by
Playwright, against the local stack with the data bucket's CORS rule in front of s3s-fs
(tests/tests/console.rs starts it, publishes the files with catalog-admin and runs this file).

    python tests/browser/many_files.py make DIR
    python tests/browser/many_files.py BASE_URL OUT_DIR

make: writes the dataset under DIR: split directories `train` and `test`, Hive partitions
`year=…/region=…/` (`year` int64, `region` string, one of `test`'s regions Hive's null
partition), 32 files of 2,000 rows each (`id` int64, `reading` double, `station` string).

The browser: DIR (FILES_DIR) holds the files as published; SLUG names them published keyless,
GATED_SLUG the same files behind a key, READ_KEY a key that reads it, S3_ORIGIN the data bucket.
The page shows the splits (name, files, rows, size) and the partition columns (name, type) as
the metadata has them; the files list pages through every file, as published, with their
partition values and links; a split's data table shows that split's rows, as pyarrow reads its
files; the SQL console over a split answers as pyarrow does over the same files, and a WHERE on
a partition column reads only the files of that partition, fewer bytes than the same query
without it, the bytes the page says equal to the browser's network log; the gated copy lists
its files and queries them only with a key; at 390 px nothing is wider than the screen. No
request leaves the site and the data bucket, and no page logs an error.
"""

import os
import re
import sys
import traceback
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROWS = 2_000
TRAIN = [(year, region, part) for year in (2022, 2023, 2024) for region in ("east", "west") for part in range(5)]
TEST = [(2024, "east", 0), (2024, None, 0)]
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def rel_path(split, year, region, part):
    return f"{split}/year={year}/region={region or HIVE_NULL}/part-{part}.parquet"


def make(root):
    import pyarrow as pa
    import pyarrow.parquet as pq

    start = 0
    for split, files in (("train", TRAIN), ("test", TEST)):
        for year, region, part in files:
            path = Path(root) / rel_path(split, year, region, part)
            path.parent.mkdir(parents=True, exist_ok=True)
            ids = range(start, start + ROWS)
            pq.write_table(pa.table({
                "id": pa.array(ids, pa.int64()),
                "reading": pa.array([(i * 7919 % 10007) / 100 for i in ids], pa.float64()),
                "station": pa.array([f"station {i % 13} of {split} {year}" for i in ids]),
            }), path, row_group_size=ROWS)
            start += ROWS


if sys.argv[1] == "make":
    make(sys.argv[2])
    sys.exit(0)

import pyarrow as pa  # noqa: E402 - only the browser run needs Playwright
import pyarrow.parquet as pq  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

BASE, OUT = sys.argv[1].rstrip("/"), sys.argv[2]
FILES = Path(os.environ["FILES_DIR"])
SLUG, GATED_SLUG, READ_KEY = os.environ["SLUG"], os.environ["GATED_SLUG"], os.environ["READ_KEY"]
S3 = os.environ["S3_ORIGIN"]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
os.makedirs(OUT, exist_ok=True)
steps = []


def step(name):
    def wrap(fn):
        steps.append((name, fn))
        return fn
    return wrap


def origin(url):
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def paths(split=None):
    """The files as published, in the manifest's order (split, then path)."""
    every = [("train", rel_path("train", *f)) for f in TRAIN] + [("test", rel_path("test", *f)) for f in TEST]
    return sorted(p for s, p in every if split in (None, s))


def table_of(split):
    """The split's rows as pyarrow reads its files, in the manifest's order."""
    return pa.concat_tables([pq.read_table(FILES / p) for p in paths(split)])


def metadata(page, slug):
    response = page.request.get(f"{BASE}/api/v1/datasets/{slug}")
    assert response.ok, response.status
    return response.json()


def human_bytes(n):
    """format.js's humanBytes."""
    units, unit, value = ["B", "KB", "MB", "GB", "TB"], 0, float(n)
    while value >= 1000 and unit < len(units) - 1:
        value /= 1000
        unit += 1
    return f"{int(value)} B" if unit == 0 else f"{value:.{1 if value < 10 else 0}f} {units[unit]}"


def open_page(page, slug):
    page.goto(f"{BASE}/dataset.html?slug={slug}")
    expect(page.locator("#download")).to_be_visible()


def open_console(page, slug):
    open_page(page, slug)
    page.get_by_role("button", name="Open the SQL console").click()
    expect(page.locator("#console-status")).to_have_text("DuckDB is ready.", timeout=120_000)


def run(page, sql):
    page.fill("#console-sql", sql)
    page.get_by_role("button", name="Run", exact=True).click()
    status = page.locator("#console-status")
    expect(status).not_to_have_text(re.compile(r"^(Running|Loading DuckDB)"), timeout=120_000)
    return status.inner_text()


def result_rows(page):
    return page.evaluate("""() => [...document.querySelectorAll("#console-table tbody tr")].map((tr) =>
        [...tr.children].map((td) => td.hasAttribute("data-null") ? null : (td.querySelector(".value") ?? td).textContent))""")


def files_shown(page):
    return page.evaluate("""() => [...document.querySelectorAll("#files-table tbody tr")].map((tr) =>
        [...tr.children].map((td) => td.hasAttribute("data-null") ? null : td.textContent))""")


@step("the splits and the partition columns, as the metadata has them")
def splits(page, ctx):
    d = metadata(page, SLUG)
    files = d["files"]
    assert files["count"] == 32, files
    open_page(page, SLUG)
    expect(page.locator("#file-count")).to_have_text("32")
    expect(page.locator("#files-heading")).to_have_text("Files (32)")
    shown = page.evaluate("""() => [...document.querySelectorAll("#splits-table tbody tr")].map((tr) =>
        [...tr.children].map((c) => c.textContent))""")
    sizes = {s: sum((FILES / p).stat().st_size for p in paths(s)) for s in ("train", "test")}
    expected = [[s["name"], f"{s['files']:,}", f"{s['row_count']:,}", human_bytes(s["size"])] for s in files["splits"]]
    assert shown == expected, (shown, expected)
    # The metadata's figures are the files'.
    assert {s["name"]: (s["files"], s["row_count"], s["size"]) for s in files["splits"]} == {
        "train": (30, 30 * ROWS, sizes["train"]), "test": (2, 2 * ROWS, sizes["test"])}, files["splits"]
    partitions = page.evaluate("""() => [...document.querySelectorAll("#partitions-table tbody tr")].map((tr) =>
        [...tr.children].map((c) => c.textContent))""")
    assert partitions == [["year", "int64"], ["region", "string"]], partitions
    assert files["partition_columns"] == [{"name": "year", "type": "int64"}, {"name": "region", "type": "string"}]
    summary = page.locator("#files-summary").inner_text()
    assert summary.startswith("This version is 32 Parquet files in 2 splits, partitioned by year, region."), summary
    expect(page.locator("#sha256")).to_have_text(d["sha256"])
    expect(page.locator("#files-range")).to_have_text("Files 1–25 of 32")
    page.locator(".files-section").screenshot(path=f"{OUT}/dataset-many-files.png")


@step("the files list pages through every file, as published, with partition values and links")
def files_list(page, ctx):
    open_page(page, SLUG)
    expect(page.locator("#files-range")).to_have_text("Files 1–25 of 32")
    first = files_shown(page)
    page.locator("#files-next").click()
    expect(page.locator("#files-range")).to_have_text("Files 26–32 of 32")
    last = files_shown(page)
    seen = [row[0] for row in first + last]
    assert seen == paths(), (seen, paths())
    # Each row: path, split, year, region (Hive's null as null), rows, size, a link to the file.
    by_path = {row[0]: row for row in first + last}
    west = by_path[rel_path("train", 2023, "west", 4)]
    assert west[1:6] == ["train", "2023", "west", f"{ROWS:,}", human_bytes((FILES / west[0]).stat().st_size)], west
    null_row = by_path[rel_path("test", 2024, None, 0)]
    assert null_row[1:6] == ["test", "2024", None, f"{ROWS:,}", human_bytes((FILES / null_row[0]).stat().st_size)], null_row
    link = page.locator("#files-table tbody tr").last.get_by_role("link", name="Download")
    body = page.request.get(link.get_attribute("href")).body()
    assert body == (FILES / last[-1][0]).read_bytes(), last[-1][0]
    page.locator("#files-previous").click()
    expect(page.locator("#files-range")).to_have_text("Files 1–25 of 32")
    # One split's files.
    page.select_option("#files-split", "test")
    expect(page.locator("#files-range")).to_have_text("Files 1–2 of 2 in test")
    assert [row[0] for row in files_shown(page)] == paths("test")


@step("a split's data table: its rows as pyarrow reads the split's files")
def data_table(page, ctx):
    open_page(page, SLUG)
    expect(page.locator("#rows-range")).to_contain_text(f"of {30 * ROWS:,} in train")
    page.select_option("#rows-split", "test")
    expect(page.locator("#rows-range")).to_have_text(re.compile(rf"^Rows 1–100 of {2 * ROWS:,} in test "))
    header = page.evaluate("() => [...document.querySelectorAll('#rows-table thead th')].map((th) => th.firstChild.textContent)")
    shown = page.evaluate("() => [...document.querySelectorAll('#rows-table tbody tr')].map((tr) => [...tr.children].map((c) => c.textContent))")
    expected = table_of("test").slice(0, 100).to_pylist()
    ids, stations = header.index("id"), header.index("station")
    assert [(r[ids], r[stations]) for r in shown] == [(str(e["id"]), e["station"]) for e in expected], shown[:3]
    # The split's last page: past the first file, into the second.
    page.locator("#rows-next").click()
    expect(page.locator("#rows-range")).to_have_text(re.compile(r"^Rows 101–200 "))


@step("each split's own column statistics, the whole version's first")
def split_statistics(page, ctx):
    open_page(page, SLUG)
    expect(page.locator("#columns-split")).to_have_value("")
    card = page.locator("#columns section.column").filter(has=page.locator("h3", has_text=re.compile(r"^id ")))

    def min_max():
        cells = card.locator("tbody tr").evaluate_all(
            "(rows) => rows.map((r) => [r.querySelector('th').textContent, r.querySelector('td').textContent])")
        values = dict(cells)
        return values["Min"], values["Max"]

    # Train's ids come first (0 to 30 * ROWS - 1), then test's, as `make` writes them.
    assert min_max() == ("0", f"{32 * ROWS - 1:,}"), min_max()
    page.select_option("#columns-split", "test")
    expect(card.locator("tbody")).to_contain_text(f"{30 * ROWS:,}")
    assert min_max() == (f"{30 * ROWS:,}", f"{32 * ROWS - 1:,}"), min_max()
    page.select_option("#columns-split", "train")
    expect(card.locator("tbody")).to_contain_text(f"{30 * ROWS - 1:,}")
    assert min_max() == ("0", f"{30 * ROWS - 1:,}"), min_max()
    page.select_option("#columns-split", "")
    expect(card.locator("tbody")).to_contain_text(f"{32 * ROWS - 1:,}")


def measured(page, ctx, sql):
    """Runs `sql` in a console that has read nothing yet but its view; returns the status, the
    rows, and the data bucket's answers to it (the browser's network log)."""
    run(page, "SELECT 42 AS answer")  # the view made, the links asked for
    ctx["responses"].clear()
    status = run(page, sql)
    s3 = [r for r in ctx["responses"] if origin(r.url) == S3]
    return status, result_rows(page), s3


def read_bytes(status):
    found = re.search(r"Read [^(]*\(([\d,]+) bytes\) of the data in ([\d,]+) requests?", status)
    assert found, status
    return int(found.group(1).replace(",", "")), int(found.group(2).replace(",", ""))


@step("the console over a split: a WHERE on a partition column reads only its files, fewer bytes")
def console(page, ctx):
    sql = "SELECT count(*) AS n, sum(id) AS ids, sum(round(reading * 100)::BIGINT) AS cents FROM data"
    results = {}
    for where, year in (("", None), (" WHERE year = 2024 AND region = 'west'", 2024)):
        open_console(page, SLUG)
        expect(page.locator("#console-split")).to_have_value("train")
        status, rows, s3 = measured(page, ctx, sql + where)
        files = paths("train") if year is None else [p for p in paths("train") if "/year=2024/region=west/" in p]
        expected = pa.concat_tables([pq.read_table(FILES / p) for p in files]).to_pylist()
        assert rows == [[str(len(expected)), str(sum(r["id"] for r in expected)), str(sum(round(r["reading"] * 100) for r in expected))]], (rows, len(expected))
        fetched = sum(int(r.headers.get("content-length", "0")) for r in s3)
        touched = {unquote(urlsplit(r.url).path).split("/files/", 1)[1] for r in s3}
        said, requests = read_bytes(status)
        assert said == fetched and requests == len(s3), (status, fetched, len(s3))
        assert touched == set(files), (sorted(touched), files)
        assert {r.status for r in s3} == {206}, {r.status for r in s3}
        if year:
            assert status.endswith(f"from {len(files)} files."), status
        results[where] = fetched
        print(f"     {sql + where}: {fetched:,} bytes from {len(touched)} files in {len(s3)} requests")
    assert results[" WHERE year = 2024 AND region = 'west'"] < results[""] / 3, results
    # Hive's null partition reads as NULL, in the test split.
    page.select_option("#console-split", "test")
    run(page, "SELECT year, region, count(*) AS n FROM data GROUP BY ALL ORDER BY region NULLS LAST")
    assert result_rows(page) == [["2024", "east", f"{ROWS}"], ["2024", None, f"{ROWS}"]], result_rows(page)
    page.screenshot(path=f"{OUT}/console-many-files.png", full_page=False)


@step("the gated copy: files and console need a key, then read with a pasted one")
def gated(page, ctx):
    open_page(page, GATED_SLUG)
    expect(page.locator("#files-result")).to_be_empty()
    page.get_by_role("button", name="List the files with the chosen key").click()
    expect(page.locator("#files-missing")).to_have_text("To list the files, choose or paste a read key under Download above.")
    page.fill("#pasted-key", READ_KEY)
    page.get_by_role("button", name="Get the files' links").click()
    expect(page.locator("#files-range")).to_have_text("Files 1–25 of 32")
    expect(page.locator("#download-result")).to_contain_text("32 files")
    page.get_by_role("button", name="Open the SQL console").click()
    status = run(page, "SELECT count(*) AS n FROM data WHERE year = 2023")
    assert status.startswith("1 row"), status
    assert result_rows(page) == [[str(10 * ROWS)]], result_rows(page)


@step("on a 390 px phone: nothing wider than the screen")
def phone(page, ctx):
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        open_page(page, SLUG)
        expect(page.locator("#files-range")).to_have_text("Files 1–25 of 32")
        expect(page.locator("#rows-range")).to_contain_text("in train")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.locator(".files-section").screenshot(path=f"{OUT}/dataset-many-files-phone.png")
    finally:
        page.set_viewport_size({"width": 1200, "height": 900})


@step("only the site and the data bucket were asked for anything")
def origins(page, ctx):
    seen = {origin(r.url) for r in ctx["all"] if not r.url.startswith(("blob:", "data:"))}
    assert seen <= {BASE, S3}, seen


def main():
    failed = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        errors = []
        ctx = {"responses": [], "all": []}
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "Failed to load resource" not in m.text else None)
        page.on("request", lambda r: ctx["all"].append(r))
        page.on("response", lambda r: ctx["responses"].append(r))
        for i, (name, fn) in enumerate(steps, 1):
            try:
                fn(page, ctx)
                print(f"ok   {i:2} {name}")
            except Exception:  # noqa: BLE001 - every failure is reported with its screenshot
                shot = f"{OUT}/failure-many-{i:02}.png"
                page.screenshot(path=shot, full_page=True)
                print(f"FAIL {i:2} {name} (screenshot {shot})\n{traceback.format_exc()}")
                failed.append(name)
        if errors:
            print("errors in the pages' console:\n  " + "\n  ".join(errors))
            failed.append("console errors")
        browser.close()
    print(f"{len(steps) - len([f for f in failed if f != 'console errors'])} of {len(steps)} steps passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
