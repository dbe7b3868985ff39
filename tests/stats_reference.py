#!/usr/bin/env python3
"""Independent reference for the column statistics of `catalog-admin inspect`.

Usage:
    python tests/stats_reference.py generate DIR
        Writes deterministic Parquet files into DIR (fixed seeds, no clock, no
        network) and prints their paths, one per line.

    python tests/stats_reference.py compare FILE.parquet INSPECT.json
        Recomputes the statistics of FILE.parquet with pyarrow/pandas and
        compares them with INSPECT.json (the output of
        `catalog-admin inspect FILE.parquet`).  Prints one line per mismatch
        ("file column field: got X expected Y") and "N columns checked", and
        exits 1 if there is any; otherwise prints "N columns match" and exits 0.

Typical run:
    PY=/root/.cache/dataset-catalog-ci/venv/bin/python
    $PY tests/stats_reference.py generate /tmp/stats | while read f; do
        target/debug/catalog-admin inspect "$f" > "$f.json" &&
        $PY tests/stats_reference.py compare "$f" "$f.json"; done

The reference follows the conventions documented at the top of
shared/stats/src/lib.rs:

- dtype: str() of the pyarrow type; for dictionary types, of the value type.
- null_count: nulls, plus NaN and +/-infinity in floating-point columns.  null_percent:
  100 * null_count / row_count rounded to 4 decimals, exact halves away from
  zero (what the Rust code does; Python's round() would go to even).
- unique_count: distinct non-null (non-NaN) values; -0.0 and 0.0 are one value.
- mean, std (ddof=1), min, max, median: numbers for integer, floating point and
  decimal columns (decimals as doubles) over the non-null, non-NaN values;
  null when there are none (std: fewer than two) and for every other type.
  min/max of integer columns are JSON integers.
- top_values: up to 5 most frequent values, count descending then value
  ascending.  sample_values: first up to 5 non-null values in file order.
  JSON forms: integers as integers, floats and decimals as floats, booleans,
  strings, dates "YYYY-MM-DD", timestamps ISO 8601 (compared as instants;
  tz-aware types must carry an offset or "Z", naive types must not).
- Text longer than 200 characters (code points) is shown cut to 200 and ending
  in "…"; strings are still counted by their whole value.
- Binary and nested values (binary, large_binary, fixed_size_binary, list,
  struct, map) are counted, ordered and shown by their text form, cut the same
  way: binary as lowercase hex; a list as "[a, b]", a struct as "{name: a}", a
  map as "{key: value}", nested values the same way, strings unquoted, booleans
  "true"/"false", and a null inside as nothing ("[1, , 3]"): the form arrow-rs
  displays them in, as docs/operations.md says.  A null value is a null.
- top_counts: the number of rows holding each of top_values, in the same order
  (pandas value_counts).
- histogram: {"bin_edges": [...], "counts": [...]} on integer, floating point,
  decimal, date and timestamp columns with at least one non-null value; absent
  on other columns.  At most 20 bins; counts[i] values lie between
  bin_edges[i] and bin_edges[i + 1].
  - Integers, dates (in days) and timestamps (in their unit): span = max -
    min + 1, width = ceil(span / 20), k = ceil(span / width) bins, edges min +
    i * width for i in 0..k (the last, exclusive, may pass 2**64 - 1 in a
    uint64 column: compared as Python ints, exactly).  Counted with
    numpy.histogram on those integer edges.  Edges are JSON integers for
    integer columns, dates and timestamps as above for the others.
  - Floats and decimals (as doubles): numpy.histogram(values, bins=20) over
    the finite values, edges and counts compared exactly.  No histogram where
    numpy refuses the range ("Too many bins for data range": fewer than 21
    doubles in it, or max - min overflows).
- approximate: false (the generated files stay far below the memory bounds).

Numbers are compared with math.isclose(rel_tol=1e-9, abs_tol=1e-9); null must
equal null.  Only pyarrow, pandas, numpy and the standard library are used.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import re
import sys
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

TOP = 5
BINS = 20
EPOCH = dt.date(1970, 1, 1)
SAMPLES = 5
REL_TOL = 1e-9
ABS_TOL = 1e-9
COLUMN_FIELDS = [
    "name", "dtype", "null_count", "null_percent", "unique_count", "mean", "std",
    "min", "max", "median", "top_values", "top_counts", "sample_values", "approximate",
]


# --------------------------------------------------------------------------
# generate
# --------------------------------------------------------------------------

def masked(values, mask, typ):
    """pa.array of `values` (numpy) with nulls where `mask` is true."""
    return pa.array(values, type=typ, mask=np.asarray(mask, dtype=bool))


def build_numeric() -> pa.Table:
    rng = np.random.default_rng(101)
    n = 3200  # 1 null out of 3200 -> null_percent 0.03125, an exact half
    null = lambda rate: rng.random(n) < rate  # noqa: E731

    i8 = rng.integers(-128, 128, n, dtype=np.int8)
    i32 = rng.integers(-20, 21, n).astype(np.int32)  # many ties
    i64 = rng.integers(-(2**62), 2**62, n, dtype=np.int64)
    i64[5] = np.iinfo(np.int64).max
    i64[6] = np.iinfo(np.int64).min
    u32 = rng.integers(0, 2**32, n, dtype=np.uint32)
    u32[9] = np.iinfo(np.uint32).max
    u64 = rng.integers(2**63, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    u64[::3] = rng.integers(0, 1000, len(u64[::3]))
    # Both uint64 extremes: the last integer bin edge passes 2**64 - 1.
    u64_ends = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    u64_ends[[0, 1, 2]] = [0, 2**64 - 1, 2**64 - 1]

    f32 = np.round(rng.normal(0, 3, n), 1).astype(np.float32)
    f32[[2, 50, 700]] = np.nan
    f32[[3, 4, 900]] = -0.0
    f32[[10, 11, 1000]] = 0.0

    f64 = np.round(rng.normal(5, 2, n), 1)
    f64[[0, 77, 1500, 3199]] = np.nan
    # -0.0 and 0.0 together are the most frequent value (if merged).
    zeros = rng.choice(n, 80, replace=False)
    f64[zeros[:40]] = -0.0
    f64[zeros[40:]] = 0.0
    f64_mask = null(0.07)
    f64_mask[zeros] = False

    clean = rng.normal(1e6, 1234.5, n)  # no nulls, no NaN, no infinity
    # Values on numpy's own bin edges and one ULP either side: bins decided by numpy's
    # corrections against the edges.
    edges = np.linspace(-1.3, 2.9, BINS + 1)
    near = np.concatenate([edges, np.nextafter(edges, -np.inf)[1:], np.nextafter(edges, np.inf)[:-1]])
    on_edges = near[rng.integers(0, len(near), n)]
    on_edges[[0, 1]] = [-1.3, 2.9]
    # Two neighbouring doubles: numpy cannot make 20 bins, so no histogram.
    tiny_range = np.where(rng.random(n) < 0.5, 1.0, np.nextafter(1.0, 2.0))
    with_inf = np.round(rng.normal(0, 10, n), 2)
    with_inf[[5, 600]] = np.inf
    with_inf[[6, 2400]] = -np.inf

    nan_only = np.full(n, np.nan)
    nan_only_mask = rng.random(n) < 0.5

    dec_units = rng.integers(-50000, 50000, n)
    dec_units[::4] = rng.integers(-3, 4, len(dec_units[::4]))  # ties
    dec_units[8] = 9_999_999_999  # 99999999.99, the largest decimal(10, 2)
    dec_mask = null(0.1)
    dec = [None if m else Decimal(int(u)).scaleb(-2) for u, m in zip(dec_units, dec_mask)]

    one_value = [None] * n
    one_value[1234] = 884213
    one_value_f = [None] * n
    one_value_f[2000] = -3.75
    one_null = rng.integers(0, 5, n).astype(np.int16)
    one_null_mask = np.zeros(n, dtype=bool)
    one_null_mask[17] = True

    return pa.table({
        "i8": masked(i8, null(0.1), pa.int8()),
        "i32": masked(i32, null(0.05), pa.int32()),
        "i64_big": masked(i64, null(0.08), pa.int64()),
        "u32": masked(u32, null(0.02), pa.uint32()),
        "u64": masked(u64, null(0.03), pa.uint64()),
        "u64_ends": pa.array(u64_ends, pa.uint64()),
        "f32": masked(f32, null(0.06), pa.float32()),
        "f64": masked(f64, f64_mask, pa.float64()),
        "f64_clean": pa.array(clean, pa.float64()),
        "f64_on_edges": pa.array(on_edges, pa.float64()),
        "f64_tiny_range": masked(tiny_range, null(0.1), pa.float64()),
        "f64_with_infinity": pa.array(with_inf, pa.float64()),
        "f64_all_null": pa.array([None] * n, pa.float64()),
        "f64_nan_or_null": masked(nan_only, nan_only_mask, pa.float64()),
        "dec": pa.array(dec, pa.decimal128(10, 2)),
        "one_value": pa.array(one_value, pa.int64()),
        "one_value_f": pa.array(one_value_f, pa.float64()),
        "constant_f": pa.array(np.full(n, 0.1), pa.float64()),
        "constant_i": pa.array(np.full(n, 7, dtype=np.int32), pa.int32()),
        "one_null": masked(one_null, one_null_mask, pa.int16()),
    })


def build_text_time() -> pa.Table:
    rng = np.random.default_rng(202)
    n = 2000

    # Exact counts: a three-way tie at the top (code-point order: "Apple" <
    # "apple" < "zebra") and a four-way tie at 250 cut by the top-5 limit
    # ("éclair" U+00E9 < "日本" U+65E5 < "！" U+FF01 < "😀" U+1F600).
    counts = {"zebra": 300, "apple": 300, "Apple": 300, "😀": 250, "！": 250,
              "日本": 250, "éclair": 250, "": 50, "Ωmega": 30}
    strings = [s for s, c in counts.items() for _ in range(c)]
    strings += [None] * (n - len(strings))
    strings = [strings[i] for i in rng.permutation(n)]

    bools = [True] * 900 + [False] * 900 + [None] * 200  # tie: false first
    bools = [bools[i] for i in rng.permutation(n)]

    epoch = dt.date(1970, 1, 1)
    days = rng.integers(-400, 400, n)  # dates both sides of the epoch, with ties
    dates = [epoch + dt.timedelta(days=int(d)) for d in days]

    base_us = 1_704_067_200_000_000  # 2024-01-01T00:00:00Z
    ts_us = base_us + rng.integers(0, 300, n) * 1_000_000  # whole seconds, ties
    ts_us[::5] += rng.integers(1, 1_000_000, len(ts_us[::5]))  # some fractions
    ts_us[1::7] = base_us + 500_000  # .5 s, the most frequent value

    ts_ms = rng.integers(-3_000, 3_000, n) * 1_500  # naive, around 1970, .5 s steps
    ts_ms[::9] = rng.integers(-10**12, 10**12, len(ts_ms[::9]))

    ts_ns = 1_700_000_000_000_000_000 + rng.integers(0, 50, n) * 123_456_789

    return pa.table({
        "s": pa.array(strings, pa.string()),
        "s_all_null": pa.array([None] * n, pa.string()),
        "s_large": pa.array(strings[::-1], pa.large_string()),
        "b": pa.array(bools, pa.bool_()),
        "d": masked(np.array(days, dtype=np.int32), rng.random(n) < 0.05, pa.int32())
        .cast(pa.date32()),
        "d_py": pa.array(dates, pa.date32()),
        "ts_utc": masked(ts_us, rng.random(n) < 0.04, pa.int64())
        .cast(pa.timestamp("us", tz="UTC")),
        "ts_ms_naive": masked(ts_ms, rng.random(n) < 0.03, pa.int64())
        .cast(pa.timestamp("ms")),
        "ts_ns_paris": masked(ts_ns, rng.random(n) < 0.02, pa.int64())
        .cast(pa.timestamp("ns", tz="Europe/Paris")),
    })


def build_dictionary() -> pa.Table:
    rng = np.random.default_rng(303)
    n = 6000
    vocab = ["north", "south", "east", "west", "центр", "", "ünter"]
    idx = rng.integers(0, len(vocab), n).astype(np.int32)
    idx_mask = rng.random(n) < 0.1
    cat = pa.DictionaryArray.from_arrays(
        pa.array(idx, pa.int32(), mask=idx_mask), pa.array(vocab, pa.string()))
    small = pa.DictionaryArray.from_arrays(
        pa.array(rng.integers(0, 2, n).astype(np.int8), pa.int8()),
        pa.array(["b", "a"], pa.string()))
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "cat": cat,
        "cat_two": small,
        "plain": cat.cast(pa.string()),
    })


def build_row_groups() -> pa.Table:
    rng = np.random.default_rng(404)
    n = 140_000  # more than two 64 Ki-row reader batches
    x = np.round(rng.normal(0, 10, n), 2)
    x[rng.choice(n, 300, replace=False)] = np.nan
    vocab = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"])
    cat = vocab[rng.integers(0, len(vocab), n)]
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "k": masked(rng.integers(0, 1000, n), rng.random(n) < 0.01, pa.int64()),
        "x": masked(x, rng.random(n) < 0.02, pa.float64()),
        "cat": masked(cat, rng.random(n) < 0.05, pa.string()),
        "cat_dict": pa.array(cat, pa.string()).dictionary_encode(),
        "flag": masked(rng.random(n) < 0.3, rng.random(n) < 0.01, pa.bool_()),
        "ts": pa.array(1_600_000_000_000_000 + rng.integers(0, 10**6, n) * 10**6,
                       pa.int64()).cast(pa.timestamp("us", tz="UTC")),
    })


def permuted(rng, values):
    return [values[i] for i in rng.permutation(len(values))]


def build_long_binary() -> pa.Table:
    rng = np.random.default_rng(505)
    # Long text: two values alike in their first 250 characters (counted apart, shown
    # alike), a 201-character one in a 2-byte character (cut), one of exactly 200 (not cut).
    a_x, a_y = "a" * 250 + "x", "a" * 250 + "y"
    text = [a_x] * 3 + [a_y] * 3 + ["é" * 201] * 2 + ["b" * 200] * 2 + ["short", None]
    # Binary: hex; 150 bytes (300 hex digits) are cut; two values alike in their first 100
    # bytes have the same cut text and count as one.
    long1 = bytes(range(150))
    long2 = bytes(range(100)) + b"\x01" * 50
    binary = ([b""] * 2 + [b"\x00\xff"] * 3 + [long1] + [long2] * 2 + [b"A"] * 2
              + [None] * 2)
    large = [b"\x7f"] * 5 + [b"\x80\x81"] * 5 + [None] * 2
    return pa.table({
        "long_text": pa.array(permuted(rng, text), pa.string()),
        "long_large_text": pa.array(permuted(rng, text), pa.large_string()),
        "bin": pa.array(permuted(rng, binary), pa.binary()),
        "large_bin": pa.array(permuted(rng, large), pa.large_binary()),
    })


def build_nested() -> pa.Table:
    rng = np.random.default_rng(606)
    # Lists (with nulls inside, empty, and a long one that is cut), structs, lists of
    # structs, maps, fixed-size binary.
    ints = ([[1, None, 3]] * 3 + [[4]] * 2 + [[]] * 2 + [None] * 2
            + [list(range(100))] + [[-(2**63), 2**63 - 1]] + [[10]])
    strs = [["a", "b"]] * 3 + [["", None]] * 2 + [["é" * 120, "x" * 120]] + [None] * 2 + [["z"]] * 4
    struct_type = pa.struct([("id", pa.int64()), ("name", pa.string()), ("ok", pa.bool_())])
    structs = ([{"id": 1, "name": "one", "ok": True}] * 3 + [{"id": None, "name": None, "ok": None}] * 2
               + [{"id": 2, "name": "two", "ok": False}] + [None] * 2 + [{"id": 3, "name": "", "ok": True}] * 4)
    inner = pa.struct([("k", pa.string()), ("v", pa.list_(pa.int32()))])
    list_structs = ([[{"k": "a", "v": [1, 2]}]] * 2 + [[{"k": "b", "v": None}, {"k": None, "v": []}]] * 3
                    + [None] * 2 + [[]] * 5)
    maps = [[("k", 1)]] * 3 + [[("z", 2), ("y", None)]] * 2 + [[]] * 2 + [None] * 2 + [[("a", 0)]] * 3
    fixed = [b"ab"] * 4 + [b"\x00\x01"] * 4 + [None] * 2 + [b"zz"] * 2
    return pa.table({
        "list_int": pa.array(permuted(rng, ints), pa.list_(pa.int64())),
        "list_str": pa.array(permuted(rng, strs), pa.list_(pa.string())),
        "struct": pa.array(permuted(rng, structs), struct_type),
        "list_struct": pa.array(permuted(rng, list_structs), pa.list_(inner)),
        "map": pa.array(permuted(rng, maps), pa.map_(pa.string(), pa.int64())),
        "fixed_bin": pa.array(permuted(rng, fixed), pa.binary(2)),
    })


FILES = [
    ("numeric.parquet", build_numeric, None),
    ("text_time.parquet", build_text_time, None),
    ("dictionary.parquet", build_dictionary, 1000),
    ("row_groups.parquet", build_row_groups, 1000),
    ("long_binary.parquet", build_long_binary, 5),
    ("nested.parquet", build_nested, 5),
]


def generate(out: str) -> int:
    os.makedirs(out, exist_ok=True)
    for name, build, row_group_size in FILES:
        path = os.path.join(out, name)
        pq.write_table(build(), path, compression="snappy", row_group_size=row_group_size)
        print(path)
    return 0


# --------------------------------------------------------------------------
# reference statistics
# --------------------------------------------------------------------------

class Ts:
    """A timestamp as an instant: nanoseconds since the epoch (UTC for aware types)."""

    def __init__(self, ns: int, aware: bool):
        self.ns, self.aware = ns, aware

    def __repr__(self):
        secs, sub = divmod(self.ns, 10**9)
        text = (dt.datetime(1970, 1, 1) + dt.timedelta(seconds=secs)).isoformat()
        if sub:
            text += ("." + f"{sub:09d}").rstrip("0")
        return text + ("Z" if self.aware else "")


UNIT_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
TS_RE = re.compile(
    r"^(\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(Z|[+-]\d{2}:\d{2})?$")


def parse_ts(text):
    """An ISO 8601 string as a Ts, or None if it is not one."""
    if not isinstance(text, str):
        return None
    m = TS_RE.match(text)
    if not m:
        return None
    y, mo, d, h, mi, s, frac, tz = m.groups()
    days = dt.date(int(y), int(mo), int(d)).toordinal() - dt.date(1970, 1, 1).toordinal()
    ns = ((days * 86400 + int(h) * 3600 + int(mi) * 60 + int(s)) * 10**9
          + int((frac or "").ljust(9, "0")))
    if tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        ns -= sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60) * 10**9
    return Ts(ns, tz is not None)


def kind_of(typ: pa.DataType) -> str:
    if (pa.types.is_binary(typ) or pa.types.is_large_binary(typ)
            or pa.types.is_fixed_size_binary(typ)):
        return "binary"
    if pa.types.is_nested(typ):
        return "nested"
    if pa.types.is_integer(typ):
        return "int"
    if pa.types.is_floating(typ):
        return "float"
    if pa.types.is_decimal(typ):
        return "decimal"
    if pa.types.is_boolean(typ):
        return "bool"
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return "text"
    if pa.types.is_date(typ):
        return "date"
    if pa.types.is_timestamp(typ):
        return "timestamp"
    raise SystemExit(f"unsupported column type {typ}")


SHOWN = 200


def shown(text: str) -> str:
    """Text as shown: cut to 200 characters, ending in "…" when cut."""
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


def text_form(value, typ: pa.DataType) -> str:
    """A binary or nested value's text form (see the conventions above)."""
    if value is None:
        return ""
    if kind_of(typ) == "binary":
        return value.hex()
    if pa.types.is_map(typ):
        return "{" + ", ".join(f"{text_form(k, typ.key_type)}: {text_form(v, typ.item_type)}"
                               for k, v in value) + "}"
    if pa.types.is_struct(typ):
        return "{" + ", ".join(f"{typ.field(i).name}: {text_form(value[typ.field(i).name], typ.field(i).type)}"
                               for i in range(typ.num_fields)) + "}"
    if pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ):
        return "[" + ", ".join(text_form(e, typ.value_type) for e in value) + "]"
    if pa.types.is_boolean(typ):
        return "true" if value else "false"
    if pa.types.is_integer(typ) or pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return str(value)
    raise SystemExit(f"no text form for {typ}")


