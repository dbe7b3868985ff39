#!/usr/bin/env python3
"""The web site end to end in headless Chromium (Debian's), driven by Playwright, against the
local stack (tests/tests/site.rs starts it and runs this file).

    python tests/browser/site.py BASE_URL SHOTS_DIR

Browse, filter, search, open a dataset (its charts drawn), download a keyless dataset without a
key, read the schema.org JSON-LD of dataset pages and of the catalog, sign up, confirm, sign in,
create a key (shown once), download a gated dataset with it (the file's SHA-256 equals the
page's), ask for access to a dataset shared by approval, have an
operator (OPERATOR_EMAIL, OPERATOR_PASSWORD) approve it on the Access requests page with the
keyboard, download, have it revoked and be refused; revoke the key, and see the download refused
with a sentence.
Then keyboard navigation on every page. Screenshots: SHOTS_DIR/catalog.png and dataset.png
(the README's), and SHOTS_DIR/failure-*.png for a failed step. Exits non-zero on any failure.
"""

import hashlib
import json
import os
import re
import sys
import traceback
from datetime import date, datetime, timedelta
from pathlib import Path
from urllib.parse import urljoin, urlparse

from playwright.sync_api import expect, sync_playwright

BASE, SHOTS = sys.argv[1].rstrip("/"), sys.argv[2]
EMAIL, PASSWORD = f"ada-{os.getpid()}@example.com", "Browser-test-password-1"
# An account in the operators' group (tests/tests/site.rs makes it).
OPERATOR_EMAIL, OPERATOR_PASSWORD = os.environ["OPERATOR_EMAIL"], os.environ["OPERATOR_PASSWORD"]
# An account `catalog-admin accounts invite` made, with the temporary password its email holds.
INVITED_EMAIL = os.environ["INVITED_EMAIL"]
INVITED_TEMPORARY_PASSWORD = os.environ["INVITED_TEMPORARY_PASSWORD"]
REFUSED_WITHOUT_GRANT = (
    "This dataset is shared by approval, and your account has not been granted access to it. "
    "Ask for access in the Access section of this page."
)
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
os.makedirs(SHOTS, exist_ok=True)
steps = []


def step(name):
    def wrap(fn):
        steps.append((name, fn))
        return fn
    return wrap


def settled(page):
    """Waits for the list the last search, filter or page asked for (the page marks the list
    busy while it loads)."""
    expect(page.locator("#datasets")).not_to_have_attribute("aria-busy", "true")


def sha256_of(page, url):
    response = page.request.get(url)
    assert response.ok, f"download answered {response.status}"
    return hashlib.sha256(response.body()).hexdigest()


def column_card(page, column):
    """A column's card, found by its accessible name: the column's name and dtype."""
    return page.get_by_role("region", name=f"{column['name']} {column['dtype']}", exact=True)


def cell(card, name):
    """A statistic's value in a column card."""
    return card.locator(f"tr:has(th:text-is('{name}')) td")


def metadata(page, slug):
    response = page.request.get(f"{BASE}/api/v1/datasets/{slug}")
    assert response.ok, f"metadata of {slug}: {response.status}"
    return response.json()


def edge_label(edge):
    """A histogram edge as the page writes it: timestamps to the minute."""
    return edge[:16].replace("T", " ") if isinstance(edge, str) and "T" in edge else edge


def stray_text(page):
    """Text nodes in the page's main part that are only null, undefined or NaN, and any
    "undefined" or "NaN" in its text: what a value the page forgot to check leaves. A float
    column's NaN in the data table (a cell marked data-float) is the file's value, not one, and
    so is a null cell's grey `null` (marked data-null)."""
    return page.evaluate("""() => {
        const found = [];
        const walk = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
        while (walk.nextNode()) {
            if (walk.currentNode.parentElement.closest('[data-float], [data-null]')) continue;
            if (/^\\s*(null|undefined|NaN)+\\s*$/.test(walk.currentNode.data)) found.push(walk.currentNode.data.trim());
        }
        // A float column's NaN in the data table is the file's value, marked as such.
        const main = document.querySelector('main');
        let marked = [...main.querySelectorAll('[data-float="NaN"]')].length;
        for (const word of main.innerText.match(/\\b(undefined|NaN)\\b/g) ?? []) {
            if (word === 'NaN' && marked > 0) { marked -= 1; continue; }
            found.push(word);
        }
        return found;
    }""")


def wider_than(page, width):
    """The page's width and the elements that reach past `width` px (for the failure's message)."""
    return page.evaluate("""(width) => ({
        width: document.documentElement.scrollWidth,
        past: [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > width + 0.5)
            .slice(0, 8).map((e) => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}.${e.className.baseVal ?? e.className}: ${Math.round(e.getBoundingClientRect().right)} px`),
    })""", width)


@step("browse: the first page of the catalog, with its total")
def browse(page, ctx):
    page.goto(BASE + "/")
    expect(page.locator("#status")).to_contain_text(re.compile(r"\d+ datasets · page 1 of \d+"))
    items = page.locator("ul.datasets > li")
    expect(items).to_have_count(12)
    # Each card shows its 30-day downloads, as the API counts them.
    answer = page.request.get(BASE + "/api/v1/datasets?page=1&page_size=12").json()
    def words(n):
        return "No downloads in 30 days" if n == 0 else f"{n:,} download{'' if n == 1 else 's'} (30 days)"
    shown = page.locator("ul.datasets > li .meta .downloads").all_inner_texts()
    assert shown == [words(i["downloads"]) for i in answer["items"]], shown
    total = int(re.search(r"(\d+) datasets", page.locator("#status").inner_text()).group(1))
    assert total >= 30, total
    expect(page.locator("ul.datasets .badge").first).to_be_visible()
    page.screenshot(path=f"{SHOTS}/catalog.png")
    page.get_by_role("link", name="Next →").click()
    settled(page)
    expect(page.locator("#status")).to_contain_text("page 2 of")
    assert "page=2" in page.url


@step("filter: a category, then a tag")
def filter_(page, ctx):
    page.goto(BASE + "/")
    settled(page)
    page.fill("#category", "environment")
    page.get_by_role("button", name="Search").click()
    settled(page)
    expect(page.locator("#status")).to_contain_text("page 1 of")
    assert "category=environment" in page.url
    for text in page.locator("ul.datasets .meta").all_inner_texts():
        assert "Category: environment" in text, text
    page.goto(BASE + "/?tag=birds")
    expect(page.locator("ul.datasets > li")).to_have_count(1)
    expect(page.locator("ul.datasets h2")).to_have_text(re.compile("Bird Sightings"))


@step("search: words find the dataset")
def search(page, ctx):
    page.goto(BASE + "/")
    settled(page)
    page.fill("#q", "air quality")
    page.keyboard.press("Enter")
    settled(page)
    expect(page.locator("ul.datasets h2", has_text="Air Quality (Hourly)")).to_have_count(1)
    for text in page.locator("ul.datasets > li").all_inner_texts():
        assert "air" in text.lower() and "quality" in text.lower(), text
    # A dataset shared by approval is badged as such in the list and on its page.
    page.fill("#q", "clinical trial registry")
    page.keyboard.press("Enter")
    settled(page)
    card = page.locator("ul.datasets > li", has_text="Clinical Trial Registry")
    expect(card.locator(".badge")).to_have_text("Approval needed")
    card.get_by_role("link", name=re.compile("Clinical Trial Registry")).click()
    expect(page.locator("h1 .badge")).to_have_text("Approval needed")
    page.goto(BASE + "/")
    settled(page)
    page.fill("#q", "no such words anywhere")
    page.keyboard.press("Enter")
    settled(page)
    expect(page.locator("#status")).to_have_text("No dataset matches. Try fewer words or filters.")


@step("open a dataset: its facts and a chart per column")
def dataset(page, ctx):
    page.goto(BASE + "/?q=air%20quality")
    page.get_by_role("link", name="Air Quality (Hourly)").click()
    expect(page.locator("h1")).to_contain_text("Air Quality (Hourly)")
    meta = page.request.get(BASE + "/api/v1/datasets/air-quality-hourly").json()
    expect(page.locator("#sha256")).to_have_text(meta["sha256"])
    n = meta["downloads"]
    expect(page.locator("dl.facts dt", has_text="Downloads (30 days)")).to_have_count(1)
    expect(page.locator("#download-count")).to_have_text(f"{n:,}" if n else "None")
    columns = page.locator("section.column")
    expect(columns).to_have_count(meta["column_count"])
    for column in meta["schema"]:
        card = column_card(page, column)
        if column.get("histogram"):
            expect(card.locator("svg.chart rect.bar")).to_have_count(len(column["histogram"]["counts"]))
            expect(card.locator("svg.chart")).to_have_attribute("aria-label", re.compile("^Histogram of"))
        elif column["top_values"]:
            expect(card.locator("svg.chart rect.bar")).to_have_count(len(column["top_values"]))
    drawn = page.locator("svg.chart")
    assert drawn.count() >= 1
    # A dataset published through catalog-admin: histograms for its numbers and timestamps.
    page.goto(BASE + "/dataset.html?slug=weather-stations")
    meta = page.request.get(BASE + "/api/v1/datasets/weather-stations").json()
    with_histogram = [c for c in meta["schema"] if c.get("histogram")]
    assert len(with_histogram) >= 3, [c["name"] for c in meta["schema"]]
    expect(page.locator("svg.chart[aria-label^='Histogram of']")).to_have_count(len(with_histogram))
    for column in with_histogram:
        card = column_card(page, column)
        expect(card.locator("svg.chart rect.bar")).to_have_count(len(column["histogram"]["counts"]))
    page.locator("section.column").nth(1).scroll_into_view_if_needed()
    page.screenshot(path=f"{SHOTS}/dataset.png", full_page=False)


