#!/usr/bin/env python3
"""The dataset page's SQL console in headless Chromium (Debian's), driven by Playwright, against
the local stack with the data bucket's CORS rule in front of s3s-fs (tests/tests/console.rs
starts it and runs this file).

    python tests/browser/console.py BASE_URL OUT_DIR

SLUG names a keyless dataset of several row groups (FILE_SIZE bytes), GATED_SLUG a dataset that
needs a key and READ_KEY a key that reads it. The page's first load fetches nothing of the
console; opened, it loads DuckDB from this site and runs its default query; queries with count,
avg and a WHERE; a selective query fetches a fraction of the file, in ranges; the result is
exported as CSV and Parquet; on a gated dataset it says what is missing, then reads with a
pasted key. No request leaves the site and the data bucket, and no page logs an error.

What the console showed and exported is written to OUT_DIR/report.json, which
tests/browser/console_check.py compares with DuckDB in Python on the same file.
"""

import json
import os
import re
import sys
import traceback
from urllib.parse import urlsplit

from playwright.sync_api import expect, sync_playwright

BASE, OUT = sys.argv[1].rstrip("/"), sys.argv[2]
SLUG, FILE_SIZE = os.environ["SLUG"], int(os.environ["FILE_SIZE"])
GATED_SLUG, READ_KEY = os.environ["GATED_SLUG"], os.environ["READ_KEY"]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# What the console loads when opened, and only then.
CONSOLE_FILES = ("/console.js", "/console-worker.js", "/apache-arrow.js", "/vendor/")
os.makedirs(OUT, exist_ok=True)
steps = []
report = {"answers": [], "exports": {}, "selective": {}}


def step(name):
    def wrap(fn):
        steps.append((name, fn))
        return fn
    return wrap


def origin(url):
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def open_console(page, slug):
    page.goto(f"{BASE}/dataset.html?slug={slug}")
    expect(page.locator("#download")).to_be_visible()
    page.get_by_role("button", name="Open the SQL console").click()
    expect(page.locator("#console-sql")).to_be_visible()


def run(page, sql):
    """Runs `sql` in the console; returns the status sentence once it is done."""
    page.fill("#console-sql", sql)
    page.get_by_role("button", name="Run", exact=True).click()
    status = page.locator("#console-status")
    expect(status).not_to_have_text(re.compile(r"^(Running|Loading DuckDB)"), timeout=120_000)
    return status.inner_text()


def shown(page):
    """The result table as the console shows it: column names, rows (None for a NULL, shown as
    NULL in grey; a folded long value's whole text)."""
    return page.evaluate("""() => {
        const table = document.getElementById("console-table");
        const columns = [...table.querySelectorAll("thead th")].map((th) => th.textContent);
        const rows = [...table.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map((td) => {
            if (td.hasAttribute("data-null")) return td.textContent === "NULL" ? null : `not NULL: ${td.textContent}`;
            return (td.querySelector(".value") ?? td).textContent;
        }));
        return { columns, rows };
    }""")


def answer(page, sql):
    status = run(page, sql)
    assert "row" in status and "error" not in status.lower(), status
    table = shown(page)
    report["answers"].append({"sql": sql, **table})
    return table


@step("first load: the dataset page fetches nothing of the console")
def first_load(page, ctx):
    ctx["requests"].clear()
    response = page.goto(f"{BASE}/dataset.html?slug={SLUG}")
    csp = response.headers["content-security-policy"]
    assert "'wasm-unsafe-eval'" in csp and "worker-src 'self'" in csp, csp
    assert ctx["s3"] in csp, (ctx["s3"], csp)
    expect(page.get_by_role("button", name="Open the SQL console")).to_be_visible()
    expect(page.locator("#download")).to_be_visible()
    page.wait_for_load_state("networkidle")
    fetched = [r.url for r in ctx["requests"] if any(f in urlsplit(r.url).path for f in CONSOLE_FILES)]
    assert not fetched, fetched
    assert not any(origin(r.url) == ctx["s3"] for r in ctx["requests"]), "the data was read on load"
    # Another page's policy is the site's strict one.
    other = page.request.get(f"{BASE}/")
    assert "wasm" not in other.headers["content-security-policy"]


