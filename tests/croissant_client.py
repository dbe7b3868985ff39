#!/usr/bin/env python3
"""The Croissant side of tests/tests/api/linked.rs: MLCommons' own `mlcroissant` reading the
catalog's Croissant documents over HTTP, as a Croissant user would.

Reads a JSON array of operations on stdin and writes a JSON array of results, one per operation:

- {"op": "validate", "url": U, "parquet": P or null, "key": K or null, "record_set": R}
  loads the document at U with `mlcroissant.Dataset` (which validates it) and gives its
  errors and warnings; with P, reads every record of R (the file is downloaded from the
  document's contentUrl, with K as HTTP Basic's password when given, as
  CROISSANT_BASIC_AUTH_USERNAME/PASSWORD tell mlcroissant) and compares them with pyarrow's
  reading of P: {"errors", "warnings", "records", "equal", "why"}. A failure to read is
  {"read_error": "..."}.
- {"op": "mixed", "out": PATH} writes a Parquet file with a column of every kind Croissant can
  describe, and some it cannot, to PATH.
- {"op": "tree", "root": R, "files": [[REL, FIRST_ID, ROWS], ...]} writes Parquet files under R
  (columns id int64, name string, score double with a null every fifth row).
- {"op": "files", "url": U, "api": A, "slug": S, "key": K, "dir": D} reads a version of many
  files as its Croissant document tells: validates the document at U; saves it as D/croissant.json;
  lists every file through the data endpoint (A/datasets/S/data?split=NAME, with K as x-api-key,
  following next_page_token), downloads each from its presigned URL to D/<split>/<path>
  (D/files/<path> without splits), checking its SHA-256; then loads D/croissant.json with
  mlcroissant and reads the records of each split (filters={"S/split": NAME}) and of the whole
  record set, comparing each with pyarrow's reading of the same files, Hive partition values
  added from the listing: {"errors", "warnings", "includes", "files", "splits": {NAME:
  {"records", "equal", "why"}}, "all": {"records", "equal", "why"}}.

CROISSANT_CACHE must be set (a fresh directory) before this starts: mlcroissant reads it once.
"""

import datetime as dt
import decimal
import json
import math
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq


def canonical(value, arrow_type):
    """A value as both readers agree to show it, given the column's Arrow type."""
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, (bytes, str)):
        value = value.item()  # numpy scalars
    if isinstance(value, float) and math.isnan(value):
        return None  # mlcroissant reads NaN as a missing value (pandas)
    if pa.types.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type) or pa.types.is_fixed_size_list(arrow_type):
        return [canonical(v, arrow_type.value_type) for v in value]
    if pa.types.is_struct(arrow_type):
        by_name = {}
        for key, v in value.items():
            by_name[key.rsplit("/", 1)[-1]] = v
        return {f.name: canonical(by_name.get(f.name), f.type) for f in arrow_type}
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, bytes):
        return "bytes:" + value.hex()
    if pa.types.is_date(arrow_type):
        if isinstance(value, dt.datetime) or hasattr(value, "to_pydatetime"):
            value = value.date() if hasattr(value, "date") else value
        return value.isoformat()
    if pa.types.is_timestamp(arrow_type):
        if hasattr(value, "to_pydatetime"):
            value = value.to_pydatetime()
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc)
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return float(value) if pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type) else int(value)
    return repr(value)