@step("download a keyless dataset without a key")
def keyless(page, ctx):
    page.goto(BASE + "/dataset.html?slug=city-bikes")
    expect(page.get_by_label(re.compile("^No key"))).to_be_checked()
    page.get_by_role("button", name="Get a download link").click()
    link = page.locator("#download-link")
    expect(link).to_be_visible()
    expect(page.locator("#download-result")).to_contain_text("It expires at")
    assert sha256_of(page, link.get_attribute("href")) == page.locator("#sha256").inner_text()
    for name in ("curl", "pandas", "DuckDB"):
        expect(page.get_by_role("button", name=f"Copy {name}")).to_be_visible()


@step("the data table: a keyless dataset's rows as pyarrow reads them, types in the headers, paging, long cells that expand")
def data_table(page, ctx):
    page.goto(BASE + "/dataset.html?slug=city-bikes")
    table = page.locator("#rows-table")
    expect(table).to_be_visible()
    expect(page.locator("#rows-range")).to_contain_text("Rows 1–100 of 1,200")
    file = parquet_of(page, "city-bikes")
    check_rows(page, file, 0)
    page.locator("#rows-next").click()
    expect(page.locator("#rows-range")).to_contain_text("Rows 101–200 of 1,200")
    check_rows(page, file, 100)
    page.locator("#rows-previous").click()
    expect(page.locator("#rows-range")).to_contain_text("Rows 1–100")
    # The pager again below the rows: its Next goes on, and back to the table's top.
    below = page.get_by_role("navigation", name="Rows, below the table")
    expect(below).to_contain_text("Rows 1–100 of 1,200")
    below.get_by_role("button", name="Next").click()
    expect(page.locator("#rows-range")).to_contain_text("Rows 101–200 of 1,200")
    expect(page.locator(".rows-section .table-box")).to_be_focused()
    assert page.locator("#rows-table").bounding_box()["y"] < 900, "back at the table's top"
    page.locator("#rows-previous").click()
    expect(page.locator("#rows-range")).to_contain_text("Rows 1–100")
    # A gated dataset without a key: a sentence says what is missing, and no table.
    page.goto(BASE + "/dataset.html?slug=air-quality-hourly")
    page.get_by_role("button", name="Show the rows with the chosen key").click()
    expect(page.locator("#rows-missing")).to_have_text("To see rows, choose or paste a read key under Download above.")
    expect(page.locator("#rows-table")).to_have_count(0)
    page.fill("#pasted-key", "dcat_" + "0" * 64)
    page.get_by_role("button", name="Show the rows with the chosen key").click()
    expect(page.locator("#rows-result").get_by_role("alert")).to_have_text(
        "That API key was refused: it is mistyped, expired or revoked.")


class Held:
    """Holds the first request `matches` (a URL predicate) picks, until `release()`: a slow
    answer, made to arrive exactly when the test says (Playwright's route interception)."""

    def __init__(self, page, matches):
        self.page, self.matches, self.routes = page, matches, []
        page.route(matches, self._route)

    def _route(self, route):
        if self.routes:
            route.fallback()
        else:
            self.routes.append(route)

    def wait(self):
        """Waits until the page has made the held request."""
        for _ in range(200):
            if self.routes:
                return
            self.page.wait_for_timeout(50)
        raise AssertionError("the page made no request to hold")

    def release(self):
        """Lets the held request go on (its answer then arrives) and holds no other."""
        self.wait()
        self.routes[0].continue_()
        self.page.unroute(self.matches, self._route)


@step("exact values: integers past 2^53 digit for digit, nulls in grey unlike the strings '–' and 'null', long cells folded")
def exact_values(page, ctx):
    page.goto(BASE + "/dataset.html?slug=edge-values")
    expect(page.locator("#rows-range")).to_contain_text("Rows 1–6 of 6")
    file = parquet_of(page, "edge-values")
    check_rows(page, file, 0)
    cells = page.locator("#rows-table tbody tr")
    # (check_rows compares every cell; these say what it compared.)
    big = [cells.nth(i).locator("td").nth(1).inner_text() for i in range(3)]
    assert big == ["9007199254740993", "-9223372036854775808", "9223372036854775807"], big
    expect(cells.nth(0).locator("td").nth(2)).to_have_text("18446744073709551615")
    expect(cells.nth(0).locator("td").nth(4).locator(".value")).to_have_text("[9007199254740993,-9223372036854775808]")
    # The column "word": "–", "null", a null. The null is the word null in grey and italic,
    # named as no value; the strings are text like any other.
    word = [cells.nth(i).locator("td").nth(3) for i in range(3)]
    expect(word[0]).to_have_text("–")
    expect(word[1]).to_have_text("null")
    expect(word[2]).to_have_text("null")
    style = "(e) => { const s = getComputedStyle(e.querySelector('span') ?? e); return [s.color, s.fontStyle]; }"
    null_style, dash_style, string_style = (w.evaluate(style) for w in (word[2], word[0], word[1]))
    assert word[2].get_attribute("data-null") == "" and word[0].get_attribute("data-null") is None
    assert word[1].get_attribute("data-null") is None
    assert null_style == ["rgb(87, 96, 106)", "italic"], null_style  # --muted
    assert dash_style == string_style == ["rgb(27, 31, 36)", "normal"], (dash_style, string_style)
    # The statistics' "no value" is a dash (a string column has no mean), unlike a null cell.
    column = next(c for c in metadata(page, "edge-values")["schema"] if c["name"] == "word")
    assert column["mean"] is None, column
    expect(cell(column_card(page, column), "Mean")).to_have_text("–")
    # A long cell shows its start on one line; opened, the whole value.
    folded = cells.nth(0).locator("td").nth(5).locator("details")
    expect(folded).to_have_count(1)
    assert folded.evaluate("(d) => !d.open")
    folded.locator("summary").click()
    expect(folded.locator(".value")).to_have_text(file.column("note")[0].as_py())


@step("the data table on a 390 px phone: several readable columns, one-line rows, a header that stays, the pager below the rows")
def data_table_phone(page, ctx):
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        for slug, rows in (("city-bikes", 100), ("edge-values", 6)):
            page.goto(BASE + f"/dataset.html?slug={slug}")
            expect(page.locator("#rows-table tbody tr")).to_have_count(rows)
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            box = page.locator(".rows-section .table-box")
            assert box.evaluate("(e) => e.scrollWidth > e.clientWidth"), "the table scrolls in its box"
            sizes = page.evaluate("""() => {
                const box = document.querySelector('.rows-section .table-box').getBoundingClientRect();
                const heads = [...document.querySelectorAll('#rows-table thead th')].map((th) => th.getBoundingClientRect());
                const line = parseFloat(getComputedStyle(document.querySelector('#rows-table td')).lineHeight);
                return {
                    widths: heads.map((r) => Math.round(r.width)),
                    inView: heads.filter((r) => r.right <= box.right + 0.5).length,
                    tallest: Math.max(...[...document.querySelectorAll('#rows-table tbody tr')].map((tr) => tr.getBoundingClientRect().height)),
                    line,
                };
            }""")
            # Each column narrow enough to read whole beside the row number (the box is 350 px
            # wide); the row number and at least two columns on the first screen; no row taller
            # than one line of text (and its padding).
            assert max(sizes["widths"]) <= 300, (slug, sizes)
            assert sizes["inView"] >= 3, (slug, sizes)
            assert sizes["tallest"] <= sizes["line"] + 16, (slug, sizes)
            # Scrolled down inside its box, the header row stays at the box's top.
            box.evaluate("(e) => { e.scrollTop = e.scrollHeight; }")
            head = page.locator("#rows-table thead th").first.bounding_box()
            assert abs(head["y"] - box.bounding_box()["y"]) <= 2, (slug, head, box.bounding_box())
            page.locator(".rows-section").screenshot(path=f"{SHOTS}/rows-phone-{slug}.png")
        below = page.get_by_role("navigation", name="Rows, below the table")
        assert below.bounding_box()["y"] > page.locator(".rows-section .table-box").bounding_box()["y"]
    finally:
        page.set_viewport_size({"width": 1200, "height": 900})


@step("late answers: a slow page of rows, or a slow search, never replaces the one asked for after it")
def late_answers(page, ctx):
    # The data table: Next (held), then "Show the rows again" (answered): the first rows stay.
    page.goto(BASE + "/dataset.html?slug=city-bikes")
    expect(page.locator("#rows-range")).to_contain_text("Rows 1–100 of 1,200")
    held = Held(page, lambda url: "/rows?" in url and "offset=100" in url)
    page.locator("#rows-next").click()
    held.wait()
    page.get_by_role("button", name="Show the rows again").click()
    expect(page.locator("#rows-range")).to_contain_text("Rows 1–100 of 1,200")
    with page.expect_response(lambda r: "offset=100" in r.url):
        held.release()
    page.wait_for_timeout(300)
    expect(page.locator("#rows-range")).to_contain_text("Rows 1–100 of 1,200")
    # The catalog: a search (held), then another (answered): the second one's list stays.
    page.goto(BASE + "/")
    settled(page)
    held = Held(page, lambda url: "/api/v1/datasets?" in url and "q=air" in url)
    page.fill("#q", "air quality")
    page.keyboard.press("Enter")
    held.wait()
    page.fill("#q", "birds")
    page.keyboard.press("Enter")
    expect(page.locator("ul.datasets > li")).to_have_count(1)
    expect(page.locator("ul.datasets h2")).to_have_text(re.compile("Bird Sightings"))
    with page.expect_response(lambda r: "q=air" in r.url):
        held.release()
    page.wait_for_timeout(300)
    expect(page.locator("ul.datasets > li")).to_have_count(1)
    expect(page.locator("ul.datasets h2")).to_have_text(re.compile("Bird Sightings"))
    settled(page)


