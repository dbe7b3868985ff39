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


def main():
    ops = json.load(sys.stdin)
    results = []
    for op in ops:
        results.append({"validate": validate, "mixed": mixed}[op["op"]](op))
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