def validate(op):
    import mlcroissant as mlc

    for name in ("CROISSANT_BASIC_AUTH_USERNAME", "CROISSANT_BASIC_AUTH_PASSWORD"):
        os.environ.pop(name, None)
    if op.get("key"):
        os.environ["CROISSANT_BASIC_AUTH_USERNAME"] = "key"
        os.environ["CROISSANT_BASIC_AUTH_PASSWORD"] = op["key"]
    try:
        dataset = mlc.Dataset(jsonld=op["url"])
    except mlc.ValidationError as e:
        return {"errors": [str(e)], "warnings": []}
    issues = dataset.metadata.ctx.issues
    result = {"errors": sorted(issues.errors), "warnings": sorted(issues.warnings)}
    if not op.get("parquet"):
        return result
    table = pq.read_table(op["parquet"])
    described = {f.id: f for f in dataset.metadata.record_sets[0].fields}
    columns = {}
    for field_id, field in described.items():
        name = field.source.extract.column
        columns[field_id] = (name, table.schema.field(name).type)
    try:
        got = list(dataset.records(op["record_set"]))
    except Exception as e:  # noqa: BLE001: the reader's failure is the result
        cause = e
        while cause.__cause__ is not None:
            cause = cause.__cause__
        return {**result, "read_error": f"{type(cause).__name__}: {cause}"}
    result["records"] = len(got)
    result["fields"] = sorted(name for name, _ in columns.values())
    expected = table.to_pylist()
    if len(got) != len(expected):
        return {**result, "equal": False, "why": f"{len(got)} records, {len(expected)} rows"}
    for i, (record, row) in enumerate(zip(got, expected)):
        for field_id, (name, arrow_type) in columns.items():
            a = canonical(record.get(field_id), arrow_type)
            b = canonical(row[name], arrow_type)
            if a != b:
                return {**result, "equal": False,
                        "why": f"row {i}, column {name!r}: mlcroissant {a!r}, pyarrow {b!r}"}
    return {**result, "equal": True, "why": ""}


def mixed(op):
    n = 50
    table = pa.table({
        "id": pa.array([i if i % 7 else None for i in range(n)], pa.int64()),
        "small": pa.array([i % 200 for i in range(n)], pa.uint8()),
        "ratio": pa.array([i / 3 if i % 5 else float("nan") for i in range(n)], pa.float32()),
        "name with spaces": pa.array([f"row {i} é" if i % 4 else None for i in range(n)]),
        "flag": pa.array([i % 3 == 0 if i % 6 else None for i in range(n)]),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(n)], pa.date32()),
        "at_utc": pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(minutes=17 * i) for i in range(n)],
                           pa.timestamp("us", tz="UTC")),
        "at_local": pa.array([dt.datetime(2024, 3, 1) + dt.timedelta(hours=i) for i in range(n)], pa.timestamp("ms")),
        "price": pa.array([decimal.Decimal(i * 125) / 100 for i in range(n)], pa.decimal128(10, 2)),
        "blob": pa.array([bytes([i, 0, 255]) for i in range(n)], pa.binary()),
        "clock": pa.array([dt.time(i % 24, i % 60) for i in range(n)], pa.time64("us")),
        "scores": pa.array([[i, i + 1] if i % 3 else [] for i in range(n)], pa.list_(pa.int32())),
        "place": pa.array([{"x": float(i), "label": f"p{i}"} for i in range(n)],
                          pa.struct([("x", pa.float64()), ("label", pa.string())])),
        "tags_by_name": pa.array([[("a", i)] for i in range(n)], pa.map_(pa.string(), pa.int64())),
        "took": pa.array(list(range(n)), pa.duration("s")),
    })
    pq.write_table(table, op["out"])
    return {"written": op["out"], "rows": n}