def parquet_of(page, slug):
    """The dataset's file, as the data endpoint serves it, read by pyarrow."""
    import io

    import pyarrow.parquet as pq

    link = page.request.get(f"{BASE}/api/v1/datasets/{slug}/data").json()
    return pq.read_table(io.BytesIO(page.request.get(link["url"]).body()))


def shown_rows(page):
    """The data table as the page shows it: each column's name and type, and each cell's text
    (a folded cell's whole value; 'null' for a null cell)."""
    return page.evaluate("""() => ({
        head: [...document.querySelectorAll('#rows-table thead th')].slice(1)
            .map((th) => [th.firstChild.data, th.querySelector('.type').textContent]),
        rows: [...document.querySelectorAll('#rows-table tbody tr')].map((tr) => [...tr.querySelectorAll('td')]
            .map((td) => td.hasAttribute('data-null') ? null : (td.querySelector('.value') ?? td).textContent)),
    })""")


def check_rows(page, file, at):
    """Every cell the data table shows against pyarrow's reading of `file`, from row `at`."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import rows_reference

    got = shown_rows(page)
    want_head = [[f.name, rows_reference.type_name(f.type)] for f in file.schema]
    assert got["head"] == want_head, f"{got['head']} != {want_head}"
    part = file.slice(at, 100)
    assert len(got["rows"]) == part.num_rows, (len(got["rows"]), part.num_rows)
    raws = {f.name: rows_reference.integers(part.column(f.name)) for f in file.schema
            if pa_temporal(f.type)}
    for i, cells in enumerate(got["rows"]):
        for j, field in enumerate(file.schema):
            value = part.column(field.name)[i].as_py()
            raw = raws.get(field.name, [None] * part.num_rows)[i]
            want, _ = rows_reference.expected(value, field.type, raw)
            assert same_cell(cells[j], want), f"row {at + i} {field.name}: {cells[j]!r} != {want!r}"


def pa_temporal(typ):
    import pyarrow as pa
    return pa.types.is_timestamp(typ) or pa.types.is_time(typ) or pa.types.is_duration(typ)


def same_cell(text, want):
    """A cell as the page writes it (strings as they are, the rest as JSON; None for a null
    cell) against the reference: integers digit for digit, nested ones too (Python's json
    reads them exactly)."""
    if want is None or text is None:
        return want is None and text is None
    if isinstance(want, str):
        return text == want
    if isinstance(want, bool):
        return text == ("true" if want else "false")
    if isinstance(want, int):
        return text == str(want)
    if isinstance(want, float):
        return float(text) == want
    return json.loads(text) == want


@step("no stray text: no null, undefined or NaN on the catalog's first, last and empty pages, nor on dataset pages")
def no_stray_text(page, ctx):
    page.goto(BASE + "/")
    settled(page)
    expect(page.locator("#pages")).to_have_text("Next →")
    assert stray_text(page) == [], stray_text(page)
    last = int(re.search(r"page 1 of (\d+)", page.locator("#status").inner_text()).group(1))
    page.goto(BASE + f"/?page={last}")
    settled(page)
    expect(page.locator("#pages")).to_have_text("← Previous")
    assert stray_text(page) == [], stray_text(page)
    page.goto(BASE + "/?q=no%20such%20words%20anywhere")
    settled(page)
    expect(page.locator("#status")).to_have_text("No dataset matches. Try fewer words or filters.")
    expect(page.locator("#pages")).to_have_text("")
    assert stray_text(page) == [], stray_text(page)
    # A dataset without a description, and datasets that are not shared by approval.
    for slug in ("bird-sightings", "city-bikes", "air-quality-hourly", "museum-collection"):
        page.goto(BASE + f"/dataset.html?slug={slug}")
        expect(page.get_by_role("button", name="Get a download link")).to_be_visible()
        assert stray_text(page) == [], (slug, stray_text(page))


@step("the dataset page shows the dataset's id")
def dataset_id(page, ctx):
    meta = metadata(page, "city-bikes")
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", meta["id"]), meta["id"]
    page.goto(BASE + "/dataset.html?slug=city-bikes")
    expect(page.locator("#dataset-id")).to_have_text(meta["id"])
    expect(page.locator("dl.facts dt", has_text="ID")).to_have_count(1)


# schema.org JSON-LD: what each property may be, by type (a misspelt or unknown term fails).
SCHEMA_TERMS = {
    "Dataset": {"name", "alternateName", "description", "url", "identifier", "version", "creator",
                "keywords", "license", "isAccessibleForFree", "conditionsOfAccess", "dateCreated",
                "dateModified", "datePublished", "temporalCoverage", "variableMeasured",
                "distribution", "isPartOf", "includedInDataCatalog"},
    "DataCatalog": {"name", "description", "url", "dataset"},
    "Organization": {"name", "url"},
    "PropertyValue": {"name", "description", "minValue", "maxValue"},
    "DataDownload": {"name", "encodingFormat", "contentUrl", "contentSize", "sha256"},
}
HOSTILE_DESCRIPTION = (
    "A description that tries to end its element: </script><script>alert(1)</script> and to "
    "open a comment <!-- in the page's HTML."
)


def well_formed(node, top=True):
    """Compact JSON-LD in schema.org's terms: every object typed with a known type, each of its
    properties one of that type's (no other @-keywords), no null, empty string or empty list (but
    a catalog's list of datasets, empty when the page shows none)."""
    if isinstance(node, list):
        for item in node:
            well_formed(item, top=False)
    elif isinstance(node, dict):
        kind = node.get("@type")
        assert kind in SCHEMA_TERMS, f"an object of type {kind!r}: {node}"
        for key, value in node.items():
            assert key == "@type" or (top and key == "@context") or key in SCHEMA_TERMS[kind], (
                f"{key!r} is not a {kind} property here")
            assert value is not None and value != "" and (value != [] or key == "dataset"), (kind, key, value)
            well_formed(value, top=False)


def json_ld(page, kind):
    """The page's schema.org JSON-LD (one <script type="application/ld+json"> in <head>, which the
    page's module writes), parsed and checked as JSON-LD of `kind`."""
    scripts = page.locator('script[type="application/ld+json"]')
    expect(scripts).to_have_count(1)
    assert page.locator('head > script[type="application/ld+json"]').count() == 1, "not in <head>"
    text = scripts.text_content()
    # Every < escaped (\u003c): no value can end the element or open a comment in it.
    assert "<" not in text, text[:300]
    doc = json.loads(text)
    well_formed(doc)
    assert doc["@context"] == "https://schema.org", doc["@context"]
    assert doc["@type"] == kind, doc["@type"]
    return doc


def license_value(license_):
    """A license as linked.js (and the API's Croissant) gives it: a URL, an SPDX id's page, or the text."""
    text = license_.strip()
    if re.match(r"https?://", text):
        return text
    if len(text) <= 64 and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9.+-]*", text):
        return f"https://spdx.org/licenses/{text}"
    return text


def check_description(text, d):
    """Google's 50 to 5,000 characters: the dataset's own description when it is long enough,
    else that followed by what the metadata says."""
    own = (d.get("description") or "").strip()
    assert 50 <= len(text) <= 5000, (d["slug"], len(text), text)
    if len(own) >= 50:
        assert text == own if len(own) <= 5000 else text.startswith(own[:4000]), (d["slug"], text)
        return
    assert text.startswith(own), (d["slug"], own, text)
    for fact in (d["name"], d["category"], f"{d['row_count']:,} row", f"{d['column_count']:,} column",
                 f"License: {d['license']}."):
        assert fact in text, (d["slug"], fact, text)


def expected_coverage(schema):
    """temporalCoverage as linked.js derives it: the first date or timestamp column with a
    histogram, from its first edge to the latest value its last bin can hold."""
    for column in schema:
        edges = (column.get("histogram") or {}).get("bin_edges") or []
        if not re.match(r"(date|timestamp)", column["dtype"]) or len(edges) < 2 or not all(isinstance(e, str) for e in edges):
            continue
        last = edges[-1]
        if re.fullmatch(r"\d{4}-\d\d-\d\d", last):
            return f"{edges[0]}/{(date.fromisoformat(last) - timedelta(days=1)).isoformat()}"
        m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?", last)
        fraction = m.group(2) or ""
        at = datetime.fromisoformat(m.group(1)) + timedelta(milliseconds=int(fraction[:3].ljust(3, "0")))
        latest = at if fraction[3:].strip("0") else at - timedelta(milliseconds=1)
        end = latest.strftime("%Y-%m-%dT%H:%M:%S.") + f"{latest.microsecond // 1000:03d}" + (m.group(3) or "")
        return f"{edges[0]}/{end}"
    return None


