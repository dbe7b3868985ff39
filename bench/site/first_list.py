#!/usr/bin/env python3
"""Time to the first drawn list on a cold load of the catalog page: a fresh browser context (no
cache) per round, from navigation start to the page's `list-drawn` mark (set when the first page
of datasets is in the document). Prints the median and the spread.

    python bench/site/first_list.py BASE_URL [ROUNDS]
"""
import statistics
import sys

from playwright.sync_api import sync_playwright

base, rounds = sys.argv[1].rstrip("/"), int(sys.argv[2]) if len(sys.argv) > 2 else 15
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
    times = []
    for _ in range(rounds):
        # bypass_csp: the page forbids eval, which Playwright's wait_for_function uses; loading is unchanged.
        context = browser.new_context(bypass_csp=True)
        page = context.new_page()
        page.goto(base + "/")
        page.wait_for_function("performance.getEntriesByName('list-drawn').length > 0")
        times.append(page.evaluate("performance.getEntriesByName('list-drawn')[0].startTime"))
        context.close()
    browser.close()
times.sort()
print(f"| time to the first drawn list, cold load ({rounds} rounds) | median {statistics.median(times):.0f} ms | min {times[0]:.0f} ms | max {times[-1]:.0f} ms |")