def tree(op):
    for rel, first, rows in op["files"]:
        path = os.path.join(op["root"], rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        ids = list(range(first, first + rows))
        pq.write_table(pa.table({
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([f"row {i}" for i in ids], pa.string()),
            "score": pa.array([None if i % 5 == 0 else i / 8 for i in ids], pa.float64()),
        }), path)
    return {"written": len(op["files"])}


def compare(got, expected, fields):
    """mlcroissant's records against pyarrow's rows (dicts by column name), as sorted canonical rows."""
    def rows(items, by_id):
        out = []
        for item in items:
            out.append(json.dumps([canonical(item.get(key), arrow_type) for key, arrow_type in by_id], default=str))
        return sorted(out)

    a = rows(got, [(field_id, t) for field_id, (_, t) in fields.items()])
    b = rows(expected, [(name, t) for name, t in fields.values()])
    if len(a) != len(b):
        return {"records": len(a), "equal": False, "why": f"{len(a)} records, {len(b)} rows"}
    for x, y in zip(a, b):
        if x != y:
            return {"records": len(a), "equal": False, "why": f"mlcroissant {x}, pyarrow {y}"}
    return {"records": len(a), "equal": True, "why": ""}


def files(op):
    import hashlib

    import mlcroissant as mlc
    import requests

    for name in ("CROISSANT_BASIC_AUTH_USERNAME", "CROISSANT_BASIC_AUTH_PASSWORD"):
        os.environ.pop(name, None)
    slug, root = op["slug"], op["dir"]
    os.makedirs(root, exist_ok=True)
    try:
        remote = mlc.Dataset(jsonld=op["url"])
    except mlc.ValidationError as e:
        return {"errors": [str(e)], "warnings": []}
    issues = remote.metadata.ctx.issues
    result = {"errors": sorted(issues.errors), "warnings": sorted(issues.warnings)}
    document = requests.get(op["url"], timeout=30).json()
    with open(os.path.join(root, "croissant.json"), "w") as f:
        json.dump(document, f)
    file_set = document["distribution"][0]
    result["includes"] = file_set.get("includes")
    split_sets = [rs for rs in document["recordSet"] if rs.get("dataType") == "cr:Split"]
    splits = [list(d.values())[0] for d in split_sets[0]["data"]] if split_sets else [None]
    headers = {"x-api-key": op["key"]} if op.get("key") else {}
    expected, listed = {}, 0
    for split in splits:
        params = {"page_size": "1000"} | ({"split": split} if split else {})
        rows = expected.setdefault(split, [])
        while True:
            page = requests.get(f"{op['api']}/datasets/{slug}/data", params=params, headers=headers, timeout=30)
            page.raise_for_status()
            page = page.json()
            for entry in page["files"]:
                local = os.path.join(root, split or "files", entry["path"])
                os.makedirs(os.path.dirname(local), exist_ok=True)
                body = requests.get(entry["url"], timeout=30).content
                if hashlib.sha256(body).hexdigest() != entry["sha256"]:
                    return {**result, "read_error": f"{entry['path']}: SHA-256 differs"}
                with open(local, "wb") as f:
                    f.write(body)
                listed += 1
                for row in pq.read_table(local).to_pylist():
                    for key, value in entry["partition_values"].items():
                        row[key] = dt.date.fromisoformat(value) if isinstance(value, str) and len(value) == 10 and value[4] == "-" else value
                    if split:
                        row["split"] = split
                    rows.append(row)
            if not page.get("next_page_token"):
                break
            params["page_token"] = page["next_page_token"]
    result["files"] = listed
    local = mlc.Dataset(jsonld=os.path.join(root, "croissant.json"))
    record_set = next(rs for rs in local.metadata.record_sets if rs.uuid == slug)
    sample = next(iter(expected.values()))[0]
    fields = {}
    for field in record_set.fields:
        if field.name in ("id", "name", "score"):
            fields[field.id] = (field.name, {"id": pa.int64(), "name": pa.string(), "score": pa.float64()}[field.name])
        elif field.name == "split":
            fields[field.id] = ("split", pa.string())
        else:
            value = sample.get(field.name)
            fields[field.id] = (field.name, pa.date32() if isinstance(value, dt.date) else pa.int64() if isinstance(value, int) else pa.string())
    result["fields"] = sorted(name for name, _ in fields.values())
    result["splits"] = {}
    try:
        for split in splits:
            if split is None:
                continue
            # A filter rewrites the FileSet's includes in place: a fresh Dataset for each read.
            fresh = mlc.Dataset(jsonld=os.path.join(root, "croissant.json"))
            got = list(fresh.records(slug, filters={f"{slug}/split": split}))
            result["splits"][split] = compare(got, expected[split], fields)
        fresh = mlc.Dataset(jsonld=os.path.join(root, "croissant.json"))
        got = list(fresh.records(slug))
        result["all"] = compare(got, [r for rows in expected.values() for r in rows], fields)
    except Exception as e:  # noqa: BLE001: the reader's failure is the result
        cause = e
        while cause.__cause__ is not None:
            cause = cause.__cause__
        return {**result, "read_error": f"{type(cause).__name__}: {cause}"}
    return result


def main():
    ops = json.load(sys.stdin)
    results = []
    for op in ops:
        results.append({"validate": validate, "mixed": mixed, "tree": tree, "files": files}[op["op"]](op))
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