def null_percent(nulls: int, rows: int) -> float:
    if rows == 0:
        return 0.0
    scaled = 100.0 * nulls / rows * 10_000.0
    return float(Decimal(scaled).quantize(Decimal(1), rounding=ROUND_HALF_UP)) / 10_000.0


def reference_column(field: pa.Field, col: pa.ChunkedArray, rows: int) -> dict:
    typ = field.type
    if pa.types.is_dictionary(typ):
        typ = typ.value_type
        col = col.cast(typ)
    kind = kind_of(typ)

    if kind in ("binary", "nested"):
        values = col.to_pylist()
        valid = [shown(text_form(v, typ)) for v in values if v is not None]
        nulls = len(values) - len(valid)
        counts: dict[str, int] = {}
        for v in valid:
            counts[v] = counts.get(v, 0) + 1
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]
        return {
            "name": field.name, "dtype": str(typ), "null_count": nulls,
            "null_percent": null_percent(nulls, rows), "unique_count": len(counts),
            "mean": None, "std": None, "min": None, "max": None, "median": None,
            "top_values": [v for v, _ in top], "top_counts": [c for _, c in top],
            "sample_values": valid[:SAMPLES], "approximate": False, "histogram": None,
            "_kind": "text",
        }

    if kind == "float":
        full = pd.Series(col.to_numpy(zero_copy_only=False), dtype="float64")  # null -> NaN
        full = full.where(np.isfinite(full))  # +/-infinity counts as null too
    elif kind == "timestamp":
        full = pd.Series(col.cast(pa.int64()).to_pylist(), dtype=object)
    else:
        full = pd.Series(col.to_pylist(), dtype=object)
    isna = full.isna()
    nulls = int(isna.sum())
    valid = full[~isna].reset_index(drop=True)

    if kind == "int":
        valid = valid.astype("uint64" if pa.types.is_unsigned_integer(typ) else "int64")
    elif kind == "float":
        valid = valid + 0.0  # -0.0 and 0.0 are one value
    elif kind == "timestamp":
        valid = valid.astype("int64")

    def to_json(v):
        if kind == "int":
            return int(v)
        if kind in ("float", "decimal"):
            return float(v)
        if kind == "bool":
            return bool(v)
        if kind == "text":
            return shown(str(v))
        if kind == "date":
            return v.isoformat()
        return Ts(int(v) * UNIT_NS[typ.unit], typ.tz is not None)

    mean = std = vmin = vmax = median = None
    if kind in ("int", "float", "decimal") and len(valid):
        num = valid.map(float).astype("float64") if kind == "decimal" else valid
        mean = float(num.mean())
        std = float(num.std(ddof=1)) if len(num) >= 2 else None
        median = float(num.median())
        vmin, vmax = to_json(valid.min()), to_json(valid.max())

    counts = valid.value_counts(sort=False, dropna=True)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]
    return {
        "name": field.name,
        "dtype": str(typ),
        "null_count": nulls,
        "null_percent": null_percent(nulls, rows),
        "unique_count": int(valid.nunique()),
        "mean": mean,
        "std": std,
        "min": vmin,
        "max": vmax,
        "median": median,
        "top_values": [to_json(v) for v, _ in top],
        "top_counts": [int(c) for _, c in top],
        "sample_values": [to_json(v) for v in valid.iloc[:SAMPLES]],
        "approximate": False,
        "histogram": reference_histogram(kind, typ, valid),
        "_kind": kind,
    }


