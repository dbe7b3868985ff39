#!/usr/bin/env python3
"""A small Parquet file of values a page may show wrongly, for the site's browser test
(tests/tests/site.rs publishes it as `edge-values`, keyless):

    python tests/browser/edge_values.py OUT.parquet

int64 and uint64 extremes (2^53 + 1, -2^63, 2^63 - 1, 2^64 - 1: past 2^53, which JSON.parse
would round), nested in a list too; nulls beside strings that read "–" and "null"; long strings
(folded in the data table) and a float column.
"""

import sys

import pyarrow as pa
import pyarrow.parquet as pq

LONG = "A long value that the data table folds: " + "word " * 60


def build() -> pa.Table:
    return pa.table({
        "id": pa.array(range(6), pa.int64()),
        "big": pa.array([2**53 + 1, -(2**63), 2**63 - 1, None, 0, -(2**53 + 1)], pa.int64()),
        "huge": pa.array([2**64 - 1, 2**63, None, 1, 2**53 + 3, 0], pa.uint64()),
        "word": pa.array(["–", "null", None, "", "plain", LONG], pa.string()),
        "ints": pa.array([[2**53 + 1, -(2**63)], None, [], [1, 2**63 - 1], [0], None], pa.list_(pa.int64())),
        "note": pa.array([LONG, None, "short", LONG[:60], "–", "null"], pa.string()),
        "score": pa.array([0.1, None, -2.5, 1e300, 3.0, None], pa.float64()),
    })


if __name__ == "__main__":
    pq.write_table(build(), sys.argv[1])