def check_dataset_json_ld(page, slug):
    """The dataset page's schema.org Dataset against the metadata answer, property by property."""
    meta = metadata(page, slug)
    page.goto(BASE + f"/dataset.html?slug={slug}")
    doc = json_ld(page, "Dataset")
    catalog = BASE + "/"
    want = {
        "name": meta["name"], "alternateName": slug, "identifier": meta["id"],
        "version": meta["version"], "url": f"{BASE}/dataset.html?slug={slug}",
        "license": license_value(meta["license"]), "isAccessibleForFree": True,
        "keywords": list(dict.fromkeys([meta["category"], *meta["tags"]])),
        "dateCreated": meta["created_at"], "dateModified": meta["updated_at"],
        "datePublished": meta["published_at"],
        "isPartOf": catalog,
        "includedInDataCatalog": {"@type": "DataCatalog", "name": "Dataset catalog", "url": catalog},
    }
    for key, value in want.items():
        assert doc.get(key) == value, (slug, key, doc.get(key), value)
    check_description(doc["description"], meta)
    source = meta["source"].strip()
    if re.fullmatch(r"https?://\S+", source):
        assert doc["creator"] == {"@type": "Organization", "name": urlparse(source).hostname, "url": source}, doc["creator"]
    else:
        assert doc["creator"] == {"@type": "Organization", "name": source}, doc["creator"]
    access = meta["access"]
    if access["mode"] == "keyless":
        assert "conditionsOfAccess" not in doc, doc["conditionsOfAccess"]
    else:
        assert "read-scoped API key" in doc["conditionsOfAccess"], doc["conditionsOfAccess"]
        assert ("granted access" in doc["conditionsOfAccess"]) == (access["level"] == "approval"), doc["conditionsOfAccess"]
    coverage = expected_coverage(meta["schema"])
    assert doc.get("temporalCoverage") == coverage, (slug, doc.get("temporalCoverage"), coverage)
    variables = doc["variableMeasured"]
    assert [v["name"] for v in variables] == [c["name"] for c in meta["schema"]], variables
    for variable, column in zip(variables, meta["schema"]):
        assert variable["@type"] == "PropertyValue" and variable["description"] == column["dtype"], variable
        exact = all(isinstance(column[k], (int, float)) and not isinstance(column[k], bool)
                    and not (column["dtype"].startswith(("int", "uint")) and abs(column[k]) >= 2**53)
                    for k in ("min", "max"))
        if exact:
            assert (variable["minValue"], variable["maxValue"]) == (column["min"], column["max"]), (variable, column)
        else:
            assert "minValue" not in variable and "maxValue" not in variable, variable
    (download,) = doc["distribution"]
    assert download == {
        "@type": "DataDownload", "name": f"{slug}-v{meta['version']}.parquet",
        "encodingFormat": "application/vnd.apache.parquet",
        "contentUrl": f"{BASE}/api/v1/datasets/{slug}/download?version={meta['version']}",
        "contentSize": f"{meta['size']} B", "sha256": meta["sha256"],
    }, download
    return meta, doc


@step("schema.org JSON-LD on dataset pages: a Dataset with the metadata's values, its download route, columns and dates")
def dataset_json_ld(page, ctx):
    # Without a description (bird-sightings), keyless (city-bikes), gated with a URL for a source
    # (air-quality-hourly), shared by approval, with a timestamp and a date histogram.
    seen = {}
    for slug in ("bird-sightings", "city-bikes", "air-quality-hourly", "clinical-trial-registry",
                 "weather-stations", "museum-collection"):
        seen[slug] = check_dataset_json_ld(page, slug)
    assert not seen["bird-sightings"][0]["description"], "bird-sightings has no description of its own"
    assert seen["air-quality-hourly"][1]["creator"]["url"].startswith("https://")
    assert seen["clinical-trial-registry"][0]["access"]["level"] == "approval"
    for slug in ("weather-stations", "museum-collection"):
        assert "temporalCoverage" in seen[slug][1], f"{slug} has a date or timestamp histogram"
    # The distribution's URL is the download route: keyless, it redirects to the file itself;
    # gated, it asks for a key.
    meta, doc = seen["city-bikes"]
    assert meta["access"]["mode"] == "keyless", meta["access"]
    assert sha256_of(page, doc["distribution"][0]["contentUrl"]) == meta["sha256"]
    refused = page.request.get(seen["air-quality-hourly"][1]["distribution"][0]["contentUrl"], max_redirects=0)
    assert refused.status == 401, refused.status
    # Opened by its UUID, the page still names the dataset by its slug.
    page.goto(BASE + f"/dataset.html?slug={meta['id']}")
    assert json_ld(page, "Dataset")["url"] == f"{BASE}/dataset.html?slug=city-bikes"
    # A description holding </script> and <!-- stays inside the element, as the page is written out.

    def hostile(route):
        route.fulfill(json={**route.fetch().json(), "description": HOSTILE_DESCRIPTION})

    page.route("**/api/v1/datasets/city-bikes", hostile)
    try:
        page.goto(BASE + "/dataset.html?slug=city-bikes")
        doc = json_ld(page, "Dataset")
        assert doc["description"] == HOSTILE_DESCRIPTION, doc["description"]
        written = re.findall(r'<script type="application/ld\+json" id="dataset-jsonld">(.*?)</script>', page.content(), re.S)
        assert len(written) == 1 and json.loads(written[0]) == doc, written
    finally:
        page.unroute("**/api/v1/datasets/city-bikes", hostile)


def check_catalog_json_ld(page):
    """The catalog page's DataCatalog: the datasets it shows, in order, each with its page."""
    doc = json_ld(page, "DataCatalog")
    assert doc["name"] == "Dataset catalog" and doc["url"] == BASE + "/", doc
    assert len(doc["description"]) >= 50, doc["description"]
    links = page.locator("ul.datasets > li h2 a")
    shown = [(a.inner_text(), urljoin(page.url, a.get_attribute("href"))) for a in links.all()]
    entries = doc.get("dataset", [])
    assert [(d["name"], d["url"]) for d in entries] == shown, (entries, shown)
    for entry in entries:
        assert entry["@type"] == "Dataset", entry
    return entries


@step("schema.org JSON-LD on the catalog page: a DataCatalog of exactly the datasets shown, through paging, filters and search")
def catalog_json_ld(page, ctx):
    page.goto(BASE + "/")
    settled(page)
    entries = check_catalog_json_ld(page)
    # The first page against the list endpoint's own answer.
    answer = page.request.get(BASE + "/api/v1/datasets?page=1&page_size=12").json()
    assert len(entries) == len(answer["items"]) == 12, (len(entries), len(answer["items"]))
    for entry, item in zip(entries, answer["items"]):
        assert entry["name"] == item["name"] and entry["identifier"] == item["id"], (entry, item)
        assert entry["url"] == f"{BASE}/dataset.html?slug={item['slug']}", entry
        assert entry["license"] == license_value(item["license"]), (entry, item)
        assert entry["keywords"] == list(dict.fromkeys([item["category"], *item["tags"]])), (entry, item)
        check_description(entry["description"], item)
    first = [e["name"] for e in entries]
    page.get_by_role("link", name="Next →").click()
    settled(page)
    expect(page.locator("#status")).to_contain_text("page 2 of")
    second = [e["name"] for e in check_catalog_json_ld(page)]
    assert second and not set(first) & set(second), (first, second)
    page.fill("#category", "environment")
    page.get_by_role("button", name="Search").click()
    settled(page)
    assert check_catalog_json_ld(page), "environment has datasets"
    page.goto(BASE + "/?tag=birds")
    settled(page)
    assert [e["name"] for e in check_catalog_json_ld(page)] == ["Bird Sightings"]
    page.fill("#tag", "")
    page.fill("#q", "no such words anywhere")
    page.keyboard.press("Enter")
    settled(page)
    expect(page.locator("#status")).to_have_text("No dataset matches. Try fewer words or filters.")
    assert check_catalog_json_ld(page) == []
    # Back in the browser's history: the list, and its JSON-LD, follow.
    page.go_back()
    expect(page.locator("ul.datasets > li")).to_have_count(1)
    settled(page)
    assert [e["name"] for e in check_catalog_json_ld(page)] == ["Bird Sightings"]


@step("dates and timestamps: their min and max, as their histograms tell them")
def date_extents(page, ctx):
    # A timestamp column and a date column, published through catalog-admin (with histograms).
    for slug, name in (("weather-stations", "observed_at"), ("museum-collection", "acquired")):
        meta = metadata(page, slug)
        column = next(c for c in meta["schema"] if c["name"] == name)
        assert column["min"] is None and column["max"] is None, column
        edges = column["histogram"]["bin_edges"]
        assert all(isinstance(e, str) for e in edges), edges
        page.goto(BASE + f"/dataset.html?slug={slug}")
        card = column_card(page, column)
        expect(cell(card, "Min")).to_have_text(edge_label(edges[0]))
        # The maximum lies in the last bin: from its first edge, to just before the last one.
        expect(cell(card, "Max")).to_contain_text(edge_label(edges[-2]))
        expect(cell(card, "Max")).not_to_have_text("–")


@step("an all-null column: a sentence says so, where its chart would be")
def all_null_column(page, ctx):
    meta = metadata(page, "air-quality-hourly")
    empty = [c for c in meta["schema"] if c["null_count"] == meta["row_count"]]
    assert empty, "air-quality-hourly has an all-null column (pm10_ugm3)"
    page.goto(BASE + "/dataset.html?slug=air-quality-hourly")
    rows = f"{meta['row_count']:,}"
    for column in empty:
        card = column_card(page, column)
        expect(card.locator("svg.chart")).to_have_count(0)
        expect(card.locator("p.empty")).to_have_text(
            f"Every value is null ({rows} of {rows} rows): there is nothing to chart.")
    # Every other column has its chart.
    for column in meta["schema"]:
        if column not in empty:
            expect(column_card(page, column).locator("svg.chart")).to_have_count(1)


@step("mean and median with thousands separators, as min and max")
def separators(page, ctx):
    meta = metadata(page, "house-prices")
    column = next(c for c in meta["schema"] if c["name"] == "price_gbp")
    assert column["mean"] >= 1000 and column["median"] >= 1000, column
    page.goto(BASE + "/dataset.html?slug=house-prices")
    card = column_card(page, column)
    for name in ("Mean", "Median", "Min", "Max"):
        text = cell(card, name).inner_text()
        assert re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", text), (name, text)
        value = column[name.lower()]
        assert abs(float(text.replace(",", "")) - value) <= max(1, abs(value) * 1e-5), (name, text, value)


