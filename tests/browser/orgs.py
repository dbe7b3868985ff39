#!/usr/bin/env python3
"""Organisations on the site, end to end in headless Chromium (Debian's), driven by Playwright,
against the local stack (tests/tests/orgs_page.rs starts it and runs this file).

    python tests/browser/orgs.py BASE_URL SHOTS_DIR

An operator (OPERATOR_EMAIL) creates the organisation `acme` on org.html and invites Alice
(ALICE_EMAIL) as admin; Alice accepts on her account page and invites Bob (BOB_EMAIL) as member;
Bob accepts, sees the members but neither the invitations nor a way to change a role; Alice makes
him an editor, removes the operator, cannot leave as the last admin; Bob leaves; a stranger
(DAVE_EMAIL) opening org.html?name=acme is told "not found" and nothing more. The catalog and the
dataset page show `acme / …` for acme~trials. Carol (CAROL_EMAIL) asks for acme~trials and
river-levels; Alice sees and approves the first on the operators' page, never the second; the
operator sees both; Dave is told the page is not for him. Then the keyboard and a 390 px phone.
Every person signs in with PASSWORD, in a browser context of their own. Exits non-zero on any
failure; SHOTS_DIR/failure-*.png for a failed step, org.png and org-phone.png always.
"""

import os
import re
import sys
import traceback

from playwright.sync_api import expect, sync_playwright

BASE, SHOTS = sys.argv[1].rstrip("/"), sys.argv[2]
OPERATOR = os.environ["OPERATOR_EMAIL"]
ALICE, BOB, CAROL, DAVE = (os.environ[k] for k in ("ALICE_EMAIL", "BOB_EMAIL", "CAROL_EMAIL", "DAVE_EMAIL"))
PASSWORD = os.environ["PASSWORD"]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
NOT_FOUND = "Not found: no organisation by this name has you as a member."
NEITHER = "This page is for the catalog's operators and the admins of an organisation."
os.makedirs(SHOTS, exist_ok=True)
steps = []


def step(name):
    def wrap(fn):
        steps.append((name, fn))
        return fn
    return wrap


def person(ctx, email):
    """`email`'s own browser tab (a context of its own: its own session), signed in."""
    if email not in ctx["people"]:
        context = ctx["browser"].new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        page.on("pageerror", lambda e: ctx["errors"].append(f"{email}: {e}"))
        page.on("console", lambda m: ctx["errors"].append(f"{email}: {m.text}")
                if m.type == "error" and "Failed to load resource" not in m.text else None)
        page.goto(BASE + "/account.html")
        page.fill("#in-email", email)
        page.fill("#in-password", PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("heading", name="API keys")).to_be_visible()
        ctx["people"][email] = page
    return ctx["people"][email]


def member_row(page, email):
    return page.locator("#members tr", has_text=email)


def tab_through(page, count):
    """The elements focus visits on up to `count` presses of Tab: tag, text, whether the focus
    is visible."""
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


@step("an operator creates acme on the organisations page and is its first admin")
def create(page, ctx):
    op = person(ctx, OPERATOR)
    op.goto(BASE + "/org.html")
    expect(op.get_by_role("heading", name="Create an organisation")).to_be_visible()
    op.get_by_label("Name (2 to 32").fill("acme")
    op.get_by_label("Display name (optional)").fill("Acme Labs")
    op.get_by_role("button", name="Create organisation").click()
    expect(op).to_have_url(re.compile(r"org\.html\?name=acme$"))
    expect(op.locator("h1")).to_have_text("Acme Labs acme")
    expect(op.locator("#standing")).to_have_text("Your role: Admin. 1 member.")
    expect(member_row(op, OPERATOR)).to_contain_text("(you)")
    # The name is taken now: the API's sentence, shown as it is.
    op.goto(BASE + "/org.html")
    expect(op.locator("#org-list")).to_contain_text("Acme Labs acme · your role: Admin · 1 member")
    op.get_by_label("Name (2 to 32").fill("acme")
    op.get_by_role("button", name="Create organisation").click()
    expect(op.get_by_role("alert")).to_have_text("organisation 'acme' already exists")


