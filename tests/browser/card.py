#!/usr/bin/env python3
"""The dataset card (its Markdown README) in headless Chromium (Debian's), driven by Playwright,
against the local stack (tests/tests/card.rs publishes the datasets and runs this file).

    python tests/browser/card.py BASE_URL OUT_DIR

CARD_SLUG names a dataset whose card holds safe Markdown (headings, lists, a table, code, a
link, a quote, images) and XSS payloads, in Markdown's syntax and as HTML; each payload, if it
ran, would call alert() and add to window.__xss. HTML in a card shows as text. PLAIN_SLUG names a dataset without a card. The card's Markdown renders as
elements, every payload stays inert (no dialog, no flag, no script, handler, style, frame,
form, SVG, javascript: or data: URL in the card, no request off the site), links carry
rel="noopener noreferrer nofollow", images are links to them (https) or their text; a page
without a card loads neither marked nor DOMPurify; if they cannot load, the card is its
Markdown as text; at 390 px nothing is wider than the screen.
"""

import os
import sys
import traceback
from urllib.parse import urlsplit

from playwright.sync_api import expect, sync_playwright

BASE, OUT = sys.argv[1].rstrip("/"), sys.argv[2]
CARD_SLUG, PLAIN_SLUG = os.environ["CARD_SLUG"], os.environ["PLAIN_SLUG"]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CARD_FILES = ("/readme.js", "/vendor/marked/", "/vendor/dompurify/")
REL = "noopener noreferrer nofollow"
os.makedirs(OUT, exist_ok=True)
steps = []


def step(name):
    def wrap(fn):
        steps.append((name, fn))
        return fn
    return wrap


def open_card(page):
    page.goto(f"{BASE}/dataset.html?slug={CARD_SLUG}")
    body = page.locator("section.card .card-body")
    expect(body.locator("h3").first).to_be_visible()
    expect(body).not_to_have_attribute("aria-busy", "true")
    return body


@step("a page without a card loads neither the card's module nor its libraries")
def no_card(page, ctx):
    ctx["requests"].clear()
    page.goto(f"{BASE}/dataset.html?slug={PLAIN_SLUG}")
    expect(page.locator("#download")).to_be_visible()
    page.wait_for_load_state("networkidle")
    assert page.locator("section.card").count() == 0
    fetched = [r.url for r in ctx["requests"] if urlsplit(r.url).path.startswith(CARD_FILES)]
    assert not fetched, fetched


@step("the card renders its Markdown as elements, below the description")
def renders(page, ctx):
    ctx["requests"].clear()
    body = open_card(page)
    paths = {urlsplit(r.url).path for r in ctx["requests"]}
    for path in ("/readme.js", "/vendor/marked/marked.esm.js", "/vendor/dompurify/purify.min.js"):
        assert path in paths, (path, sorted(paths))
    # Below the description, above the facts.
    order = page.evaluate("""() => [...document.querySelectorAll('#dataset > *')]
        .map((e) => e.className || e.tagName.toLowerCase())""")
    assert order.index("description") < order.index("card") < order.index("facts"), order
    expect(page.get_by_role("heading", name="Dataset card", level=2)).to_be_visible()
    # The card's `#` and `##` sit under the page's headings.
    expect(body.locator("h3")).to_have_text(["River gauges"])
    expect(body.locator("h4").first).to_have_text("What is measured")
    assert body.locator("h1, h2").count() == 0
    expect(body.locator("ul > li")).to_have_count(3)
    expect(body.locator("ol > li")).to_have_count(2)
    expect(body.locator("table thead th")).to_have_text(["station", "river", "unit"])
    expect(body.locator("table tbody tr")).to_have_count(3)
    expect(body.locator("table tbody tr").first.locator("td")).to_have_text(["Köln", "Rhine", "m"])
    expect(body.locator("pre > code")).to_contain_text("SELECT station, max(level) FROM data")
    expect(body.locator("p code").first).to_have_text("level_m")
    expect(body.locator("strong").first).to_have_text("metres")
    expect(body.locator("em").first).to_have_text("station")
    expect(body.locator("blockquote")).to_contain_text("Provisional data")
    source = body.get_by_role("link", name="the gauges' source")
    expect(source).to_have_attribute("href", "https://example.org/gauges")
    expect(source).to_have_attribute("rel", REL)
    expect(body.get_by_role("link", name="the download panel")).to_have_attribute("href", "#download")
    expect(body.get_by_role("link", name="write to us")).to_have_attribute("href", "mailto:data@example.org")
    # A table scrolls in its own box, reachable by keyboard.
    box = body.locator(".card-table")
    expect(box).to_have_attribute("tabindex", "0")
    expect(box).to_have_attribute("role", "region")
    page.screenshot(path=f"{OUT}/card.png", full_page=True)


@step("images are not loaded: one over https is a link to it, any other its text")
def images(page, ctx):
    ctx["requests"].clear()
    body = open_card(page)
    page.wait_for_load_state("networkidle")
    assert body.locator("img").count() == 0
    link = body.get_by_role("link", name="Image: A gauge on the Rhine")
    expect(link).to_have_attribute("href", "https://example.org/gauge.png")
    expect(link).to_have_attribute("rel", REL)
    expect(body).to_contain_text("A plain-http picture")
    assert body.get_by_role("link", name="Image: A plain-http picture").count() == 0
    off_site = [r.url for r in ctx["requests"] if not r.url.startswith(BASE)]
    assert not off_site, off_site