@step("every bar of every chart has a tooltip: a histogram bin's range and count, a top value and its count")
def tooltips(page, ctx):
    meta = metadata(page, "house-prices")
    page.goto(BASE + "/dataset.html?slug=house-prices")
    for column in meta["schema"]:
        bars = column_card(page, column).locator("svg.chart rect.bar")
        if column.get("histogram"):
            counts = column["histogram"]["counts"]
            expect(bars).to_have_count(len(counts))
            for i, count in enumerate(counts):
                expect(bars.nth(i).locator("title")).to_have_text(re.compile(rf" to .*: {count:,} values?$"))
        elif column["top_values"]:
            expect(bars).to_have_count(len(column["top_values"]))
            for i, (value, count) in enumerate(zip(column["top_values"], column["top_counts"])):
                shown = str(value).lower() if isinstance(value, bool) else str(value)
                expect(bars.nth(i).locator("title")).to_have_text(f"{shown}: {count:,} row{'' if count == 1 else 's'}")
    untitled = page.evaluate("() => [...document.querySelectorAll('svg.chart rect.bar')].filter((r) => !r.querySelector('title')?.textContent.trim()).length")
    assert untitled == 0, f"{untitled} bars without a tooltip"


def chart_text_sizes(page):
    """The smallest text on the page's charts, in screen pixels."""
    return page.evaluate("""() => Math.min(...[...document.querySelectorAll('svg.chart text')]
        .map((t) => parseFloat(getComputedStyle(t).fontSize) * t.ownerSVGElement.getScreenCTM().a))""")


@step("charts: a y-scale of counts, and axis labels large enough to read (at 1200 and 390 px)")
def chart_scales(page, ctx):
    multiplier = {"": 1, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}

    def count(label):
        number, suffix = re.fullmatch(r"([\d.]+)([KMBT]?)", label).groups()
        return float(number) * multiplier[suffix]

    meta = metadata(page, "weather-stations")
    page.goto(BASE + "/dataset.html?slug=weather-stations")
    expect(page.locator("section.column")).to_have_count(meta["column_count"])
    for column in meta["schema"]:
        if not column.get("histogram"):
            continue
        ticks = column_card(page, column).locator("svg.chart g.y-axis text").all_text_contents()
        assert len(ticks) >= 2, (column["name"], ticks)
        values = [count(t) for t in ticks]
        assert values[0] == 0 and values == sorted(values), (column["name"], ticks)
        assert values[-1] >= max(column["histogram"]["counts"]), (column["name"], ticks)
    smallest = chart_text_sizes(page)
    assert smallest >= 11, f"chart text is {smallest:.1f} px at 1200 px"
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        page.reload()
        expect(page.locator("section.column")).to_have_count(meta["column_count"])
        smallest = chart_text_sizes(page)
        assert smallest >= 11, f"chart text is {smallest:.1f} px at 390 px"
    finally:
        page.set_viewport_size({"width": 1200, "height": 900})


@step("discussions are left out (the site has no page for them); a path the site lacks gets its own 404 page, with the site's headers")
def not_found_page(page, ctx):
    meta = metadata(page, "air-quality-hourly")
    assert meta["discussions"], "air-quality-hourly has discussions"
    page.goto(BASE + "/dataset.html?slug=air-quality-hourly")
    expect(page.get_by_role("button", name="Get a download link")).to_be_visible()
    expect(page.get_by_role("heading", name="Discussions")).to_have_count(0)
    expect(page.locator("main a[href*='discussions']")).to_have_count(0)
    for discussion in meta["discussions"]:
        expect(page.locator("main")).not_to_contain_text(discussion["title"])
    # Where a discussion's path would lead: the site's 404 page.
    response = page.goto(BASE + meta["discussions"][0]["path"])
    assert response.status == 404, response.status
    assert response.headers["content-type"].startswith("text/html"), response.headers["content-type"]
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    expect(page.locator("h1")).to_have_text("Page not found")
    expect(page).to_have_title("Page not found · Dataset catalog")
    page.get_by_role("link", name="Browse the catalog").click()
    expect(page.locator("ul.datasets > li")).to_have_count(12)


@step("a download is named <slug>-v<version>.parquet: the link, and the file the browser saves")
def download_name(page, ctx):
    meta = metadata(page, "city-bikes")
    name = f"city-bikes-v{meta['version']}.parquet"
    page.goto(BASE + "/dataset.html?slug=city-bikes")
    page.get_by_role("button", name="Get a download link").click()
    link = page.locator("#download-link")
    expect(link).to_have_text(f"Download {name}")
    expect(link).to_have_attribute("download", name)
    expect(page.locator("#download-result pre").first).to_contain_text(f"-o {name} ")
    # A browser ignores `download` on another origin: the presigned URL's
    # response-content-disposition names the file (the data endpoint sets it).
    with page.expect_download() as download:
        link.click()
    saved = download.value.suggested_filename
    download.value.cancel()
    assert saved == name, (
        f"the browser saves the download as {saved!r}, not {name!r}: the data endpoint's URL "
        "carries no response-content-disposition naming it")


@step("column cards keep their accessible names when a column's name has spaces; ids are unique")
def column_names(page, ctx):
    meta = metadata(page, "museum-collection")
    assert any(" " in c["name"] for c in meta["schema"]), [c["name"] for c in meta["schema"]]
    page.goto(BASE + "/dataset.html?slug=museum-collection")
    expect(page.locator("section.column")).to_have_count(meta["column_count"])
    for column in meta["schema"]:
        expect(column_card(page, column)).to_have_count(1)
    duplicates = page.evaluate("() => { const ids = [...document.querySelectorAll('[id]')].map((e) => e.id); return ids.filter((id, i) => ids.indexOf(id) !== i); }")
    assert duplicates == [], duplicates


@step("a 390 px phone: nothing wider than the screen on the catalog and a dataset page with long words")
def phone_width(page, ctx):
    long_word = "accession_number_in_the_collections_management_system"
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        page.goto(BASE + "/")
        settled(page)
        expect(page.locator("ul.datasets")).to_contain_text(long_word)
        page.screenshot(path=f"{SHOTS}/catalog-phone.png", full_page=True)
        # The filters leave room for results on the first screen: the first dataset's name
        # shows, and the filters take less than half of the screen.
        filters = page.locator("#filters").bounding_box()
        assert filters["height"] < 844 / 2, filters
        first = page.locator("ul.datasets > li h2").first.bounding_box()
        assert first["y"] + first["height"] <= 844, first
        seen = wider_than(page, 390)
        assert seen["width"] <= 390, f"the catalog is {seen['width']} px wide on a 390 px screen: {seen['past']}"
        page.goto(BASE + "/dataset.html?slug=museum-collection")
        expect(page.get_by_role("region", name=re.compile(f"^{long_word} "))).to_be_visible()
        expect(page.locator("p.description")).to_contain_text(long_word)
        page.screenshot(path=f"{SHOTS}/dataset-phone.png", full_page=True)
        seen = wider_than(page, 390)
        assert seen["width"] <= 390, f"museum-collection is {seen['width']} px wide on a 390 px screen: {seen['past']}"
        # A download link's panel: the presigned URL in the snippets.
        page.goto(BASE + "/dataset.html?slug=city-bikes")
        page.get_by_role("button", name="Get a download link").click()
        expect(page.locator("#download-result")).to_contain_text("It expires at")
        seen = wider_than(page, 390)
        assert seen["width"] <= 390, f"city-bikes is {seen['width']} px wide on a 390 px screen: {seen['past']}"
    finally:
        page.set_viewport_size({"width": 1200, "height": 900})


@step("filter suggestions: every category, tag and license in the catalog once, with its count")
def facet_suggestions(page, ctx):
    answer = page.request.get(BASE + "/api/v1/datasets?facets=true&page_size=1").json()
    assert "facets" in answer, (
        "the facets API is missing: GET /api/v1/datasets?facets=true answered without a `facets` "
        "field, so the filters can suggest nothing")
    facets = answer["facets"]
    asked = []
    page.on("request", lambda r: asked.append(r.url) if "/api/v1/datasets?" in r.url else None)
    page.goto(BASE + "/")
    settled(page)
    assert any("facets=true" in url for url in asked), asked
    for field, datalist in (("category", "categories"), ("tag", "tags"), ("license", "licenses")):
        assert facets[field], (field, facets)
        offered = page.evaluate(f"() => [...document.getElementById('{datalist}').options].map((o) => [o.value, o.label])")
        expected = [[f["value"], f"{f['value']} ({f['count']:,})"] for f in facets[field]]
        assert offered == expected, (field, offered, expected)
        values = [value for value, _ in offered]
        assert len(values) == len(set(values)), (field, values)
    # The facets come once: a search made on the page asks for none.
    asked.clear()
    page.fill("#q", "birds")
    page.keyboard.press("Enter")
    settled(page)
    assert asked and not any("facets=true" in url for url in asked), asked


@step("a gated dataset without a key: the page says what to do")
def gated_without_key(page, ctx):
    page.goto(BASE + "/dataset.html?slug=air-quality-hourly")
    page.fill("#pasted-key", "dcat_" + "0" * 64)
    page.get_by_role("button", name="Get a download link").click()
    expect(page.get_by_role("alert")).to_have_text("That API key was refused: it is mistyped, expired or revoked.")