@step("the operator invites Alice as admin; an address of a member and a malformed one are refused in the API's words")
def invite_alice(page, ctx):
    op = person(ctx, OPERATOR)
    op.goto(BASE + "/org.html?name=acme")
    op.get_by_label("Email", exact=True).fill(OPERATOR)
    op.get_by_role("button", name="Invite").click()
    expect(op.get_by_role("alert")).to_have_text(f"'{OPERATOR}' already belongs to a member of 'acme'")
    # The browser's own check set aside, so that the API's refusal shows.
    op.evaluate("document.getElementById('invite').noValidate = true")
    op.get_by_label("Email", exact=True).fill("not an address")
    op.get_by_role("button", name="Invite").click()
    expect(op.get_by_role("alert")).to_contain_text("an email address is one '@'")
    op.get_by_label("Email", exact=True).fill(ALICE)
    op.get_by_label("Role", exact=True).select_option("admin")
    op.get_by_role("button", name="Invite").click()
    expect(op.locator("#status")).to_have_text(f"Invited {ALICE} as admin.")
    invitation = op.locator("#invitations li", has_text=ALICE)
    expect(invitation).to_contain_text("Admin")
    expect(invitation).to_contain_text(re.compile(r"expires \d{1,2} \w{3} \d{4}"))
    op.screenshot(path=f"{SHOTS}/org.png", full_page=True)


@step("Alice accepts on her account page; acme is then among her organisations, with her role")
def alice_accepts(page, ctx):
    alice = person(ctx, ALICE)
    alice.goto(BASE + "/account.html")
    invitation = alice.locator("#invitations-list li", has_text="acme")
    expect(invitation).to_contain_text("acme invites you as admin")
    alice.get_by_role("button", name="Accept the invitation of acme").click()
    expect(alice.locator("#status")).to_have_text("You joined acme as admin.")
    expect(alice.locator("#invitations-section")).to_be_hidden()
    expect(alice.locator("#orgs-list")).to_contain_text("acme: your role is admin")
    alice.get_by_role("link", name="acme", exact=True).click()
    expect(alice.locator("#standing")).to_have_text("Your role: Admin. 2 members.")


@step("Alice invites Bob as member, and withdraws an invitation made by mistake")
def alice_invites(page, ctx):
    alice = person(ctx, ALICE)
    for email in (DAVE, BOB):
        alice.get_by_label("Email", exact=True).fill(email)
        alice.get_by_label("Role", exact=True).select_option("member")
        alice.get_by_role("button", name="Invite").click()
        expect(alice.locator("#status")).to_have_text(f"Invited {email} as member.")
    alice.get_by_role("button", name=f"Withdraw the invitation of {DAVE}").click()
    expect(alice.locator("#status")).to_have_text(f"Withdrew the invitation of {DAVE}.")
    expect(alice.locator("#invitations")).not_to_contain_text(DAVE)
    expect(alice.locator("#invitations")).to_contain_text(BOB)
    # Dave's account page has no invitation now.
    dave = person(ctx, DAVE)
    dave.goto(BASE + "/account.html")
    expect(dave.locator("#orgs-list")).to_have_text("You belong to no organisation.")
    expect(dave.locator("#invitations-section")).to_be_hidden()


@step("Bob accepts, sees the members, and neither the invitations nor a way to change a role")
def bob_accepts(page, ctx):
    bob = person(ctx, BOB)
    bob.goto(BASE + "/account.html")
    bob.get_by_role("button", name="Accept the invitation of acme").click()
    expect(bob.locator("#status")).to_have_text("You joined acme as member.")
    bob.get_by_role("link", name="acme", exact=True).click()
    expect(bob.locator("#standing")).to_have_text("Your role: Member. 3 members.")
    for email in (OPERATOR, ALICE, BOB):
        expect(member_row(bob, email)).to_be_visible()
    expect(member_row(bob, ALICE)).to_contain_text("Admin")
    expect(bob.locator("#manage")).to_be_hidden()
    expect(bob.locator("#invitations li")).to_have_count(0)
    expect(bob.locator("#members select")).to_have_count(0)
    expect(bob.get_by_role("button", name=re.compile("^Remove"))).to_have_count(0)
    expect(member_row(bob, BOB).get_by_role("button", name="Leave")).to_be_visible()
    expect(bob.get_by_role("button", name="Leave")).to_have_count(1)
    # The organisation's datasets, each linked to its page; a member publishes none.
    expect(bob.locator("#org-datasets a")).to_have_count(1)
    expect(bob.locator("#org-datasets a")).to_have_attribute("href", "dataset.html?slug=acme~trials")
    expect(bob.locator("#org-datasets")).to_contain_text("Approval needed")
    expect(bob.locator("#new-dataset")).to_be_hidden()