@step("no payload ran: no dialog, no flag, nothing that runs or loads left in the card")
def inert(page, ctx):
    ctx["dialogs"].clear()
    body = open_card(page)
    page.wait_for_load_state("networkidle")
    # Give anything deferred (an image's error, a frame's load, a toggle) time to fire.
    page.wait_for_timeout(1000)
    # A link whose URL was refused is its text alone; the card's in-page link clicked (external
    # ones are not followed): still on the page, and nothing ran.
    assert body.locator("a:not([href])").count() == 0
    hrefs = [a.get_attribute("href") for a in body.locator("a").all()]
    assert sorted(hrefs) == sorted(["https://example.org/gauges", "#download", "mailto:data@example.org",
                                    "https://example.org/gauge.png"]), hrefs
    body.get_by_role("link", name="the download panel").click()
    page.wait_for_timeout(500)
    assert page.url.startswith(f"{BASE}/dataset.html"), page.url
    assert page.evaluate("() => window.__xss") is None, page.evaluate("() => window.__xss")
    assert not ctx["dialogs"], ctx["dialogs"]
    found = page.evaluate("""(body) => {
        const bad = [];
        for (const e of body.querySelectorAll('*')) {
            const tag = e.tagName.toLowerCase();
            if (['script', 'iframe', 'frame', 'object', 'embed', 'svg', 'math', 'style', 'form',
                 'input', 'button', 'textarea', 'img', 'link', 'meta', 'base', 'video', 'audio']
                .includes(tag)) bad.push(`<${tag}>`);
            for (const a of e.attributes) {
                const v = a.value.replace(/[\\s\\u0000-\\u001f]/g, '').toLowerCase();
                if (a.name.startsWith('on')) bad.push(`${tag}[${a.name}]`);
                if (['style', 'id', 'name', 'srcdoc', 'target', 'formaction'].includes(a.name))
                    bad.push(`${tag}[${a.name}]`);
                if (/^(javascript|vbscript|data):/.test(v)) bad.push(`${tag}[${a.name}=${a.value}]`);
            }
            if (tag === 'a' && e.hasAttribute('href') && e.rel !== 'noopener noreferrer nofollow')
                bad.push(`a[rel=${e.rel}]`);
        }
        return bad;
    }""", body.element_handle())
    assert not found, found
    # A link's text stays (without its href); HTML in the card shows as the text it is.
    for text in ("a link that would run", "a link in mixed case", "a data link", "a vbscript link",
                 "a reference that would run", "an image that would run"):
        expect(body).to_contain_text(text)
    expect(body).to_contain_text('<script>window.__xss = (window.__xss || 0) + 1; alert("script")</script>')
    expect(body).to_contain_text('An inline <span onmouseover="window.__xss=1">tag</span> and <b style="color:red">another</b>.')
    assert body.locator("span, b, div:not(.card-table), details").count() == 0
    # No element of the card took an id the page relies on.
    assert page.locator("#download-slot, #download").count() == 1
    # The page's own script still runs (its download panel is there).
    expect(page.locator("#download")).to_be_visible()


@step("if marked or DOMPurify cannot load, the card is its Markdown as text, with a sentence")
def fallback(page, ctx):
    page.route("**/vendor/marked/**", lambda route: route.abort())
    try:
        page.goto(f"{BASE}/dataset.html?slug={CARD_SLUG}")
        body = page.locator("section.card .card-body")
        expect(body.locator("p.error")).to_contain_text("The card could not be formatted")
        expect(body.locator("pre.card-source")).to_contain_text("# River gauges")
        expect(body.locator("pre.card-source")).to_contain_text('<script>window.__xss')
        assert body.locator("h3, a, img, script").count() == 0
        expect(page.locator("#download")).to_be_visible()
    finally:
        page.unroute("**/vendor/marked/**")


@step("at 390 px the card fits the screen (its table scrolls in its box)")
def phone(page, ctx):
    page.set_viewport_size({"width": 390, "height": 844})
    open_card(page)
    wide = page.evaluate("() => document.documentElement.scrollWidth")
    assert wide <= 390, wide
    page.locator("section.card").screenshot(path=f"{OUT}/card-phone.png")
    page.set_viewport_size({"width": 1200, "height": 900})


def main():
    failed = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        errors = []
        ctx = {"requests": [], "dialogs": []}
        page.on("pageerror", lambda e: errors.append(str(e)))
        # An aborted request (the fallback step's) is the browser's line, not the page's error.
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "Failed to load resource" not in m.text else None)
        page.on("request", lambda r: ctx["requests"].append(r))

        def dialog(d):
            ctx["dialogs"].append(d.message)
            d.dismiss()
        page.on("dialog", dialog)
        for i, (name, fn) in enumerate(steps, 1):
            try:
                fn(page, ctx)
                print(f"ok   {i:2} {name}")
            except Exception:  # noqa: BLE001 - every failure is reported with its screenshot
                shot = f"{OUT}/failure-card-{i:02}.png"
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
