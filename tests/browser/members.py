#!/usr/bin/env python3
"""The dataset page for an organisation's members, end to end in headless Chromium (Debian's),
driven by Playwright, against the local stack (tests/tests/dataset_members.rs starts it, seeds
acme~ledger with two versions and the private acme~vault, makes acme with an admin, an editor and
a member, and runs this file).

    python tests/browser/members.py BASE_URL SHOTS_DIR

A stranger (STRANGER_EMAIL) sees acme~ledger's public page and no members' panel, and
acme~vault as not found. The member (MEMBER_EMAIL) sees the history (version 2 active), what
changed from 1 to 2, neither an edit form nor "Make active"; and acme~vault's page, private. The
editor (EDITOR_EMAIL) edits the description and the card (tests/browser/card.md, its XSS payloads
included: nothing runs, in the preview or on the page), is told in words what a refused edit
names, and rolls back to version 1. Then a 390 px phone. Exits non-zero on any failure;
SHOTS_DIR/failure-members-*.png for a failed step, dataset-members.png always.
"""

import hashlib
import os
import re
import sys
import traceback

from playwright.sync_api import expect, sync_playwright

BASE, SHOTS = sys.argv[1].rstrip("/"), sys.argv[2]
EDITOR, MEMBER, STRANGER = (os.environ[k] for k in ("EDITOR_EMAIL", "MEMBER_EMAIL", "STRANGER_EMAIL"))
PASSWORD = os.environ["PASSWORD"]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
LEDGER = BASE + "/dataset.html?slug=acme~ledger"
VAULT = BASE + "/dataset.html?slug=acme~vault"
CARD = open(os.path.join(os.path.dirname(__file__), "card.md"), encoding="utf-8").read()
os.makedirs(SHOTS, exist_ok=True)
steps = []


def step(name):
    def wrap(fn):
        steps.append((name, fn))
        return fn
    return wrap


def person(ctx, email):
    """`email`'s own browser tab (a context of its own), signed in; its dialogs recorded (an
    alert is a payload that ran), a confirmation accepted when ctx["confirm"] says so."""
    if email not in ctx["people"]:
        context = ctx["browser"].new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        page.on("pageerror", lambda e: ctx["errors"].append(f"{email}: {e}"))
        page.on("console", lambda m: ctx["errors"].append(f"{email}: {m.text}")
                if m.type == "error" and "Failed to load resource" not in m.text else None)
        page.on("request", lambda r: ctx["requests"].append((email, r.url)))
        page.on("response", lambda r: ctx["responses"].append(f"{email}: {r.request.method} {r.url} {r.status}" + (f" {r.text()[:200]}" if "/account/orgs" in r.url else ""))
                if "/api/v1/" in r.url else None)

        def dialog(d):
            ctx["dialogs"].append((email, d.type, d.message))
            if d.type == "confirm" and ctx["confirm"]:
                d.accept()
            else:
                d.dismiss()
        page.on("dialog", dialog)
        page.goto(BASE + "/account.html")
        page.fill("#in-email", email)
        page.fill("#in-password", PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("heading", name="API keys")).to_be_visible()
        ctx["people"][email] = page
    return ctx["people"][email]


def no_payload_ran(page, ctx):
    page.wait_for_timeout(800)
    assert page.evaluate("() => window.__xss") is None, page.evaluate("() => window.__xss")
    alerts = [d for d in ctx["dialogs"] if d[1] != "confirm"]
    assert not alerts, alerts


@step("a stranger: acme~ledger's public page without the members' panel (editor.js not loaded); acme~vault not found")
def stranger(page, ctx):
    dave = person(ctx, STRANGER)
    ctx["requests"].clear()
    dave.goto(LEDGER)
    expect(dave.locator("#sha256")).to_be_visible()
    dave.wait_for_load_state("networkidle")
    assert dave.locator("#members-panel").count() == 0
    loaded = [u for who, u in ctx["requests"] if who == STRANGER and u.endswith("/editor.js")]
    assert not loaded, loaded
    dave.goto(VAULT)
    expect(dave.locator("#status")).to_contain_text("This dataset does not exist")
    assert dave.locator("#private-notice").count() == 0