@step("Alice makes Bob an editor; removes the operator (cancelled first); as the last admin she cannot leave")
def alice_manages(page, ctx):
    alice = person(ctx, ALICE)
    alice.reload()
    alice.get_by_label(f"Role of {BOB}", exact=True).select_option("editor")
    alice.get_by_role("button", name=f"Save the role of {BOB}").click()
    expect(alice.locator("#status")).to_have_text(f"{BOB} is now editor.")
    bob = person(ctx, BOB)
    bob.reload()
    expect(bob.locator("#standing")).to_have_text("Your role: Editor. 3 members.")
    # An editor publishes a new dataset from a file: a name first, then the upload form for it.
    expect(bob.locator("#new-dataset")).to_be_visible()
    bob.get_by_label("Dataset name (1 to 64 lowercase letters, digits and hyphens)").fill("ledger")
    bob.get_by_role("button", name="Choose its file").click()
    expect(bob.locator("#new-dataset-upload")).to_contain_text("New dataset acme~ledger")
    expect(bob.locator("#new-dataset-upload input[type=file]")).to_be_visible()
    # Remove asks first; the safe choice has the focus.
    alice.get_by_role("button", name=f"Remove {OPERATOR}").click()
    expect(alice.locator("#confirm-dialog")).to_be_visible()
    expect(alice.get_by_role("button", name="Cancel")).to_be_focused()
    alice.keyboard.press("Enter")
    expect(alice.locator("#confirm-dialog")).to_be_hidden()
    expect(member_row(alice, OPERATOR)).to_be_visible()
    alice.get_by_role("button", name=f"Remove {OPERATOR}").click()
    alice.locator("#confirm-dialog").get_by_role("button", name="Remove").click()
    expect(alice.locator("#status")).to_have_text(f"Removed {OPERATOR}.")
    expect(member_row(alice, OPERATOR)).to_have_count(0)
    # The last admin: neither demoted nor gone, in the API's words.
    alice.get_by_label(f"Role of {ALICE}", exact=True).select_option("member")
    alice.get_by_role("button", name=f"Save the role of {ALICE}").click()
    expect(alice.get_by_role("alert")).to_have_text("'acme' must keep at least one admin")
    alice.get_by_role("button", name="Leave").click()
    alice.locator("#confirm-dialog").get_by_role("button", name="Leave").click()
    expect(alice.get_by_role("alert")).to_have_text("'acme' must keep at least one admin")
    # The operator, no longer a member, still sees and manages it.
    op = person(ctx, OPERATOR)
    op.reload()
    expect(op.locator("#standing")).to_have_text("You see this organisation as one of the catalog's operators. 2 members.")
    expect(op.locator("#manage")).to_be_visible()


@step("Bob leaves; then the page is not found to him, and his account page lists no organisation")
def bob_leaves(page, ctx):
    bob = person(ctx, BOB)
    bob.get_by_role("button", name="Leave").click()
    expect(bob.locator("#confirm-title")).to_have_text("Leave Acme Labs?")
    bob.locator("#confirm-dialog").get_by_role("button", name="Leave").click()
    expect(bob.locator("#status")).to_have_text("You left Acme Labs.")
    bob.reload()
    expect(bob.get_by_role("alert")).to_have_text(NOT_FOUND)
    bob.goto(BASE + "/account.html")
    expect(bob.locator("#orgs-list")).to_have_text("You belong to no organisation.")


@step("a stranger opening org.html?name=acme is told 'not found', exactly as for a name that names nothing")
def stranger(page, ctx):
    dave = person(ctx, DAVE)
    texts = []
    for name in ("acme", "no-such-org"):
        dave.goto(BASE + f"/org.html?name={name}")
        expect(dave.get_by_role("alert")).to_have_text(NOT_FOUND)
        expect(dave.locator("#one")).to_be_hidden()
        texts.append(dave.locator("main").inner_text().replace(name, "NAME"))
    assert texts[0] == texts[1], texts
    for secret in ("Acme Labs", ALICE, OPERATOR):
        assert secret not in dave.content(), secret
    # Signed out: a sentence and a link to sign in.
    page.goto(BASE + "/org.html?name=acme")
    expect(page.locator("#status")).to_have_text("Sign in to see your organisations.")


@step("the catalog and the dataset page show acme / … for acme's dataset, a link to acme's page for its members only")
def dataset_names(page, ctx):
    name = page.request.get(BASE + "/api/v1/datasets/acme~trials").json()["name"]
    alice, dave = person(ctx, ALICE), person(ctx, DAVE)
    for who, linked in ((alice, True), (dave, False)):
        who.goto(BASE + "/")
        entry = who.locator("ul.datasets > li", has=who.locator(".org-mark"))
        expect(entry).to_have_count(1)
        expect(entry.locator("h2")).to_contain_text(f"acme / {name}")
        expect(entry.locator(".org-mark a")).to_have_count(1 if linked else 0)
        entry.get_by_role("link", name=name, exact=True).click()
        expect(who).to_have_url(re.compile(r"dataset\.html\?slug=acme~trials$"))
        expect(who.locator("h1")).to_contain_text(f"acme / {name}")
        assert who.title().startswith(f"acme / {name}"), who.title()
        expect(who.locator("h1 .org-mark a")).to_have_count(1 if linked else 0)
    alice.locator("h1 .org-mark a").click()
    expect(alice.locator("#standing")).to_contain_text("Your role: Admin.")