@step("open the console: DuckDB from this site, the default query shown as a table")
def default_query(page, ctx):
    ctx["requests"].clear()
    page.get_by_role("button", name="Open the SQL console").click()
    expect(page.locator("#console-sql")).to_have_value("SELECT * FROM data LIMIT 10")
    expect(page.locator("#console-status")).to_have_text("DuckDB is ready.", timeout=120_000)
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#console-status")).to_contain_text("10 rows", timeout=120_000)
    table = shown(page)
    assert table["columns"] == ["id", "station", "reading", "measured_at", "note"], table["columns"]
    assert len(table["rows"]) == 10
    paths = {urlsplit(r.url).path: r for r in ctx["requests"] if origin(r.url) == BASE}
    for path in ("/console.js", "/apache-arrow.js", "/console-worker.js", "/vendor/duckdb/duckdb-browser.mjs",
                 "/vendor/duckdb/duckdb-browser-eh.worker.js", "/vendor/duckdb/duckdb-eh.wasm",
                 "/vendor/apache-arrow/Arrow.esnext.min.js"):
        assert path in paths, (path, sorted(paths))
    wasm = paths["/vendor/duckdb/duckdb-eh.wasm"].response()
    assert wasm.headers["content-type"] == "application/wasm", wasm.headers
    page.screenshot(path=f"{OUT}/console.png", full_page=False)


@step("queries: count, avg and a WHERE, as DuckDB answers them in Python")
def queries(page, ctx):
    answer(page, "SELECT count(*) AS n, avg(reading) AS mean, min(measured_at) AS first FROM data WHERE station = 'north'")
    answer(page, "SELECT station, count(*) AS n, avg(reading) AS mean, count(reading) AS readings "
                 "FROM data WHERE reading > 50 AND id % 7 <> 0 GROUP BY station ORDER BY station")
    table = answer(page, "SELECT id, reading, note FROM data WHERE id BETWEEN 41 AND 45 ORDER BY id")
    assert [row[0] for row in table["rows"]] == ["41", "42", "43", "44", "45"], table
    # A NULL shows as NULL.
    table = answer(page, "SELECT id, reading FROM data WHERE id IN (0, 97) ORDER BY id")
    assert table["rows"] == [["0", None], ["97", None]], table


@step("a selective query reads a fraction of the file, in ranges")
def selective(page, ctx):
    # A fresh console, so that the file's footer is read again within what is counted.
    open_console(page, SLUG)
    ctx["responses"].clear()
    sql = "SELECT count(*) AS n, avg(reading) AS mean FROM data WHERE id < 5000"
    status = run(page, sql)
    report["answers"].append({"sql": sql, **shown(page)})
    s3 = [r for r in ctx["responses"] if origin(r.url) == ctx["s3"]]
    assert s3, "no request reached the data bucket"
    statuses = sorted({r.status for r in s3})
    fetched = sum(int(r.headers.get("content-length", "0")) for r in s3 if r.request.method == "GET")
    ranges = [r.request.headers.get("range") for r in s3 if r.request.method == "GET"]
    report["selective"] = {"sql": sql, "bytes": fetched, "file_size": FILE_SIZE, "requests": len(s3),
                           "statuses": statuses, "ranges": ranges}
    print(f"     selective query: {fetched:,} of {FILE_SIZE:,} bytes ({100 * fetched / FILE_SIZE:.1f}%) "
          f"in {len(s3)} requests {statuses}")
    assert statuses == [206], statuses  # ranges only: no whole-file GET, no refused HEAD
    assert all(r and r.startswith("bytes=") for r in ranges), ranges
    assert fetched < FILE_SIZE / 2, (fetched, FILE_SIZE)
    # The console says what it read: the network log's bytes and requests.
    said = re.search(r"Read [^(]*\(([\d,]+) bytes\) of the data in ([\d,]+) requests?\.$", status)
    assert said, status
    assert (int(said.group(1).replace(",", "")), int(said.group(2).replace(",", ""))) == (fetched, len(s3)), (status, fetched, len(s3))


@step("exports: the result as CSV and as Parquet, named after the dataset")
def exports(page, ctx):
    sql = "SELECT id, station, reading, measured_at FROM data WHERE id % 1000 = 3 ORDER BY id"
    status = run(page, sql)
    assert status.startswith("100 rows"), status
    files = {}
    for kind in ("CSV", "Parquet"):
        with page.expect_download() as download:
            page.get_by_role("button", name=f"Download {kind}").click()
        name = download.value.suggested_filename
        assert name == f"{SLUG}-query.{kind.lower()}", name
        path = os.path.join(OUT, name)
        download.value.save_as(path)
        files[kind.lower()] = path
    expect(page.locator("#console-status")).to_have_text(f"Saved {SLUG}-query.parquet.")
    with open(files["csv"]) as f:
        assert f.readline().strip() == "id,station,reading,measured_at"
    with open(files["parquet"], "rb") as f:
        assert f.read(4) == b"PAR1"
    report["exports"] = {"sql": sql, **files}


