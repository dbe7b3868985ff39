#!/usr/bin/env python3
"""CKAN's DCAT harvester parser (PyPI ckanext-dcat's RDFParser, DCAT-AP 3 profile) reading the
catalog, as a CKAN site harvesting it would: page after page by `next_page()`, in the format the
harvester is configured for. No CKAN site, database or index: the parser turns RDF into the
dataset dicts CKAN would create.

Usage: ckan_harvest.py URL FORMAT (FORMAT: turtle or json-ld) — writes
{"pages": n, "datasets": [{"title", "notes", "tags", "identifier", "uri", "resources":
[{"url", "access_url", "download_url", "format", "mimetype", "size", "license"}]}]}.
"""

import json
import sys
import warnings

warnings.simplefilter("ignore", DeprecationWarning)

from ckan.common import config  # noqa: E402

# No CKAN ini: the parser's settings are read from this mapping, and none is needed.
config.update({"ckan.locale_default": "en"})

import requests  # noqa: E402
from ckanext.dcat.processors import RDFParser  # noqa: E402

ACCEPT = {"turtle": "text/turtle", "json-ld": "application/ld+json"}


def main():
    url, fmt = sys.argv[1], sys.argv[2]
    datasets, pages = [], 0
    while url and pages < 100:
        response = requests.get(url, headers={"Accept": ACCEPT[fmt]}, timeout=30)
        response.raise_for_status()
        parser = RDFParser(profiles=["euro_dcat_ap_3"])
        parser.parse(response.text, _format=fmt)
        pages += 1
        for d in parser.datasets():
            extras = {e["key"]: e["value"] for e in d.get("extras", [])}
            datasets.append({
                "title": d.get("title"),
                "notes": d.get("notes"),
                "tags": sorted(t["name"] for t in d.get("tags", [])),
                "identifier": extras.get("identifier"),
                "uri": extras.get("uri"),
                "resources": [
                    {k: r.get(k) for k in ("url", "access_url", "download_url", "format",
                                           "mimetype", "size", "license")}
                    for r in d.get("resources", [])
                ],
            })
        url = parser.next_page()
    json.dump({"pages": pages, "datasets": datasets}, sys.stdout)


if __name__ == "__main__":
    main()