@step("sign up, confirm, sign in; signing up again says nothing of who has an account")
def sign_up(page, ctx):
    page.goto(BASE + "/account.html#sign-up")
    # A password the pool refuses: the page says what it lacks, not Cognito's words.
    page.fill("#up-email", "weak@example.com")
    page.fill("#up-password", "weakpassword")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("alert")).to_have_text(
        "That password is too weak: use at least 12 characters, with upper and lower case "
        "letters and a digit."
    )
    page.fill("#up-email", EMAIL)
    page.fill("#up-password", PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    expect(page.locator("#confirm")).to_be_visible()
    new_account = page.locator("#status").inner_text()
    # The same email again (the account exists now): the very same answer.
    page.fill("#up-email", EMAIL)
    page.fill("#up-password", PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    expect(page.locator("#status")).to_have_text(new_account)
    expect(page.get_by_role("alert")).to_have_count(0)
    expect(page.locator("#confirm")).to_be_visible()
    page.fill("#confirm-code", "123456")  # the emulator sends no email and takes any code
    page.get_by_role("button", name="Confirm").click()
    expect(page.locator("#status")).to_have_text("Email confirmed. Sign in with your password.")
    # An address in capitals names the same account (accounts are named in lowercase).
    page.fill("#in-email", EMAIL.upper())
    page.fill("#in-password", PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="API keys")).to_be_visible()
    expect(page.locator("#account-nav")).to_contain_text(EMAIL)
    expect(page.locator("#status")).to_have_text("Signed in.")


@step("create a key: shown once; kept in the tab only when asked (unticked by default)")
def create_key(page, ctx):
    page.fill("#label", "browser test")
    page.select_option("#expiry", "30")
    use_here = page.get_by_label(re.compile("use it for downloads in this browser tab"))
    expect(use_here).not_to_be_checked()
    use_here.check()
    page.get_by_role("button", name="Create key").click()
    secret = page.locator("#new-secret")
    expect(secret).to_have_value(re.compile(r"^dcat_[0-9a-f]{64}$"))
    ctx["secret"] = secret.input_value()
    # The new key's Delta Sharing profile: the endpoint, the key, its expiry.
    with page.expect_download() as download:
        page.locator("#sharing-profile").click()
    profile = json.loads(Path(download.value.path()).read_text())
    assert profile["shareCredentialsVersion"] == 1, profile
    assert profile["bearerToken"] == ctx["secret"], "the profile holds the new key"
    assert profile["endpoint"] == BASE + "/api/v1/delta-sharing", profile
    assert profile["expirationTime"].endswith("Z"), profile
    assert download.value.suggested_filename == "browser-test.share", download.value.suggested_filename
    expect(page.locator("#keys tr")).to_have_count(1)
    expect(page.locator("#keys")).to_contain_text("browser test")
    expect(page.locator("#keys")).to_contain_text(ctx["secret"][:9] + "…")
    page.reload()
    expect(page.locator("#keys")).to_contain_text("browser test")
    assert ctx["secret"] not in page.content(), "the secret is shown once only"
    # On a 390 px phone nothing lies off-screen, the Revoke button included.
    page.set_viewport_size({"width": 390, "height": 844})
    revoke = page.get_by_role("button", name="Revoke browser test")
    expect(revoke).to_be_visible()
    box = revoke.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px screen"
    page.screenshot(path=f"{SHOTS}/keys-phone.png")
    page.set_viewport_size({"width": 1200, "height": 900})


@step("download a gated dataset with the new key: the file's SHA-256 is the page's")
def gated_with_key(page, ctx):
    page.goto(BASE + "/dataset.html?slug=air-quality-hourly")
    page.get_by_label("My key “browser test”").check()
    page.get_by_role("button", name="Get a download link").click()
    link = page.locator("#download-link")
    expect(link).to_be_visible()
    assert sha256_of(page, link.get_attribute("href")) == page.locator("#sha256").inner_text()
    expect(page.locator("#download-sha256")).to_have_text(page.locator("#sha256").inner_text())
    # The data table reads with the chosen key.
    page.get_by_role("button", name="Show the rows with the chosen key").click()
    expect(page.locator("#rows-range")).to_contain_text("Rows 1–100 of 720")
    # A dataset shared by approval: the panel says in a sentence why the key is refused.
    page.goto(BASE + "/dataset.html?slug=clinical-trial-registry")
    page.get_by_label("My key “browser test”").check()
    page.get_by_role("button", name="Get a download link").click()
    expect(page.locator("#download-result").get_by_role("alert")).to_have_text(REFUSED_WITHOUT_GRANT)
    # ...and the data table the same sentence: the key's account holds no grant.
    page.get_by_role("button", name="Show the rows with the chosen key").click()
    expect(page.locator("#rows-result").get_by_role("alert")).to_have_text(REFUSED_WITHOUT_GRANT)
    page.goto(BASE + "/account.html")
    expect(page.locator("#keys")).not_to_contain_text("never")  # last used: now


def operator_page(ctx):
    """The operator's own browser tab (a second context: its own session), signed in."""
    if "operator" not in ctx:
        other = ctx["browser"].new_context(viewport={"width": 1200, "height": 900})
        op = other.new_page()
        op.on("pageerror", lambda e: ctx["errors"].append(str(e)))
        op.goto(BASE + "/account.html")
        op.fill("#in-email", OPERATOR_EMAIL)
        op.fill("#in-password", OPERATOR_PASSWORD)
        op.get_by_role("button", name="Sign in").click()
        expect(op.get_by_role("heading", name="API keys")).to_be_visible()
        ctx["operator"] = op
    return ctx["operator"]


@step("ask for access; an operator approves on the Access requests page (keyboard only); download; revoked, refused")
def request_approve_download_revoke(page, ctx):
    slug = "clinical-trial-registry"
    page.goto(BASE + f"/dataset.html?slug={slug}")
    expect(page.locator("#access-state")).to_have_text("You have not asked for access yet.")
    expect(page.locator(".terms")).to_contain_text("For research use only")
    page.fill("#answer-affiliation", "Browser Test Lab")
    page.fill("#answer-purpose", "Checking the request journey")
    page.get_by_label("I accept these terms").check()
    page.locator("#access").screenshot(path=f"{SHOTS}/access-request.png")
    page.get_by_role("button", name="Ask for access").click()
    expect(page.locator("#access-state")).to_contain_text("Your request is pending")
    page.goto(BASE + "/account.html")
    expect(page.locator("#access-list")).to_contain_text(f"{slug}: Your request is pending")
    # Emails about their access can be turned off on the page, and stay off; then on again.
    emails = page.get_by_label("Email me when a request of mine is approved or rejected, or my access is revoked")
    expect(emails).to_be_checked()
    emails.uncheck()
    expect(page.locator("#status")).to_have_text("You will get no more emails about your access.")
    page.reload()
    expect(emails).not_to_be_checked()
    emails.check()
    expect(page.locator("#status")).to_have_text("You will get emails about your access.")

    # The operator: the header links the page; the request is listed with its answers.
    op = operator_page(ctx)
    op.get_by_role("link", name="Access requests").click()
    card = op.locator("li.record", has_text=EMAIL)
    expect(card).to_contain_text("Browser Test Lab")
    expect(card).to_contain_text("terms accepted")
    op.screenshot(path=f"{SHOTS}/operators.png")
    visited = tab_through(op, 30)
    assert all(v["outline"] for v in visited), [v for v in visited if not v["outline"]]
    approve = op.get_by_role("button", name=f"Approve {EMAIL} for {slug}")
    approve.focus()
    op.keyboard.press("Enter")
    expect(op.locator("#status")).to_have_text(f"Approved {EMAIL} for {slug}.")
    expect(op.locator("li.record", has_text=EMAIL)).to_contain_text("Granted until revoked")

    # The person downloads; the file's SHA-256 is the page's.
    page.goto(BASE + f"/dataset.html?slug={slug}")
    expect(page.locator("#access-state")).to_have_text("You have access.")
    page.get_by_label("My key “browser test”").check()
    page.get_by_role("button", name="Get a download link").click()
    link = page.locator("#download-link")
    expect(link).to_be_visible()
    assert sha256_of(page, link.get_attribute("href")) == page.locator("#sha256").inner_text()

    # The operator revokes (keyboard only); the person's next request is refused.
    op.select_option("#status-filter", "granted")
    op.focus("#dataset-filter")
    op.keyboard.type(slug)
    op.keyboard.press("Enter")
    expect(op.locator("#status")).to_have_text(re.compile(r"^\d+ granted$"))
    revoke = op.get_by_role("button", name=f"Revoke {EMAIL}'s access to {slug}")
    revoke.focus()
    op.keyboard.press("Enter")
    expect(op.locator("#status")).to_have_text(f"Revoked {EMAIL}'s access to {slug}.")
    page.get_by_role("button", name="Get a download link").click()
    expect(page.get_by_role("alert")).to_have_text(REFUSED_WITHOUT_GRANT)
    page.reload()
    expect(page.locator("#access-state")).to_have_text("Your access was revoked. You may ask again.")


@step("the Access requests page: answers under their questions; on a slow network only the latest list shows, a stale list cannot be acted on, and what the operator typed stays")
def operators_slow_network(page, ctx):
    slug = "clinical-trial-registry"
    questions = {q["name"]: q["label"] for q in metadata(page, slug)["access"]["form"]}
    # The person asks again (the step before revoked their access), on a 390 px phone: the
    # terms read as text, not as a field to type in.
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        page.goto(BASE + f"/dataset.html?slug={slug}")
        expect(page.locator("#access-state")).to_have_text("Your access was revoked. You may ask again.")
        terms, field = page.locator(".terms"), page.locator("#answer-affiliation")
        look = "(e) => { const s = getComputedStyle(e); return [s.borderTopStyle, s.backgroundColor]; }"
        assert terms.evaluate(look) != field.evaluate(look), (terms.evaluate(look), field.evaluate(look))
        assert terms.evaluate(look)[0] == "none", terms.evaluate(look)
        page.fill("#answer-affiliation", "Second Lab")
        page.fill("#answer-purpose", "Asking again")
        page.get_by_label("I accept these terms").check()
        page.locator("#access").screenshot(path=f"{SHOTS}/access-request-phone.png")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        page.set_viewport_size({"width": 1200, "height": 900})
    page.get_by_role("button", name="Ask for access").click()
    expect(page.locator("#access-state")).to_contain_text("Your request is pending")

    op = operator_page(ctx)
    card = op.locator("li.record", has_text=EMAIL)
    first_list = lambda url: "/operator/access?" in url and "dataset=" not in url  # noqa: E731
    # 1. The page's first, unfiltered list (held) arrives after a filtered one: it is dropped.
    held = Held(op, first_list)
    op.goto(BASE + "/operators.html")
    held.wait()
    op.fill("#dataset-filter", "small-business-survey")
    op.get_by_role("button", name="Show").click()
    expect(op.locator("#status")).to_have_text(re.compile(r"^(Nothing pending\.|\d+ pending)$"))
    filtered = op.locator("#status").inner_text()
    with op.expect_response(lambda r: first_list(r.url)):
        held.release()
    op.wait_for_timeout(300)
    expect(op.locator("#status")).to_have_text(filtered)
    expect(card).to_have_count(0)
    expect(op.locator("#dataset-filter")).to_have_value("small-business-survey")
    # The answers are labelled with the questions the form asked.
    op.fill("#dataset-filter", slug)
    op.get_by_role("button", name="Show").click()
    expect(card).to_contain_text("Second Lab")
    assert card.locator("dl.answers dt").all_inner_texts() == [questions["affiliation"], questions["purpose"]], (
        card.locator("dl.answers dt").all_inner_texts(), questions)
    # 2. "Show" again, its answer held: the list shown stays, its buttons disabled; an Until date
    # and a reason typed meanwhile stay on the new list's card.
    until = date.today() + timedelta(days=40)
    approve = op.get_by_role("button", name=f"Approve {EMAIL} for {slug}")
    held = Held(op, lambda url: "/operator/access?" in url)
    op.get_by_role("button", name="Show").click()
    held.wait()
    expect(approve).to_be_disabled()
    expect(op.get_by_role("button", name=f"Reject {EMAIL} for {slug}")).to_be_disabled()
    card.locator("input[type=date]").fill(until.isoformat())
    card.locator("input[type=text]").fill("typed while the list loaded")
    with op.expect_response(lambda r: "/operator/access?" in r.url):
        held.release()
    expect(op.locator("#status")).to_have_text(re.compile(r"^\d+ pending$"))
    expect(approve).to_be_enabled()
    expect(card.locator("input[type=date]")).to_have_value(until.isoformat())
    expect(card.locator("input[type=text]")).to_have_value("typed while the list loaded")
    # 3. Approve (its answer held), then "Show" (answered with the record still pending): the
    # decision's answer, newer, wins over the list's copy, and the typed date is the grant's end.
    held = Held(op, lambda url: f"/operator/access/{slug}/" in url)
    approve.click()
    held.wait()
    op.get_by_role("button", name="Show").click()
    expect(op.locator("#status")).to_have_text(re.compile(r"^\d+ pending$"))
    held.release()
    expect(op.locator("#status")).to_have_text(f"Approved {EMAIL} for {slug}.")
    expect(card.locator(".record-status")).to_have_text(
        re.compile(rf"^Granted until {until.day} {until.strftime('%b')} {until.year}, 23:59 UTC$"))
    page.reload()
    expect(page.locator("#access-state")).to_contain_text(f"You have access until {until.day} {until.strftime('%b')} {until.year}")
    # At 390 px: the page fits, its answers under their questions.
    op.set_viewport_size({"width": 390, "height": 844})
    try:
        op.select_option("#status-filter", "granted")
        op.get_by_role("button", name="Show").click()
        expect(op.locator("#status")).to_have_text(re.compile(r"^\d+ granted$"))
        expect(card.locator("dl.answers dt").first).to_have_text(questions["affiliation"])
        op.screenshot(path=f"{SHOTS}/operators-phone.png", full_page=True)
        assert op.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        op.set_viewport_size({"width": 1200, "height": 900})
    # Revoked again, as the step before left it.
    op.get_by_role("button", name=f"Revoke {EMAIL}'s access to {slug}").click()
    expect(op.locator("#status")).to_have_text(f"Revoked {EMAIL}'s access to {slug}.")


@step("the Access requests page is for operators only")
def operators_only(page, ctx):
    page.goto(BASE + "/operators.html")
    expect(page.get_by_role("alert")).to_have_text("This page is for the catalog's operators and the admins of an organisation.")
    expect(page.locator("#records li")).to_have_count(0)
    expect(page.get_by_role("link", name="Access requests")).to_have_count(0)


@step("revoke the key (confirmed), then its download is refused")
def revoke(page, ctx):
    page.goto(BASE + "/account.html")
    page.get_by_role("button", name="Revoke browser test").click()
    dialog = page.locator("#revoke-dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Keep it").click()
    expect(page.locator("#keys")).to_contain_text("Active")
    page.get_by_role("button", name="Revoke browser test").click()
    dialog.get_by_role("button", name="Revoke").click()
    expect(page.locator("#keys")).to_contain_text("Revoked")
    page.goto(BASE + "/dataset.html?slug=air-quality-hourly")
    page.fill("#pasted-key", ctx["secret"])
    page.get_by_role("button", name="Get a download link").click()
    expect(page.get_by_role("alert")).to_have_text("That API key was refused: it is mistyped, expired or revoked.")


@step("two-factor sign-in: turn it on, sign in with a code, turn it off (with the password again)")
def two_factor(page, ctx):
    page.goto(BASE + "/account.html")
    expect(page.locator("#mfa-state")).to_contain_text("Off")
    page.get_by_role("button", name="Turn on two-factor sign-in").click()
    expect(page.locator("#mfa-secret")).not_to_be_empty()
    assert page.locator("#mfa-link").get_attribute("href").startswith("otpauth://totp/")
    page.fill("#mfa-code", "123456")  # the emulator checks no code unless told to
    page.get_by_role("button", name="Turn on", exact=True).click()
    expect(page.locator("#mfa-state")).to_contain_text("On:")
    with page.expect_navigation():
        page.get_by_role("button", name="Sign out").click()
    page.fill("#in-email", EMAIL)
    page.fill("#in-password", PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#status")).to_have_text("Enter the code from your authenticator app.")
    expect(page.locator("#in-code")).to_be_focused()
    page.keyboard.type("654321")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="API keys")).to_be_visible()
    expect(page.locator("#status")).to_have_text("Signed in.")
    # Turning it off asks for the password again: a wrong one changes nothing.
    page.get_by_role("button", name="Turn off two-factor sign-in").click()
    expect(page.locator("#mfa-password")).to_be_focused()
    page.keyboard.type("not-the-password")
    page.get_by_role("button", name="Turn off", exact=True).click()
    expect(page.get_by_role("alert")).to_have_text("That password is not right: two-factor sign-in stays on.")
    expect(page.locator("#mfa-state")).to_contain_text("On:")
    page.fill("#mfa-password", PASSWORD)
    page.get_by_role("button", name="Turn off", exact=True).click()
    expect(page.locator("#status")).to_have_text("Two-factor sign-in is off.")
    expect(page.locator("#mfa-state")).to_contain_text("Off")


