#!/usr/bin/env python3
"""Independent reference for the rows API (GET /datasets/{slug}/rows), from pyarrow.

Usage:
    python tests/rows_reference.py generate DIR
        Writes Parquet files into DIR and prints their paths, one per line: every file of
        tests/stats_reference.py (the dtypes the statistics tests cover), written with a page
        index and small pages, plus one of long cells and other types (strings over 1,000
        characters, long binary, maps with integer keys, times, durations, decimal256), and
        the row-groups file again without a page index.

    python tests/rows_reference.py compare FILE.parquet ANSWER.json [ANSWER.json ...]
        Reads FILE.parquet with pyarrow, takes the rows each ANSWER.json (one rows API answer)
        says it holds (offset, length), and compares: the column names and types (pyarrow's
        str() of the type, a dictionary's value type), row_idx, every value, truncated_cells.
        Prints one line per mismatch and exits 1 if there is any, else prints
        "N rows match" and exits 0.

The conventions (docs/api.md, Rows): nulls null; NaN and infinities as "NaN", "Infinity",
"-Infinity"; decimals as exact strings; dates "YYYY-MM-DD"; times "HH:MM:SS[.fff]";
timestamps ISO 8601 with 3, 6 or 9 fraction digits as needed, with "Z" or the offset of the
column's zone at that instant, and no zone for naive columns; durations "PT<seconds>S";
binary as base64 of its first 64 bytes; strings cut at 1,000 characters, lists at 100 items;
maps with string keys as objects, others as [{"key", "value"}]; a cut cell named in
truncated_cells.
"""

import base64
import datetime as dt
import json
import math
import os
import sys
from decimal import Decimal
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.parquet as pq


TEXT_CHARS, BINARY_BYTES, LIST_ITEMS = 1000, 64, 100


def build_long_cells() -> pa.Table:
    n = 30
    long_text = ["é" * 1500 if i % 3 == 0 else ("x" * 1000 if i % 3 == 1 else None) for i in range(n)]
    blob = [bytes(range(200)) if i % 2 == 0 else b"\x01\x02" for i in range(n)]
    int_maps = [[(i, f"v{i}"), (i + 1, None)] if i % 4 else None for i in range(n)]
    times = [dt.time(13, 45, 0, 250000) if i % 5 else None for i in range(n)]
    durations = [dt.timedelta(seconds=i * 90, milliseconds=i % 3 * 250) for i in range(n)]
    big = [Decimal("-1234567890123456789012345.678") if i % 2 else Decimal("0.000") for i in range(n)]
    long_list = [list(range(i * 10)) for i in range(n)]
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "long_text": pa.array(long_text, pa.string()),
        "blob": pa.array(blob, pa.binary()),
        "int_map": pa.array(int_maps, pa.map_(pa.int32(), pa.string())),
        "t": pa.array(times, pa.time64("us")),
        "t_s": pa.array([dt.time(1, 2, 3)] * n, pa.time32("s")),
        "dur": pa.array(durations, pa.duration("ms")),
        "big": pa.array(big, pa.decimal256(40, 3)),
        "long_list": pa.array(long_list, pa.list_(pa.int32())),
        "ts_s_tokyo": pa.array([1_700_000_000 + i for i in range(n)], pa.int64())
        .cast(pa.timestamp("s", tz="Asia/Tokyo")),
    })


def generate(out: str) -> int:
    # The statistics tests' files (numpy and pandas build them): only `generate` needs them, so
    # the browser test can use the rest of this file with pyarrow alone.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import stats_reference

    os.makedirs(out, exist_ok=True)
    files = list(stats_reference.FILES) + [("long_cells.parquet", build_long_cells, 7)]
    for name, build, row_group_size in files:
        table = build()
        path = os.path.join(out, name)
        pq.write_table(table, path, compression="snappy", row_group_size=row_group_size,
                       write_page_index=True, data_page_size=4096)
        print(path)
        if name == "row_groups.parquet":
            path = os.path.join(out, "row_groups_no_index.parquet")
            pq.write_table(table, path, compression="snappy", row_group_size=row_group_size)
            print(path)
    return 0


def type_name(typ: pa.DataType) -> str:
    if pa.types.is_dictionary(typ):
        return type_name(typ.value_type)
    return str(typ)


def fraction(nanos: int) -> str:
    if nanos == 0:
        return ""
    if nanos % 1_000_000 == 0:
        return f".{nanos // 1_000_000:03d}"
    if nanos % 1_000 == 0:
        return f".{nanos // 1_000:06d}"
    return f".{nanos:09d}"


PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def timestamp(raw: int, typ: pa.TimestampType) -> str:
    per = PER_SECOND[typ.unit]
    secs, sub = divmod(raw, per)
    nanos = sub * (1_000_000_000 // per)
    if typ.tz is None:
        at = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=secs)
        return at.strftime("%Y-%m-%dT%H:%M:%S") + fraction(nanos)
    tz = dt.timezone.utc if typ.tz.upper() == "UTC" else ZoneInfo(typ.tz)
    at = dt.datetime.fromtimestamp(secs, tz)
    offset = at.utcoffset()
    if offset == dt.timedelta(0):
        zone = "Z"
    else:
        minutes = int(offset.total_seconds()) // 60
        sign = "+" if minutes >= 0 else "-"
        zone = f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return at.strftime("%Y-%m-%dT%H:%M:%S") + fraction(nanos) + zone