@step("the member: the history (version 2 active) and what changed from 1 to 2; no edit, no rollback")
def member_history(page, ctx):
    carol = person(ctx, MEMBER)
    carol.goto(LEDGER)
    panel = carol.locator("#members-panel")
    expect(panel).to_contain_text("For acme's members: your role is member.")
    rows = carol.locator("#versions tbody tr")
    expect(rows).to_have_count(2)
    expect(carol.locator("#versions tr[data-version='2']")).to_contain_text("Active")
    expect(carol.locator("#versions tr[data-version='1']")).not_to_contain_text("Active")
    expect(carol.locator("#versions tr[data-version='1']")).to_contain_text("500")
    carol.get_by_label("From", exact=True).select_option("1")
    carol.get_by_label("to", exact=True).select_option("2")
    carol.get_by_role("button", name="Compare").click()
    result = carol.locator("#diff-result")
    expect(result).to_contain_text("From version 1 to version 2:")
    expect(result).to_contain_text("Rows: 500 → 720 (+220)")
    expect(result.locator("li", has_text="Columns added")).to_contain_text("station_id")
    expect(result.locator("li", has_text="Columns removed")).to_contain_text("gauge")
    assert panel.get_by_role("button", name=re.compile("Make .*active")).count() == 0
    assert carol.locator("#edit").count() == 0


@step("the member: acme~vault, private, shown from the organisation's routes")
def member_private(page, ctx):
    carol = person(ctx, MEMBER)
    carol.goto(VAULT)
    expect(carol.locator("#private-notice")).to_contain_text("Private: visible to acme's members.")
    expect(carol.locator("h1")).to_contain_text("Private")
    expect(carol.locator("#private-columns")).to_contain_text("gauge")
    expect(carol.locator("#versions tbody tr")).to_have_count(1)
    expect(carol.locator("#versions tr[data-version='1']")).to_contain_text("Active")
    assert carol.locator("#edit").count() == 0


@step("the editor: the description and the card edited (the preview and the page run no payload); shown after a reload")
def editor_edits(page, ctx):
    bob = person(ctx, EDITOR)
    ctx["dialogs"].clear()
    bob.goto(LEDGER)
    expect(bob.locator("#members-panel")).to_contain_text("your role is editor.")
    bob.get_by_text("Edit this dataset (as editor)").click()
    expect(bob.get_by_label("Name", exact=True)).not_to_have_value("")
    bob.get_by_label("Description", exact=True).fill("Edited on the members' page.")
    bob.get_by_label("Dataset card (Markdown; empty removes it)").fill(CARD)
    preview = bob.locator("#card-preview")
    expect(preview.locator("h3", has_text="River gauges")).to_be_visible()
    expect(preview).to_contain_text('<script>window.__xss = (window.__xss || 0) + 1; alert("script")</script>')
    assert preview.locator("script, iframe, img, svg, object, embed, form, [onerror], [onload]").count() == 0
    no_payload_ran(bob, ctx)
    bob.get_by_role("button", name="Save").click()
    expect(bob.locator("#members-status")).to_have_text("Saved: the page shows the new description.")
    expect(bob.locator("p.description")).to_have_text("Edited on the members' page.")
    expect(bob.locator("section.card h3", has_text="River gauges")).to_be_visible()
    no_payload_ran(bob, ctx)
    bob.reload()
    expect(bob.locator("p.description")).to_have_text("Edited on the members' page.")
    expect(bob.locator("section.card .card-body")).to_contain_text("Water levels by station")
    no_payload_ran(bob, ctx)