@step("an invited person: no sign-up form in the invite mode; the first sign-in asks for their own password")
def invited_first_sign_in(page, ctx):
    # The page follows config.json's signUpMode: by invitation, no sign-up form.
    page.goto(BASE + "/account.html")
    with page.expect_navigation():
        page.get_by_role("button", name="Sign out").click()

    def invite_mode(route):
        config = route.fetch().json()
        route.fulfill(json={**config, "signUpMode": "invite"})

    page.route("**/config.json", invite_mode)
    page.reload()
    expect(page.locator("#sign-up-note")).to_contain_text("Accounts here are by invitation")
    expect(page.get_by_role("button", name="Sign up")).to_have_count(0)
    page.unroute("**/config.json")
    # The invitation's temporary password, then the person's own.
    page.fill("#in-email", INVITED_EMAIL)
    page.fill("#in-password", INVITED_TEMPORARY_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#status")).to_have_text(
        "Welcome: you were invited. Choose your own password to finish signing in."
    )
    expect(page.locator("#in-new-password")).to_be_focused()
    page.keyboard.type("Invited-own-password-9")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="API keys")).to_be_visible()
    expect(page.locator("#account-nav")).to_contain_text(INVITED_EMAIL)
    # Signed out and in again: the new password is the one that works.
    with page.expect_navigation():
        page.get_by_role("button", name="Sign out").click()
    page.fill("#in-email", INVITED_EMAIL)
    page.fill("#in-password", "Invited-own-password-9")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="API keys")).to_be_visible()