@step("a gated dataset: the console says what is missing, then reads with a pasted key")
def gated(page, ctx):
    open_console(page, GATED_SLUG)
    status = run(page, "SELECT count(*) AS n FROM data")
    assert status == "Paste an API key in the Download section above, or choose another option there.", status
    expect(page.locator("#console-csv")).to_be_disabled()
    page.fill("#pasted-key", "dcat_not-a-key-anyone-has")
    status = run(page, "SELECT count(*) AS n FROM data")
    assert status == "The console cannot read the data: That API key was refused: it is mistyped, expired or revoked.", status
    page.fill("#pasted-key", READ_KEY)
    rows = page.evaluate("() => document.querySelector('dl.facts').textContent")
    count = re.search(r"Rows × columns([\d,]+) ×", rows).group(1).replace(",", "")
    status = run(page, "SELECT count(*) AS n FROM data")
    assert status.startswith("1 row"), status
    assert shown(page)["rows"] == [[count]], (shown(page), count)


@step("on a 390 px phone: the result is a table like the data table's, long values folded, one line a row")
def phone(page, ctx):
    open_console(page, SLUG)
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        long_value = "x" * 1500
        table = answer(page, "SELECT id, station, repeat('x', 1500) AS long_value, note FROM data WHERE id IN (0, 1, 2) ORDER BY id")
        assert [row[2] for row in table["rows"]] == [long_value] * 3, [len(row[2] or "") for row in table["rows"]]
        result = page.locator("#console-table")
        # The data table's look: a header row, not a card per row; the long value folded.
        assert result.evaluate("(t) => getComputedStyle(t.querySelector('thead')).display") == "table-header-group"
        assert result.evaluate("(t) => t.classList.contains('rows')")
        folded = result.locator("tbody tr").first.locator("td").nth(2).locator("details")
        expect(folded).to_have_count(1)
        assert folded.evaluate("(d) => !d.open")
        tallest = page.evaluate("""() => Math.max(...[...document.querySelectorAll('#console-table tbody tr')]
            .map((tr) => tr.getBoundingClientRect().height))""")
        assert tallest <= 40, tallest
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.locator("#console").screenshot(path=f"{OUT}/console-phone.png")
        folded.locator("summary").click()
        expect(folded.locator(".value")).to_have_text(long_value)
    finally:
        page.set_viewport_size({"width": 1200, "height": 900})


@step("only the site and the data bucket were asked for anything")
def origins(page, ctx):
    seen = {origin(r.url) for r in ctx["all"]} - {"data:", "blob:"}
    seen = {o for o in seen if not o.startswith(("blob:", "data:"))}
    assert seen <= {BASE, ctx["s3"]}, seen


def main():
    failed = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1200, "height": 900}, accept_downloads=True)
        page = context.new_page()
        errors = []
        ctx = {"requests": [], "responses": [], "all": [], "s3": os.environ["S3_ORIGIN"]}
        page.on("pageerror", lambda e: errors.append(str(e)))
        # A refused call is answered, and the console says so: the browser's own line for it
        # is not the page's error.
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "Failed to load resource" not in m.text else None)
        page.on("request", lambda r: (ctx["requests"].append(r), ctx["all"].append(r)))
        page.on("response", lambda r: ctx["responses"].append(r))
        for i, (name, fn) in enumerate(steps, 1):
            try:
                fn(page, ctx)
                print(f"ok   {i:2} {name}")
            except Exception:  # noqa: BLE001 - every failure is reported with its screenshot
                shot = f"{OUT}/failure-{i:02}.png"
                page.screenshot(path=shot, full_page=True)
                print(f"FAIL {i:2} {name} (screenshot {shot})\n{traceback.format_exc()}")
                failed.append(name)
        if errors:
            print("errors in the pages' console:\n  " + "\n  ".join(errors))
            failed.append("console errors")
        browser.close()
    with open(os.path.join(OUT, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    print(f"{len(steps) - len([f for f in failed if f != 'console errors'])} of {len(steps)} steps passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