@step("the editor: a refused edit is told in words naming the field; nothing saved")
def editor_refused(page, ctx):
    bob = person(ctx, EDITOR)
    bob.goto(LEDGER)
    bob.get_by_text("Edit this dataset (as editor)").click()
    bob.get_by_label("Tags (separated by commas)").fill("fine, " + "x" * 80)
    bob.get_by_role("button", name="Save").click()
    said = bob.locator("#edit-result [role=alert]")
    expect(said).to_contain_text("Not saved:")
    expect(said).to_contain_text(re.compile("tag", re.I))
    bob.get_by_label("Tags (separated by commas)").fill(bob.get_by_label("Tags (separated by commas)").get_attribute("value"))
    bob.get_by_role("button", name="Save").click()
    expect(bob.locator("#edit-result")).to_have_text("Nothing changed: nothing to save.")


@step("the editor rolls back to version 1 after confirming (a dismissed confirmation changes nothing)")
def editor_rolls_back(page, ctx):
    bob = person(ctx, EDITOR)
    bob.goto(LEDGER)
    make = bob.get_by_role("button", name="Make version 1 active")
    ctx["confirm"] = False
    make.click()
    bob.wait_for_timeout(500)
    expect(bob.locator("#versions tr[data-version='2']")).to_contain_text("Active")
    ctx["confirm"] = True
    make.click()
    expect(bob.locator("#members-status")).to_have_text("Version 1 is active.")
    expect(bob.locator("#versions tr[data-version='1']")).to_contain_text("Active")
    expect(bob.locator("dl.facts")).to_contain_text(re.compile(r"Version\s*1, published"))
    expect(bob.get_by_role("button", name="Make version 2 active")).to_be_visible()
    # The description and card stay the dataset's, whichever version is active.
    expect(bob.locator("p.description")).to_have_text("Edited on the members' page.")
    bob.reload()
    expect(bob.locator("#versions tr[data-version='1']")).to_contain_text("Active")
    expect(bob.locator("dl.facts")).to_contain_text(re.compile(r"Version\s*1, published"))
    bob.screenshot(path=f"{SHOTS}/dataset-members.png", full_page=True)


@step("the editor publishes version 3 from the page: hashed (the SHA-256 declared is the file's), sent, published, shown")
def editor_publishes(page, ctx):
    bob = person(ctx, EDITOR)
    bob.goto(LEDGER)
    data = b"when,amount\n2026-01-01,12.5\n2026-01-02,7\n"
    bob.set_input_files("#upload-file", files=[{"name": "ledger 2026.csv", "mimeType": "text/csv", "buffer": data}])
    with bob.expect_request(lambda r: r.method == "POST" and r.url.endswith("/orgs/acme/uploads")) as begun:
        bob.get_by_role("button", name="Publish").click()
    declared = begun.value.post_data_json
    assert declared == {"dataset": "ledger", "filename": "ledger_2026.csv", "size": len(data),
                        "sha256": hashlib.sha256(data).hexdigest()}, declared
    expect(bob.locator("#members-status")).to_have_text("Published version 3.", timeout=60000)
    expect(bob.locator("#versions tbody tr")).to_have_count(3)
    expect(bob.locator("#versions tr[data-version='3']")).to_contain_text("Active")
    expect(bob.locator("dl.facts")).to_contain_text(re.compile(r"Version\s*3, published"))
    expect(bob.locator("dl.facts")).to_contain_text(re.compile(r"Rows × columns\s*2 × 2"))