@step("sessions: a refresh Cognito cannot answer keeps the session; one it refuses, or a token the API refuses, ends it and offers to sign in")
def sessions(page, ctx):
    # Signed in as the invited person (the step before).
    page.goto(BASE + "/account.html")
    expect(page.get_by_role("heading", name="API keys")).to_be_visible()
    cognito = page.request.get(BASE + "/config.json").json()["cognitoEndpoint"]
    stored = "JSON.parse(sessionStorage.getItem('catalog.session'))"
    expire = f"() => {{ const s = {stored}; s.expiresAt = Date.now() - 1000; sessionStorage.setItem('catalog.session', JSON.stringify(s)); }}"

    def refresh_fails(route):
        request = route.request
        if request.method == "POST" and "REFRESH_TOKEN_AUTH" in (request.post_data or ""):
            route.fulfill(status=503, body="Service Unavailable")
        else:
            route.continue_()

    # Routed first: a refresh the page may still be making must not renew the session.
    page.route(lambda url: url.startswith(cognito), refresh_fails)
    page.evaluate(expire)
    page.evaluate("() => sessionStorage.setItem('catalog.keys', JSON.stringify([{id: 'key_0000000000000000', label: 'kept', secret: 'dcat_x'}]))")
    page.reload()
    expect(page.get_by_role("alert")).to_have_text(
        "The sign-in service could not be reached. You are still signed in: try again in a moment."
    )
    expect(page.locator("#account-nav")).to_contain_text(INVITED_EMAIL)
    assert "kept" in page.evaluate("() => sessionStorage.getItem('catalog.keys')"), "the tab's keys are kept"
    page.unroute(lambda url: url.startswith(cognito), refresh_fails)
    page.unroute_all()
    page.reload()
    expect(page.get_by_role("heading", name="API keys")).to_be_visible()
    expect(page.locator("#account-nav")).to_contain_text(INVITED_EMAIL)

    # A token the API refuses (here, not a token at all): the key form goes, sign-in comes back.
    # Changed only once the page has made its last call with the good one (the two-factor
    # state): a call still on its way would read the bad token, end the session and say so on
    # this page, which the reload below then replaces with a page that has no session to end
    # and nothing to say.
    expect(page.locator("#mfa-state")).to_have_text(re.compile(r"^(On|Off):"))
    page.evaluate(f"() => {{ const s = {stored}; s.accessToken = 'not.a.token'; sessionStorage.setItem('catalog.session', JSON.stringify(s)); }}")
    page.reload()
    expect(page.locator("#sign-in")).to_be_visible()
    expect(page.locator("#create")).to_be_hidden()
    expect(page.get_by_role("alert")).to_have_text("Your session has ended. Please sign in again.")
    expect(page.locator("#account-nav")).not_to_contain_text(INVITED_EMAIL)
    assert page.evaluate("() => sessionStorage.getItem('catalog.keys')") is None, "the tab's keys go"

    # Signed in again, then signed out everywhere (the refresh token revoked) and the access
    # token past its expiry: the header no longer shows the account.
    page.fill("#in-email", INVITED_EMAIL)
    page.fill("#in-password", "Invited-own-password-9")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="API keys")).to_be_visible()
    access_token = page.evaluate(f"() => {stored}.accessToken")
    revoked = page.request.post(cognito, headers={
        "content-type": "application/x-amz-json-1.1",
        "x-amz-target": "AWSCognitoIdentityProviderService.GlobalSignOut",
    }, data=f'{{"AccessToken": "{access_token}"}}')
    assert revoked.ok, revoked.status
    page.evaluate(expire)
    page.goto(BASE + "/")
    expect(page.locator("#account-nav")).to_contain_text("Sign in")
    expect(page.locator("#account-nav")).not_to_contain_text(INVITED_EMAIL)
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)


@step("forgot password and a new confirmation code: the same answer whether or not an account exists")
def codes_and_resets(page, ctx):
    # Signed out (the step before). A new code for an account waiting for confirmation, and for
    # one that is already confirmed: the same sentence.
    # moto has no ResendConfirmationCode: this one call gets the answers Cognito documents
    # (a delivery for an account waiting for confirmation, InvalidParameterException for one
    # already confirmed); every other call reaches the emulator.
    cognito = page.request.get(BASE + "/config.json").json()["cognitoEndpoint"]
    waiting = f"new-{os.getpid()}@example.com"

    def resend(route):
        request = route.request
        if request.headers.get("x-amz-target", "").endswith(".ResendConfirmationCode"):
            cors = {"access-control-allow-origin": "*"}
            if waiting in (request.post_data or ""):
                route.fulfill(status=200, headers=cors, json={"CodeDeliveryDetails": {
                    "Destination": "n***@e***", "DeliveryMedium": "EMAIL", "AttributeName": "email"}})
            else:
                route.fulfill(status=400, headers=cors, json={
                    "__type": "InvalidParameterException", "message": "User is already confirmed."})
        else:
            route.continue_()

    page.route(lambda url: url.startswith(cognito), resend)
    page.goto(BASE + "/account.html#sign-up")
    sent = "If this email has an account waiting for confirmation, we sent it a new code."
    for email in (waiting, EMAIL):
        page.fill("#up-email", email)
        page.fill("#up-password", PASSWORD)
        page.get_by_role("button", name="Sign up").click()
        expect(page.locator("#confirm")).to_be_visible()
        page.get_by_role("button", name="Send a new code").click()
        expect(page.locator("#status")).to_have_text(sent)
        expect(page.get_by_role("alert")).to_have_count(0)
    page.unroute_all()
    # A reset: an unknown email and a real one get the same sentence; the real one's code
    # (the emulator takes any) sets the new password, which then signs in.
    page.goto(BASE + "/account.html")
    page.get_by_role("button", name="Forgot your password?").click()
    reset_sent = "If this email has an account, we emailed it a code to reset its password."
    page.fill("#forgot-email", "nobody-at-all@example.com")
    page.get_by_role("button", name="Email me a code").click()
    expect(page.locator("#status")).to_have_text(reset_sent)
    expect(page.get_by_role("alert")).to_have_count(0)
    page.fill("#forgot-email", INVITED_EMAIL)
    page.get_by_role("button", name="Email me a code").click()
    expect(page.locator("#status")).to_have_text(reset_sent)
    expect(page.locator("#reset-code")).to_be_focused()
    page.fill("#reset-code", "123456")
    page.fill("#reset-password", "Reset-password-2026")
    page.get_by_role("button", name="Change password").click()
    expect(page.locator("#status")).to_have_text("Password changed. Sign in with your new password.")
    page.fill("#in-password", "Reset-password-2026")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="API keys")).to_be_visible()
    with page.expect_navigation():
        page.get_by_role("button", name="Sign out").click()


def tab_through(page, count):
    """The elements focus visits on up to `count` presses of Tab (until it leaves the page): tag,
    text and whether the focus is visible."""
    visited = []
    for _ in range(count):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement === document.body"):
            break
        visited.append(page.evaluate("""() => {
            const e = document.activeElement;
            const style = getComputedStyle(e);
            return { tag: e.tagName.toLowerCase(), text: (e.innerText || e.value || e.getAttribute('aria-label') || e.id || '').trim().slice(0, 40),
                     id: e.id, outline: style.outlineStyle !== 'none' && style.outlineWidth !== '0px' };
        }"""))
    return visited


@step("keyboard: the catalog page")
def keyboard_catalog(page, ctx):
    page.goto(BASE + "/")
    expect(page.locator("ul.datasets > li")).to_have_count(12)
    visited = tab_through(page, 10)
    assert visited[0]["text"] == "Skip to the datasets", visited[0]
    assert all(v["outline"] for v in visited), [v for v in visited if not v["outline"]]
    ids = [v["id"] for v in visited]
    for control in ("q", "category", "tag", "license", "sort"):
        assert control in ids, ids
    # Typing a search and pressing Enter works without a mouse; so does following a result.
    page.focus("#q")
    page.keyboard.type("bird")
    page.keyboard.press("Enter")
    settled(page)
    expect(page.locator("ul.datasets h2").first).to_contain_text("Bird Sightings")
    page.locator("ul.datasets h2 a").first.focus()
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_contain_text("Bird Sightings")


@step("keyboard: the dataset page")
def keyboard_dataset(page, ctx):
    page.goto(BASE + "/dataset.html?slug=city-bikes")
    expect(page.get_by_role("button", name="Get a download link")).to_be_visible()
    visited = tab_through(page, 40)
    assert all(v["outline"] for v in visited), [v for v in visited if not v["outline"]]
    assert any(v["text"] == "Get a download link" for v in visited), visited
    page.get_by_role("button", name="Get a download link").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#download-link")).to_be_visible()


@step("keyboard: the API keys page (sign in, create, revoke with the keyboard only)")
def keyboard_account(page, ctx):
    # The sessions step ended signed out.
    page.goto(BASE + "/account.html")
    expect(page.locator("#sign-in")).to_be_visible()
    expect(page.locator("#signed-in")).to_be_hidden()
    visited = tab_through(page, 8)
    assert all(v["outline"] for v in visited), [v for v in visited if not v["outline"]]
    page.focus("#in-email")
    page.keyboard.type(EMAIL)
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="API keys")).to_be_visible()
    page.focus("#label")
    page.keyboard.type("keyboard key")
    page.keyboard.press("Enter")
    expect(page.locator("#new-secret")).to_be_focused()
    revoke = page.get_by_role("button", name="Revoke keyboard key")
    revoke.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#revoke-dialog")).to_be_visible()
    expect(page.get_by_role("button", name="Keep it")).to_be_focused()  # the safe choice first
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#keys")).to_contain_text("Revoked", timeout=10_000)
    page.keyboard.press("Escape")


def main():
    failed = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        errors = []
        ctx = {"browser": browser, "errors": errors}
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "Failed to load resource" not in m.text else None)
        failures = []

        def on_response(response):
            # Every refused call, for the report (a refusal a step expects is listed too).
            if response.status >= 400:
                try:
                    body = response.text()[:300]
                except Exception:  # noqa: BLE001 - a body may be gone already
                    body = ""
                target = response.request.headers.get("x-amz-target", "")
                sent = (response.request.post_data or "")[:300] if target else ""
                failures.append(f"{response.status} {response.request.method} {response.url} {target} {sent} -> {body}")
            elif response.request.headers.get("x-amz-target"):
                failures.append(f"{response.status} {response.request.headers['x-amz-target']} {(response.request.post_data or '')[:200]}")

        page.on("response", on_response)
        for i, (name, fn) in enumerate(steps, 1):
            try:
                fn(page, ctx)
                print(f"ok   {i:2} {name}")
            except Exception:  # noqa: BLE001 - every failure is reported with its screenshot
                shot = f"{SHOTS}/failure-{i:02}.png"
                page.screenshot(path=shot, full_page=True)
                print(f"FAIL {i:2} {name} (screenshot {shot})\n{traceback.format_exc()}")
                print("refused calls so far:\n  " + "\n  ".join(failures[-8:]))
                failed.append(name)
        if errors:
            print("errors in the pages' console:\n  " + "\n  ".join(errors))
            failed.append("console errors")
        browser.close()
    print(f"{len(steps) - len([f for f in failed if f != 'console errors'])} of {len(steps)} steps passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