def integer_histogram(values: np.ndarray):
    """Integer bins (edges as Python ints, exact) and their counts by numpy."""
    lo, hi = int(values.min()), int(values.max())
    span = hi - lo + 1
    width = -(-span // BINS)
    bins = -(-span // width)
    edges = [lo + i * width for i in range(bins + 1)]
    assert bins <= BINS and edges[-2] <= hi < edges[-1]
    # numpy's last bin is closed: [edges[-2], hi] holds the integers of [edges[-2],
    # edges[-1]), and hi fits the values' dtype where edges[-1] may not (uint64).
    counts, _ = np.histogram(values, bins=np.array(edges[:-1] + [hi], dtype=values.dtype))
    return edges, [int(c) for c in counts]


def float_histogram(values: np.ndarray):
    """numpy.histogram(values, bins=20), or None where numpy refuses the range."""
    try:
        with np.errstate(all="ignore"):
            counts, edges = np.histogram(values, bins=BINS)
    except ValueError as e:  # "Too many bins for data range"
        if "Too many bins" not in str(e):
            raise
        return None
    return [float(e) for e in edges], [int(c) for c in counts]


def reference_histogram(kind: str, typ: pa.DataType, valid: pd.Series):
    """{"bin_edges", "counts"} of the valid values, or None (no histogram)."""
    if len(valid) == 0 or kind not in ("int", "float", "decimal", "date", "timestamp"):
        return None
    if kind == "int":
        edges, counts = integer_histogram(valid.to_numpy())
    elif kind == "date":
        days = np.array([(d - EPOCH).days for d in valid], dtype=np.int64)
        edges, counts = integer_histogram(days)
        edges = [(EPOCH + dt.timedelta(days=e)).isoformat() for e in edges]
    elif kind == "timestamp":
        edges, counts = integer_histogram(valid.to_numpy(dtype=np.int64))
        edges = [Ts(e * UNIT_NS[typ.unit], typ.tz is not None) for e in edges]
    else:
        values = valid.map(float) if kind == "decimal" else valid
        found = float_histogram(values.to_numpy(dtype=np.float64))
        if found is None:
            return None
        edges, counts = found
    return {"bin_edges": edges, "counts": counts}


# --------------------------------------------------------------------------
# compare
# --------------------------------------------------------------------------

def same_number(got, exp) -> bool:
    if exp is None or got is None:
        return got is None and exp is None
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return False
    return math.isclose(got, exp, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def same_value(got, exp, kind: str) -> bool:
    """One JSON value against the reference value of a column of `kind`."""
    if kind == "int":
        return type(got) is int and got == exp
    if kind in ("float", "decimal"):
        return type(got) is float and same_number(got, exp)
    if kind == "bool":
        return type(got) is bool and got == exp
    if kind in ("text", "date"):
        return type(got) is str and got == exp
    ts = parse_ts(got)
    return ts is not None and ts.ns == exp.ns and ts.aware == exp.aware


def same_edge(got, exp, kind: str) -> bool:
    """A bin edge, exactly: integers as integers (also past 2**64 - 1), numpy's doubles
    bit for bit, dates and timestamps as values are."""
    if kind in ("float", "decimal"):
        return type(got) is float and got == exp
    return same_value(got, exp, kind)


def show(v) -> str:
    if isinstance(v, Ts):
        return json.dumps(repr(v))
    if isinstance(v, list):
        return "[" + ", ".join(show(x) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)


def compare(parquet_path: str, json_path: str) -> int:
    with open(json_path, encoding="utf-8") as f:
        got = json.load(f)
    table = pq.read_table(parquet_path)
    label = os.path.basename(parquet_path)
    problems = []

    def mismatch(column, field, g, e):
        problems.append(f"{label} {column} {field}: got {show(g)} expected {show(e)}")

    with open(parquet_path, "rb") as f:
        data = f.read()
    for field, expected in (("row_count", table.num_rows), ("size", len(data)),
                            ("sha256", hashlib.sha256(data).hexdigest())):
        if type(got.get(field)) is not type(expected) or got.get(field) != expected:
            mismatch("-", field, got.get(field), expected)

    schema = got.get("schema") or []
    names = [c.get("name") for c in schema]
    if names != table.column_names:
        mismatch("-", "columns", names, table.column_names)

    checked = 0
    for i, field in enumerate(table.schema):
        if i >= len(schema):
            break
        col_got = schema[i]
        ref = reference_column(field, table.column(i), table.num_rows)
        kind = ref["_kind"]
        name = field.name
        checked += 1
        fields = COLUMN_FIELDS + (["histogram"] if ref["histogram"] else [])
        if sorted(col_got) != sorted(fields):
            mismatch(name, "fields", sorted(col_got), sorted(fields))
        for key in ("name", "dtype"):
            if col_got.get(key) != ref[key]:
                mismatch(name, key, col_got.get(key), ref[key])
        for key in ("null_count", "unique_count"):
            if type(col_got.get(key)) is not int or col_got.get(key) != ref[key]:
                mismatch(name, key, col_got.get(key), ref[key])
        if col_got.get("approximate") is not False:
            mismatch(name, "approximate", col_got.get("approximate"), False)
        for key in ("null_percent", "mean", "std", "median"):
            g, e = col_got.get(key), ref[key]
            if not same_number(g, e) or (g is not None and type(g) is not float):
                mismatch(name, key, g, e)
        for key in ("min", "max"):
            g, e = col_got.get(key), ref[key]
            if (g is None) != (e is None) or (e is not None and not same_value(g, e, kind)):
                mismatch(name, key, g, e)
        for key in ("top_values", "sample_values"):
            g, e = col_got.get(key), ref[key]
            if (not isinstance(g, list) or len(g) != len(e)
                    or not all(same_value(a, b, kind) for a, b in zip(g, e))):
                mismatch(name, key, g, e)
        g, e = col_got.get("top_counts"), ref["top_counts"]
        if not isinstance(g, list) or [type(c) for c in g] != [int] * len(e) or g != e:
            mismatch(name, "top_counts", g, e)
        g, e = col_got.get("histogram"), ref["histogram"]
        if e is None:
            if g is not None:
                mismatch(name, "histogram", g, None)
        elif not isinstance(g, dict) or sorted(g) != ["bin_edges", "counts"]:
            mismatch(name, "histogram", g, e["bin_edges"])
        else:
            edges, counts = g["bin_edges"], g["counts"]
            if (not isinstance(edges, list) or len(edges) != len(e["bin_edges"])
                    or not all(same_edge(a, b, kind) for a, b in zip(edges, e["bin_edges"]))):
                mismatch(name, "histogram.bin_edges", edges, e["bin_edges"])
            if (not isinstance(counts, list) or [type(c) for c in counts] != [int] * len(counts)
                    or counts != e["counts"]):
                mismatch(name, "histogram.counts", counts, e["counts"])

    for line in problems:
        print(line)
    if problems:
        print(f"{checked} columns checked")
        return 1
    print(f"{checked} columns match")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "generate":
        return generate(argv[1])
    if len(argv) == 3 and argv[0] == "compare":
        return compare(argv[1], argv[2])
    print("\n\n".join(__doc__.split("\n\n")[1:3]), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