@step("Alice decides acme's requests on the operators' page and sees no other's; the operator sees both; Dave is told it is not for him")
def admin_decides(page, ctx):
    carol = person(ctx, CAROL)
    for slug in ("acme~trials", "river-levels"):
        carol.goto(BASE + f"/dataset.html?slug={slug}")
        carol.get_by_role("button", name="Ask for access").click()
        expect(carol.locator("#access-state")).to_contain_text("Your request is pending")
    alice = person(ctx, ALICE)
    alice.goto(BASE + "/account.html")
    alice.get_by_role("link", name="Access requests of acme").click()
    expect(alice.locator("#scope")).to_have_text("As an admin you decide the requests for the datasets of acme.")
    expect(alice.get_by_label("Organisation")).to_have_value("acme")
    card = alice.locator("li.record", has_text=CAROL)
    expect(card).to_have_count(1)
    expect(card.locator("h2")).to_contain_text("acme / trials")
    expect(alice.locator("#status")).to_have_text("1 pending")
    expect(alice.locator("#records")).not_to_contain_text("river-levels")
    # Another organisation's dataset, named in the filter: refused in the API's words.
    alice.get_by_label("Dataset (slug, optional)").fill("river-levels")
    alice.get_by_role("button", name="Show").click()
    expect(alice.get_by_role("alert")).to_contain_text("dataset 'river-levels' is not a dataset of organisation 'acme'")
    expect(alice.locator("#records li")).to_have_count(0)
    alice.get_by_label("Dataset (slug, optional)").fill("")
    alice.get_by_role("button", name="Show").click()
    expect(alice.locator("#status")).to_have_text("1 pending")
    alice.get_by_role("button", name=f"Approve {CAROL} for acme~trials").click()
    expect(alice.locator("#status")).to_have_text(f"Approved {CAROL} for acme~trials.")
    expect(alice.locator("li.record", has_text=CAROL)).to_contain_text("Granted until revoked")
    carol.goto(BASE + "/dataset.html?slug=acme~trials")
    expect(carol.locator("#access-state")).to_have_text("You have access.")
    # The operator sees every dataset's records: river-levels' request, still pending.
    op = person(ctx, OPERATOR)
    op.goto(BASE + "/operators.html")
    expect(op.locator("li.record", has_text="river-levels")).to_contain_text(CAROL)
    expect(op.locator("#org-choice")).to_be_hidden()
    dave = person(ctx, DAVE)
    dave.goto(BASE + "/operators.html")
    expect(dave.get_by_role("alert")).to_have_text(NEITHER)
    expect(dave.locator("#filter")).to_be_hidden()


@step("keyboard: the organisation's page by keyboard alone, focus always visible; invite and withdraw")
def keyboard(page, ctx):
    alice = person(ctx, ALICE)
    alice.goto(BASE + "/org.html?name=acme")
    expect(alice.locator("#standing")).to_contain_text("Your role: Admin.")
    visited = tab_through(alice, 25)
    assert visited[0]["text"] == "Skip to the content", visited[0]
    assert all(v["outline"] for v in visited), [v for v in visited if not v["outline"]]
    ids = [v["id"] for v in visited]
    assert "invite-email" in ids and "invite-role" in ids, ids
    alice.focus("#invite-email")
    alice.keyboard.type("erin@example.com")
    alice.keyboard.press("Enter")
    expect(alice.locator("#status")).to_have_text("Invited erin@example.com as member.")
    withdraw = alice.get_by_role("button", name="Withdraw the invitation of erin@example.com")
    withdraw.focus()
    alice.keyboard.press("Enter")
    expect(alice.locator("#status")).to_have_text("Withdrew the invitation of erin@example.com.")


@step("a 390 px phone: nothing wider than the screen on the organisation's page, its buttons on screen")
def phone(page, ctx):
    alice = person(ctx, ALICE)
    alice.set_viewport_size({"width": 390, "height": 844})
    alice.goto(BASE + "/org.html?name=acme")
    save = alice.get_by_role("button", name=f"Save the role of {ALICE}")
    expect(save).to_be_visible()
    box = save.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    width = alice.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px screen"
    alice.screenshot(path=f"{SHOTS}/org-phone.png", full_page=True)


def main():
    failed = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        errors = []
        ctx = {"browser": browser, "errors": errors, "people": {}}
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "Failed to load resource" not in m.text else None)
        for i, (name, fn) in enumerate(steps, 1):
            try:
                fn(page, ctx)
                print(f"ok   {i:2} {name}")
            except Exception:  # noqa: BLE001 - every failure is reported with its screenshot
                shot = f"{SHOTS}/failure-orgs-{i:02}.png"
                for who, tab in ctx["people"].items():
                    tab.screenshot(path=f"{SHOTS}/failure-orgs-{i:02}-{who.split('@')[0]}.png", full_page=True)
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
