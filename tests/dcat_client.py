#!/usr/bin/env python3
"""The DCAT side of tests/tests/api/linked.rs: the catalog walked as a harvester walks it, each
page fetched as Turtle and as JSON-LD, parsed by rdflib and validated by pyshacl against the
vendored DCAT-AP 3.0.1 shapes (tests/shapes/dcat-ap-3.0.1).

Usage: dcat_client.py URL — writes one JSON object: {"pages": [...], "datasets": [...]}, where
each page is {"url", "content_types", "triples", "isomorphic", "conforms", "report", "total",
"next"} and each dataset is {"iri", "title", "identifier", "keywords", "access_rights",
"byte_size", "license", "media_type", "format", "access_url", "download_url", "landing_page"}
in catalog order.
"""

import json
import os
import sys

import requests
from pyshacl import validate
from rdflib import Graph, Namespace, URIRef
from rdflib.compare import isomorphic
from rdflib.namespace import DCAT, DCTERMS, RDF

HYDRA = Namespace("http://www.w3.org/ns/hydra/core#")
SHAPES = os.path.join(os.path.dirname(__file__), "shapes", "dcat-ap-3.0.1", "dcat-ap-SHACL.ttl")


def fetch(url, accept):
    response = requests.get(url, headers={"Accept": accept}, timeout=30)
    response.raise_for_status()
    content_type = response.headers["content-type"]
    fmt = "turtle" if content_type.startswith("text/turtle") else "json-ld"
    return Graph().parse(data=response.text, format=fmt, publicID=url), content_type


def one(graph, subject, predicate):
    value = graph.value(subject, predicate)
    return None if value is None else str(value)


def main():
    shapes = Graph().parse(SHAPES, format="turtle")
    url = sys.argv[1]
    pages, datasets, seen = [], [], set()
    while url and url not in seen and len(seen) < 100:
        seen.add(url)
        turtle, turtle_type = fetch(url, "text/turtle")
        jsonld, jsonld_type = fetch(url, "application/ld+json")
        conforms, _, report = validate(turtle, shacl_graph=shapes, inference="none")
        view = next(turtle.subjects(RDF.type, HYDRA.PartialCollectionView), None)
        catalog = next(turtle.subjects(RDF.type, DCAT.Catalog))
        pages.append({
            "url": url,
            "content_types": [turtle_type, jsonld_type],
            "triples": len(turtle),
            "isomorphic": isomorphic(turtle, jsonld),
            "conforms": conforms,
            "report": "" if conforms else report[:4000],
            "view": None if view is None else str(view),
            "total": None if view is None else int(turtle.value(view, HYDRA.totalItems)),
            "first": one(turtle, view, HYDRA.first),
            "last": one(turtle, view, HYDRA.last),
            "next": one(turtle, view, HYDRA.next),
            "previous": one(turtle, view, HYDRA.previous),
        })
        # Catalog order: the order of the page's datasets is the document's, which rdflib does
        # not keep; the identifiers come back sorted by the caller.
        for dataset in turtle.objects(catalog, DCAT.dataset):
            # The whole version's distribution (`#parquet`); a version of many files also has
            # one per split, listed in `distributions`.
            distributions = sorted(turtle.objects(dataset, DCAT.distribution), key=str)
            distribution = next(d for d in distributions if str(d).endswith("#parquet"))
            datasets.append({
                "iri": str(dataset),
                "title": one(turtle, dataset, DCTERMS.title),
                "identifier": one(turtle, dataset, DCTERMS.identifier),
                "keywords": sorted(str(k) for k in turtle.objects(dataset, DCAT.keyword)),
                "access_rights": one(turtle, dataset, DCTERMS.accessRights),
                "landing_page": one(turtle, dataset, DCAT.landingPage),
                "byte_size": int(turtle.value(distribution, DCAT.byteSize)),
                "license": one(turtle, distribution, DCTERMS.license),
                "media_type": one(turtle, distribution, DCAT.mediaType),
                "format": one(turtle, distribution, DCTERMS["format"]),
                "access_url": one(turtle, distribution, DCAT.accessURL),
                "download_url": one(turtle, distribution, DCAT.downloadURL),
                "distributions": [{
                    "iri": str(d),
                    "title": one(turtle, d, DCTERMS.title),
                    "byte_size": int(turtle.value(d, DCAT.byteSize)),
                    "access_url": one(turtle, d, DCAT.accessURL),
                    "download_url": one(turtle, d, DCAT.downloadURL),
                } for d in distributions],
            })
        url = pages[-1]["next"]
    json.dump({"pages": pages, "datasets": datasets}, sys.stdout)


if __name__ == "__main__":
    main()