@step("an upload cut off after its first part resumes: only the second part is sent again; version 4 published")
def editor_resumes(page, ctx):
    bob = person(ctx, EDITOR)
    bob.goto(LEDGER)
    line = b"%d,%s\n"
    rows = [b"n,text\n"] + [line % (i, b"x" * 90) for i in range(100_000)]
    data = b"".join(rows)
    assert 8 * 1024 * 1024 < len(data) < 16 * 1024 * 1024, len(data)
    puts = []
    bob.on("request", lambda r: puts.append(r.url) if r.method == "PUT" else None)
    cut = {"done": False}

    def cut_once(route):
        if cut["done"]:
            route.continue_()
        else:
            cut["done"] = True
            route.abort()
    bob.route(re.compile(r".*[?&]partNumber=2(&.*)?$"), cut_once)
    bob.set_input_files("#upload-file", files=[{"name": "big.csv", "mimeType": "text/csv", "buffer": data}])
    bob.get_by_role("button", name="Publish").click()
    expect(bob.locator("#upload-status")).to_contain_text("The upload stopped:", timeout=60000)
    expect(bob.locator("#upload-status")).to_contain_text("Publish again with the same file to resume it.")
    firsts = [u for u in puts if re.search(r"[?&]partNumber=1(&|$)", u)]
    assert len(firsts) == 1, puts
    bob.get_by_role("button", name="Publish").click()
    expect(bob.locator("#members-status")).to_have_text("Published version 4.", timeout=120000)
    firsts = [u for u in puts if re.search(r"[?&]partNumber=1(&|$)", u)]
    seconds = [u for u in puts if re.search(r"[?&]partNumber=2(&|$)", u)]
    assert (len(firsts), len(seconds)) == (1, 2), puts
    expect(bob.locator("#versions tr[data-version='4']")).to_contain_text("100,000")
    bob.unroute(re.compile(r".*[?&]partNumber=2(&.*)?$"))


@step("a file neither Parquet nor CSV is refused with its reason; no version recorded")
def editor_refused_file(page, ctx):
    bob = person(ctx, EDITOR)
    bob.goto(LEDGER)
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64)
    bob.set_input_files("#upload-file", files=[{"name": "picture.csv", "mimeType": "text/csv", "buffer": png}])
    bob.get_by_role("button", name="Publish").click()
    said = bob.locator("#upload-status [role=alert]")
    expect(said).to_contain_text("Not published:", timeout=60000)
    expect(said).to_contain_text("The version before keeps serving.")
    bob.reload()
    expect(bob.locator("#versions tbody tr")).to_have_count(4)


@step("a 390 px phone: the members' panel no wider than the screen")
def phone(page, ctx):
    bob = person(ctx, EDITOR)
    bob.set_viewport_size({"width": 390, "height": 844})
    bob.goto(LEDGER)
    expect(bob.get_by_role("button", name="Make version 2 active")).to_be_visible()
    bob.get_by_text("Edit this dataset (as editor)").click()
    width = bob.evaluate("document.documentElement.scrollWidth")
    wide = bob.evaluate("""() => [...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > 391 && ![...e.children].some((c) => c.getBoundingClientRect().right > 391))
        .slice(0, 6).map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className} in ${e.parentElement.tagName}.${e.parentElement.className} ${Math.round(e.getBoundingClientRect().right)} ${e.textContent.slice(0, 30)}`)""")
    assert width <= 390, f"the page is {width} px wide on a 390 px screen: {wide}"


def main():
    failed = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        errors = []
        ctx = {"browser": browser, "errors": errors, "people": {}, "requests": [], "dialogs": [], "confirm": False, "responses": []}
        for i, (name, fn) in enumerate(steps, 1):
            try:
                fn(page, ctx)
                print(f"ok   {i:2} {name}")
            except Exception:  # noqa: BLE001 - every failure is reported with its screenshot
                for who, tab in ctx["people"].items():
                    tab.screenshot(path=f"{SHOTS}/failure-members-{i:02}-{who.split('@')[0]}.png", full_page=True)
                print(f"FAIL {i:2} {name}\n{traceback.format_exc()}")
                print("the API's last answers:\n  " + "\n  ".join(ctx["responses"][-12:]))
                failed.append(name)
        if errors:
            print("errors in the pages' console:\n  " + "\n  ".join(errors))
            failed.append("console errors")
        browser.close()
    print(f"{len(steps) - len([f for f in failed if f != 'console errors'])} of {len(steps)} steps passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