def expected(value, typ: pa.DataType, raw=None):
    """(JSON value, cut) of one pyarrow value (`raw`: the integer behind a temporal value)."""
    if value is None:
        return None, False
    if pa.types.is_dictionary(typ):
        return expected(value, typ.value_type, raw)
    if pa.types.is_boolean(typ) or pa.types.is_integer(typ):
        return value, False
    if pa.types.is_floating(typ):
        if math.isnan(value):
            return "NaN", False
        if math.isinf(value):
            return ("Infinity" if value > 0 else "-Infinity"), False
        return float(value), False
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return value[:TEXT_CHARS], len(value) > TEXT_CHARS
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ) or pa.types.is_fixed_size_binary(typ):
        return base64.b64encode(value[:BINARY_BYTES]).decode(), len(value) > BINARY_BYTES
    if pa.types.is_decimal(typ):
        return format(value, "f"), False
    if pa.types.is_date(typ):
        return value.isoformat(), False
    if pa.types.is_time(typ):
        per = PER_SECOND[typ.unit]
        secs, sub = divmod(raw, per)
        nanos = sub * (1_000_000_000 // per)
        return f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}" + fraction(nanos), False
    if pa.types.is_timestamp(typ):
        return timestamp(raw, typ), False
    if pa.types.is_duration(typ):
        per = PER_SECOND[typ.unit]
        sign = "-" if raw < 0 else ""
        secs, sub = divmod(abs(raw), per)
        frac = f"{sub:0{len(str(per)) - 1}d}".rstrip("0") if sub else ""
        return f"{sign}PT{secs}" + (f".{frac}" if frac else "") + "S", False
    if pa.types.is_map(typ):
        shown, cut = value[:LIST_ITEMS], len(value) > LIST_ITEMS
        pairs = []
        for k, v in shown:
            ek, ck = expected(k, typ.key_type)
            ev, cv = expected(v, typ.item_type)
            cut = cut or ck or cv
            pairs.append((ek, ev))
        if pa.types.is_string(typ.key_type) or pa.types.is_large_string(typ.key_type):
            return {k: v for k, v in pairs}, cut
        return [{"key": k, "value": v} for k, v in pairs], cut
    if pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ):
        shown, cut = value[:LIST_ITEMS], len(value) > LIST_ITEMS
        out = []
        for item in shown:
            e, c = expected(item, typ.value_type, raw_of(item, typ.value_type))
            out.append(e)
            cut = cut or c
        return out, cut
    if pa.types.is_struct(typ):
        out, cut = {}, False
        for field in typ:
            e, c = expected(value[field.name], field.type, raw_of(value[field.name], field.type))
            out[field.name] = e
            cut = cut or c
        return out, cut
    raise ValueError(f"no reference rule for {typ}")


def integers(column) -> list:
    """The integers behind a temporal column (its storage, viewed as signed integers)."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return array.view(pa.int32() if array.type.bit_width == 32 else pa.int64()).to_pylist()


def raw_of(value, typ):
    """The integer behind a nested temporal value (top-level ones come from a cast)."""
    if value is None:
        return None
    if pa.types.is_timestamp(typ) or pa.types.is_time(typ) or pa.types.is_duration(typ):
        return integers(pa.array([value], typ))[0]
    return None


def compare(parquet_path: str, answer_paths) -> int:
    table = pq.read_table(parquet_path)
    failed = 0
    for answer_path in answer_paths:
        with open(answer_path) as f:
            failed += compare_one(table, json.load(f), answer_path)
    return 1 if failed else 0


def compare_one(table, answer, name) -> int:
    problems = []
    columns = [(f.name, type_name(f.type)) for f in table.schema]
    got_columns = [(c["name"], c["type"]) for c in answer["columns"]]
    if got_columns != columns:
        problems.append(f"columns: got {got_columns}, expected {columns}")
    offset, length = answer["offset"], answer["length"]
    part = table.slice(offset, length)
    if part.num_rows != length or len(answer["rows"]) != length:
        problems.append(f"rows: got {len(answer['rows'])} (length {length}), the file has {part.num_rows} there")
    if answer["num_rows_total"] != table.num_rows:
        problems.append(f"num_rows_total: got {answer['num_rows_total']}, expected {table.num_rows}")
    temporal = (pa.types.is_timestamp, pa.types.is_time, pa.types.is_duration)
    raws = {}
    for field in table.schema:
        typ = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if any(t(typ) for t in temporal):
            raws[field.name] = integers(part.column(field.name).cast(typ))
    values = {name: part.column(name).to_pylist() for name, _ in columns}
    for i, row in enumerate(answer["rows"][: part.num_rows]):
        if row["row_idx"] != offset + i:
            problems.append(f"row {i}: row_idx {row['row_idx']}, expected {offset + i}")
        cut_columns = []
        for field in table.schema:
            raw = raws.get(field.name, [None] * part.num_rows)[i]
            want, cut = expected(values[field.name][i], field.type, raw)
            if cut:
                cut_columns.append(field.name)
            got = row["row"].get(field.name, "<missing>")
            if not same(got, want):
                problems.append(f"row {offset + i} {field.name}: got {show(got)}, expected {show(want)}")
        if sorted(row["truncated_cells"]) != sorted(cut_columns):
            problems.append(f"row {offset + i}: truncated_cells {row['truncated_cells']}, expected {cut_columns}")
    for p in problems[:50]:
        print(f"{name}: {p}")
    if problems:
        print(f"{name}: {len(problems)} mismatches")
        return 1
    print(f"{name}: {length} rows match")
    return 0


def same(got, want) -> bool:
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        return float(got) == want
    if isinstance(want, list) and isinstance(got, list):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if isinstance(want, dict) and isinstance(got, dict):
        return list(got) == list(want) and all(same(got[k], want[k]) for k in want)
    return type(got) is type(want) and got == want


def show(v) -> str:
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) < 120 else text[:117] + "..."


def main(argv):
    if len(argv) == 3 and argv[1] == "generate":
        return generate(argv[2])
    if len(argv) >= 4 and argv[1] == "compare":
        return compare(argv[2], argv[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
