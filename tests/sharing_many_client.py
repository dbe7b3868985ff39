"""Delta Sharing's own Python connector (PyPI delta-sharing) on a table of many files.

Reads a JSON list of operations on stdin and prints one JSON result per operation, in order:
- {"op": "write", "root": R, "parts": P, "per_part": N}: writes P * N small Parquet files with
  pyarrow under R, Hive-partitioned by `part` (R/part=07/f-012.parquet, two digits, so that the
  manifest's path order is the numbers' order): three rows each of `id` (int64, each file its
  own: (part * N + file) * 3 + 0..2), `value` (double) and `label` (string); returns the count;
- {"op": "load", "profile": F, "table": T, "json": J?, "limit": L?, "root": R,
   "filter": [column, op, value]}: `load_as_pandas(jsonPredicateHints=J, limit=L)`, against
  pyarrow reading R as a Hive-partitioned dataset with the same filter (`part` read as int64, as
  the connector types it from the Delta schema's `long`). Without a limit: `equal`, and why
  not (both sorted by id); with one: `rows`, and `subset` (every row is one of pyarrow's);
- {"op": "list", "profile": F, "table": T}: the connector's own listing of the whole table
  (`DataSharingRestClient.list_files_in_table`, no predicate, no paging: the connector 1.4.2
  never pages), without reading the files: how many file actions, how many distinct paths, and
  the answer's Content-Encoding;
- {"op": "fail", "profile": F, "table": T}: a load expected to be refused: its status and body.
"""

import json
import os
import sys

import delta_sharing
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from requests.exceptions import HTTPError


def write(op):
    root, parts, per_part = op["root"], op["parts"], op["per_part"]
    for p in range(parts):
        folder = os.path.join(root, "part=%02d" % p)
        os.makedirs(folder, exist_ok=True)
        for n in range(per_part):
            first = (p * per_part + n) * 3
            ids = list(range(first, first + 3))
            table = pa.table({"id": pa.array(ids, pa.int64()),
                              "value": pa.array([i * 0.5 for i in ids], pa.float64()),
                              "label": pa.array(["l%d" % i for i in ids], pa.string())})
            pq.write_table(table, os.path.join(folder, "f-%03d.parquet" % n))
    return {"files": parts * per_part}


def expected(root, column, op, value):
    dataset = ds.dataset(root, format="parquet", partitioning="hive")
    field = ds.field(column)
    condition = {"==": field == value, "<": field < value, ">=": field >= value}[op]
    table = dataset.to_table(filter=condition)
    frame = table.to_pandas(date_as_object=True)
    frame["part"] = frame["part"].astype("int64")
    return frame


def by_id(frame):
    return frame.sort_values("id").reset_index(drop=True)


def load(op):
    url = f"{op['profile']}#{op['table']}"
    frame = delta_sharing.load_as_pandas(url, jsonPredicateHints=op.get("json"),
                                         limit=op.get("limit"))
    want = expected(op["root"], *op["filter"])[list(frame.columns)]
    if op.get("limit") is not None:
        merged = frame.merge(want, how="left", indicator=True)
        return {"rows": len(frame), "subset": bool((merged["_merge"] == "both").all()),
                "columns": list(frame.columns)}
    try:
        pd.testing.assert_frame_equal(by_id(frame), by_id(want), check_exact=True)
        why = None
    except AssertionError as e:
        why = str(e)
    return {"equal": why is None, "why": why, "rows": len(frame), "columns": list(frame.columns)}


def listing(op):
    from delta_sharing.protocol import DeltaSharingProfile, Table
    from delta_sharing.rest_client import DataSharingRestClient
    share, schema, name = op["table"].split(".")
    client = DataSharingRestClient(DeltaSharingProfile.read_from_file(op["profile"]))
    encodings = []
    client._session.hooks["response"].append(
        lambda r, *a, **k: encodings.append(r.headers.get("Content-Encoding")))
    files = client.list_files_in_table(Table(name=name, share=share, schema=schema)).add_files
    paths = {f.url.split("?")[0].split("/files/")[1] for f in files}
    return {"files": len(files), "distinct": len(paths), "encodings": encodings}


def run(op):
    kind = op["op"]
    try:
        if kind == "write":
            return write(op)
        if kind == "load":
            return load(op)
        if kind == "list":
            return listing(op)
        if kind == "fail":
            delta_sharing.load_as_pandas(f"{op['profile']}#{op['table']}")
            return {"unexpected": "loaded"}
    except HTTPError as e:
        try:
            body = e.response.json()
        except ValueError:
            body = e.response.text
        return {"status": e.response.status_code, "body": body}
    raise ValueError(f"unknown op {kind}")


def main():
    ops = json.load(sys.stdin)
    json.dump([run(op) for op in ops], sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
